#include "executor/executor.hpp"

#include "nxrt/support/log.hpp"

namespace nxrt::executor {
namespace {

using graph::DataType;

EagerFallbackReason MismatchReason(const device_graph::SegmentBindings& now,
                                   const device_graph::SegmentBindings& captured) {
  if (now.shapes != captured.shapes) return EagerFallbackReason::kShapeChanged;
  if (now.addresses != captured.addresses) return EagerFallbackReason::kAddressChanged;
  return EagerFallbackReason::kEpochChanged;
}

bool SameBindings(const device_graph::SegmentBindings& a, const device_graph::SegmentBindings& b) {
  return a.shapes == b.shapes && a.addresses == b.addresses && a.epochs == b.epochs;
}

}  // namespace

// ---- device-graph segments ---------------------------------------------------

bool Executor::SegmentIsPlanned(const device_graph::Segment& segment) const {
  for (size_t i = segment.begin; i < segment.end; ++i) {
    for (size_t slot : nodes_[i].output_slots) {
      if (slot == kNoSlot) continue;
      if (!slots_[slot].planned_known || slots_[slot].declared_dtype == DataType::kString) {
        return false;
      }
    }
  }
  return true;
}

bool Executor::CollectBindings(const device_graph::Segment& segment,
                               device_graph::SegmentBindings& bindings) {
  bindings.Clear();
  bool capture_safe = true;
  auto add = [&](const nxrt_value& v, size_t slot_index) {
    bindings.shapes.push_back(v.kind == NXRT_VALUE_TENSOR ? static_cast<int64_t>(v.tensor.rank)
                                                          : -1);
    if (v.kind != NXRT_VALUE_TENSOR) return;
    bindings.shapes.insert(bindings.shapes.end(), v.tensor.dims, v.tensor.dims + v.tensor.rank);
    bindings.addresses.push_back(reinterpret_cast<uintptr_t>(v.tensor.data));
    bindings.epochs.push_back(slot_index == kNoSlot ? 0 : slots_[slot_index].epoch());
  };
  for (size_t i = segment.begin; i < segment.end; ++i) {
    const PlannedNode& node = nodes_[i];
    capture_safe = capture_safe && node.kernel->capture_safe();
    bindings.addresses.push_back(reinterpret_cast<uintptr_t>(node.kernel.get()));
    for (size_t k = 0; k < node.inputs.size(); ++k) add(node.inputs[k], node.input_slots[k]);
    for (size_t k = 0; k < node.outputs.size(); ++k) add(node.outputs[k], node.output_slots[k]);
  }
  return capture_safe;
}

Status Executor::RunSegmentEagerly(device_graph::Segment& segment) {
  for (size_t i = segment.begin; i < segment.end; ++i) NXRT_RETURN_IF_ERROR(RunNode(nodes_[i]));
  return Status::Ok();
}

Status Executor::AbandonCapture(plugin_host::ExecutionProvider& provider, nxrt_graph_slot slot) {
  Result<nxrt_graph_token> token = provider.EndCapture(slot);
  if (!token.ok()) return token.status();
  return provider.Reset(*token);
}

void Executor::CollectExternalBindings(const device_graph::Segment& segment,
                                       device_graph::SegmentBindings& bindings) const {
  bindings.Clear();
  for (size_t slot_index : segment.external_slots) {
    const ValueSlot& slot = slots_[slot_index];
    bindings.shapes.push_back(
        slot.ready && slot.kind == NXRT_VALUE_TENSOR ? static_cast<int64_t>(slot.dims.size()) : -1);
    bindings.shapes.insert(bindings.shapes.end(), slot.dims.begin(), slot.dims.end());
    bindings.addresses.push_back(reinterpret_cast<uintptr_t>(slot.data));
    bindings.epochs.push_back(slot.epoch());
  }
}

Status Executor::ReplayPrepared(device_graph::Segment& segment, nxrt_graph_slot slot,
                                bool& replayed) {
  replayed = false;
  device_graph::SlotCapture& capture = segment.slots[slot];
  if (capture.token == 0 || segment.prepared_for != static_cast<int>(slot) ||
      capture.shape_generation != shape_generation_) {
    return Status::Ok();
  }
  // A copy into the EP's memory may reallocate, which resets the capture.
  for (size_t node : segment.transfer_nodes) NXRT_RETURN_IF_ERROR(RunTransfers(nodes_[node]));
  CollectExternalBindings(segment, bindings_scratch_);
  if (capture.token == 0 || !SameBindings(bindings_scratch_, capture.external)) {
    return Status::Ok();
  }
  device_graph::DeviceGraphs& graphs = *shared_.device_graphs;
  Status status = graphs.provider(segment.provider).Replay(capture.token);
  if (!status.ok()) {
    Status reset = graphs.ResetCapture(segment, capture);
    if (!reset.ok()) GetLogger()->warn("{}", reset.message());
    return status;
  }
  // The outputs still hold what the capture's last finish gave them: only
  // the nodes of this segment write them, and any other dispatch of those
  // nodes clears prepared_for.
  for (size_t slot_index : segment.output_slots) slots_[slot_index].ready = true;
  graphs.CountReplay(slot);
  replayed = true;
  return Status::Ok();
}

Status Executor::RunSegment(device_graph::Segment& segment, nxrt_graph_slot slot) {
  device_graph::DeviceGraphs& graphs = *shared_.device_graphs;
  device_graph::SlotCapture& capture = segment.slots[slot];
  bool replayed = false;
  NXRT_RETURN_IF_ERROR(ReplayPrepared(segment, slot, replayed));
  if (replayed) return Status::Ok();
  segment.prepared_for = -1;
  if (!SegmentIsPlanned(segment)) {
    // A kernel that allocates its own outputs cannot be captured.
    NXRT_RETURN_IF_ERROR(graphs.ResetCapture(segment, capture));
    graphs.CountFallback(slot, EagerFallbackReason::kNotCaptureSafe);
    return RunSegmentEagerly(segment);
  }
  // Every node is bound before any computes, so a buffer that a later value
  // shares and outgrows leaves the earlier nodes bound to freed memory: bind
  // them again. The second pass frees nothing, each buffer having grown to
  // its largest request.
  uint64_t frees_before = 0;
  do {
    frees_before = frees_.count();
    for (size_t i = segment.begin; i < segment.end; ++i) {
      NXRT_RETURN_IF_ERROR(RunTransfers(nodes_[i]));
      NXRT_RETURN_IF_ERROR(PrepareNode(nodes_[i]));
      NXRT_RETURN_IF_ERROR(LookUpKernel(nodes_[i]));
    }
  } while (frees_.count() != frees_before);
  auto compute_all = [&]() -> Status {
    for (size_t i = segment.begin; i < segment.end; ++i) {
      NXRT_RETURN_IF_ERROR(ComputeNode(nodes_[i]));
      FinishNode(nodes_[i]);
    }
    return Status::Ok();
  };
  auto finish_all = [&]() {
    for (size_t i = segment.begin; i < segment.end; ++i) FinishNode(nodes_[i]);
  };
  if (!CollectBindings(segment, bindings_scratch_)) {
    NXRT_RETURN_IF_ERROR(graphs.ResetCapture(segment, capture));
    graphs.CountFallback(slot, EagerFallbackReason::kNotCaptureSafe);
    return compute_all();
  }
  plugin_host::ExecutionProvider& provider = graphs.provider(segment.provider);
  if (capture.token != 0) {
    if (SameBindings(bindings_scratch_, capture.captured)) {
      Status replayed = provider.Replay(capture.token);
      if (!replayed.ok()) {
        Status reset = graphs.ResetCapture(segment, capture);
        if (!reset.ok()) GetLogger()->warn("{}", reset.message());
        return replayed;
      }
      finish_all();
      graphs.CountReplay(slot);
      segment.prepared_for = static_cast<int>(slot);
      capture.shape_generation = shape_generation_;
      CollectExternalBindings(segment, capture.external);
      return Status::Ok();
    }
    NXRT_RETURN_IF_ERROR(graphs.ResetCapture(segment, capture));
  }
  if (!capture.warm_valid || !SameBindings(bindings_scratch_, capture.warm)) {
    // A capture dropped since the last run (a mismatch just now, a buffer
    // freed or a kernel evicted while preparing) names what changed.
    const EagerFallbackReason reason =
        capture.captured_valid && !SameBindings(bindings_scratch_, capture.captured)
            ? MismatchReason(bindings_scratch_, capture.captured)
            : EagerFallbackReason::kWarmingUp;
    capture.captured_valid = false;
    NXRT_RETURN_IF_ERROR(compute_all());
    capture.warm.AssignFrom(bindings_scratch_);
    capture.warm_valid = true;
    graphs.CountFallback(slot, reason);
    return Status::Ok();
  }
  return CaptureSegment(segment, slot);
}

Status Executor::CaptureSegment(device_graph::Segment& segment, nxrt_graph_slot slot) {
  device_graph::DeviceGraphs& graphs = *shared_.device_graphs;
  device_graph::SlotCapture& capture = segment.slots[slot];
  plugin_host::ExecutionProvider& provider = graphs.provider(segment.provider);
  capture.warm_valid = false;
  NXRT_RETURN_IF_ERROR(provider.BeginCapture(slot));
  for (size_t i = segment.begin; i < segment.end; ++i) {
    Status recorded = ComputeNode(nodes_[i]);
    if (!recorded.ok()) {
      Status abandoned = AbandonCapture(provider, slot);
      if (!abandoned.ok()) GetLogger()->warn("{}", abandoned.message());
      return recorded;
    }
  }
  Result<nxrt_graph_token> token = provider.EndCapture(slot);
  if (!token.ok()) {
    // Close the capture the EP may still hold open, so later eager computes
    // run instead of being recorded.
    Status abandoned = AbandonCapture(provider, slot);
    if (!abandoned.ok()) GetLogger()->debug("{}", abandoned.message());
    return token.status();
  }
  capture.token = *token;
  capture.captured.AssignFrom(bindings_scratch_);
  capture.captured_valid = true;
  graphs.CountCapture(slot);
  Status replayed = provider.Replay(capture.token);
  if (!replayed.ok()) {
    Status reset = graphs.ResetCapture(segment, capture);
    if (!reset.ok()) GetLogger()->warn("{}", reset.message());
    return replayed;
  }
  for (size_t i = segment.begin; i < segment.end; ++i) FinishNode(nodes_[i]);
  graphs.CountReplay(slot);
  segment.prepared_for = static_cast<int>(slot);
  capture.shape_generation = shape_generation_;
  CollectExternalBindings(segment, capture.external);
  return Status::Ok();
}

}  // namespace nxrt::executor
