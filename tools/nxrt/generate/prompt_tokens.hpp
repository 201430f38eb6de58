// Token ids `nxrt generate` takes: the prompts it starts from, given as
// --prompt "1,2,3;4,5" (one row per ';') or as --prompt-tokens N ids drawn uniformly from the
// vocabulary by a std::mt19937_64 seeded with --seed, and the --stop ids.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nxrt/support/status.hpp"

namespace nxrt::cli {

// Comma-separated ids given to `option`; fails naming the entry that is not
// an id in [0, vocab).
Result<std::vector<int64_t>> ParseTokenIds(const std::string& option, const std::string& text,
                                           int64_t vocab);

// Rows of ids separated by ';', each as ParseTokenIds reads it.
Result<std::vector<std::vector<int64_t>>> ParseTokenRows(const std::string& option,
                                                         const std::string& text, int64_t vocab);

std::vector<int64_t> RandomPromptTokens(int64_t count, int64_t vocab, uint64_t seed);

}  // namespace nxrt::cli
