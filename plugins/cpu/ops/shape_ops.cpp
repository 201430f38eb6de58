// Ops that only relabel or report a shape: Identity, Reshape, Flatten, Squeeze, Unsqueeze, Shape
// and Size. The data ops copy the input bytes unchanged under the new dims.
#include <algorithm>

#include "cpu_kernel.hpp"
#include "owned_value.hpp"

namespace nxrt::cpu {
namespace {

using CopyableTypes = AllTypes;

// Relabelling copies bytes, so it also passes the types no kernel computes
// with: complex, float8 and the packed sub-byte types.
bool CopyableDtype(nxrt_dtype dtype) {
  switch (dtype) {
    case NXRT_DTYPE_STRING:
    case NXRT_DTYPE_COMPLEX64:
    case NXRT_DTYPE_COMPLEX128:
    case NXRT_DTYPE_FLOAT8E4M3FN:
    case NXRT_DTYPE_FLOAT8E4M3FNUZ:
    case NXRT_DTYPE_FLOAT8E5M2:
    case NXRT_DTYPE_FLOAT8E5M2FNUZ:
    case NXRT_DTYPE_FLOAT8E8M0:
    case NXRT_DTYPE_UINT4:
    case NXRT_DTYPE_INT4:
    case NXRT_DTYPE_FLOAT4E2M1:
    case NXRT_DTYPE_UINT2:
    case NXRT_DTYPE_INT2:
      return true;
    default:
      return Contains(CopyableTypes{}, dtype);
  }
}

std::optional<std::string> CheckCopyable(const sdk::Node& node,
                                         std::span<const nxrt_value_info> inputs) {
  const std::string op(node.op_type());
  if (inputs.empty() || inputs[0].kind == NXRT_VALUE_NONE) return op + ": input 0 is required";
  if (inputs[0].kind != NXRT_VALUE_TENSOR) return op + ": sequence inputs not supported";
  if (!CopyableDtype(inputs[0].dtype)) {
    return op + ": dtype " + DtypeName(inputs[0].dtype) + " not supported";
  }
  return std::nullopt;
}

struct RelabelAttributes {
  int64_t axis = 1;
  int64_t allowzero = 0;
  std::vector<int64_t> axes;
};

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

// The output dims are worked out for the kernel's input dims and, where the
// rule reads input 1 (Reshape's shape, Squeeze's and Unsqueeze's axes), for
// the values of its first eager run; a replay with the same values allocates
// nothing, and one whose values changed throws instead of working the dims
// out again. A call at other input dims works them out for those, so one
// kernel serves every shape of the node's ranks.
class RelabelKernel : public CpuKernel {
 public:
  using Rule = Dims (*)(const RelabelAttributes&, int64_t opset, const Dims& in,
                        std::span<const nxrt_value> inputs);
  RelabelKernel(std::string op, Rule rule, RelabelAttributes attributes, int64_t opset,
                bool reads_input_1, bool capture_safe, std::span<const int64_t> in_dims)
      : CpuKernel(capture_safe),
        op_(std::move(op)),
        rule_(rule),
        attributes_(std::move(attributes)),
        opset_(opset),
        reads_input_1_(reads_input_1),
        in_dims_(in_dims.begin(), in_dims.end()) {
    if (!reads_input_1_) Plan({});
  }
  bool ServesOtherShapes() const override { return true; }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& in = inputs[0].tensor;
    if (!DimsEqual(DimsSpan(in), in_dims_)) Replan(DimsSpan(in), inputs);
    if (reads_input_1_) {
      const bool present = IsPresent(inputs, 1);
      const bool same = planned_ && present == planned_present_ &&
                        (!present || SameValues(inputs[1].tensor, planned_values_));
      if (!same) {
        if (!ctx.available()) {
          FailInvalid(op_ + ": input 1 differs from the values the replayed graph was captured " +
                      "with; capture again");
        }
        Plan(inputs);
      }
    }
    WriteCopy(ctx, outputs, 0, in, out_dims_);
  }

 private:
  // Works the output dims out for input dims `dims`.
  [[gnu::noinline]] void Replan(std::span<const int64_t> dims, std::span<const nxrt_value> inputs) {
    in_dims_.assign(dims.begin(), dims.end());
    try {
      Plan(reads_input_1_ ? inputs : std::span<const nxrt_value>{});
    } catch (...) {
      in_dims_.assign(1, -1);  // matches no input (no extent is negative) until a plan is made
      planned_ = false;
      throw;
    }
  }

  void Plan(std::span<const nxrt_value> inputs) {
    Dims out_dims = rule_(attributes_, opset_, in_dims_, inputs);
    if (ElementCount(out_dims) != ElementCount(in_dims_)) {
      FailInvalid(op_ + ": cannot relabel " + DimsText(in_dims_) + " as " + DimsText(out_dims));
    }
    out_dims_ = std::move(out_dims);
    planned_present_ = IsPresent(inputs, 1);
    planned_values_ = planned_present_ ? ReadInt64s(inputs[1].tensor) : Dims{};
    planned_ = true;
  }

  std::string op_;
  Rule rule_;
  RelabelAttributes attributes_;
  int64_t opset_;
  bool reads_input_1_;
  Dims in_dims_;
  bool planned_ = false;
  bool planned_present_ = false;
  Dims planned_values_;
  Dims out_dims_;
};

Dims SameDims(const RelabelAttributes&, int64_t, const Dims& in, std::span<const nxrt_value>) {
  return in;
}

Dims ReshapeDims(const RelabelAttributes& a, int64_t, const Dims& in,
                 std::span<const nxrt_value> inputs) {
  Dims shape = ReadInt64s(inputs[1].tensor);
  int64_t inferred = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0 && a.allowzero == 0) {
      if (i >= in.size()) FailInvalid("Reshape: 0 copies a dimension the input does not have");
      shape[i] = in[i];
    }
    if (shape[i] == -1) {
      if (inferred >= 0) FailInvalid("Reshape: more than one -1 in the shape");
      inferred = static_cast<int64_t>(i);
    } else {
      if (shape[i] < 0) FailInvalid("Reshape: negative dimension in the shape");
    }
  }
  if (inferred >= 0) {
    shape[inferred] = 1;
    const int64_t known = ElementCount(shape);
    shape[inferred] = known == 0 ? 0 : ElementCount(in) / known;
  }
  return shape;
}

Dims FlattenDims(const RelabelAttributes& a, int64_t, const Dims& in, std::span<const nxrt_value>) {
  const int64_t rank = static_cast<int64_t>(in.size());
  const int64_t axis = a.axis < 0 ? a.axis + rank : a.axis;
  if (axis < 0 || axis > rank) FailInvalid("Flatten: axis out of range");
  int64_t outer = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= in[i];
  return {outer, axis == rank ? 1 : ElementCount(in) / std::max<int64_t>(outer, 1)};
}

std::vector<int64_t> AxesFrom(const RelabelAttributes& a, int64_t opset,
                              std::span<const nxrt_value> inputs) {
  if (opset >= 13) return IsPresent(inputs, 1) ? ReadInt64s(inputs[1].tensor) : Dims{};
  return a.axes;
}

Dims SqueezeDims(const RelabelAttributes& a, int64_t opset, const Dims& in,
                 std::span<const nxrt_value> inputs) {
  const int64_t rank = static_cast<int64_t>(in.size());
  std::vector<bool> drop(in.size(), false);
  const std::vector<int64_t> axes = AxesFrom(a, opset, inputs);
  if (axes.empty()) {
    for (size_t i = 0; i < in.size(); ++i) drop[i] = in[i] == 1;
  }
  for (int64_t axis : axes) {
    const int64_t ax = NormalizeAxis(axis, rank, "Squeeze");
    if (in[ax] != 1) FailInvalid("Squeeze: axis " + std::to_string(axis) + " is not 1");
    drop[ax] = true;
  }
  Dims out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (!drop[i]) out.push_back(in[i]);
  }
  return out;
}

Dims UnsqueezeDims(const RelabelAttributes& a, int64_t opset, const Dims& in,
                   std::span<const nxrt_value> inputs) {
  const std::vector<int64_t> axes = AxesFrom(a, opset, inputs);
  const int64_t rank = static_cast<int64_t>(in.size() + axes.size());
  std::vector<bool> inserted(rank, false);
  for (int64_t axis : axes) {
    const int64_t ax = NormalizeAxis(axis, rank, "Unsqueeze");
    if (inserted[ax]) FailInvalid("Unsqueeze: repeated axis");
    inserted[ax] = true;
  }
  Dims out;
  size_t next = 0;
  for (int64_t i = 0; i < rank; ++i) out.push_back(inserted[i] ? 1 : in[next++]);
  return out;
}

// Identity of a tensor: the call's input dims and bytes, so one kernel
// serves the node at every shape of its rank.
class IdentityKernel : public CpuKernel {
 public:
  explicit IdentityKernel(bool capture_safe) : CpuKernel(capture_safe) {}
  bool ServesOtherShapes() const override { return true; }
  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    WriteCopy(ctx, outputs, 0, inputs[0].tensor, DimsSpan(inputs[0].tensor));
  }
};

// Identity of a sequence or an empty optional: the value is copied whole
// through the host's sequence services, which allocate.
class PassValueKernel : public CpuKernel {
 public:
  PassValueKernel() : CpuKernel(false) {}
  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    WriteValue(ctx, outputs, 0, inputs[0]);
  }
};

void AddRelabel(OpRegistry& r, const char* name, RelabelKernel::Rule rule, int64_t since = 1) {
  r.Add(name,
        {since,
         [](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
           const std::string op(node.op_type());
           // Identity also passes a sequence (or an empty optional) through.
           if (op == "Identity" && !inputs.empty() && inputs[0].kind == NXRT_VALUE_SEQUENCE) {
             return sdk::ClaimResult::Claimed();
           }
           return ClaimUnless(CheckCopyable(node, inputs));
         },
         [rule](const sdk::Node& node, std::span<const nxrt_shape> inputs, int64_t opset) {
           // A sequence, or an optional that is empty (no dtype).
           if (rule == &SameDims && (inputs[0].dtype == NXRT_DTYPE_UNDEFINED ||
                                     node.input_info(0).kind == NXRT_VALUE_SEQUENCE)) {
             return std::unique_ptr<CpuKernel>(std::make_unique<PassValueKernel>());
           }
           // Replayable unless a string goes through the host.
           const bool capture_safe = inputs[0].dtype != NXRT_DTYPE_STRING;
           if (rule == &SameDims) {
             return std::unique_ptr<CpuKernel>(std::make_unique<IdentityKernel>(capture_safe));
           }
           RelabelAttributes a;
           a.axis = node.AttrInt("axis", 1);
           a.allowzero = node.AttrInt("allowzero", 0);
           a.axes = node.AttrInts("axes");
           const bool reads_input_1 =
               rule == &ReshapeDims ||
               (opset >= 13 && (rule == &SqueezeDims || rule == &UnsqueezeDims));
           return std::unique_ptr<CpuKernel>(std::make_unique<RelabelKernel>(
               std::string(node.op_type()), rule, std::move(a), opset, reads_input_1, capture_safe,
               std::span<const int64_t>(inputs[0].dims, inputs[0].rank)));
         }});
}

// Shape and Size: compute writes the call's input extents (those the
// attributes select) into the preallocated output, allocating nothing:
// capture-safe.
class ShapeKernel : public CpuKernel {
 public:
  ShapeKernel(bool size_only, int64_t start, std::optional<int64_t> end, size_t rank)
      : CpuKernel(true), size_only_(size_only) {
    if (size_only) return;
    const auto clamp = [rank = static_cast<int64_t>(rank)](int64_t v) {
      return std::clamp(v < 0 ? v + rank : v, int64_t{0}, rank);
    };
    first_ = clamp(start);
    last_ = std::max(first_, clamp(end.value_or(static_cast<int64_t>(rank))));
    out_dims_ = {last_ - first_};
  }
  // The extents are read from the call's input; only the rank is fixed.
  bool ServesOtherShapes() const override { return true; }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const std::span<const int64_t> in = DimsSpan(inputs[0].tensor);
    int64_t* out =
        MutableDataAs<int64_t>(PrepareOutput(ctx, outputs, 0, NXRT_DTYPE_INT64, out_dims_));
    if (size_only_) {
      *out = ElementCount(in);
    } else {
      std::copy(in.begin() + first_, in.begin() + last_, out);
    }
  }

 private:
  bool size_only_;
  int64_t first_ = 0;
  int64_t last_ = 0;
  Dims out_dims_;  // empty for Size's scalar
};

}  // namespace

void RegisterShapeOps(OpRegistry& r) {
  AddRelabel(r, "Identity", SameDims);
  AddRelabel(r, "Reshape", ReshapeDims, 5);
  AddRelabel(r, "Flatten", FlattenDims);
  AddRelabel(r, "Squeeze", SqueezeDims);
  AddRelabel(r, "Unsqueeze", UnsqueezeDims);
  auto claim_any = [](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
    return ClaimUnless(CheckCopyable(node, inputs));
  };
  r.Add("Shape",
        {1, claim_any, [](const sdk::Node& node, std::span<const nxrt_shape> inputs, int64_t) {
           std::optional<int64_t> end;
           if (node.attr_type("end") != NXRT_ATTR_UNDEFINED) end = node.AttrInt("end", 0);
           return std::make_unique<ShapeKernel>(false, node.AttrInt("start", 0), end,
                                                inputs[0].rank);
         }});
  r.Add("Size", {1, claim_any, [](const sdk::Node&, std::span<const nxrt_shape> inputs, int64_t) {
                   return std::make_unique<ShapeKernel>(true, 0, std::nullopt, inputs[0].rank);
                 }});
}

}  // namespace nxrt::cpu
