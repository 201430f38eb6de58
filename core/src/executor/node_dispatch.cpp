#include "executor/executor.hpp"

#include <algorithm>
#include <cstring>

#include "executor/slot_values.hpp"

namespace nxrt::executor {
namespace {

using graph::DataType;

// The dispatch fills its ABI values field by field in place: copying a
// whole struct built in a temporary stalls on store forwarding, once per
// input and output of every node.
void ClearValue(nxrt_value& v) {
  v.struct_size = sizeof(nxrt_value);
  v.kind = NXRT_VALUE_NONE;
  v.tensor.struct_size = sizeof(nxrt_tensor);
  v.tensor.dtype = nxrt_dtype{};
  v.tensor.memory = nxrt_memory_kind{};
  v.tensor.rank = 0;
  v.tensor.dims = nullptr;
  v.tensor.data = nullptr;
  v.tensor.byte_size = 0;
  v.sequence_length = 0;
  v.sequence = nullptr;
}

void WriteSlotValue(const ValueSlot& slot, nxrt_value& v) {
  ClearValue(v);
  v.kind = slot.kind;
  if (slot.kind == NXRT_VALUE_TENSOR) {
    v.tensor.dtype = static_cast<nxrt_dtype>(slot.dtype);
    v.tensor.memory = slot.memory == kHostMemory ? NXRT_MEMORY_HOST : NXRT_MEMORY_DEVICE;
    v.tensor.rank = slot.dims.size();
    v.tensor.dims = slot.dims.empty() ? nullptr : slot.dims.data();
    v.tensor.data = slot.data;
    v.tensor.byte_size = slot.byte_size;
  } else if (slot.kind == NXRT_VALUE_SEQUENCE) {
    v.sequence = slot.sequence;
    v.sequence_length = slot.sequence_length;
  }
}

// Run after run the dims repeat: compare in place before paying for a copy.
void CopyDims(const std::vector<int64_t>& from, std::vector<int64_t>& to) {
  if (from.size() == to.size()) {
    size_t d = 0;
    while (d < from.size() && from[d] == to[d]) ++d;
    if (d == from.size()) return;
  }
  to.assign(from.begin(), from.end());
}

// Why what a kernel left in one of its outputs cannot be read safely, or
// "" when it can: a known dtype, dims for its rank, bytes for its dims, and
// strings and sequence elements made by the host.
std::string BrokenTensor(const nxrt_tensor& t) {
  if (!graph::DataTypeFromOnnx(t.dtype) || t.dtype == NXRT_DTYPE_UNDEFINED) {
    return "has an unknown dtype " + std::to_string(t.dtype);
  }
  if (t.rank > 0 && t.dims == nullptr) return "has rank " + std::to_string(t.rank) + " but no dims";
  Result<size_t> bytes = DenseBytes(static_cast<DataType>(t.dtype), {t.dims, t.rank});
  if (!bytes.ok()) return "has dims that hold no tensor (" + bytes.status().message() + ")";
  if (*bytes > t.byte_size || (*bytes > 0 && t.data == nullptr)) {
    return "holds " + std::to_string(t.data == nullptr ? 0 : t.byte_size) + " bytes, fewer than " +
           FormatDims({t.dims, t.rank}) + " needs";
  }
  return "";
}

// Strings reach an output only through set_string_element, which keeps each
// view on the host's own copy; a view written around it could point anywhere.
std::string BrokenStrings(const nxrt_tensor& t, const ValueSlot& slot) {
  if (t.data != slot.string_views.data() || slot.strings.size() != slot.string_views.size()) {
    return "holds strings the host did not allocate";
  }
  for (size_t i = 0; i < slot.strings.size(); ++i) {
    const nxrt_string_view& view = slot.string_views[i];
    if (view.data != slot.strings[i].data() || view.size != slot.strings[i].size()) {
      return "string element " + std::to_string(i) + " was written around set_string_element";
    }
  }
  return "";
}

std::string BrokenOutput(const nxrt_value& out, const ValueSlot& slot) {
  switch (out.kind) {
    case NXRT_VALUE_NONE:
      return "";
    case NXRT_VALUE_TENSOR:
      if (std::string broken = BrokenTensor(out.tensor); !broken.empty()) return broken;
      if (out.tensor.dtype == NXRT_DTYPE_STRING) return BrokenStrings(out.tensor, slot);
      return "";
    case NXRT_VALUE_SEQUENCE:
      if (slot.kind != NXRT_VALUE_SEQUENCE) return "is a sequence the host did not allocate";
      for (size_t e = 0; e < slot.sequence_length; ++e) {
        if (std::string broken = BrokenTensor(slot.sequence[e]); !broken.empty()) {
          return "element " + std::to_string(e) + " " + broken;
        }
      }
      return "";
  }
  return "has an unknown value kind " + std::to_string(out.kind);
}

}  // namespace

Status Executor::RunNode(PlannedNode& node) {
  if (IsSettled(node)) return ComputeSettled(node);
  NXRT_RETURN_IF_ERROR(RunTransfers(node));
  NXRT_RETURN_IF_ERROR(PrepareNode(node));
  NXRT_RETURN_IF_ERROR(LookUpKernel(node));
  NXRT_RETURN_IF_ERROR(ComputeNode(node));
  FinishNode(node);
  Settle(node);
  return Status::Ok();
}

// A node settles when nothing its dispatch prepares can differ at the same
// shapes except where its inputs' bytes live: every input's dims are fixed
// by the shape generation, every output has a planned buffer of its own, and
// any copy it needs was of a constant, already made.
void Executor::Settle(PlannedNode& node) {
  if (!shared_.cache->StillBound(node.binding)) return;
  for (const Transfer& transfer : node.transfers) {
    if (!transfer.once || !transfer.done) return;
  }
  node.moving_inputs.clear();
  for (size_t i = 0; i < node.input_slots.size(); ++i) {
    if (node.input_slots[i] == kNoSlot) continue;
    const ValueSlot& slot = slots_[node.input_slots[i]];
    if (slot.kind != NXRT_VALUE_TENSOR ||
        !(slot.constant || slot.shape_keyed || slot.planned_known)) {
      return;
    }
    if (slot.moves) node.moving_inputs.push_back(static_cast<uint32_t>(i));
  }
  for (size_t i = 0; i < node.output_slots.size(); ++i) {
    const size_t slot_index = node.output_slots[i];
    if (slot_index == kNoSlot) continue;
    const ValueSlot& slot = slots_[slot_index];
    if (!node.preallocated[i] || node.in_place_input[i] != kNoSlot ||
        slot.kind != NXRT_VALUE_TENSOR || slot.dtype == DataType::kString ||
        slot.data != slot.buffer->data()) {
      return;
    }
  }
  node.settled_generation = shape_generation_;
  node.settled_erasures = shared_.cache->erasures();
  node.settled_frees = frees_.count();
}

bool Executor::IsSettled(const PlannedNode& node) const {
  return node.settled_generation == shape_generation_ &&
         node.settled_erasures == shared_.cache->erasures() && node.settled_frees == frees_.count();
}

// Computes a settled node: no values rebuilt, no shapes compared. Its
// outputs keep their buffers (only its own dispatch reserves them, and the
// planned sizes hold while the generation does) and stay ready from the
// dispatch that settled it. An input may live elsewhere this run (a
// caller's new tensor); its dims and dtype are fixed by the generation, so
// only its address is updated.
Status Executor::ComputeSettled(PlannedNode& node) {
  for (uint32_t i : node.moving_inputs) {
    node.inputs[i].tensor.data = slots_[node.input_slots[i]].data;
  }
  ++settled_hits_;
  Status computed = ComputeNode(node);
  if (!computed.ok()) node.settled_generation = 0;
  return computed;
}

Status Executor::RunTransfers(PlannedNode& node) {
  for (Transfer& transfer : node.transfers) {
    if (transfer.once && transfer.done) continue;
    const ValueSlot& from = slots_[transfer.from_slot];
    ValueSlot& to = slots_[transfer.to_slot];
    if (transfer.resident && transfer.done && from.data == transfer.copied_from &&
        from.byte_size == to.byte_size && from.dtype == to.dtype && from.dims == to.dims) {
      continue;
    }
    const auto what = [&] {
      return graph_.Describe(node.id) + ": input '" + DescribeSlot(transfer.from_slot) + "'";
    };
    if (from.kind != NXRT_VALUE_TENSOR || from.dtype == DataType::kString) {
      return Unsupported(what() + " is a " +
                         (from.kind == NXRT_VALUE_TENSOR ? "string tensor" : "non-tensor value") +
                         " and cannot move between EP memories; place its producer and consumer "
                         "on one EP");
    }
    NXRT_RETURN_IF_ERROR(to.buffer->Reserve(MemoryProvider(to.memory), from.byte_size, Listener(),
                                            shared_.memory_budget));
    to.kind = NXRT_VALUE_TENSOR;
    to.dtype = from.dtype;
    to.dims.assign(from.dims.begin(), from.dims.end());
    to.data = to.buffer->data();
    to.byte_size = from.byte_size;
    Status copied;
    if (from.memory == kHostMemory) {
      copied = MemoryProvider(to.memory)->CopyToDevice(to.data, from.data, from.byte_size);
    } else if (to.memory == kHostMemory) {
      copied = MemoryProvider(from.memory)->CopyToHost(to.data, from.data, from.byte_size);
    } else {
      // Two device memories meet through the host.
      copied = transfer.staging.Reserve(nullptr, from.byte_size, nullptr, shared_.memory_budget);
      if (copied.ok()) {
        copied = MemoryProvider(from.memory)
                     ->CopyToHost(transfer.staging.data(), from.data, from.byte_size);
      }
      if (copied.ok()) {
        copied = MemoryProvider(to.memory)->CopyToDevice(to.data, transfer.staging.data(),
                                                         from.byte_size);
      }
    }
    if (!copied.ok()) return copied.WithContext(what());
    to.ready = true;
    transfer.done = true;
    transfer.copied_from = from.data;
  }
  return Status::Ok();
}

nxrt_value Executor::ValueOf(const ValueSlot& slot) const {
  nxrt_value v{};
  WriteSlotValue(slot, v);
  return v;
}

Status Executor::PrepareNode(PlannedNode& node) {
  node.settled_generation = 0;
  for (size_t i = 0; i < node.input_slots.size(); ++i) {
    kernel_cache::InputShape& shape = node.input_shapes[i];
    const size_t slot_index = node.input_slots[i];
    if (slot_index == kNoSlot) {
      ClearValue(node.inputs[i]);
      shape.absent = true;
      shape.dims.clear();
      continue;
    }
    const ValueSlot& slot = slots_[slot_index];
    if (!slot.ready) {
      return Internal(graph_.Describe(node.id) + ": input '" + DescribeSlot(slot_index) +
                      "' has no value in this run");
    }
    WriteSlotValue(slot, node.inputs[i]);
    shape.absent = slot.kind == NXRT_VALUE_NONE;
    if (slot.kind == NXRT_VALUE_TENSOR) {
      CopyDims(slot.dims, shape.dims);
    } else {
      shape.dims.clear();
    }
  }
  for (size_t i = 0; i < node.output_slots.size(); ++i) {
    nxrt_value& out = node.outputs[i];
    ClearValue(out);
    node.preallocated[i] = false;
    const size_t slot_index = node.output_slots[i];
    if (slot_index == kNoSlot) continue;
    ValueSlot& slot = slots_[slot_index];
    slot.ready = false;
    slot.kind = NXRT_VALUE_TENSOR;
    slot.dtype = slot.declared_dtype;
    slot.data = nullptr;
    slot.byte_size = 0;
    if (!slot.planned_known) slot.dims.clear();
    out.kind = NXRT_VALUE_TENSOR;
    out.tensor.dtype = static_cast<nxrt_dtype>(slot.declared_dtype);
    out.tensor.memory = slot.memory == kHostMemory ? NXRT_MEMORY_HOST : NXRT_MEMORY_DEVICE;
    if (!slot.planned_known) continue;
    CopyDims(slot.planned_dims, slot.dims);
    if (slot.declared_dtype == DataType::kString) {
      PrepareStrings(slot, slot.planned_bytes / sizeof(nxrt_string_view));
    } else if (!BindInPlace(node, i)) {
      const size_t bytes = slot.planned_bytes;
      Status reserved = slot.buffer->Reserve(MemoryProvider(slot.memory), bytes, Listener(),
                                             shared_.memory_budget);
      if (!reserved.ok()) {
        return reserved.WithContext(graph_.Describe(node.id) + ": output '" +
                                    DescribeSlot(slot_index) + "'");
      }
      slot.data = slot.buffer->data();
      slot.byte_size = bytes;
    }
    out.tensor.rank = slot.dims.size();
    out.tensor.dims = slot.dims.empty() ? nullptr : slot.dims.data();
    out.tensor.data = slot.data;
    out.tensor.byte_size = slot.byte_size;
    node.preallocated[i] = true;
    // Ready for the nodes after it in a segment being prepared as a whole.
    slot.ready = true;
  }
  return Status::Ok();
}

// Copies each present an EP wrote in its own memory into the caller's past
// buffer it mirrors, when both hold the same dtype and dims.
Status Executor::WriteBackKv() {
  for (const auto& [present_index, past_index] : kv_write_back_) {
    const ValueSlot& present = slots_[present_index];
    const ValueSlot& past = slots_[past_index];
    if (!present.ready || present.kind != NXRT_VALUE_TENSOR || past.kind != NXRT_VALUE_TENSOR ||
        present.dtype != past.dtype || present.byte_size != past.byte_size ||
        present.dims != past.dims || present.byte_size == 0) {
      continue;
    }
    if (present.memory == kHostMemory) {
      std::memcpy(past.data, present.data, present.byte_size);
      continue;
    }
    NXRT_RETURN_IF_ERROR(MemoryProvider(present.memory)
                             ->CopyToHost(past.data, present.data, present.byte_size)
                             .WithContext(graph_.model_path + ": present '" +
                                          DescribeSlot(present_index) + "' copied back into '" +
                                          DescribeSlot(past_index) + "'"));
  }
  return Status::Ok();
}

// Points output `output` at the buffer of the input it is planned to update
// in place, when that input is bound at the output's planned dims and dtype.
bool Executor::BindInPlace(PlannedNode& node, size_t output) {
  const size_t input = node.in_place_input[output];
  if (input == kNoSlot) return false;
  ValueSlot& slot = slots_[node.output_slots[output]];
  const ValueSlot& past = slots_[node.input_slots[input]];
  if (past.kind != NXRT_VALUE_TENSOR || past.dtype != slot.declared_dtype ||
      past.dtype == DataType::kString || past.byte_size != slot.planned_bytes ||
      (!node.views_input && !std::equal(past.dims.begin(), past.dims.end(),
                                        slot.planned_dims.begin(), slot.planned_dims.end()))) {
    return false;
  }
  slot.data = past.data;
  slot.byte_size = past.byte_size;
  return true;
}

Status Executor::LookUpKernel(PlannedNode& node) {
  node.kernel = shared_.cache->GetPrebound(node.binding, node.input_shapes);
  if (node.kernel) {
    node.compute = node.kernel->compute_entry();
    return Status::Ok();
  }
  kernel_cache::KernelRequest request;
  request.node = node.view;
  request.provider = shared_.providers[node.provider].provider.get();
  request.input_shapes = node.input_shapes;
  request.opset = node.opset;
  request.capture_seq_independent = node.capture_eligible;
  request.artifact = plugin_host::ArtifactConfig{shared_.executor_id, 0};
  NXRT_ASSIGN_OR_RETURN(node.kernel, shared_.cache->GetOrCreate(request, node.binding));
  node.compute = node.kernel->compute_entry();
  return Status::Ok();
}

Status Executor::ComputeNode(PlannedNode& node) {
  computing_ = &node;
  nxrt_compute_context ctx{this};
  nxrt_status* failed =
      node.compute.compute(node.compute.handle, &ctx, node.inputs.data(), node.inputs.size(),
                           node.outputs.data(), node.outputs.size());
  computing_ = nullptr;
  if (failed != nullptr) return node.kernel->ComputeStatus(failed);
  return CheckKernelOutputs(node);
}

Status Executor::CheckKernelOutputs(PlannedNode& node) {
  for (size_t i = 0; i < node.output_slots.size(); ++i) {
    const size_t slot_index = node.output_slots[i];
    if (slot_index == kNoSlot) continue;
    ValueSlot& slot = slots_[slot_index];
    if (std::string broken = BrokenOutput(node.outputs[i], slot); !broken.empty()) {
      slot.ready = false;
      return Internal(graph_.Describe(node.id) + ": output " + std::to_string(i) + " " + broken +
                      "; the EP's kernel broke the plugin ABI, run the node on another EP");
    }
  }
  return Status::Ok();
}

void Executor::FinishNode(PlannedNode& node) {
  for (size_t i = 0; i < node.output_slots.size(); ++i) {
    const size_t slot_index = node.output_slots[i];
    if (slot_index == kNoSlot) continue;
    ValueSlot& slot = slots_[slot_index];
    const nxrt_value& out = node.outputs[i];
    slot.kind = out.kind;
    slot.ready = true;
    if (out.kind != NXRT_VALUE_TENSOR) continue;
    const nxrt_tensor& t = out.tensor;
    slot.dtype = static_cast<DataType>(t.dtype);
    slot.data = t.data;
    slot.byte_size = t.byte_size;
    if (t.dims != slot.dims.data() || t.rank != slot.dims.size()) {
      if (t.dims != nullptr) {
        slot.dims.assign(t.dims, t.dims + t.rank);
      } else {
        slot.dims.clear();
      }
    }
  }
}

}  // namespace nxrt::executor
