#include "call_log.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "mock_api.h"
#include "nxrt/ep_abi.h"

namespace nxrt::mock {
namespace {

std::mutex log_mutex;
std::map<std::string, std::vector<std::string>> logs;

}  // namespace

void LogCall(const std::string& log_id, const std::string& entry) {
  std::lock_guard lock(log_mutex);
  logs[log_id].push_back(entry);
}

LiveCounts& Live() {
  static LiveCounts counts;
  return counts;
}

}  // namespace nxrt::mock

extern "C" NXRT_EP_EXPORT size_t nxrt_mock_call_log(const char* log_id, char* buffer,
                                                    size_t capacity) {
  std::string joined;
  {
    std::lock_guard lock(nxrt::mock::log_mutex);
    auto found = nxrt::mock::logs.find(log_id ? log_id : "");
    if (found != nxrt::mock::logs.end()) {
      for (const std::string& entry : found->second) joined += entry + "\n";
    }
  }
  if (buffer != nullptr && capacity > 0) {
    const size_t copied = std::min(joined.size(), capacity - 1);
    std::memcpy(buffer, joined.data(), copied);
    buffer[copied] = '\0';
  }
  return joined.size();
}

extern "C" NXRT_EP_EXPORT void nxrt_mock_clear_call_log(const char* log_id) {
  std::lock_guard lock(nxrt::mock::log_mutex);
  nxrt::mock::logs.erase(log_id ? log_id : "");
}

extern "C" NXRT_EP_EXPORT int64_t nxrt_mock_live_count(const char* kind) {
  const std::string k = kind ? kind : "";
  auto& live = nxrt::mock::Live();
  if (k == "ep") return live.eps.load();
  if (k == "kernel") return live.kernels.load();
  if (k == "shared_state") return live.shared_states.load();
  if (k == "graph") return live.graphs.load();
  return -1;
}
