#include "executor/executor.hpp"

#include <algorithm>
#include <string>
#include <string_view>

#include "executor/slot_values.hpp"
#include "nxrt/graph/weight_store.hpp"
#include "nxrt/support/physical_memory.hpp"

namespace nxrt::executor {
namespace {

// The longest sequence output a kernel may ask for (ep_abi.h).
constexpr size_t kMaxSequenceLength = size_t{1} << 24;

}  // namespace

// ---- compute services -----------------------------------------------------------

Result<ValueSlot*> Executor::ComputingOutput(size_t index, const char* service) {
  if (computing_ == nullptr) {
    return FailedPrecondition(graph_.model_path + ": " + service +
                              " called outside a compute call");
  }
  if (index >= computing_->output_slots.size() || computing_->output_slots[index] == kNoSlot) {
    return InvalidArgument(graph_.Describe(computing_->id) + ": " + service + " for output " +
                           std::to_string(index) + ", which the node does not have");
  }
  return &slots_[computing_->output_slots[index]];
}

Status Executor::AllocateOutput(size_t index, nxrt_dtype dtype, std::span<const int64_t> dims,
                                nxrt_tensor* out) {
  NXRT_ASSIGN_OR_RETURN(ValueSlot * slot, ComputingOutput(index, "allocate_output"));
  PlannedNode& node = *computing_;
  if (node.preallocated[index]) {
    const nxrt_tensor& given = node.outputs[index].tensor;
    if (std::equal(dims.begin(), dims.end(), given.dims, given.dims + given.rank) &&
        static_cast<DataType>(dtype) == slot->dtype) {
      *out = given;
      return Status::Ok();
    }
    return InvalidArgument(graph_.Describe(node.id) + ": output " + std::to_string(index) +
                           " was preallocated as " + FormatDims(slot->dims) +
                           " but the kernel asks for " + FormatDims(dims) +
                           "; the kernel and shape inference disagree");
  }
  // What the node's output said points at the dims and buffer about to be
  // replaced; until this call succeeds it holds nothing, so a kernel that
  // ignores a failure here leaves an output FinishNode refuses.
  nxrt_tensor& said = node.outputs[index].tensor;
  said.rank = 0;
  said.dims = nullptr;
  said.data = nullptr;
  said.byte_size = 0;
  const DataType type = static_cast<DataType>(dtype);
  slot->dims.assign(dims.begin(), dims.end());
  if (type == DataType::kString) {
    NXRT_ASSIGN_OR_RETURN(const uint64_t count, graph::ElementCount(dims));
    // Each string costs the host a std::string and a view before it holds
    // a byte, so the count is bounded before any is made.
    constexpr uint64_t kPerString = sizeof(std::string) + sizeof(nxrt_string_view);
    const MemoryBudget* budget = shared_.memory_budget;
    const uint64_t bound =
        budget != nullptr && budget->limit() > 0 ? budget->limit() : PhysicalMemoryBytes();
    if (count > bound / kPerString) {
      return Status(
          StatusCode::kOutOfMemory,
          graph_.Describe(node.id) + ": output " + std::to_string(index) + " asks for " +
              std::to_string(count) + " strings, more than the " + std::to_string(bound) +
              " bytes of the memory limit or machine hold; check the dims the kernel asks for");
    }
    PrepareStrings(*slot, static_cast<size_t>(count));
  } else {
    NXRT_ASSIGN_OR_RETURN(const size_t bytes, DenseBytes(type, dims));
    NXRT_RETURN_IF_ERROR(slot->buffer->Reserve(MemoryProvider(slot->memory), bytes, Listener(),
                                               shared_.memory_budget));
    slot->data = slot->buffer->data();
    slot->byte_size = bytes;
  }
  slot->kind = NXRT_VALUE_TENSOR;
  slot->dtype = type;
  *out = nxrt_tensor{sizeof(nxrt_tensor),
                     dtype,
                     slot->memory == kHostMemory ? NXRT_MEMORY_HOST : NXRT_MEMORY_DEVICE,
                     slot->dims.size(),
                     slot->dims.empty() ? nullptr : slot->dims.data(),
                     slot->data,
                     slot->byte_size};
  node.outputs[index].kind = NXRT_VALUE_TENSOR;
  node.outputs[index].tensor = *out;
  return Status::Ok();
}

Status Executor::AllocateSequenceOutput(size_t index, size_t length) {
  NXRT_ASSIGN_OR_RETURN(ValueSlot * slot, ComputingOutput(index, "allocate_sequence_output"));
  // Each element costs the host a descriptor and a buffer before it holds a
  // byte, so the length is bounded before any of them is made.
  constexpr size_t kPerElement = sizeof(SequenceElement) + sizeof(nxrt_tensor);
  if (length > kMaxSequenceLength ||
      (shared_.memory_budget != nullptr && !shared_.memory_budget->Fits(length * kPerElement))) {
    return Status(StatusCode::kOutOfMemory,
                  graph_.Describe(computing_->id) + ": output " + std::to_string(index) +
                      " asks for a sequence of " + std::to_string(length) +
                      " elements; the host allows at most " + std::to_string(kMaxSequenceLength) +
                      ", within the memory limit; check the length the kernel asks for");
  }
  slot->elements.resize(length);
  slot->element_tensors.assign(length, nxrt_tensor{sizeof(nxrt_tensor), NXRT_DTYPE_UNDEFINED,
                                                   NXRT_MEMORY_HOST, 0, nullptr, nullptr, 0});
  slot->kind = NXRT_VALUE_SEQUENCE;
  slot->sequence = slot->element_tensors.data();
  slot->sequence_length = length;
  nxrt_value& out = computing_->outputs[index];
  out.kind = NXRT_VALUE_SEQUENCE;
  out.sequence = slot->sequence;
  out.sequence_length = length;
  return Status::Ok();
}

Status Executor::AllocateSequenceElement(size_t index, size_t element, nxrt_dtype dtype,
                                         std::span<const int64_t> dims, nxrt_tensor* out) {
  NXRT_ASSIGN_OR_RETURN(ValueSlot * slot, ComputingOutput(index, "allocate_sequence_element"));
  if (slot->kind != NXRT_VALUE_SEQUENCE || element >= slot->sequence_length ||
      slot->sequence != slot->element_tensors.data()) {
    return InvalidArgument(graph_.Describe(computing_->id) + ": element " +
                           std::to_string(element) + " of output " + std::to_string(index) +
                           " asked for before allocate_sequence_output sized it");
  }
  const DataType type = static_cast<DataType>(dtype);
  if (type == DataType::kString) {
    return Unsupported(graph_.Describe(computing_->id) +
                       ": sequences of strings are not supported");
  }
  SequenceElement& e = slot->elements[element];
  // As in AllocateOutput: empty until this call succeeds.
  slot->element_tensors[element] = nxrt_tensor{
      sizeof(nxrt_tensor), NXRT_DTYPE_UNDEFINED, NXRT_MEMORY_HOST, 0, nullptr, nullptr, 0};
  NXRT_ASSIGN_OR_RETURN(const size_t bytes, DenseBytes(type, dims));
  NXRT_RETURN_IF_ERROR(e.buffer.Reserve(nullptr, bytes, nullptr, shared_.memory_budget));
  e.dtype = type;
  e.dims.assign(dims.begin(), dims.end());
  e.byte_size = bytes;
  slot->element_tensors[element] = nxrt_tensor{sizeof(nxrt_tensor),
                                               dtype,
                                               NXRT_MEMORY_HOST,
                                               e.dims.size(),
                                               e.dims.empty() ? nullptr : e.dims.data(),
                                               e.buffer.data(),
                                               bytes};
  *out = slot->element_tensors[element];
  return Status::Ok();
}

Status Executor::SetOutputNone(size_t index) {
  NXRT_ASSIGN_OR_RETURN(ValueSlot * slot, ComputingOutput(index, "set_output_none"));
  slot->kind = NXRT_VALUE_NONE;
  computing_->outputs[index].kind = NXRT_VALUE_NONE;
  return Status::Ok();
}

Status Executor::SetStringElement(size_t index, size_t element, std::string_view text) {
  NXRT_ASSIGN_OR_RETURN(ValueSlot * slot, ComputingOutput(index, "set_string_element"));
  if (slot->kind != NXRT_VALUE_TENSOR || slot->dtype != DataType::kString ||
      element >= slot->strings.size()) {
    return InvalidArgument(graph_.Describe(computing_->id) + ": string element " +
                           std::to_string(element) + " of output " + std::to_string(index) +
                           " is outside the string tensor allocated for it");
  }
  slot->strings[element].assign(text);
  slot->string_views[element] = {slot->strings[element].data(), slot->strings[element].size()};
  return Status::Ok();
}

Status Executor::RunSubgraph(std::string_view attr_name, std::span<const nxrt_value> inputs,
                             std::span<nxrt_value> outputs) {
  if (computing_ == nullptr) {
    return FailedPrecondition(graph_.model_path + ": run_subgraph called outside a compute call");
  }
  auto found = bodies_.find({computing_->id.index, std::string(attr_name)});
  if (found == bodies_.end()) {
    return InvalidArgument(graph_.Describe(computing_->id) + ": no graph attribute '" +
                           std::string(attr_name) + "' to run");
  }
  PlannedNode* caller = computing_;
  Status status = found->second->RunBody(inputs, outputs);
  computing_ = caller;
  return status.WithContext(graph_.Describe(caller->id) + ": body '" + std::string(attr_name) +
                            "'");
}

}  // namespace nxrt::executor
