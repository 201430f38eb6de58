// Concat for every fixed-size dtype: each input's rows are copied as blocks
// into their place along the axis. The blocks are worked out for the inputs'
// dims, so a call at repeated dims allocates nothing.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "cpu_kernel.hpp"

namespace nxrt::cpu {
namespace {

// Works out its copies for the inputs' dims when made, and again for a call
// at other dims, so one kernel serves every shape of the node's ranks (a
// growing KV cache's Concat among them).
class ConcatKernel : public CpuKernel {
 public:
  ConcatKernel(int64_t axis_attr, std::span<const nxrt_shape> inputs)
      : CpuKernel(true), axis_attr_(axis_attr) {
    std::vector<Dims> dims;
    for (const nxrt_shape& shape : inputs) dims.emplace_back(shape.dims, shape.dims + shape.rank);
    Configure(std::move(dims));
  }
  bool ServesOtherShapes() const override { return true; }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    bool same = inputs.size() == in_dims_.size();
    for (size_t k = 0; same && k < inputs.size(); ++k) {
      same = DimsEqual(DimsSpan(inputs[k].tensor), in_dims_[k]);
    }
    if (!same) {
      std::vector<Dims> dims;
      for (const nxrt_value& input : inputs) dims.push_back(DimsOf(input.tensor));
      Configure(std::move(dims));
    }
    const nxrt_dtype dtype = inputs[0].tensor.dtype;
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, dtype, out_dims_);
    const size_t size = ElementSize(dtype);
    auto* y = static_cast<std::byte*>(out.data);
    int64_t column = 0;
    for (size_t k = 0; k < inputs.size(); ++k) {
      const int64_t block = blocks_[k];
      const auto* x = static_cast<const std::byte*>(inputs[k].tensor.data);
      for (int64_t o = 0; o < outer_ && block > 0; ++o) {
        std::memcpy(y + (o * out_block_ + column) * size, x + o * block * size, block * size);
      }
      column += block;
    }
  }

 private:
  // Takes `in_dims` as the inputs' dims once they prove to concatenate.
  void Configure(std::vector<Dims> in_dims) {
    if (in_dims.empty()) FailInvalid("Concat: give it one input or more");
    const Dims& first = in_dims.front();
    const int64_t rank = static_cast<int64_t>(first.size());
    const int64_t axis = NormalizeAxis(axis_attr_, rank, "Concat");
    Dims out_dims = first;
    out_dims[axis] = 0;
    for (size_t k = 0; k < in_dims.size(); ++k) {
      const Dims& d = in_dims[k];
      if (static_cast<int64_t>(d.size()) != rank) FailInvalid("Concat: ranks differ");
      // An empty input adds nothing, so its other extents may differ.
      for (int64_t i = 0; i < rank && ElementCount(d) > 0; ++i) {
        if (i != axis && d[i] != first[i]) {
          FailInvalid("Concat: input " + std::to_string(k) + " is " + DimsText(d) +
                      " and input 0 " + DimsText(first) + "; they may differ only on axis " +
                      std::to_string(axis));
        }
      }
      out_dims[axis] += d[axis];
    }
    outer_ = ElementCount(std::span(first).first(static_cast<size_t>(axis)));
    out_block_ = ElementCount(out_dims) / std::max<int64_t>(outer_, 1);
    blocks_.clear();
    for (const Dims& d : in_dims) blocks_.push_back(outer_ ? ElementCount(d) / outer_ : 0);
    out_dims_ = std::move(out_dims);
    in_dims_ = std::move(in_dims);
  }

  int64_t axis_attr_;
  std::vector<Dims> in_dims_;
  Dims out_dims_;
  int64_t outer_ = 1;
  int64_t out_block_ = 0;
  std::vector<int64_t> blocks_;  // elements each input adds per outer step
};

}  // namespace

void RegisterConcatOps(OpRegistry& r) {
  r.Add("Concat", {4,
                   [](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
                     for (size_t i = 0; i < inputs.size(); ++i) {
                       if (auto reason = CheckInputDtype(node, inputs, i, AllTypes{})) {
                         return sdk::ClaimResult::Declined(*reason);
                       }
                     }
                     return sdk::ClaimResult::Claimed();
                   },
                   [](const sdk::Node& node, std::span<const nxrt_shape> inputs, int64_t) {
                     return std::make_unique<ConcatKernel>(node.AttrInt("axis", 0), inputs);
                   }});
}

}  // namespace nxrt::cpu
