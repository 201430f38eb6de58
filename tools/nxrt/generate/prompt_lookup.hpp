// Draft tokens by prompt lookup, for speculative decoding without a draft
// model: the tokens that followed the most recent earlier occurrence of the
// sequence's last n tokens, trying n = kMaxLookupNgram first and down to 1.
// Text that repeats itself (code, quoted passages, lists) is proposed what
// came next before; a sequence with no repeat gets no draft.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace nxrt::cli {

inline constexpr size_t kMaxLookupNgram = 3;

// At most `count` tokens; none when the last token was not seen before.
std::vector<int64_t> PromptLookup(std::span<const int64_t> context, size_t count);

}  // namespace nxrt::cli
