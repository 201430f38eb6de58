// Reads the mock plugin's call log and live counters through its extra
// exported functions, by loading the same library with Boost.DLL.
#pragma once

#include <string>
#include <vector>

#include <boost/dll/shared_library.hpp>

#include "mock_api.h"
#include "nxrt_test/plugin_paths.hpp"

namespace nxrt_test {

class MockCallLog {
 public:
  explicit MockCallLog(std::string log_id)
      : log_id_(std::move(log_id)), library_(BuiltPlugin("mock")) {
    library_.get<void(const char*)>(NXRT_MOCK_CLEAR_CALL_LOG_SYMBOL)(log_id_.c_str());
  }

  std::vector<std::string> Entries() const {
    auto read = library_.get<size_t(const char*, char*, size_t)>(NXRT_MOCK_CALL_LOG_SYMBOL);
    std::string text(read(log_id_.c_str(), nullptr, 0) + 1, '\0');
    read(log_id_.c_str(), text.data(), text.size());
    std::vector<std::string> lines;
    size_t start = 0;
    for (size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
      lines.push_back(text.substr(start, end - start));
    }
    return lines;
  }

  int64_t Live(const char* kind) const {
    return library_.get<int64_t(const char*)>(NXRT_MOCK_LIVE_COUNT_SYMBOL)(kind);
  }

 private:
  std::string log_id_;
  boost::dll::shared_library library_;
};

}  // namespace nxrt_test
