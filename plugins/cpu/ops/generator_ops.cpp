// Ops that make tensors rather than transform them: Constant (any of its
// value attributes), ConstantOfShape, Range and EyeLike.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "cpu_kernel.hpp"
#include "tensor_attribute.hpp"

namespace nxrt::cpu {
namespace {

template <typename T>
AttributeTensor OwnedFrom(const std::vector<T>& values, Dims dims) {
  AttributeTensor t;
  t.dtype = kDtypeOf<T>;
  t.dims = std::move(dims);
  t.bytes.resize(values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
  return t;
}

AttributeTensor ConstantValue(const sdk::Host& host, const sdk::Node& node) {
  if (auto tensor = ReadTensorAttribute(host, node, "value")) return *tensor;
  if (node.attr_type("value_float") != NXRT_ATTR_UNDEFINED) {
    return OwnedFrom(std::vector<float>{node.AttrFloat("value_float", 0)}, {});
  }
  if (node.attr_type("value_floats") != NXRT_ATTR_UNDEFINED) {
    auto v = node.AttrFloats("value_floats");
    return OwnedFrom(v, {static_cast<int64_t>(v.size())});
  }
  if (node.attr_type("value_int") != NXRT_ATTR_UNDEFINED) {
    return OwnedFrom(std::vector<int64_t>{node.AttrInt("value_int", 0)}, {});
  }
  if (node.attr_type("value_ints") != NXRT_ATTR_UNDEFINED) {
    auto v = node.AttrInts("value_ints");
    return OwnedFrom(v, {static_cast<int64_t>(v.size())});
  }
  if (node.attr_type("value_string") != NXRT_ATTR_UNDEFINED) {
    AttributeTensor t;
    t.dtype = NXRT_DTYPE_STRING;
    t.strings.push_back(node.AttrString("value_string", ""));
    return t;
  }
  FailUnsupported(
      "Constant: no supported value attribute (sparse_value and value_strings "
      "are not implemented)");
}

class ConstantKernel : public CpuKernel {
 public:
  explicit ConstantKernel(AttributeTensor value)
      : CpuKernel(value.dtype != NXRT_DTYPE_STRING), value_(std::move(value)) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value>,
               std::span<nxrt_value> outputs) override {
    WriteAttributeTensor(ctx, outputs, 0, value_);
  }

 private:
  AttributeTensor value_;
};

// The output dims are the values of input 0, read into a member sized when
// the kernel is made, so compute allocates nothing; a preallocated output of
// other dims than the values give is refused by PrepareOutput: capture-safe.
class ConstantOfShapeKernel : public CpuKernel {
 public:
  ConstantOfShapeKernel(AttributeTensor value, std::span<const int64_t> shape_dims)
      : CpuKernel(true), value_(std::move(value)), dims_(ElementCount(shape_dims), 0) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& shape = inputs[0].tensor;
    if (ElementCount(shape) != static_cast<int64_t>(dims_.size())) {
      FailInvalid("ConstantOfShape: kernel made for a shape of " + std::to_string(dims_.size()) +
                  " dims got " + std::to_string(ElementCount(shape)) +
                  "; make a kernel for this shape");
    }
    std::copy_n(DataAs<int64_t>(shape), dims_.size(), dims_.begin());
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, value_.dtype, dims_);
    const size_t size = ElementSize(value_.dtype);
    auto* y = static_cast<std::byte*>(out.data);
    const int64_t n = ElementCount(dims_);
    for (int64_t i = 0; i < n; ++i) std::memcpy(y + i * size, value_.bytes.data(), size);
  }

 private:
  AttributeTensor value_;
  Dims dims_;
};

using RangeTypes = TypeList<float, double, Float16, BFloat16, int16_t, int32_t, int64_t>;

// The length follows from the input values into a one-entry member, so
// compute allocates nothing; a preallocated output of another length is
// refused by PrepareOutput: capture-safe.
class RangeKernel : public CpuKernel {
 public:
  explicit RangeKernel(nxrt_dtype dtype) : CpuKernel(true), dtype_(dtype) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    for (size_t i = 0; i < 3; ++i) {
      if (ElementCount(inputs[i].tensor) != 1) {
        FailInvalid("Range: start, limit and delta must each hold one value; input " +
                    std::to_string(i) + " holds " + std::to_string(ElementCount(inputs[i].tensor)));
      }
    }
    Dispatch(RangeTypes{}, dtype_, "Range", [&](auto tag) {
      using T = typename decltype(tag)::type;
      // 16-bit floats step in float and round each element once.
      using C = ComputeType<T>;
      const C start = static_cast<C>(*DataAs<T>(inputs[0].tensor));
      const C limit = static_cast<C>(*DataAs<T>(inputs[1].tensor));
      const C delta = static_cast<C>(*DataAs<T>(inputs[2].tensor));
      if (delta == C(0)) FailInvalid("Range: delta is zero");
      const double steps = std::ceil((static_cast<double>(limit) - static_cast<double>(start)) /
                                     static_cast<double>(delta));
      // Saturated, a count past int64 is refused when the output is sized.
      const int64_t n = std::max<int64_t>(0, SaturatingCast<int64_t>(steps));
      dims_[0] = n;
      nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, dtype_, dims_);
      T* y = MutableDataAs<T>(out);
      for (int64_t i = 0; i < n; ++i) y[i] = static_cast<T>(start + static_cast<C>(i) * delta);
    });
  }

 private:
  nxrt_dtype dtype_;
  Dims dims_{0};
};

// The output takes the input's dims, known when the kernel is made, so
// compute allocates nothing: capture-safe.
class EyeLikeKernel : public CpuKernel {
 public:
  EyeLikeKernel(nxrt_dtype dtype, int64_t k, std::span<const int64_t> dims)
      : CpuKernel(true), dtype_(dtype), k_(k), dims_(dims.begin(), dims.end()) {
    if (dims_.size() != 2) FailInvalid("EyeLike: input must be 2-D");
  }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    if (!DimsEqual(DimsSpan(inputs[0].tensor), dims_)) {
      FailInvalid("EyeLike: kernel made for " + DimsText(dims_) + " got " +
                  DimsText(DimsSpan(inputs[0].tensor)) + "; make a kernel for this shape");
    }
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, dtype_, dims_);
    Dispatch(AllTypes{}, dtype_, "EyeLike", [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* y = MutableDataAs<T>(out);
      for (int64_t r = 0; r < dims_[0]; ++r) {
        for (int64_t c = 0; c < dims_[1]; ++c) {
          y[r * dims_[1] + c] = static_cast<T>(c - r == k_ ? 1.0f : 0.0f);
        }
      }
    });
  }

 private:
  nxrt_dtype dtype_;
  int64_t k_;
  Dims dims_;
};

}  // namespace

void RegisterGeneratorOps(OpRegistry& r) {
  r.Add("Constant", {1,
                     [](const sdk::Node& node, int64_t, std::span<const nxrt_value_info>) {
                       for (const char* unsupported : {"sparse_value", "value_strings"}) {
                         if (node.attr_type(unsupported) != NXRT_ATTR_UNDEFINED) {
                           return sdk::ClaimResult::Declined(std::string("Constant: ") +
                                                             unsupported + " not implemented");
                         }
                       }
                       return sdk::ClaimResult::Claimed();
                     },
                     [](const sdk::Host& host, const sdk::Node& node, std::span<const nxrt_shape>,
                        int64_t) -> std::unique_ptr<CpuKernel> {
                       return std::make_unique<ConstantKernel>(ConstantValue(host, node));
                     }});
  r.Add("ConstantOfShape",
        {9, ClaimInputDtype(TypeList<int64_t>{}),
         [](const sdk::Host& host, const sdk::Node& node, std::span<const nxrt_shape> inputs,
            int64_t) -> std::unique_ptr<CpuKernel> {
           AttributeTensor value = ReadTensorAttribute(host, node, "value")
                                       .value_or(OwnedFrom(std::vector<float>{0.0f}, {1}));
           if (value.dtype == NXRT_DTYPE_STRING || value.bytes.size() != ElementSize(value.dtype)) {
             FailUnsupported("ConstantOfShape: value must be one numeric element");
           }
           return std::make_unique<ConstantOfShapeKernel>(
               std::move(value), std::span<const int64_t>(inputs[0].dims, inputs[0].rank));
         }});
  r.Add("Range", {11, ClaimInputDtype(RangeTypes{}),
                  [](const sdk::Node&, std::span<const nxrt_shape> inputs, int64_t) {
                    return std::make_unique<RangeKernel>(inputs[0].dtype);
                  }});
  r.Add("EyeLike", {9,
                    [](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
                      if (auto reason = CheckInputDtype(node, inputs, 0, AllTypes{})) {
                        return sdk::ClaimResult::Declined(*reason);
                      }
                      const auto dtype = AttrDtype(node, "dtype", inputs[0].dtype);
                      if (!Contains(AllTypes{}, dtype)) {
                        return sdk::ClaimResult::Declined("EyeLike: dtype " + DtypeName(dtype) +
                                                          " not supported");
                      }
                      return sdk::ClaimResult::Claimed();
                    },
                    [](const sdk::Node& node, std::span<const nxrt_shape> inputs, int64_t) {
                      return std::make_unique<EyeLikeKernel>(
                          AttrDtype(node, "dtype", inputs[0].dtype), node.AttrInt("k", 0),
                          std::span<const int64_t>(inputs[0].dims, inputs[0].rank));
                    }});
}

}  // namespace nxrt::cpu
