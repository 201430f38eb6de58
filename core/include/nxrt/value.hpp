// Value: what one model input or output holds in the ONNX sense: a tensor, a
// sequence of tensors, or nothing (an absent optional). Tensors cover almost
// every model; sequences and optionals appear in the ONNX conformance cases.
#pragma once

#include <utility>
#include <vector>

#include "nxrt/tensor.hpp"

namespace nxrt {

class Value {
 public:
  enum class Kind { kNone, kTensor, kSequence };

  Value() = default;                                                          // none
  Value(Tensor tensor) : kind_(Kind::kTensor), tensor_(std::move(tensor)) {}  // NOLINT: implicit
  static Value Sequence(std::vector<Tensor> elements) {
    Value v;
    v.kind_ = Kind::kSequence;
    v.sequence_ = std::move(elements);
    return v;
  }

  Kind kind() const { return kind_; }
  bool is_none() const { return kind_ == Kind::kNone; }
  bool is_tensor() const { return kind_ == Kind::kTensor; }
  bool is_sequence() const { return kind_ == Kind::kSequence; }
  const Tensor& tensor() const { return tensor_; }
  Tensor& tensor() { return tensor_; }
  const std::vector<Tensor>& sequence() const { return sequence_; }
  std::vector<Tensor>& sequence() { return sequence_; }

 private:
  Kind kind_ = Kind::kNone;
  Tensor tensor_;
  std::vector<Tensor> sequence_;
};

}  // namespace nxrt
