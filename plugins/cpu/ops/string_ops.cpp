// The string ops of the default domain: StringNormalizer, StringSplit,
// StringConcat and RegexFullMatch. Strings are UTF-8 bytes. Case changes and
// case-insensitive stopword matching map ASCII letters only, whatever the
// locale; other bytes (every byte of a multi-byte UTF-8 sequence) pass through
// untouched. RegexFullMatch compiles its pattern with RE2 when the kernel is
// made, so an invalid pattern fails there, naming the node. None is
// capture-safe: string outputs go through the host, and RE2 grows its DFA
// cache while matching.
#include <re2/re2.h>

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "broadcast.hpp"
#include "cpu_kernel.hpp"

namespace nxrt::cpu {
namespace {

std::string_view ViewOf(const nxrt_string_view& s) {
  return std::string_view(s.data, s.size);
}

sdk::ClaimResult ClaimStringInputs(const sdk::Node& node, std::span<const nxrt_value_info> inputs,
                                   size_t count) {
  const std::string op(node.op_type());
  for (size_t i = 0; i < count; ++i) {
    if (i >= inputs.size() || inputs[i].kind != NXRT_VALUE_TENSOR) {
      return sdk::ClaimResult::Declined(op + ": input " + std::to_string(i) + " must be a tensor");
    }
    if (inputs[i].dtype != NXRT_DTYPE_STRING) {
      return sdk::ClaimResult::Declined(op + ": dtype " + DtypeName(inputs[i].dtype) +
                                        " not supported");
    }
  }
  return sdk::ClaimResult::Claimed();
}

std::string AsciiCase(std::string_view s, bool upper) {
  std::string out(s);
  // Not std::toupper: it follows the process's C locale.
  for (char& c : out) {
    if (upper && c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    if (!upper && c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

enum class CaseChange { kNone, kLower, kUpper };

class StringNormalizerKernel : public CpuKernel {
 public:
  StringNormalizerKernel(CaseChange change, bool case_sensitive,
                         const std::vector<std::string>& stopwords)
      : CpuKernel(false), change_(change), case_sensitive_(case_sensitive) {
    for (const std::string& word : stopwords) {
      stopwords_.insert(case_sensitive ? word : AsciiCase(word, false));
    }
  }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& in = inputs[0].tensor;
    const Dims dims = DimsOf(in);
    if (dims.size() > 2 || (dims.size() == 2 && dims[0] != 1)) {
      FailInvalid("StringNormalizer: input must be [C] or [1, C], got " + DimsText(dims));
    }
    const auto* x = DataAs<nxrt_string_view>(in);
    std::vector<std::string> kept;
    for (int64_t i = 0; i < ElementCount(in); ++i) {
      const std::string_view word = ViewOf(x[i]);
      if (stopwords_.contains(case_sensitive_ ? std::string(word) : AsciiCase(word, false))) {
        continue;
      }
      kept.push_back(change_ == CaseChange::kNone ? std::string(word)
                                                  : AsciiCase(word, change_ == CaseChange::kUpper));
    }
    // Everything filtered out leaves one empty string, as the spec asks.
    if (kept.empty()) kept.emplace_back();
    Dims out_dims = dims;
    if (out_dims.empty()) out_dims.push_back(1);
    out_dims.back() = static_cast<int64_t>(kept.size());
    PrepareOutput(ctx, outputs, 0, NXRT_DTYPE_STRING, out_dims);
    for (size_t i = 0; i < kept.size(); ++i) ctx.SetStringElement(0, i, kept[i]);
  }

 private:
  CaseChange change_;
  bool case_sensitive_;
  std::unordered_set<std::string> stopwords_;
};

// Python's str.split: with a delimiter, every occurrence splits (empty
// pieces kept); without one, runs of whitespace split and empty pieces drop.
// At most `maxsplit` splits when it is non-negative; the rest stays whole,
// trailing whitespace included.
std::vector<std::string_view> Split(std::string_view s, std::string_view delimiter,
                                    int64_t maxsplit) {
  std::vector<std::string_view> pieces;
  if (!delimiter.empty()) {
    size_t start = 0;
    while (maxsplit < 0 || static_cast<int64_t>(pieces.size()) < maxsplit) {
      const size_t at = s.find(delimiter, start);
      if (at == std::string_view::npos) break;
      pieces.push_back(s.substr(start, at - start));
      start = at + delimiter.size();
    }
    pieces.push_back(s.substr(start));
    return pieces;
  }
  // The ASCII characters Python counts as whitespace; multi-byte UTF-8
  // spaces (U+00A0 and the like) are not split on.
  auto space = [](char c) {
    return c == ' ' || (c >= '\t' && c <= '\r') || (c >= '\x1c' && c <= '\x1f');
  };
  size_t i = 0;
  while (true) {
    while (i < s.size() && space(s[i])) ++i;
    if (i == s.size()) break;
    if (maxsplit >= 0 && static_cast<int64_t>(pieces.size()) == maxsplit) {
      pieces.push_back(s.substr(i));
      break;
    }
    size_t end = i;
    while (end < s.size() && !space(s[end])) ++end;
    pieces.push_back(s.substr(i, end - i));
    i = end;
  }
  return pieces;
}

class StringSplitKernel : public CpuKernel {
 public:
  StringSplitKernel(std::string delimiter, int64_t maxsplit)
      : CpuKernel(false), delimiter_(std::move(delimiter)), maxsplit_(maxsplit) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& in = inputs[0].tensor;
    const int64_t n = ElementCount(in);
    const auto* x = DataAs<nxrt_string_view>(in);
    std::vector<std::vector<std::string_view>> pieces(n);
    int64_t width = 0;
    for (int64_t i = 0; i < n; ++i) {
      pieces[i] = Split(ViewOf(x[i]), delimiter_, maxsplit_);
      width = std::max(width, static_cast<int64_t>(pieces[i].size()));
    }
    Dims dims = DimsOf(in);
    nxrt_tensor& counts = PrepareOutput(ctx, outputs, 1, NXRT_DTYPE_INT64, dims);
    dims.push_back(width);
    PrepareOutput(ctx, outputs, 0, NXRT_DTYPE_STRING, dims);
    auto* z = MutableDataAs<int64_t>(counts);
    for (int64_t i = 0; i < n; ++i) {
      z[i] = static_cast<int64_t>(pieces[i].size());
      for (int64_t k = 0; k < width; ++k) {
        const std::string_view piece = k < z[i] ? pieces[i][k] : std::string_view();
        ctx.SetStringElement(0, i * width + k, piece);
      }
    }
  }

 private:
  std::string delimiter_;
  int64_t maxsplit_;
};

class StringConcatKernel : public CpuKernel {
 public:
  StringConcatKernel() : CpuKernel(false) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& a = inputs[0].tensor;
    const nxrt_tensor& b = inputs[1].tensor;
    const BroadcastPlan<2> plan = MakeBroadcastPlan<2>({DimsOf(a), DimsOf(b)}, "StringConcat");
    PrepareOutput(ctx, outputs, 0, NXRT_DTYPE_STRING, plan.out_dims);
    const auto* x = DataAs<nxrt_string_view>(a);
    const auto* y = DataAs<nxrt_string_view>(b);
    const int64_t sa = plan.strides[0].back();
    const int64_t sb = plan.strides[1].back();
    std::string joined;
    ForEachRow(plan, [&](const std::array<int64_t, 2>& offsets, int64_t o, int64_t n) {
      for (int64_t i = 0; i < n; ++i) {
        joined.assign(ViewOf(x[offsets[0] + i * sa]));
        joined.append(ViewOf(y[offsets[1] + i * sb]));
        ctx.SetStringElement(0, o + i, joined);
      }
    });
  }
};

class RegexFullMatchKernel : public CpuKernel {
 public:
  explicit RegexFullMatchKernel(std::shared_ptr<const re2::RE2> pattern)
      : CpuKernel(false), pattern_(std::move(pattern)) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& in = inputs[0].tensor;
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, NXRT_DTYPE_BOOL, DimsSpan(in));
    const auto* x = DataAs<nxrt_string_view>(in);
    bool* y = MutableDataAs<bool>(out);
    for (int64_t i = 0; i < ElementCount(in); ++i) {
      y[i] = re2::RE2::FullMatch(re2::StringPiece(x[i].data, x[i].size), *pattern_);
    }
  }

 private:
  std::shared_ptr<const re2::RE2> pattern_;
};

std::shared_ptr<const re2::RE2> CompilePattern(const sdk::Node& node) {
  const std::string pattern = node.AttrString("pattern", "");
  re2::RE2::Options options;
  options.set_log_errors(false);
  auto re = std::make_shared<const re2::RE2>(pattern, options);
  if (!re->ok()) {
    FailInvalid("RegexFullMatch node '" + std::string(node.name()) + "': invalid pattern '" +
                pattern + "': " + re->error());
  }
  return re;
}

}  // namespace

void RegisterStringOps(OpRegistry& r) {
  r.Add("StringNormalizer",
        {10,
         [](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
           const std::string action = node.AttrString("case_change_action", "NONE");
           if (action != "NONE" && action != "LOWER" && action != "UPPER") {
             return sdk::ClaimResult::Declined("StringNormalizer: case_change_action '" + action +
                                               "' not supported");
           }
           return ClaimStringInputs(node, inputs, 1);
         },
         [](const sdk::Node& node, std::span<const nxrt_shape>, int64_t) {
           const std::string action = node.AttrString("case_change_action", "NONE");
           const CaseChange change = action == "LOWER"   ? CaseChange::kLower
                                     : action == "UPPER" ? CaseChange::kUpper
                                                         : CaseChange::kNone;
           return std::make_unique<StringNormalizerKernel>(
               change, node.AttrInt("is_case_sensitive", 0) != 0, node.AttrStrings("stopwords"));
         }});
  r.Add("StringSplit",
        {20,
         [](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
           return ClaimStringInputs(node, inputs, 1);
         },
         [](const sdk::Node& node, std::span<const nxrt_shape>, int64_t) {
           return std::make_unique<StringSplitKernel>(node.AttrString("delimiter", ""),
                                                      node.AttrInt("maxsplit", -1));
         }});
  r.Add("StringConcat",
        {20,
         [](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
           return ClaimStringInputs(node, inputs, 2);
         },
         [](const sdk::Node&, std::span<const nxrt_shape>, int64_t) {
           return std::make_unique<StringConcatKernel>();
         }});
  r.Add("RegexFullMatch",
        {20,
         [](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
           return ClaimStringInputs(node, inputs, 1);
         },
         [](const sdk::Node& node, std::span<const nxrt_shape>, int64_t) {
           return std::make_unique<RegexFullMatchKernel>(CompilePattern(node));
         }});
}

}  // namespace nxrt::cpu
