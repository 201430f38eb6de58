#include "reference_notice.hpp"

#include <atomic>

namespace nxrt::cpu::onednn {

void NoteReferenceKernel(const sdk::Host& host, const std::string& what,
                         const std::string& implementation) {
  static std::atomic<bool> warned{false};
  const nxrt_log_level level = warned.exchange(true) ? NXRT_LOG_DEBUG : NXRT_LOG_WARN;
  if (!host.LogEnabled(level)) return;
  host.Log(level, what + " runs on oneDNN's reference kernel " + implementation +
                      ", which is slow; no optimised kernel takes this shape on this machine");
}

}  // namespace nxrt::cpu::onednn
