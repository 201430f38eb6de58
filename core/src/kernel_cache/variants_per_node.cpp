#include "kernel_cache/variants_per_node.hpp"

#include <charconv>
#include <cstdlib>

#include "nxrt/support/log.hpp"

namespace nxrt::kernel_cache {

std::optional<size_t> ParseKernelVariantsPerNode(std::string_view text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return std::nullopt;
  const auto last = text.find_last_not_of(" \t");
  text = text.substr(first, last - first + 1);
  size_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value == 0) return std::nullopt;
  return value;
}

size_t KernelCacheVariantsPerNode() {
  static const size_t resolved = [] {
    const char* text = std::getenv(kKernelVariantsPerNodeEnv);
    if (text == nullptr) return kDefaultKernelVariantsPerNode;
    if (auto parsed = ParseKernelVariantsPerNode(text)) return *parsed;
    GetLogger()->warn("{}='{}' is not a positive integer; keeping {} kernel variants per node",
                      kKernelVariantsPerNodeEnv, text, kDefaultKernelVariantsPerNode);
    return kDefaultKernelVariantsPerNode;
  }();
  return resolved;
}

}  // namespace nxrt::kernel_cache
