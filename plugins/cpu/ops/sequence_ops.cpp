// Sequences of tensors: SequenceEmpty, SequenceConstruct, SequenceAt,
// SequenceInsert, SequenceErase, SequenceLength, ConcatFromSequence,
// SplitToSequence, and SequenceMap (whose body the host runs once per
// element). A sequence output is built through the host's sequence
// services, which allocate, so none of these kernels is capture-safe.
#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "axis_ranges.hpp"
#include "cpu_kernel.hpp"
#include "dtype.hpp"
#include "owned_value.hpp"

namespace nxrt::cpu {
namespace {

// A kernel that is one function of its inputs.
class SequenceKernel : public CpuKernel {
 public:
  using Fn =
      std::function<void(sdk::ComputeContext&, std::span<const nxrt_value>, std::span<nxrt_value>)>;
  explicit SequenceKernel(Fn fn) : CpuKernel(false), fn_(std::move(fn)) {}
  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    fn_(ctx, inputs, outputs);
  }

 private:
  Fn fn_;
};

const nxrt_value& SequenceInput(std::span<const nxrt_value> inputs, size_t index, const char* op) {
  if (index >= inputs.size() || inputs[index].kind != NXRT_VALUE_SEQUENCE) {
    FailInvalid(std::string(op) + ": input " + std::to_string(index) + " must be a sequence");
  }
  return inputs[index];
}

const nxrt_tensor& TensorInput(std::span<const nxrt_value> inputs, size_t index, const char* op) {
  if (!IsPresent(inputs, index)) {
    FailInvalid(std::string(op) + ": input " + std::to_string(index) + " must be a tensor");
  }
  return inputs[index].tensor;
}

// A position into a sequence of `length`, negative from the end; valid in
// [0, length + extra).
size_t Position(const nxrt_tensor& t, size_t length, size_t extra, const char* op) {
  const int64_t n = static_cast<int64_t>(length);
  int64_t p = ReadInt64s(t).at(0);
  if (p < -n || p >= n + static_cast<int64_t>(extra)) {
    FailInvalid(std::string(op) + ": position " + std::to_string(p) + " is outside a sequence of " +
                std::to_string(length));
  }
  return static_cast<size_t>(p < 0 ? p + n : p);
}

void WriteInt64(sdk::ComputeContext& ctx, std::span<nxrt_value> outputs, int64_t value) {
  nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, NXRT_DTYPE_INT64, {});
  *MutableDataAs<int64_t>(out) = value;
}

// ---- the ops ----------------------------------------------------------------

void SequenceEmpty(sdk::ComputeContext& ctx, std::span<const nxrt_value>,
                   std::span<nxrt_value> outputs) {
  WriteSequence(ctx, outputs, 0, {});
}

void SequenceConstruct(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
                       std::span<nxrt_value> outputs) {
  std::vector<nxrt_tensor> elements;
  for (size_t i = 0; i < inputs.size(); ++i) {
    elements.push_back(TensorInput(inputs, i, "SequenceConstruct"));
  }
  WriteSequence(ctx, outputs, 0, elements);
}

void SequenceAt(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
                std::span<nxrt_value> outputs) {
  const auto elements = ElementsOf(SequenceInput(inputs, 0, "SequenceAt"));
  const nxrt_tensor& e =
      elements[Position(TensorInput(inputs, 1, "SequenceAt"), elements.size(), 0, "SequenceAt")];
  WriteCopy(ctx, outputs, 0, e, DimsSpan(e));
}

void SequenceInsert(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
                    std::span<nxrt_value> outputs) {
  const auto given = ElementsOf(SequenceInput(inputs, 0, "SequenceInsert"));
  std::vector<nxrt_tensor> elements(given.begin(), given.end());
  const size_t at = IsPresent(inputs, 2)
                        ? Position(inputs[2].tensor, elements.size(), 1, "SequenceInsert")
                        : elements.size();
  elements.insert(elements.begin() + static_cast<ptrdiff_t>(at),
                  TensorInput(inputs, 1, "SequenceInsert"));
  WriteSequence(ctx, outputs, 0, elements);
}

void SequenceErase(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
                   std::span<nxrt_value> outputs) {
  const auto given = ElementsOf(SequenceInput(inputs, 0, "SequenceErase"));
  std::vector<nxrt_tensor> elements(given.begin(), given.end());
  if (elements.empty()) FailInvalid("SequenceErase: the sequence is empty");
  const size_t at = IsPresent(inputs, 1)
                        ? Position(inputs[1].tensor, elements.size(), 0, "SequenceErase")
                        : elements.size() - 1;
  elements.erase(elements.begin() + static_cast<ptrdiff_t>(at));
  WriteSequence(ctx, outputs, 0, elements);
}

void SequenceLength(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
                    std::span<nxrt_value> outputs) {
  WriteInt64(ctx, outputs,
             static_cast<int64_t>(SequenceInput(inputs, 0, "SequenceLength").sequence_length));
}

std::unique_ptr<CpuKernel> MakeConcatFromSequence(const sdk::Node& node,
                                                  std::span<const nxrt_shape>, int64_t) {
  const int64_t axis_attr = node.AttrInt("axis", 0);
  const bool new_axis = node.AttrInt("new_axis", 0) != 0;
  return std::make_unique<SequenceKernel>([axis_attr, new_axis](sdk::ComputeContext& ctx,
                                                                std::span<const nxrt_value> inputs,
                                                                std::span<nxrt_value> outputs) {
    const auto elements = ElementsOf(SequenceInput(inputs, 0, "ConcatFromSequence"));
    if (elements.empty()) FailInvalid("ConcatFromSequence: the sequence is empty");
    const nxrt_tensor& first = elements.front();
    const int64_t rank = static_cast<int64_t>(first.rank) + (new_axis ? 1 : 0);
    const int64_t axis = NormalizeAxis(axis_attr, rank, "ConcatFromSequence: axis");
    // Each element seen at the output's rank: a new axis is an extent of 1.
    std::vector<Dims> parts;
    Dims dims;
    for (const nxrt_tensor& e : elements) {
      Dims d = DimsOf(e);
      if (new_axis) d.insert(d.begin() + axis, 1);
      if (e.dtype != first.dtype || static_cast<int64_t>(d.size()) != rank) {
        FailInvalid("ConcatFromSequence: elements differ in dtype or rank");
      }
      if (dims.empty()) {
        dims = d;
      } else {
        for (int64_t k = 0; k < rank; ++k) {
          if (k != axis && d[k] != dims[k]) {
            FailInvalid("ConcatFromSequence: element " + DimsText(d) + " does not fit " +
                        DimsText(dims) + " off axis " + std::to_string(axis));
          }
        }
        dims[axis] += d[axis];
      }
      parts.push_back(std::move(d));
    }
    const size_t element_size = ElementSize(first.dtype);
    if (element_size == 0) {
      FailUnsupported("ConcatFromSequence: dtype " + DtypeName(first.dtype) + " not supported");
    }
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, first.dtype, dims);
    const AxisGeometry g = AxisGeometryOf(dims, axis, element_size);
    int64_t begin = 0;
    for (size_t i = 0; i < elements.size(); ++i) {
      ScatterAxisRange(g, static_cast<std::byte*>(out.data), begin, parts[i][axis],
                       static_cast<const std::byte*>(elements[i].data));
      begin += parts[i][axis];
    }
  });
}

std::unique_ptr<CpuKernel> MakeSplitToSequence(const sdk::Node& node, std::span<const nxrt_shape>,
                                               int64_t) {
  const int64_t axis_attr = node.AttrInt("axis", 0);
  const bool keepdims = node.AttrInt("keepdims", 1) != 0;
  return std::make_unique<SequenceKernel>([axis_attr, keepdims](sdk::ComputeContext& ctx,
                                                                std::span<const nxrt_value> inputs,
                                                                std::span<nxrt_value> outputs) {
    const nxrt_tensor& in = TensorInput(inputs, 0, "SplitToSequence");
    const int64_t axis =
        NormalizeAxis(axis_attr, static_cast<int64_t>(in.rank), "SplitToSequence: axis");
    const int64_t extent = in.dims[axis];
    std::vector<int64_t> lengths;
    bool squeeze = false;
    if (!IsPresent(inputs, 1)) {
      lengths.assign(static_cast<size_t>(extent), 1);
      squeeze = !keepdims;
    } else if (inputs[1].tensor.rank == 0) {
      const int64_t chunk = ReadInt64s(inputs[1].tensor).at(0);
      if (chunk <= 0) FailInvalid("SplitToSequence: split must be positive");
      for (int64_t at = 0; at < extent; at += chunk)
        lengths.push_back(std::min(chunk, extent - at));
    } else {
      lengths = ReadInt64s(inputs[1].tensor);
      int64_t total = 0;
      for (int64_t l : lengths) total += l;
      if (total != extent) {
        FailInvalid("SplitToSequence: split sums to " + std::to_string(total) + ", not " +
                    std::to_string(extent));
      }
    }
    const size_t element_size = ElementSize(in.dtype);
    if (element_size == 0) {
      FailUnsupported("SplitToSequence: dtype " + DtypeName(in.dtype) + " not supported");
    }
    const Dims dims = DimsOf(in);
    const AxisGeometry g = AxisGeometryOf(dims, axis, element_size);
    ctx.AllocateSequenceOutput(0, lengths.size());
    int64_t begin = 0;
    for (size_t i = 0; i < lengths.size(); ++i) {
      Dims part = dims;
      part[axis] = lengths[i];
      if (squeeze) part.erase(part.begin() + axis);
      nxrt_tensor out = ctx.AllocateSequenceElement(0, i, in.dtype, part);
      GatherAxisRange(g, static_cast<const std::byte*>(in.data), begin, lengths[i],
                      static_cast<std::byte*>(out.data));
      begin += lengths[i];
    }
    outputs[0].kind = NXRT_VALUE_SEQUENCE;
  });
}

// SequenceMap: the body maps element i of every sequence input (and every
// tensor input whole) to element i of every output sequence.
void SequenceMap(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
                 std::span<nxrt_value> outputs) {
  const size_t length = SequenceInput(inputs, 0, "SequenceMap").sequence_length;
  std::vector<std::vector<OwnedTensor>> mapped(outputs.size());
  std::vector<nxrt_value> results(outputs.size());
  for (size_t i = 0; i < length; ++i) {
    std::vector<nxrt_value> body_inputs(inputs.begin(), inputs.end());
    for (nxrt_value& v : body_inputs) {
      if (v.kind != NXRT_VALUE_SEQUENCE) continue;
      if (v.sequence_length != length) {
        FailInvalid("SequenceMap: sequence inputs differ in length");
      }
      const nxrt_tensor element = v.sequence[i];
      v.kind = NXRT_VALUE_TENSOR;
      v.tensor = element;
    }
    for (nxrt_value& r : results)
      r = nxrt_value{sizeof(nxrt_value), NXRT_VALUE_NONE, {}, 0, nullptr};
    ctx.RunSubgraph("body", body_inputs, results);
    for (size_t k = 0; k < results.size(); ++k) {
      if (results[k].kind != NXRT_VALUE_TENSOR)
        FailInvalid("SequenceMap: body outputs must be tensors");
      mapped[k].emplace_back(results[k].tensor);
    }
  }
  for (size_t k = 0; k < outputs.size(); ++k) {
    std::vector<nxrt_tensor> views;
    for (const OwnedTensor& t : mapped[k]) views.push_back(t.View());
    WriteSequence(ctx, outputs, k, views);
  }
}

// ---- claims ------------------------------------------------------------------

// Claims when each input `index` listed has the kind given.
ClaimFn ClaimKinds(std::vector<std::pair<size_t, nxrt_value_kind>> kinds) {
  return [kinds](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
    const std::string op(node.op_type());
    for (const auto& [index, kind] : kinds) {
      if (index >= inputs.size()) continue;  // an optional input left out
      if (inputs[index].kind == NXRT_VALUE_NONE) continue;
      if (inputs[index].kind != kind) {
        return sdk::ClaimResult::Declined(op + ": input " + std::to_string(index) + " must be a " +
                                          (kind == NXRT_VALUE_SEQUENCE ? "sequence" : "tensor"));
      }
    }
    return sdk::ClaimResult::Claimed();
  };
}

sdk::ClaimResult ClaimConstruct(const sdk::Node&, int64_t,
                                std::span<const nxrt_value_info> inputs) {
  for (const nxrt_value_info& in : inputs) {
    if (in.kind != NXRT_VALUE_TENSOR) {
      return sdk::ClaimResult::Declined("SequenceConstruct: inputs must be tensors");
    }
    if (in.dtype == NXRT_DTYPE_STRING) {
      return sdk::ClaimResult::Declined("SequenceConstruct: sequences of strings not supported");
    }
  }
  return sdk::ClaimResult::Claimed();
}

sdk::ClaimResult ClaimSequenceMap(const sdk::Node& node, int64_t,
                                  std::span<const nxrt_value_info> inputs) {
  if (node.attr_type("body") != NXRT_ATTR_GRAPH) {
    return sdk::ClaimResult::Declined("SequenceMap: body missing");
  }
  const auto [body_inputs, body_outputs] = node.AttrGraph("body");
  if (inputs.empty() || inputs[0].kind != NXRT_VALUE_SEQUENCE || body_inputs != inputs.size() ||
      body_outputs != node.output_count()) {
    return sdk::ClaimResult::Declined(
        "SequenceMap: input 0 must be a sequence and the body must match the node");
  }
  return sdk::ClaimResult::Claimed();
}

template <auto Fn>
std::unique_ptr<CpuKernel> Make(const sdk::Node&, std::span<const nxrt_shape>, int64_t) {
  return std::make_unique<SequenceKernel>(Fn);
}

}  // namespace

void RegisterSequenceOps(OpRegistry& r) {
  constexpr auto kSeq = NXRT_VALUE_SEQUENCE;
  constexpr auto kTensor = NXRT_VALUE_TENSOR;
  r.Add("SequenceEmpty", OpDefinition(11, ClaimKinds({}), Make<SequenceEmpty>));
  r.Add("SequenceConstruct", OpDefinition(11, ClaimConstruct, Make<SequenceConstruct>));
  r.Add("SequenceAt", OpDefinition(11, ClaimKinds({{0, kSeq}, {1, kTensor}}), Make<SequenceAt>));
  r.Add("SequenceInsert", OpDefinition(11, ClaimKinds({{0, kSeq}, {1, kTensor}, {2, kTensor}}),
                                       Make<SequenceInsert>));
  r.Add("SequenceErase",
        OpDefinition(11, ClaimKinds({{0, kSeq}, {1, kTensor}}), Make<SequenceErase>));
  r.Add("SequenceLength", OpDefinition(11, ClaimKinds({{0, kSeq}}), Make<SequenceLength>));
  r.Add("ConcatFromSequence", OpDefinition(11, ClaimKinds({{0, kSeq}}), MakeConcatFromSequence));
  r.Add("SplitToSequence",
        OpDefinition(11, ClaimKinds({{0, kTensor}, {1, kTensor}}), MakeSplitToSequence));
  r.Add("SequenceMap", OpDefinition(17, ClaimSequenceMap, Make<SequenceMap>));
}

}  // namespace nxrt::cpu
