#include "generate/prompt_lookup.hpp"

#include <algorithm>

namespace nxrt::cli {

std::vector<int64_t> PromptLookup(std::span<const int64_t> context, size_t count) {
  const size_t size = context.size();
  for (size_t n = std::min(kMaxLookupNgram, size > 0 ? size - 1 : 0); n >= 1; --n) {
    const std::span<const int64_t> tail = context.subspan(size - n);
    // The most recent match whose continuation holds at least one token.
    for (size_t start = size - n; start-- > 0;) {
      if (!std::equal(tail.begin(), tail.end(), context.begin() + static_cast<ptrdiff_t>(start))) {
        continue;
      }
      const size_t from = start + n;
      const size_t take = std::min(count, size - from);
      return {context.begin() + static_cast<ptrdiff_t>(from),
              context.begin() + static_cast<ptrdiff_t>(from + take)};
    }
  }
  return {};
}

}  // namespace nxrt::cli
