// Einsum in its general form: explicit or implicit output, repeated letters
// (diagonals), broadcasting ellipses, any number of operands. The equation is
// parsed when the kernel is made; compute walks every combination of the
// letters once, so it suits the small contractions Einsum is used for
// (large matrix products belong to MatMul).
#include <map>

#include "cpu_kernel.hpp"

namespace nxrt::cpu {
namespace {

struct EinsumPlan {
  std::vector<std::string> operands;  // letters per operand, ellipsis expanded
  std::string output;
};

EinsumPlan ParseEquation(std::string equation, std::span<const nxrt_shape> inputs) {
  std::erase(equation, ' ');
  const size_t arrow = equation.find("->");
  const std::string lhs = equation.substr(0, arrow);
  std::vector<std::string> terms;
  size_t start = 0;
  while (true) {
    const size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != inputs.size()) FailInvalid("Einsum: operand count differs from the equation");
  int64_t ellipsis_rank = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    if (terms[i].find("...") == std::string::npos) continue;
    const int64_t letters = static_cast<int64_t>(terms[i].size()) - 3;
    ellipsis_rank = std::max(ellipsis_rank, static_cast<int64_t>(inputs[i].rank) - letters);
  }
  auto ellipsis_letters = [&](int64_t count) {
    std::string s;
    for (int64_t i = ellipsis_rank - count; i < ellipsis_rank; ++i) {
      s += static_cast<char>(0x80 + i);
    }
    return s;
  };
  EinsumPlan plan;
  for (size_t i = 0; i < terms.size(); ++i) {
    std::string t = terms[i];
    const size_t at = t.find("...");
    if (at != std::string::npos) {
      const int64_t count =
          static_cast<int64_t>(inputs[i].rank) - (static_cast<int64_t>(t.size()) - 3);
      t = t.substr(0, at) + ellipsis_letters(count) + t.substr(at + 3);
    }
    if (t.size() != inputs[i].rank) FailInvalid("Einsum: term '" + terms[i] + "' rank mismatch");
    plan.operands.push_back(t);
  }
  if (arrow != std::string::npos) {
    std::string out = equation.substr(arrow + 2);
    const size_t at = out.find("...");
    if (at != std::string::npos)
      out = out.substr(0, at) + ellipsis_letters(ellipsis_rank) + out.substr(at + 3);
    plan.output = out;
  } else {
    // Implicit: the ellipsis, then letters seen once, in alphabetical order.
    std::map<char, int> seen;
    for (const std::string& t : plan.operands) {
      for (char c : t) ++seen[c];
    }
    plan.output = ellipsis_letters(ellipsis_rank);
    for (const auto& [c, n] : seen) {
      if (n == 1 && static_cast<unsigned char>(c) < 0x80) plan.output += c;
    }
  }
  return plan;
}

using EinsumTypes =
    TypeList<float, double, Float16, BFloat16, int32_t, int64_t, uint32_t, uint64_t>;

class EinsumKernel : public CpuKernel {
 public:
  EinsumKernel(EinsumPlan plan, nxrt_dtype dtype)
      : CpuKernel(false), plan_(std::move(plan)), dtype_(dtype) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    // Letters: output ones first, then the summed ones.
    std::string letters = plan_.output;
    std::map<char, int64_t> extent;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Dims d = DimsOf(inputs[i].tensor);
      for (size_t k = 0; k < d.size(); ++k) {
        const char c = plan_.operands[i][k];
        auto [it, inserted] = extent.insert({c, d[k]});
        if (!inserted && it->second != d[k]) {
          if (it->second == 1) {
            it->second = d[k];
          } else if (d[k] != 1) {
            FailInvalid("Einsum: letter extents differ");
          }
        }
        if (letters.find(c) == std::string::npos) letters += c;
      }
    }
    Dims out_dims;
    for (char c : plan_.output) out_dims.push_back(extent.at(c));
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, dtype_, out_dims);
    const size_t count = letters.size();
    Dims extents;
    for (char c : letters) extents.push_back(extent.at(c));
    // Per operand, the stride each letter steps it by (0 where broadcast).
    std::vector<Dims> strides(inputs.size(), Dims(count, 0));
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Dims d = DimsOf(inputs[i].tensor);
      const Dims s = StridesOf(d);
      for (size_t k = 0; k < d.size(); ++k) {
        if (d[k] == 1 && extent.at(plan_.operands[i][k]) != 1) continue;
        strides[i][letters.find(plan_.operands[i][k])] += s[k];
      }
    }
    const int64_t out_count = ElementCount(out_dims);
    const int64_t total = ElementCount(extents);
    const int64_t sum_count = out_count ? total / out_count : 0;
    Dispatch(EinsumTypes{}, dtype_, "Einsum", [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = std::conditional_t<kIsFloat<T>, double, ComputeType<T>>;
      T* y = MutableDataAs<T>(out);
      std::vector<const T*> data;
      for (const nxrt_value& v : inputs) data.push_back(DataAs<T>(v.tensor));
      std::vector<int64_t> index(count, 0);
      std::vector<int64_t> offsets(inputs.size(), 0);
      for (int64_t o = 0; o < out_count; ++o) {
        C acc = 0;
        for (int64_t s = 0; s < sum_count; ++s) {
          C product = 1;
          for (size_t i = 0; i < inputs.size(); ++i) {
            product *= static_cast<C>(static_cast<ComputeType<T>>(data[i][offsets[i]]));
          }
          acc += product;
          for (size_t a = count; a-- > 0;) {
            for (size_t i = 0; i < inputs.size(); ++i) offsets[i] += strides[i][a];
            if (++index[a] < extents[a]) break;
            for (size_t i = 0; i < inputs.size(); ++i) offsets[i] -= strides[i][a] * index[a];
            index[a] = 0;
          }
        }
        y[o] = static_cast<T>(static_cast<ComputeType<T>>(acc));
      }
    });
  }

 private:
  EinsumPlan plan_;
  nxrt_dtype dtype_;
};

}  // namespace

void RegisterEinsumOps(OpRegistry& r) {
  r.Add("Einsum", {12, ClaimInputDtype(EinsumTypes{}),
                   [](const sdk::Node& node, std::span<const nxrt_shape> inputs, int64_t) {
                     return std::make_unique<EinsumKernel>(
                         ParseEquation(node.AttrString("equation", ""), inputs), inputs[0].dtype);
                   }});
}

}  // namespace nxrt::cpu
