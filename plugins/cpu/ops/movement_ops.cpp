// Data movement: Transpose, Slice, Expand, Tile, Split, DepthToSpace,
// SpaceToDepth and ReverseSequence, for every fixed-size dtype (Concat is
// concat_ops.cpp, Pad pad_ops.cpp). Most are one strided copy of a view of
// the input (see strided_copy.hpp).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

#include "broadcast.hpp"
#include "cpu_kernel.hpp"
#include "strided_copy.hpp"

namespace nxrt::cpu {
namespace {

std::optional<std::string> CheckFixedSize(const sdk::Node& node,
                                          std::span<const nxrt_value_info> inputs, size_t index) {
  return CheckInputDtype(node, inputs, index, AllTypes{});
}

ClaimFn ClaimFixedSize() {
  return [](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
    return ClaimUnless(CheckFixedSize(node, inputs, 0));
  };
}

// Computes the view (dims, strides, offset) to copy from inputs.
using ViewFn = std::function<void(std::span<const nxrt_value> inputs, Dims& dims, Dims& strides,
                                  int64_t& offset)>;

// The values of an int32 or int64 tensor equal `values`; reads in place, so
// the check allocates nothing.
bool SameValues(const nxrt_tensor& t, const Dims& values) {
  if (ElementCount(t) != static_cast<int64_t>(values.size())) return false;
  for (size_t i = 0; i < values.size(); ++i) {
    const int64_t v = t.dtype == NXRT_DTYPE_INT32 ? DataAs<int32_t>(t)[i] : DataAs<int64_t>(t)[i];
    if (v != values[i]) return false;
  }
  return true;
}

// The view is worked out for the kernel's input dims and the values of its
// other inputs (Slice's starts and ends, Expand's shape, Tile's repeats) at
// its first eager run; a replay with the same values allocates nothing, and
// one whose values changed throws instead of working the view out again. A
// call at other input dims works the view out for them, so one kernel
// serves every shape of the node's ranks.
class ViewCopyKernel : public CpuKernel {
 public:
  // `serves_other_shapes`: false where the node's checks of its input dims
  // were made with the kernel and `view` does not make them again.
  ViewCopyKernel(std::string op, ViewFn view, std::span<const nxrt_shape> inputs,
                 bool serves_other_shapes = true)
      : CpuKernel(true),
        op_(std::move(op)),
        view_(std::move(view)),
        in_dims_(inputs[0].dims, inputs[0].dims + inputs[0].rank),
        serves_other_shapes_(serves_other_shapes) {}
  bool ServesOtherShapes() const override { return serves_other_shapes_; }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& in = inputs[0].tensor;
    if (!DimsEqual(DimsSpan(in), in_dims_)) Replan(inputs);
    if (!Planned(inputs)) {
      if (!ctx.available()) {
        FailInvalid(op_ + ": an input differs from the values the replayed graph was captured " +
                    "with; capture again");
      }
      Plan(inputs);
    }
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, in.dtype, out_dims_);
    StridedCopy(ElementSize(in.dtype), view_dims_, view_strides_, in.data, offset_, out.data);
  }

  // When the output's dims differ from the view's (Tile, DepthToSpace).
  std::function<Dims(const Dims&, std::span<const nxrt_value>)> out_dims_from_view_;

 private:
  // Works the view out for the call's input dims.
  [[gnu::noinline]] void Replan(std::span<const nxrt_value> inputs) {
    const std::span<const int64_t> dims = DimsSpan(inputs[0].tensor);
    in_dims_.assign(dims.begin(), dims.end());
    try {
      Plan(inputs);
    } catch (...) {
      in_dims_.assign(1, -1);  // matches no input (no extent is negative) until a plan is made
      planned_ = false;
      throw;
    }
  }

  bool Planned(std::span<const nxrt_value> inputs) const {
    if (!planned_ || inputs.size() != planned_values_.size() + 1) return false;
    for (size_t i = 1; i < inputs.size(); ++i) {
      const std::optional<Dims>& values = planned_values_[i - 1];
      if (IsPresent(inputs, i) != values.has_value()) return false;
      if (values && !SameValues(inputs[i].tensor, *values)) return false;
    }
    return true;
  }

  void Plan(std::span<const nxrt_value> inputs) {
    view_dims_.clear();
    view_strides_.clear();
    offset_ = 0;
    view_(inputs, view_dims_, view_strides_, offset_);
    out_dims_ = out_dims_from_view_ ? out_dims_from_view_(view_dims_, inputs) : view_dims_;
    planned_values_.clear();
    for (size_t i = 1; i < inputs.size(); ++i) {
      planned_values_.push_back(IsPresent(inputs, i) ? std::optional(ReadInt64s(inputs[i].tensor))
                                                     : std::nullopt);
    }
    planned_ = true;
  }

  std::string op_;
  ViewFn view_;
  Dims in_dims_;
  bool serves_other_shapes_;
  bool planned_ = false;
  std::vector<std::optional<Dims>> planned_values_;  // inputs 1 on; nullopt when absent
  Dims view_dims_;
  Dims view_strides_;
  int64_t offset_ = 0;
  Dims out_dims_;
};

void TransposeView(const std::vector<int64_t>& perm_attr, std::span<const nxrt_value> inputs,
                   Dims& dims, Dims& strides, int64_t&) {
  const Dims in = DimsOf(inputs[0].tensor);
  const Dims in_strides = StridesOf(in);
  std::vector<int64_t> perm = perm_attr;
  if (perm.empty()) {
    for (size_t i = in.size(); i-- > 0;) perm.push_back(static_cast<int64_t>(i));
  }
  if (perm.size() != in.size()) FailInvalid("Transpose: perm does not match the rank");
  std::vector<bool> taken(in.size(), false);
  for (int64_t p : perm) {
    const int64_t axis = NormalizeAxis(p, static_cast<int64_t>(in.size()), "Transpose");
    if (taken[axis]) {
      FailInvalid("Transpose: perm names axis " + std::to_string(axis) +
                  " twice; give each axis once");
    }
    taken[axis] = true;
    dims.push_back(in[axis]);
    strides.push_back(in_strides[axis]);
  }
}

struct SliceSpec {
  std::vector<int64_t> starts, ends, axes, steps;
};

void SliceView(const SliceSpec& spec, const Dims& in, Dims& dims, Dims& strides, int64_t& offset) {
  const int64_t rank = static_cast<int64_t>(in.size());
  const Dims in_strides = StridesOf(in);
  dims = in;
  strides = in_strides;
  const size_t count = spec.starts.size();
  if (spec.ends.size() != count || (!spec.axes.empty() && spec.axes.size() != count) ||
      (!spec.steps.empty() && spec.steps.size() != count)) {
    FailInvalid("Slice: starts, ends, axes and steps must have one entry per sliced axis, not " +
                std::to_string(count) + ", " + std::to_string(spec.ends.size()) + ", " +
                std::to_string(spec.axes.size()) + " and " + std::to_string(spec.steps.size()) +
                " (axes and steps may be absent); fix their lengths");
  }
  for (size_t i = 0; i < count; ++i) {
    const int64_t axis =
        NormalizeAxis(spec.axes.empty() ? static_cast<int64_t>(i) : spec.axes[i], rank, "Slice");
    const int64_t dim = in[axis];
    const int64_t step = spec.steps.empty() ? 1 : spec.steps[i];
    if (step == 0) FailInvalid("Slice: step is zero");
    int64_t start = spec.starts[i];
    int64_t end = spec.ends[i];
    if (start < 0) start += dim;
    if (end < 0) end += dim;
    int64_t count = 0;
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
      count = end > start ? (end - start + step - 1) / step : 0;
    } else {
      start = std::clamp<int64_t>(start, -1, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
      count = start > end ? (start - end + (-step) - 1) / (-step) : 0;
    }
    dims[axis] = count;
    if (count > 0) offset += start * in_strides[axis];
    strides[axis] = in_strides[axis] * step;
  }
}

// Split. With its parts given by the split attribute, or as even parts from
// num_outputs or the output count, the kernel made for one input shape works
// every part out once and its compute allocates nothing, so it may run in a
// capture; parts given by the split input (opset 13 on) are read every run.
class SplitKernel : public CpuKernel {
 public:
  SplitKernel(const sdk::Node& node, std::span<const nxrt_shape> inputs, int64_t opset)
      : CpuKernel(!SplitFromInput(node, opset)),
        axis_(node.AttrInt("axis", 0)),
        num_outputs_(node.AttrInt("num_outputs", 0)),
        from_input_(SplitFromInput(node, opset)) {
    if (!from_input_) {
      in_dims_.assign(inputs[0].dims, inputs[0].dims + inputs[0].rank);
      Plan(node.AttrInts("split"), static_cast<int64_t>(node.output_count()));
    }
  }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& in = inputs[0].tensor;
    if (from_input_) {
      in_dims_ = DimsOf(in);
      Plan(IsPresent(inputs, 1) ? ReadInt64s(inputs[1].tensor) : std::vector<int64_t>{},
           static_cast<int64_t>(outputs.size()));
    } else if (!DimsEqual(DimsSpan(in), in_dims_)) {
      FailInvalid("Split: kernel made for " + DimsText(in_dims_) + " got " +
                  DimsText(DimsSpan(in)) + "; make a kernel for this shape");
    }
    for (size_t i = 0; i < parts_.size(); ++i) {
      nxrt_tensor& out = PrepareOutput(ctx, outputs, i, in.dtype, parts_[i]);
      StridedCopy(ElementSize(in.dtype), parts_[i], strides_, in.data, starts_[i], out.data);
    }
  }

 private:
  static bool SplitFromInput(const sdk::Node& node, int64_t opset) {
    if (opset < 13 || node.input_count() < 2) return false;
    const auto name = node.input_name(1);
    return name.has_value() && !name->empty();
  }

  // Works out each part's dims and first element from in_dims_ and the part
  // sizes (none: even parts over num_outputs, else over the outputs).
  void Plan(std::vector<int64_t> split, int64_t parts) {
    const int64_t axis = NormalizeAxis(axis_, static_cast<int64_t>(in_dims_.size()), "Split");
    if (num_outputs_ > 0 && num_outputs_ != parts) {
      FailInvalid("Split: num_outputs is " + std::to_string(num_outputs_) + " but the node has " +
                  std::to_string(parts) + " outputs");
    }
    if (split.empty()) {
      const int64_t chunk = (in_dims_[axis] + parts - 1) / std::max<int64_t>(parts, 1);
      for (int64_t i = 0; i < parts; ++i) {
        split.push_back(std::max<int64_t>(0, std::min(chunk, in_dims_[axis] - i * chunk)));
      }
    }
    if (static_cast<int64_t>(split.size()) != parts) {
      FailInvalid("Split: " + std::to_string(split.size()) + " parts for " + std::to_string(parts) +
                  " outputs");
    }
    int64_t total = 0;
    for (int64_t size : split) {
      if (size < 0) {
        FailInvalid("Split: a part of " + std::to_string(size) +
                    " elements; parts must not be negative");
      }
      total += size;
    }
    if (total != in_dims_[axis]) {
      FailInvalid("Split: parts of " + std::to_string(total) + " elements in all for axis " +
                  std::to_string(axis) + " of " + DimsText(in_dims_) +
                  "; give parts that add up to the axis's extent");
    }
    strides_ = StridesOf(in_dims_);
    parts_.assign(split.size(), in_dims_);
    starts_.assign(split.size(), 0);
    int64_t start = 0;
    for (size_t i = 0; i < split.size(); ++i) {
      parts_[i][axis] = split[i];
      starts_[i] = start * strides_[axis];
      start += split[i];
    }
  }

  int64_t axis_;
  int64_t num_outputs_;
  bool from_input_;
  Dims in_dims_;
  Dims strides_;
  std::vector<Dims> parts_;
  std::vector<int64_t> starts_;  // each part's first element in the input
};

class ReverseSequenceKernel : public CpuKernel {
 public:
  ReverseSequenceKernel(int64_t batch_axis, int64_t time_axis)
      : CpuKernel(false), batch_axis_(batch_axis), time_axis_(time_axis) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& in = inputs[0].tensor;
    const Dims dims = DimsOf(in);
    const int64_t rank = static_cast<int64_t>(dims.size());
    const int64_t batch_axis = NormalizeAxis(batch_axis_, rank, "ReverseSequence");
    const int64_t time_axis = NormalizeAxis(time_axis_, rank, "ReverseSequence");
    const std::vector<int64_t> lengths = ReadInt64s(inputs[1].tensor);
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, in.dtype, dims);
    const size_t size = ElementSize(in.dtype);
    const Dims strides = StridesOf(dims);
    const int64_t total = ElementCount(dims);
    const auto* x = static_cast<const std::byte*>(in.data);
    auto* y = static_cast<std::byte*>(out.data);
    for (int64_t i = 0; i < total; ++i) {
      const int64_t b = (i / strides[batch_axis]) % dims[batch_axis];
      const int64_t t = (i / strides[time_axis]) % dims[time_axis];
      const int64_t length = std::clamp<int64_t>(lengths.at(b), 0, dims[time_axis]);
      const int64_t source = t < length ? i + (length - 1 - 2 * t) * strides[time_axis] : i;
      std::memcpy(y + i * size, x + source * size, size);
    }
  }

 private:
  int64_t batch_axis_;
  int64_t time_axis_;
};

}  // namespace

void RegisterMovementOps(OpRegistry& r) {
  r.Add("Transpose", {1, ClaimFixedSize(),
                      [](const sdk::Node& node, std::span<const nxrt_shape> inputs, int64_t) {
                        const std::vector<int64_t> perm = node.AttrInts("perm");
                        return std::make_unique<ViewCopyKernel>(
                            "Transpose",
                            [perm](std::span<const nxrt_value> in, Dims& d, Dims& s, int64_t& o) {
                              TransposeView(perm, in, d, s, o);
                            },
                            inputs);
                      }});
  r.Add(
      "Slice",
      {1, ClaimFixedSize(),
       [](const sdk::Node& node, std::span<const nxrt_shape> inputs, int64_t opset) {
         SliceSpec attrs{node.AttrInts("starts"), node.AttrInts("ends"), node.AttrInts("axes"), {}};
         return std::make_unique<ViewCopyKernel>(
             "Slice",
             [attrs, opset](std::span<const nxrt_value> in, Dims& d, Dims& s, int64_t& o) {
               SliceSpec spec = attrs;
               if (opset >= 10) {
                 spec.starts = ReadInt64s(in[1].tensor);
                 spec.ends = ReadInt64s(in[2].tensor);
                 spec.axes = IsPresent(in, 3) ? ReadInt64s(in[3].tensor) : Dims{};
                 spec.steps = IsPresent(in, 4) ? ReadInt64s(in[4].tensor) : Dims{};
               }
               SliceView(spec, DimsOf(in[0].tensor), d, s, o);
             },
             inputs);
       }});
  r.Add("Expand",
        {8, ClaimFixedSize(), [](const sdk::Node&, std::span<const nxrt_shape> inputs, int64_t) {
           return std::make_unique<ViewCopyKernel>(
               "Expand",
               [](std::span<const nxrt_value> in, Dims& d, Dims& s, int64_t&) {
                 const Dims from = DimsOf(in[0].tensor);
                 const auto plan = MakeBroadcastPlan<2>({ReadInt64s(in[1].tensor), from}, "Expand");
                 d = plan.out_dims;
                 const Dims from_strides = StridesOf(from);
                 s.assign(d.size(), 0);
                 const size_t pad = d.size() - from.size();
                 for (size_t i = 0; i < from.size(); ++i) {
                   s[pad + i] = from[i] == 1 ? 0 : from_strides[i];
                 }
               },
               inputs);
         }});
  r.Add("Tile",
        {6, ClaimFixedSize(), [](const sdk::Node&, std::span<const nxrt_shape> inputs, int64_t) {
           auto kernel = std::make_unique<ViewCopyKernel>(
               "Tile",
               [](std::span<const nxrt_value> in, Dims& d, Dims& s, int64_t&) {
                 const Dims from = DimsOf(in[0].tensor);
                 const Dims repeats = ReadInt64s(in[1].tensor);
                 if (repeats.size() != from.size()) FailInvalid("Tile: repeats length");
                 const Dims from_strides = StridesOf(from);
                 for (size_t i = 0; i < from.size(); ++i) {
                   d.push_back(repeats[i]);
                   s.push_back(0);
                   d.push_back(from[i]);
                   s.push_back(from_strides[i]);
                 }
               },
               inputs);
           kernel->out_dims_from_view_ = [](const Dims& view, std::span<const nxrt_value>) {
             Dims out;
             for (size_t i = 0; i < view.size(); i += 2) {
               int64_t extent = 0;
               if (__builtin_mul_overflow(view[i], view[i + 1], &extent)) {
                 FailInvalid("Tile: repeating extent " + std::to_string(view[i + 1]) + " " +
                             std::to_string(view[i]) + " times overflows int64; fix the repeats");
               }
               out.push_back(extent);
             }
             return out;
           };
           return kernel;
         }});
  auto space_depth = [](bool to_space) {
    return [to_space](const sdk::Node& node, std::span<const nxrt_shape> inputs,
                      int64_t) -> std::unique_ptr<CpuKernel> {
      const int64_t b = node.AttrInt("blocksize", 0);
      const bool crd = node.AttrString("mode", "DCR") == "CRD";
      if (b <= 0) FailInvalid("blocksize must be positive");
      if (inputs[0].rank != 4) FailInvalid("DepthToSpace/SpaceToDepth: input must be 4-D");
      const int64_t channels = inputs[0].dims[1], height = inputs[0].dims[2],
                    width = inputs[0].dims[3];
      // Divisibility without forming b * b, which a huge blocksize overflows.
      if (to_space && (channels % b != 0 || (channels / b) % b != 0)) {
        FailInvalid("DepthToSpace: " + std::to_string(channels) +
                    " channels do not divide into blocksize^2 = " + std::to_string(b) + "^2");
      }
      if (!to_space && (height % b != 0 || width % b != 0)) {
        FailInvalid("SpaceToDepth: a " + std::to_string(height) + "x" + std::to_string(width) +
                    " image does not divide into blocks of " + std::to_string(b));
      }
      auto kernel = std::make_unique<ViewCopyKernel>(
          std::string(node.op_type()),
          [b, crd, to_space](std::span<const nxrt_value> in, Dims& d, Dims& s, int64_t&) {
            const Dims x = DimsOf(in[0].tensor);
            const int64_t n = x[0], c = x[1], h = x[2], w = x[3];
            if (to_space) {
              const int64_t c2 = c / (b * b);
              const int64_t hw = h * w;
              const int64_t sc2 = crd ? b * b * hw : hw;
              const int64_t sb1 = crd ? b * hw : b * c2 * hw;
              const int64_t sb2 = crd ? hw : c2 * hw;
              d = {n, c2, h, b, w, b};
              s = {c * hw, sc2, w, sb1, 1, sb2};
            } else {
              // Output channels are (row, column, channel) in DCR and
              // (channel, row, column) in CRD.
              const int64_t h2 = h / b, w2 = w / b;
              if (crd) {
                d = {n, c, b, b, h2, w2};
                s = {c * h * w, h * w, w, 1, b * w, b};
              } else {
                d = {n, b, b, c, h2, w2};
                s = {c * h * w, w, 1, h * w, b * w, b};
              }
            }
          },
          inputs, false);
      kernel->out_dims_from_view_ = [to_space](const Dims& v, std::span<const nxrt_value>) {
        return to_space ? Dims{v[0], v[1], v[2] * v[3], v[4] * v[5]}
                        : Dims{v[0], v[1] * v[2] * v[3], v[4], v[5]};
      };
      return kernel;
    };
  };
  r.Add("DepthToSpace", {1, ClaimFixedSize(), space_depth(true)});
  r.Add("SpaceToDepth", {1, ClaimFixedSize(), space_depth(false)});
  r.Add("Split", {2, ClaimFixedSize(),
                  [](const sdk::Node& node, std::span<const nxrt_shape> inputs, int64_t opset) {
                    return std::make_unique<SplitKernel>(node, inputs, opset);
                  }});
  r.Add("ReverseSequence",
        {10, ClaimFixedSize(), [](const sdk::Node& node, std::span<const nxrt_shape>, int64_t) {
           return std::make_unique<ReverseSequenceKernel>(node.AttrInt("batch_axis", 1),
                                                          node.AttrInt("time_axis", 0));
         }});
}

}  // namespace nxrt::cpu
