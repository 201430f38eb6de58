// The prompt `nxrt generate` starts from: token ids given as --prompt
// "1,2,3", or --prompt-tokens N ids drawn uniformly from the vocabulary by
// a std::mt19937_64 seeded with --seed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nxrt/support/status.hpp"

namespace nxrt::cli {

// Fails naming the entry that is not an id in [0, vocab).
Result<std::vector<int64_t>> ParsePromptTokens(const std::string& text, int64_t vocab);

std::vector<int64_t> RandomPromptTokens(int64_t count, int64_t vocab, uint64_t seed);

}  // namespace nxrt::cli
