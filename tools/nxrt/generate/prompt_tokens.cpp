#include "generate/prompt_tokens.hpp"

#include <algorithm>
#include <charconv>
#include <random>

namespace nxrt::cli {

Result<std::vector<int64_t>> ParseTokenIds(const std::string& option, const std::string& text,
                                           int64_t vocab) {
  std::vector<int64_t> tokens;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string entry = text.substr(start, comma - start);
    int64_t id = -1;
    const auto [end, error] = std::from_chars(entry.data(), entry.data() + entry.size(), id);
    if (entry.empty() || error != std::errc() || end != entry.data() + entry.size() || id < 0 ||
        id >= vocab) {
      return InvalidArgument(option + " '" + text + "': '" + entry +
                             "' is not a token id; give comma-separated ids in [0, " +
                             std::to_string(vocab) + "), e.g. " + option + " 1,2,3");
    }
    tokens.push_back(id);
    start = comma + 1;
  }
  return tokens;
}

Result<std::vector<std::vector<int64_t>>> ParseTokenRows(const std::string& option,
                                                         const std::string& text, int64_t vocab) {
  std::vector<std::vector<int64_t>> rows;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find(';', start), text.size());
    NXRT_ASSIGN_OR_RETURN(std::vector<int64_t> row,
                          ParseTokenIds(option, text.substr(start, end - start), vocab));
    rows.push_back(std::move(row));
    start = end + 1;
  }
  return rows;
}

std::vector<int64_t> RandomPromptTokens(int64_t count, int64_t vocab, uint64_t seed) {
  std::mt19937_64 generator(seed);
  std::vector<int64_t> tokens(static_cast<size_t>(count));
  for (int64_t& token : tokens)
    token = static_cast<int64_t>(generator() % static_cast<uint64_t>(vocab));
  return tokens;
}

}  // namespace nxrt::cli
