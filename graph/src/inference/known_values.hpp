// Element values of small integer tensors that inference can see: shape
// tensors built by Shape/Gather/Concat, Constant nodes, initializers. Each
// element is a Dim, so a symbolic extent read by Shape stays that symbol all
// the way to the Reshape that consumes it; nullopt marks an element whose
// value is not known.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "nxrt/graph/ir.hpp"

namespace nxrt::graph::inference {

using Elements = std::vector<std::optional<Dim>>;

class KnownValues {
 public:
  KnownValues(size_t value_count, size_t max_elements)
      : elements_(value_count), max_elements_(max_elements) {}

  const Elements* Get(ValueId id) const {
    return id.index < elements_.size() && elements_[id.index] ? &*elements_[id.index] : nullptr;
  }
  Elements* GetMutable(ValueId id) {
    return id.index < elements_.size() && elements_[id.index] ? &*elements_[id.index] : nullptr;
  }
  void Set(ValueId id, Elements elements) {
    if (elements.size() > max_elements_) return;
    if (id.index >= elements_.size()) elements_.resize(id.index + 1);
    elements_[id.index] = std::move(elements);
  }
  size_t max_elements() const { return max_elements_; }

 private:
  std::vector<std::optional<Elements>> elements_;
  size_t max_elements_;
};

// Whether element values of `dtype` are tracked (the integer and bool types).
bool IsTrackedDtype(DataType dtype);

// The elements of an integer or bool tensor, or nullopt for other dtypes and
// tensors larger than `max_elements`.
std::optional<Elements> ElementsOfTensor(const TensorData& tensor, size_t max_elements);

// The values of a numeric tensor as doubles (for float operands such as
// Resize scales), or nullopt for other dtypes and tensors over `max_elements`.
std::optional<std::vector<double>> NumbersOfTensor(const TensorData& tensor, size_t max_elements);

}  // namespace nxrt::graph::inference
