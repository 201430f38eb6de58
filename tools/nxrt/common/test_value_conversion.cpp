#include "common/test_value_conversion.hpp"

#include <cstring>
#include <vector>

namespace nxrt::cli {

Result<Tensor> TensorFromTestTensor(const graph::TestTensor& tensor) {
  if (tensor.dtype == DataType::kString) return Tensor::FromStrings(tensor.dims, tensor.strings);
  NXRT_ASSIGN_OR_RETURN(Tensor out, Tensor::Zeros(tensor.dtype, tensor.dims));
  if (out.byte_size() != tensor.bytes.size()) {
    return InvalidArgument("tensor '" + tensor.name + "' holds " +
                           std::to_string(tensor.bytes.size()) + " bytes where its shape needs " +
                           std::to_string(out.byte_size()));
  }
  if (!tensor.bytes.empty()) std::memcpy(out.data(), tensor.bytes.data(), tensor.bytes.size());
  return out;
}

Result<Value> ValueFromTestValue(const graph::TestValue& value) {
  switch (value.kind) {
    case graph::TestValueKind::kAbsentOptional:
      return Value();
    case graph::TestValueKind::kSequence: {
      std::vector<Tensor> elements;
      for (const graph::TestTensor& element : value.sequence) {
        NXRT_ASSIGN_OR_RETURN(Tensor tensor, TensorFromTestTensor(element));
        elements.push_back(std::move(tensor));
      }
      return Value::Sequence(std::move(elements));
    }
    case graph::TestValueKind::kTensor:
      break;
  }
  NXRT_ASSIGN_OR_RETURN(Tensor tensor, TensorFromTestTensor(value.tensor));
  return Value(std::move(tensor));
}

graph::TestTensor TestTensorFromTensor(const Tensor& tensor, const std::string& name) {
  graph::TestTensor out;
  out.name = name;
  out.dtype = tensor.dtype();
  out.dims = tensor.shape();
  if (tensor.dtype() == DataType::kString) {
    out.strings = tensor.strings();
  } else {
    const auto* bytes = static_cast<const std::byte*>(tensor.data());
    out.bytes.assign(bytes, bytes + tensor.byte_size());
  }
  return out;
}

}  // namespace nxrt::cli
