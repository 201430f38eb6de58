#include "executor/executor.hpp"

#include <cstring>

#include "executor/slot_values.hpp"

namespace nxrt::executor {
// ---- outputs ------------------------------------------------------------------

Result<size_t> Executor::OutputSlot(const std::string& name) const {
  for (size_t slot : output_slots_) {
    if (DescribeSlot(slot) == name) return slot;
  }
  std::string names;
  for (size_t slot : output_slots_) names += (names.empty() ? "" : ", ") + DescribeSlot(slot);
  return InvalidArgument(graph_.model_path + ": '" + name +
                         "' is not an output of the model; its outputs are: " + names);
}

Status Executor::ExportTensor(size_t slot_index, Tensor& out) {
  const ValueSlot& slot = slots_[slot_index];
  const auto what = [&] {
    return graph_.model_path + ": output '" + DescribeSlot(slot_index) + "'";
  };
  if (!slot.ready) return Internal(what() + " was not produced by the run");
  if (slot.kind != NXRT_VALUE_TENSOR) {
    return InvalidArgument(what() + " is " +
                           (slot.kind == NXRT_VALUE_NONE ? "absent" : "a sequence") +
                           ", not a tensor; read it with RunValues");
  }
  Status reshaped = out.Reshape(slot.dtype, slot.dims);
  if (!reshaped.ok()) return reshaped.WithContext(what());
  if (slot.dtype == DataType::kString) {
    const auto* views = static_cast<const nxrt_string_view*>(slot.data);
    std::vector<std::string>& strings = out.mutable_strings();
    for (size_t i = 0; i < strings.size(); ++i) strings[i].assign(views[i].data, views[i].size);
    return Status::Ok();
  }
  if (out.byte_size() > slot.byte_size) {
    return Internal(what() + " holds " + std::to_string(slot.byte_size) +
                    " bytes, fewer than its " + "shape " + FormatDims(slot.dims) + " needs");
  }
  // A past tensor that borrows this very output's storage was updated in place.
  if (out.byte_size() == 0 || out.data() == slot.data) return Status::Ok();
  if (slot.memory == kHostMemory) {
    std::memcpy(out.data(), slot.data, out.byte_size());
    return Status::Ok();
  }
  return MemoryProvider(slot.memory)
      ->CopyToHost(out.data(), slot.data, out.byte_size())
      .WithContext(what());
}

Result<Value> Executor::ExportValue(size_t slot_index) {
  const ValueSlot& slot = slots_[slot_index];
  if (slot.ready && slot.kind == NXRT_VALUE_NONE) return Value();
  if (slot.ready && slot.kind == NXRT_VALUE_SEQUENCE) {
    std::vector<Tensor> elements(slot.sequence_length);
    for (size_t i = 0; i < slot.sequence_length; ++i) {
      const nxrt_tensor& t = slot.sequence[i];
      const std::span<const int64_t> dims(t.dims, t.rank);
      NXRT_RETURN_IF_ERROR(elements[i].Reshape(static_cast<DataType>(t.dtype), dims));
      if (elements[i].byte_size() > t.byte_size) {
        return Internal(graph_.model_path + ": element " + std::to_string(i) + " of output '" +
                        DescribeSlot(slot_index) + "' is smaller than its shape");
      }
      if (elements[i].byte_size() != 0) {
        std::memcpy(elements[i].data(), t.data, elements[i].byte_size());
      }
    }
    return Value::Sequence(std::move(elements));
  }
  Tensor tensor;
  NXRT_RETURN_IF_ERROR(ExportTensor(slot_index, tensor));
  return Value(std::move(tensor));
}

}  // namespace nxrt::executor
