#include "nxrt/graph/capture_mode.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string>

namespace nxrt::graph {

std::string_view CaptureModeName(CaptureMode mode) {
  return mode == CaptureMode::kDenylist ? "denylist" : "fail-safe";
}

CaptureMode ParseCaptureMode(std::string_view text) {
  auto is_blank = [](unsigned char c) { return std::isspace(c) != 0; };
  while (!text.empty() && is_blank(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_blank(text.back())) text.remove_suffix(1);
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "denylist" || lower == "deny" || lower == "0") return CaptureMode::kDenylist;
  return CaptureMode::kFailSafe;
}

CaptureMode ResolveCaptureMode(std::optional<CaptureMode> option) {
  if (option) return *option;
  const char* text = std::getenv("NXRT_CAPTURE_CLASSIFIER");
  return text == nullptr ? CaptureMode::kFailSafe : ParseCaptureMode(text);
}

}  // namespace nxrt::graph
