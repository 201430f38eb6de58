// If, Loop and Scan. The host runs their bodies (run_subgraph); these
// kernels choose the branch, drive the iterations, copy what each iteration
// gives back before the body runs again, and assemble Loop's and Scan's
// stacked outputs. Scan-8's leading batch axis runs one scan per batch row,
// each as long as its sequence_lens entry.
// Running a body allocates and syncs on the host, so none is capture-safe.
#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "axis_ranges.hpp"
#include "cpu_kernel.hpp"
#include "dtype.hpp"
#include "owned_value.hpp"

namespace nxrt::cpu {
namespace {

bool ReadCondition(const nxrt_value& v, const char* what) {
  if (v.kind != NXRT_VALUE_TENSOR || v.tensor.dtype != NXRT_DTYPE_BOOL ||
      ElementCount(v.tensor) != 1) {
    FailInvalid(std::string(what) + " must be a one-element bool tensor");
  }
  return *DataAs<bool>(v.tensor);
}

size_t ElementSizeOf(const nxrt_tensor& t, const char* what) {
  const size_t size = ElementSize(t.dtype);
  if (size == 0) {
    FailUnsupported(std::string(what) + ": dtype " + DtypeName(t.dtype) + " not supported");
  }
  return size;
}

// Stacks equally shaped `parts` along a new axis `axis` of the result.
OwnedTensor Stack(const std::vector<OwnedTensor>& parts, int64_t axis, bool reversed,
                  const char* what) {
  const nxrt_tensor first = parts.front().View();
  Dims dims = parts.front().dims();
  const int64_t count = static_cast<int64_t>(parts.size());
  dims.insert(dims.begin() + axis, count);
  OwnedTensor whole(first.dtype, dims);
  const AxisGeometry g = AxisGeometryOf(dims, axis, ElementSizeOf(first, what));
  for (int64_t i = 0; i < count; ++i) {
    const OwnedTensor& part = parts[static_cast<size_t>(i)];
    if (part.dims() != parts.front().dims() || part.dtype() != first.dtype) {
      FailInvalid(std::string(what) + ": iteration " + std::to_string(i) + " gave " +
                  DimsText(part.dims()) + ", unlike the first iteration's " +
                  DimsText(parts.front().dims()));
    }
    const nxrt_tensor view = part.View();
    ScatterAxisRange(g, whole.bytes(), reversed ? count - 1 - i : i, 1,
                     static_cast<const std::byte*>(view.data));
  }
  return whole;
}

// A stacked output with no iteration: zero along the new axis, the other
// dims as inferred where they are static.
OwnedTensor EmptyStack(const nxrt_value_info& info) {
  Dims dims{0};
  for (int64_t d = 1; d < info.rank; ++d) dims.push_back(std::max<int64_t>(info.dims[d].value, 0));
  if (ElementSize(info.dtype) == 0) FailUnsupported("an empty stacked output of unknown dtype");
  return OwnedTensor(info.dtype, std::move(dims));
}

// `t` with its leading axis extended to `extent` by zeros.
OwnedTensor PadLeading(const OwnedTensor& t, int64_t extent) {
  Dims dims = t.dims();
  dims[0] = extent;
  OwnedTensor padded(t.dtype(), dims);
  const nxrt_tensor view = t.View();
  if (view.byte_size > 0) std::memcpy(padded.bytes(), view.data, view.byte_size);
  return padded;
}

// ---- If -------------------------------------------------------------------

class IfKernel : public CpuKernel {
 public:
  IfKernel() : CpuKernel(false) {}
  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const char* branch = ReadCondition(inputs[0], "If: cond") ? "then_branch" : "else_branch";
    std::vector<nxrt_value> results = EmptyValues(outputs.size());
    ctx.RunSubgraph(branch, {}, results);
    for (size_t i = 0; i < outputs.size(); ++i) WriteValue(ctx, outputs, i, results[i]);
  }
};

sdk::ClaimResult ClaimIf(const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
  if (inputs.empty() || inputs[0].kind != NXRT_VALUE_TENSOR || inputs[0].dtype != NXRT_DTYPE_BOOL) {
    return sdk::ClaimResult::Declined("If: cond must be a bool tensor");
  }
  for (const char* branch : {"then_branch", "else_branch"}) {
    if (node.attr_type(branch) != NXRT_ATTR_GRAPH) {
      return sdk::ClaimResult::Declined(std::string("If: ") + branch + " missing");
    }
    if (node.AttrGraph(branch).second != node.output_count()) {
      return sdk::ClaimResult::Declined(std::string("If: ") + branch +
                                        " gives a different number of outputs than the node");
    }
  }
  return sdk::ClaimResult::Claimed();
}

// ---- Loop -----------------------------------------------------------------

class LoopKernel : public CpuKernel {
 public:
  LoopKernel(size_t carried, size_t scanned, std::vector<nxrt_value_info> scan_infos)
      : CpuKernel(false),
        carried_(carried),
        scanned_(scanned),
        scan_infos_(std::move(scan_infos)) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    int64_t trips = std::numeric_limits<int64_t>::max();
    if (inputs[0].kind == NXRT_VALUE_TENSOR) trips = ReadInt64s(inputs[0].tensor).at(0);
    bool condition = inputs[1].kind == NXRT_VALUE_NONE || ReadCondition(inputs[1], "Loop: cond");
    std::vector<OwnedValue> state;
    for (size_t k = 0; k < carried_; ++k) state.emplace_back(inputs[2 + k]);
    std::vector<std::vector<OwnedTensor>> scans(scanned_);

    std::vector<nxrt_value> results = EmptyValues(1 + carried_ + scanned_);
    for (int64_t i = 0; i < trips && condition; ++i) {
      OwnedTensor iteration(NXRT_DTYPE_INT64, {});
      std::memcpy(iteration.bytes(), &i, sizeof(i));
      OwnedTensor cond(NXRT_DTYPE_BOOL, {});
      std::memcpy(cond.bytes(), &condition, sizeof(bool));
      std::vector<nxrt_value> body_inputs{TensorValue(iteration.View()), TensorValue(cond.View())};
      for (OwnedValue& v : state) body_inputs.push_back(v.View());
      ctx.RunSubgraph("body", body_inputs, results);
      // Copied now: the next run of the body reuses its outputs' storage.
      condition = ReadCondition(results[0], "Loop: body's condition output");
      std::vector<OwnedValue> next;
      for (size_t k = 0; k < carried_; ++k) next.emplace_back(results[1 + k]);
      state = std::move(next);
      for (size_t k = 0; k < scanned_; ++k) {
        const nxrt_value& out = results[1 + carried_ + k];
        if (out.kind != NXRT_VALUE_TENSOR) FailUnsupported("Loop: a scan output must be a tensor");
        scans[k].emplace_back(out.tensor);
      }
    }
    for (size_t k = 0; k < carried_; ++k) WriteValue(ctx, outputs, k, state[k].View());
    for (size_t k = 0; k < scanned_; ++k) {
      OwnedValue stacked =
          OwnedValue::Tensor(scans[k].empty() ? EmptyStack(scan_infos_[k])
                                              : Stack(scans[k], 0, false, "Loop scan output"));
      WriteValue(ctx, outputs, carried_ + k, stacked.View());
    }
  }

 private:
  size_t carried_;
  size_t scanned_;
  std::vector<nxrt_value_info> scan_infos_;
};

sdk::ClaimResult ClaimLoop(const sdk::Node& node, int64_t,
                           std::span<const nxrt_value_info> inputs) {
  if (node.attr_type("body") != NXRT_ATTR_GRAPH)
    return sdk::ClaimResult::Declined("Loop: body missing");
  const auto [body_inputs, body_outputs] = node.AttrGraph("body");
  if (inputs.size() < 2 || body_inputs != inputs.size() || body_outputs < body_inputs - 1 ||
      node.output_count() != body_outputs - 1) {
    return sdk::ClaimResult::Declined("Loop: body inputs and outputs do not match the node's");
  }
  return sdk::ClaimResult::Claimed();
}

std::unique_ptr<CpuKernel> MakeLoop(const sdk::Node& node, std::span<const nxrt_shape> inputs,
                                    int64_t) {
  const size_t carried = inputs.size() - 2;
  const size_t scanned = node.output_count() - carried;
  std::vector<nxrt_value_info> infos;
  for (size_t k = 0; k < scanned; ++k) infos.push_back(node.output_info(carried + k));
  return std::make_unique<LoopKernel>(carried, scanned, std::move(infos));
}

// ---- Scan -----------------------------------------------------------------

struct ScanLayout {
  size_t states = 0;
  size_t scan_inputs = 0;
  size_t scan_outputs = 0;
  std::vector<int64_t> input_axes;  // per scan input, as given
  std::vector<bool> input_reversed;
  std::vector<int64_t> output_axes;
  std::vector<bool> output_reversed;
};

// One scan over unbatched states and scan inputs: the final states, then the
// stacked scan outputs.
std::vector<OwnedTensor> RunScan(sdk::ComputeContext& ctx, const ScanLayout& layout,
                                 std::vector<OwnedTensor> states,
                                 std::span<const nxrt_tensor> scan_inputs) {
  int64_t length = -1;
  std::vector<int64_t> axes;
  for (size_t j = 0; j < scan_inputs.size(); ++j) {
    const int64_t rank = static_cast<int64_t>(scan_inputs[j].rank);
    const int64_t axis = NormalizeAxis(layout.input_axes[j], rank, "Scan: scan_input_axes");
    const int64_t extent = scan_inputs[j].dims[axis];
    if (length >= 0 && extent != length) {
      FailInvalid("Scan: scan inputs have different lengths (" + std::to_string(length) + " and " +
                  std::to_string(extent) + ")");
    }
    length = extent;
    axes.push_back(axis);
  }
  std::vector<std::vector<OwnedTensor>> outs(layout.scan_outputs);
  std::vector<nxrt_value> results = EmptyValues(layout.states + layout.scan_outputs);
  std::vector<OwnedTensor> slices(scan_inputs.size());
  for (int64_t t = 0; t < length; ++t) {
    std::vector<nxrt_value> body_inputs;
    for (const OwnedTensor& s : states) body_inputs.push_back(TensorValue(s.View()));
    for (size_t j = 0; j < scan_inputs.size(); ++j) {
      const nxrt_tensor& in = scan_inputs[j];
      Dims dims = DimsOf(in);
      const AxisGeometry g = AxisGeometryOf(dims, axes[j], ElementSizeOf(in, "Scan input"));
      dims.erase(dims.begin() + axes[j]);
      slices[j] = OwnedTensor(in.dtype, dims);
      GatherAxisRange(g, static_cast<const std::byte*>(in.data),
                      layout.input_reversed[j] ? length - 1 - t : t, 1, slices[j].bytes());
      body_inputs.push_back(TensorValue(slices[j].View()));
    }
    ctx.RunSubgraph("body", body_inputs, results);
    for (size_t k = 0; k < results.size(); ++k) {
      if (results[k].kind != NXRT_VALUE_TENSOR) FailInvalid("Scan: body outputs must be tensors");
    }
    for (size_t k = 0; k < layout.states; ++k) states[k] = OwnedTensor(results[k].tensor);
    for (size_t k = 0; k < layout.scan_outputs; ++k) {
      outs[k].emplace_back(results[layout.states + k].tensor);
    }
  }
  for (size_t k = 0; k < layout.scan_outputs; ++k) {
    if (outs[k].empty()) FailUnsupported("Scan: a scan of length 0");
    const int64_t rank = static_cast<int64_t>(outs[k].front().dims().size()) + 1;
    const int64_t axis = NormalizeAxis(layout.output_axes[k], rank, "Scan: scan_output_axes");
    states.push_back(Stack(outs[k], axis, layout.output_reversed[k], "Scan output"));
  }
  return states;
}

class ScanKernel : public CpuKernel {
 public:
  ScanKernel(ScanLayout layout, bool batched)
      : CpuKernel(false), layout_(std::move(layout)), batched_(batched) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const size_t first = batched_ ? 1 : 0;
    for (size_t i = first; i < inputs.size(); ++i) {
      if (inputs[i].kind != NXRT_VALUE_TENSOR) FailInvalid("Scan: inputs must be tensors");
    }
    std::vector<OwnedTensor> results;
    if (!batched_) {
      std::vector<OwnedTensor> states;
      for (size_t k = 0; k < layout_.states; ++k) states.emplace_back(inputs[k].tensor);
      std::vector<nxrt_tensor> scans;
      for (size_t j = 0; j < layout_.scan_inputs; ++j) {
        scans.push_back(inputs[layout_.states + j].tensor);
      }
      results = RunScan(ctx, layout_, std::move(states), scans);
    } else {
      results = RunBatches(ctx, inputs);
    }
    for (size_t k = 0; k < results.size(); ++k) {
      OwnedValue v = OwnedValue::Tensor(std::move(results[k]));
      WriteValue(ctx, outputs, k, v.View());
    }
  }

 private:
  // Scan-8: axis 0 of every state and scan input is the batch; each row is
  // scanned on its own (its scan axis is then 0) and the rows restacked.
  std::vector<OwnedTensor> RunBatches(sdk::ComputeContext& ctx,
                                      std::span<const nxrt_value> inputs) {
    const size_t count = layout_.states + layout_.scan_inputs;
    const int64_t batch = inputs[1].tensor.rank ? inputs[1].tensor.dims[0] : 0;
    std::vector<int64_t> lengths;
    if (inputs[0].kind == NXRT_VALUE_TENSOR) lengths = ReadInt64s(inputs[0].tensor);
    std::vector<std::vector<OwnedTensor>> rows(layout_.states + layout_.scan_outputs);
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<OwnedTensor> row;
      for (size_t i = 0; i < count; ++i) {
        const nxrt_tensor& in = inputs[1 + i].tensor;
        if (in.rank == 0 || in.dims[0] != batch) {
          FailInvalid("Scan: every input must lead with the batch axis of " +
                      std::to_string(batch));
        }
        Dims dims = DimsOf(in);
        const AxisGeometry g = AxisGeometryOf(dims, 0, ElementSizeOf(in, "Scan input"));
        dims.erase(dims.begin());
        row.emplace_back(in.dtype, dims);
        GatherAxisRange(g, static_cast<const std::byte*>(in.data), b, 1, row.back().bytes());
      }
      // A row shorter than the scan axis (sequence_lens) scans its first
      // slices only; its scan outputs are padded with zeros to full length.
      const int64_t full = row[layout_.states].dims().empty() ? 0 : row[layout_.states].dims()[0];
      const int64_t length = lengths.empty() ? full : lengths.at(static_cast<size_t>(b));
      if (length < 0 || length > full) {
        FailInvalid("Scan: sequence_lens " + std::to_string(length) + " outside [0, " +
                    std::to_string(full) + "]");
      }
      std::vector<Dims> scan_dims;
      std::vector<nxrt_tensor> scans;
      for (size_t j = 0; j < layout_.scan_inputs; ++j) {
        nxrt_tensor view = row[layout_.states + j].View();
        scan_dims.push_back(DimsOf(view));
        scan_dims.back()[0] = length;
        view.dims = scan_dims.back().data();
        view.byte_size = full ? view.byte_size / static_cast<size_t>(full) * length : 0;
        scans.push_back(view);
      }
      // The scan inputs stay in `row` while the scan reads them.
      std::vector<OwnedTensor> states(row.begin(), row.begin() + layout_.states);
      std::vector<OwnedTensor> out = RunScan(ctx, layout_, std::move(states), scans);
      for (size_t k = 0; k < out.size(); ++k) {
        if (k >= layout_.states && length < full) out[k] = PadLeading(out[k], full);
        rows[k].push_back(std::move(out[k]));
      }
    }
    if (batch == 0) FailUnsupported("Scan: a batch of 0");
    std::vector<OwnedTensor> results;
    for (const auto& parts : rows) results.push_back(Stack(parts, 0, false, "Scan output"));
    return results;
  }

  ScanLayout layout_;
  bool batched_;
};

sdk::ClaimResult ClaimScan(const sdk::Node& node, int64_t opset,
                           std::span<const nxrt_value_info> inputs) {
  if (node.attr_type("body") != NXRT_ATTR_GRAPH)
    return sdk::ClaimResult::Declined("Scan: body missing");
  const size_t first = opset < 9 ? 1 : 0;
  const int64_t scan_inputs = node.AttrInt("num_scan_inputs", 0);
  if (scan_inputs < 1 || inputs.size() < first + static_cast<size_t>(scan_inputs)) {
    return sdk::ClaimResult::Declined("Scan: num_scan_inputs does not fit the inputs");
  }
  const auto [body_inputs, body_outputs] = node.AttrGraph("body");
  if (body_inputs != inputs.size() - first || body_outputs != node.output_count()) {
    return sdk::ClaimResult::Declined("Scan: body inputs and outputs do not match the node's");
  }
  for (size_t i = first; i < inputs.size(); ++i) {
    if (inputs[i].kind != NXRT_VALUE_TENSOR) {
      return sdk::ClaimResult::Declined("Scan: sequence inputs not supported");
    }
    if (ElementSize(inputs[i].dtype) == 0) {
      return sdk::ClaimResult::Declined("Scan: dtype " + DtypeName(inputs[i].dtype) +
                                        " not supported");
    }
  }
  return sdk::ClaimResult::Claimed();
}

std::vector<bool> Directions(const sdk::Node& node, const char* name, size_t count) {
  std::vector<int64_t> given = node.AttrInts(name);
  std::vector<bool> reversed(count, false);
  for (size_t i = 0; i < count && i < given.size(); ++i) reversed[i] = given[i] != 0;
  return reversed;
}

std::unique_ptr<CpuKernel> MakeScan(const sdk::Node& node, std::span<const nxrt_shape> inputs,
                                    int64_t opset) {
  const bool batched = opset < 9;
  ScanLayout layout;
  layout.scan_inputs = static_cast<size_t>(node.AttrInt("num_scan_inputs", 0));
  layout.states = inputs.size() - (batched ? 1 : 0) - layout.scan_inputs;
  layout.scan_outputs = node.output_count() - layout.states;
  layout.input_axes = node.AttrInts("scan_input_axes");
  layout.input_axes.resize(layout.scan_inputs, 0);
  layout.input_reversed =
      Directions(node, batched ? "directions" : "scan_input_directions", layout.scan_inputs);
  layout.output_axes = node.AttrInts("scan_output_axes");
  layout.output_axes.resize(layout.scan_outputs, 0);
  layout.output_reversed = Directions(node, "scan_output_directions", layout.scan_outputs);
  return std::make_unique<ScanKernel>(std::move(layout), batched);
}

}  // namespace

void RegisterControlFlowOps(OpRegistry& r) {
  r.Add("If", OpDefinition(1, ClaimIf, [](const sdk::Node&, std::span<const nxrt_shape>, int64_t) {
          return std::make_unique<IfKernel>();
        }));
  r.Add("Loop", OpDefinition(1, ClaimLoop, MakeLoop));
  r.Add("Scan", OpDefinition(8, ClaimScan, MakeScan));
}

}  // namespace nxrt::cpu
