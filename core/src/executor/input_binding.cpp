#include "executor/executor.hpp"

#include <optional>
#include <string_view>

#include "executor/slot_values.hpp"
#include "nxrt/graph/weight_store.hpp"

namespace nxrt::executor {
namespace {

using graph::DataType;

std::string FormatDeclared(const graph::Graph& graph, const graph::Shape& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    text += i ? "," : "";
    text += shape[i].is_static() ? std::to_string(shape[i].extent())
                                 : graph.symbol(shape[i].symbol()).name;
  }
  return text + "]";
}

// A bool tensor holds only bytes 0 and 1, as ONNX defines it: kernels load
// its elements as C++ bool, for which any other byte is undefined.
// `what` names the value; it is called only to word an error, so a bound
// input costs no string.
template <typename Describe>
Status CheckBoolBytes(const Describe& what, const void* data, size_t bytes) {
  const auto* b = static_cast<const uint8_t*>(data);
  uint8_t seen = 0;
  for (size_t i = 0; i < bytes; ++i) seen |= b[i];
  if (seen <= 1) return Status::Ok();
  size_t i = 0;
  while (b[i] <= 1) ++i;
  return InvalidArgument(what() + " element " + std::to_string(i) + " holds the byte " +
                         std::to_string(b[i]) +
                         "; a bool tensor holds only 0 and 1, so store each element as 0 or 1");
}

// A dense host tensor's bytes fit its dtype and dims, and a bool's are 0 or 1.
template <typename Describe>
Status CheckDenseBytes(const Describe& what, const Tensor& tensor) {
  NXRT_ASSIGN_OR_RETURN(const size_t needed, DenseBytes(tensor.dtype(), tensor.shape()));
  if (tensor.byte_size() != needed) {
    return InvalidArgument(what() + " holds " + std::to_string(tensor.byte_size()) + " bytes but " +
                           std::string(graph::DataTypeName(tensor.dtype())) + " " +
                           FormatDims(tensor.shape()) + " needs " + std::to_string(needed));
  }
  if (tensor.dtype() == DataType::kBool) return CheckBoolBytes(what, tensor.data(), needed);
  return Status::Ok();
}

}  // namespace

// ---- inputs ---------------------------------------------------------------

const std::string& Executor::DescribeSlot(size_t slot) const {
  static const std::string kCopy = "(copy)";
  const graph::ValueId id = slots_[slot].value;
  return id.valid() ? graph_.value(id).name : kCopy;
}

Status Executor::CheckDeclaredType(size_t slot, DataType dtype,
                                   std::span<const int64_t> dims) const {
  const graph::Value& value = graph_.value(slots_[slot].value);
  const auto what = [&] { return graph_.model_path + ": input '" + value.name + "'"; };
  if (value.dtype != DataType::kUndefined && dtype != value.dtype) {
    return InvalidArgument(what() + " is " + std::string(graph::DataTypeName(dtype)) +
                           ", expected " + std::string(graph::DataTypeName(value.dtype)) +
                           "; convert the tensor");
  }
  if (!value.shape) return Status::Ok();
  const graph::Shape& shape = *value.shape;
  if (shape.size() != dims.size()) {
    return InvalidArgument(what() + " has rank " + std::to_string(dims.size()) + " " +
                           FormatDims(dims) + ", expected rank " + std::to_string(shape.size()) +
                           " " + FormatDeclared(graph_, shape) + "; fix the tensor's shape");
  }
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i].is_static() && shape[i].extent() != dims[i]) {
      return InvalidArgument(what() + " dim " + std::to_string(i) + " is " +
                             std::to_string(dims[i]) + ", expected " +
                             std::to_string(shape[i].extent()) + " of " +
                             FormatDeclared(graph_, shape) + "; fix the tensor's shape");
    }
    if (dims[i] < 0) {
      return InvalidArgument(what() + " dim " + std::to_string(i) + " is negative");
    }
  }
  return Status::Ok();
}

Status Executor::BindTensorInput(size_t slot_index, const Tensor& tensor) {
  ValueSlot& slot = slots_[slot_index];
  const auto what = [&] {
    return graph_.model_path + ": input '" + DescribeSlot(slot_index) + "'";
  };
  if (tensor.memory() != MemoryKind::kHost) {
    return Unsupported(what() + " is in device memory; bind inputs in host memory");
  }
  // Exporters declare scalars that their users feed as [1] (a voice-activity
  // model's sample rate), and ONNX Runtime takes them: a one-element tensor
  // for a declared scalar is bound as that scalar.
  std::span<const int64_t> dims = tensor.shape();
  const std::optional<graph::Shape>& declared = graph_.value(slot.value).shape;
  if (declared && declared->empty() && !dims.empty() && tensor.element_count() == 1) dims = {};
  NXRT_RETURN_IF_ERROR(CheckDeclaredType(slot_index, tensor.dtype(), dims));
  slot.kind = NXRT_VALUE_TENSOR;
  slot.dtype = tensor.dtype();
  slot.dims.assign(dims.begin(), dims.end());
  slot.ready = true;
  if (tensor.dtype() == DataType::kString) {
    const std::vector<std::string>& strings = tensor.strings();
    if (strings.size() != tensor.element_count()) {
      return InvalidArgument(what() + " holds " + std::to_string(strings.size()) +
                             " strings but its shape " + FormatDims(tensor.shape()) + " needs " +
                             std::to_string(tensor.element_count()));
    }
    slot.string_views.resize(strings.size());
    for (size_t i = 0; i < strings.size(); ++i) {
      slot.string_views[i] = {strings[i].data(), strings[i].size()};
    }
    slot.data = slot.string_views.data();
    slot.byte_size = strings.size() * sizeof(nxrt_string_view);
    return Status::Ok();
  }
  NXRT_RETURN_IF_ERROR(CheckDenseBytes(what, tensor));
  slot.data = const_cast<void*>(tensor.data());
  slot.byte_size = tensor.byte_size();
  return Status::Ok();
}

Status Executor::BindSequenceInput(size_t slot_index, const std::vector<Tensor>& elements) {
  ValueSlot& slot = slots_[slot_index];
  slot.element_tensors.resize(elements.size());
  for (size_t i = 0; i < elements.size(); ++i) {
    const Tensor& t = elements[i];
    const auto what = [&] {
      return graph_.model_path + ": input '" + DescribeSlot(slot_index) + "' element " +
             std::to_string(i);
    };
    if (t.dtype() == DataType::kString || t.memory() != MemoryKind::kHost) {
      return Unsupported(what() + ": sequence elements must be numeric host tensors");
    }
    NXRT_RETURN_IF_ERROR(CheckDenseBytes(what, t));
    slot.element_tensors[i] = {
        sizeof(nxrt_tensor), static_cast<nxrt_dtype>(t.dtype()), NXRT_MEMORY_HOST, t.shape().size(),
        t.shape().data(),    const_cast<void*>(t.data()),        t.byte_size()};
  }
  slot.kind = NXRT_VALUE_SEQUENCE;
  slot.sequence = slot.element_tensors.data();
  slot.sequence_length = elements.size();
  slot.ready = true;
  return Status::Ok();
}

Status Executor::BindNamedInputs(std::span<const RunInput> inputs) {
  const std::string& model = graph_.model_path;
  const auto feedable = [&](std::string_view name) {
    for (size_t slot : input_slots_) {
      if (DescribeSlot(slot) == name) return true;
    }
    for (size_t slot : overridable_slots_) {
      if (DescribeSlot(slot) == name) return true;
    }
    return false;
  };
  for (size_t j = 0; j < inputs.size(); ++j) {
    if (!feedable(inputs[j].name)) {
      std::string names;
      for (size_t slot : input_slots_) names += (names.empty() ? "" : ", ") + DescribeSlot(slot);
      std::string defaults;
      for (size_t slot : overridable_slots_) {
        defaults += (defaults.empty() ? "" : ", ") + DescribeSlot(slot);
      }
      return InvalidArgument(
          model + ": '" + std::string(inputs[j].name) +
          "' is not an input of the model; its inputs are: " + names +
          (defaults.empty() ? "" : "; its overridable initializers: " + defaults));
    }
    for (size_t k = 0; k < j; ++k) {
      if (inputs[k].name == inputs[j].name) {
        return InvalidArgument(model + ": input '" + std::string(inputs[j].name) +
                               "' is given twice; give each input once");
      }
    }
  }
  const auto given_for = [&](const graph::Value& value) -> const RunInput* {
    for (const RunInput& input : inputs) {
      if (input.name == value.name) return &input;
    }
    return nullptr;
  };
  for (size_t slot : input_slots_) {
    const graph::Value& value = graph_.value(slots_[slot].value);
    const RunInput* given = given_for(value);
    if (given == nullptr) {
      std::string expected = std::string(graph::DataTypeName(value.dtype));
      if (value.shape) expected += " " + FormatDeclared(graph_, *value.shape);
      return InvalidArgument(model + ": input '" + value.name + "' is missing; give it as " +
                             expected);
    }
    NXRT_RETURN_IF_ERROR(BindGivenInput(slot, *given));
  }
  // An overridable initializer the run does not feed takes its default again.
  for (size_t slot : overridable_slots_) {
    const graph::Value& value = graph_.value(slots_[slot].value);
    const RunInput* given = given_for(value);
    if (given != nullptr) {
      NXRT_RETURN_IF_ERROR(BindGivenInput(slot, *given));
    } else {
      BindWeight(slots_[slot], graph_.weights->Get(*value.initializer));
    }
  }
  return Status::Ok();
}

Status Executor::BindGivenInput(size_t slot, const RunInput& given) {
  const graph::Value& value = graph_.value(slots_[slot].value);
  const Value::Kind given_kind =
      given.tensor != nullptr ? Value::Kind::kTensor : given.value->kind();
  const bool fits =
      value.kind == graph::ValueKind::kUnknown ||
      (given_kind == Value::Kind::kTensor && (value.kind == graph::ValueKind::kTensor ||
                                              value.kind == graph::ValueKind::kOptionalTensor)) ||
      (given_kind == Value::Kind::kSequence &&
       (value.kind == graph::ValueKind::kSequence ||
        value.kind == graph::ValueKind::kOptionalSequence)) ||
      (given_kind == Value::Kind::kNone && (value.kind == graph::ValueKind::kOptionalTensor ||
                                            value.kind == graph::ValueKind::kOptionalSequence));
  if (!fits) {
    static constexpr const char* kGivenNames[] = {"absent", "a tensor", "a sequence"};
    return InvalidArgument(graph_.model_path + ": input '" + value.name + "' is given as " +
                           kGivenNames[static_cast<int>(given_kind)] + ", but the model takes " +
                           (value.kind == graph::ValueKind::kSequence ||
                                    value.kind == graph::ValueKind::kOptionalSequence
                                ? "a sequence"
                                : "a tensor") +
                           (value.kind == graph::ValueKind::kOptionalTensor ||
                                    value.kind == graph::ValueKind::kOptionalSequence
                                ? " or nothing"
                                : ""));
  }
  if (given.tensor != nullptr) return BindTensorInput(slot, *given.tensor);
  if (given.value->is_tensor()) return BindTensorInput(slot, given.value->tensor());
  if (given.value->is_sequence()) return BindSequenceInput(slot, given.value->sequence());
  slots_[slot].kind = NXRT_VALUE_NONE;
  slots_[slot].ready = true;
  return Status::Ok();
}

void Executor::BindBorrowedValue(size_t slot_index, const nxrt_value& value) {
  ValueSlot& slot = slots_[slot_index];
  slot.kind = value.kind;
  slot.ready = true;
  if (value.kind == NXRT_VALUE_TENSOR) {
    slot.dtype = static_cast<DataType>(value.tensor.dtype);
    slot.dims.assign(value.tensor.dims, value.tensor.dims + value.tensor.rank);
    slot.data = value.tensor.data;
    slot.byte_size = value.tensor.byte_size;
  } else if (value.kind == NXRT_VALUE_SEQUENCE) {
    slot.sequence = value.sequence;
    slot.sequence_length = value.sequence_length;
  }
}

void Executor::BindOuterScope() {
  for (const auto& [slot_index, outer] : outer_scope_) {
    ValueSlot& slot = slots_[slot_index];
    slot.kind = outer->kind;
    slot.dtype = outer->dtype;
    slot.dims.assign(outer->dims.begin(), outer->dims.end());
    slot.data = outer->data;
    slot.byte_size = outer->byte_size;
    slot.sequence = outer->sequence;
    slot.sequence_length = outer->sequence_length;
    slot.ready = outer->ready;
  }
}

}  // namespace nxrt::executor
