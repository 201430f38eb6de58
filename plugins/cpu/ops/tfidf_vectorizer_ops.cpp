// TfIdfVectorizer: counts the pool's n-grams (with skips) in each row of a
// 1-D or 2-D int32, int64 or string input and writes them, as TF, IDF or
// TFIDF, into the n-gram's output column. The pool becomes a trie when the
// kernel is made, so each start position and skip distance walks it once and
// stops as soon as no pool n-gram continues the tokens seen. Weights are
// indexed by output column (the column an n-gram's ngram_indexes entry
// names).
#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

#include "cpu_kernel.hpp"

namespace nxrt::cpu {
namespace {

enum class Weighting { kTf, kIdf, kTfIdf };

struct TrieNode {
  std::unordered_map<int64_t, size_t> children;  // token -> node
  int64_t column = -1;                           // the output column of the n-gram ending here
};

struct TfIdfConfig {
  Weighting weighting = Weighting::kTf;
  int64_t min_gram = 1;
  int64_t max_gram = 1;
  int64_t max_skip = 0;
  int64_t columns = 0;
  std::vector<float> weights;  // empty: none given
  std::vector<TrieNode> trie;  // node 0 is the root
  // For string inputs, each pool string's token; other strings match nothing.
  std::unordered_map<std::string, int64_t> string_tokens;
};

TfIdfConfig ReadConfig(const sdk::Node& node, bool strings) {
  TfIdfConfig c;
  const std::string mode = node.AttrString("mode", "");
  c.weighting = mode == "IDF"     ? Weighting::kIdf
                : mode == "TFIDF" ? Weighting::kTfIdf
                                  : Weighting::kTf;
  c.min_gram = node.AttrInt("min_gram_length", 1);
  c.max_gram = node.AttrInt("max_gram_length", 1);
  c.max_skip = node.AttrInt("max_skip_count", 0);
  if (c.min_gram < 1 || c.max_gram < c.min_gram || c.max_skip < 0) {
    FailInvalid(
        "TfIdfVectorizer: need 1 <= min_gram_length <= max_gram_length and "
        "max_skip_count >= 0");
  }
  std::vector<int64_t> pool;
  if (strings) {
    for (const std::string& s : node.AttrStrings("pool_strings")) {
      auto [it, added] = c.string_tokens.emplace(s, static_cast<int64_t>(c.string_tokens.size()));
      pool.push_back(it->second);
    }
  } else {
    pool = node.AttrInts("pool_int64s");
  }
  const std::vector<int64_t> counts = node.AttrInts("ngram_counts");
  const std::vector<int64_t> indexes = node.AttrInts("ngram_indexes");
  c.trie.emplace_back();
  size_t ngram = 0;
  const auto pool_size = static_cast<int64_t>(pool.size());
  for (size_t level = 0; level < counts.size(); ++level) {
    const int64_t n = static_cast<int64_t>(level) + 1;
    const int64_t begin = counts[level];
    const int64_t end = level + 1 < counts.size() ? counts[level + 1] : pool_size;
    if (begin < 0 || end < begin || end > pool_size || (end - begin) % n != 0) {
      FailInvalid("TfIdfVectorizer: ngram_counts do not split the pool into " + std::to_string(n) +
                  "-grams");
    }
    for (int64_t at = begin; at < end; at += n, ++ngram) {
      if (ngram >= indexes.size()) FailInvalid("TfIdfVectorizer: too few ngram_indexes");
      size_t node_index = 0;
      for (int64_t k = 0; k < n; ++k) {
        auto found = c.trie[node_index].children.find(pool[at + k]);
        if (found == c.trie[node_index].children.end()) {
          c.trie.emplace_back();
          found = c.trie[node_index].children.emplace(pool[at + k], c.trie.size() - 1).first;
        }
        node_index = found->second;
      }
      if (indexes[ngram] < 0) FailInvalid("TfIdfVectorizer: negative ngram_indexes entry");
      c.trie[node_index].column = indexes[ngram];
      c.columns = std::max(c.columns, indexes[ngram] + 1);
    }
  }
  c.weights = node.AttrFloats("weights");
  if (!c.weights.empty() && static_cast<int64_t>(c.weights.size()) < c.columns) {
    FailInvalid("TfIdfVectorizer: fewer weights than output columns");
  }
  return c;
}

class TfIdfVectorizerKernel : public CpuKernel {
 public:
  TfIdfVectorizerKernel(nxrt_dtype dtype, TfIdfConfig config)
      : CpuKernel(false), dtype_(dtype), c_(std::move(config)) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& in = inputs[0].tensor;
    const Dims dims = DimsOf(in);
    if (dims.empty() || dims.size() > 2) {
      FailInvalid("TfIdfVectorizer: input must be 1-D or 2-D, got " + DimsText(dims));
    }
    const int64_t rows = dims.size() == 2 ? dims[0] : 1;
    const int64_t width = dims.back();
    std::vector<int64_t> tokens = Tokens(in);
    Dims out_dims = dims.size() == 2 ? Dims{rows, c_.columns} : Dims{c_.columns};
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, NXRT_DTYPE_FLOAT32, out_dims);
    float* y = MutableDataAs<float>(out);
    std::vector<int64_t> counts(c_.columns);
    for (int64_t row = 0; row < rows; ++row) {
      std::fill(counts.begin(), counts.end(), 0);
      CountRow(std::span<const int64_t>(tokens).subspan(row * width, width), counts);
      Weigh(counts, y + row * c_.columns);
    }
  }

 private:
  std::vector<int64_t> Tokens(const nxrt_tensor& in) const {
    const int64_t n = ElementCount(in);
    std::vector<int64_t> tokens(n);
    if (dtype_ == NXRT_DTYPE_STRING) {
      const auto* x = DataAs<nxrt_string_view>(in);
      for (int64_t i = 0; i < n; ++i) {
        const auto found = c_.string_tokens.find(std::string(x[i].data, x[i].size));
        tokens[i] = found == c_.string_tokens.end() ? -1 : found->second;
      }
    } else if (dtype_ == NXRT_DTYPE_INT32) {
      std::copy_n(DataAs<int32_t>(in), n, tokens.begin());
    } else {
      std::copy_n(DataAs<int64_t>(in), n, tokens.begin());
    }
    return tokens;
  }

  // Every n-gram starting at each position with each skip distance; a
  // unigram is the same at every distance, so only distance 1 counts it.
  void CountRow(std::span<const int64_t> row, std::vector<int64_t>& counts) const {
    const auto width = static_cast<int64_t>(row.size());
    // A skip past the row's end reaches nothing: the walk is bounded by the
    // row, however large max_skip_count is.
    const int64_t farthest = std::min(c_.max_skip, width) + 1;
    for (int64_t start = 0; start < width; ++start) {
      for (int64_t distance = 1; distance <= farthest; ++distance) {
        size_t node = 0;
        for (int64_t n = 1; n <= c_.max_gram; ++n) {
          const int64_t at = start + (n - 1) * distance;
          if (at >= width) break;
          const auto found = c_.trie[node].children.find(row[at]);
          if (found == c_.trie[node].children.end()) break;
          node = found->second;
          if (n >= c_.min_gram && (n > 1 || distance == 1) && c_.trie[node].column >= 0) {
            ++counts[c_.trie[node].column];
          }
        }
      }
    }
  }

  void Weigh(const std::vector<int64_t>& counts, float* y) const {
    const bool weighted = !c_.weights.empty();
    for (int64_t i = 0; i < c_.columns; ++i) {
      const auto count = static_cast<float>(counts[i]);
      const float weight = weighted ? c_.weights[i] : 1.0f;
      switch (c_.weighting) {
        case Weighting::kTf:
          y[i] = count;
          break;
        case Weighting::kIdf:
          y[i] = counts[i] > 0 ? weight : 0.0f;
          break;
        case Weighting::kTfIdf:
          y[i] = count * weight;
          break;
      }
    }
  }

  nxrt_dtype dtype_;
  TfIdfConfig c_;
};

}  // namespace

void RegisterTfIdfVectorizerOps(OpRegistry& r) {
  r.Add(
      "TfIdfVectorizer",
      {9,
       [](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
         if (inputs.empty() || inputs[0].kind != NXRT_VALUE_TENSOR) {
           return sdk::ClaimResult::Declined("TfIdfVectorizer: input 0 must be a tensor");
         }
         const nxrt_dtype dtype = inputs[0].dtype;
         if (dtype != NXRT_DTYPE_STRING && dtype != NXRT_DTYPE_INT32 && dtype != NXRT_DTYPE_INT64) {
           return sdk::ClaimResult::Declined("TfIdfVectorizer: dtype " + DtypeName(dtype) +
                                             " not supported");
         }
         const std::string mode = node.AttrString("mode", "");
         if (mode != "TF" && mode != "IDF" && mode != "TFIDF") {
           return sdk::ClaimResult::Declined("TfIdfVectorizer: mode '" + mode + "' not supported");
         }
         return sdk::ClaimResult::Claimed();
       },
       [](const sdk::Node& node, std::span<const nxrt_shape> inputs, int64_t) {
         const bool strings = inputs[0].dtype == NXRT_DTYPE_STRING;
         return std::make_unique<TfIdfVectorizerKernel>(inputs[0].dtype, ReadConfig(node, strings));
       }});
}

}  // namespace nxrt::cpu
