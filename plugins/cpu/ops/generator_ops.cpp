// Ops that make tensors rather than transform them: Constant (any of its
// value attributes), ConstantOfShape, Range and EyeLike.
#include <cmath>
#include <cstring>

#include "cpu_kernel.hpp"
#include "tensor_attribute.hpp"

namespace nxrt::cpu {
namespace {

template <typename T>
OwnedTensor OwnedFrom(const std::vector<T>& values, Dims dims) {
  OwnedTensor t;
  t.dtype = kDtypeOf<T>;
  t.dims = std::move(dims);
  t.bytes.resize(values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
  return t;
}

OwnedTensor ConstantValue(const sdk::Host& host, const sdk::Node& node) {
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
    OwnedTensor t;
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
  explicit ConstantKernel(OwnedTensor value)
      : CpuKernel(value.dtype != NXRT_DTYPE_STRING), value_(std::move(value)) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value>,
               std::span<nxrt_value> outputs) override {
    WriteOwnedTensor(ctx, outputs, 0, value_);
  }

 private:
  OwnedTensor value_;
};

class ConstantOfShapeKernel : public CpuKernel {
 public:
  explicit ConstantOfShapeKernel(OwnedTensor value) : CpuKernel(false), value_(std::move(value)) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const Dims dims = ReadInt64s(inputs[0].tensor);
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, value_.dtype, dims);
    const size_t size = DtypeSize(value_.dtype);
    auto* y = static_cast<std::byte*>(out.data);
    const int64_t n = ElementCount(dims);
    for (int64_t i = 0; i < n; ++i) std::memcpy(y + i * size, value_.bytes.data(), size);
  }

 private:
  OwnedTensor value_;
};

using RangeTypes = TypeList<float, double, int16_t, int32_t, int64_t>;

class RangeKernel : public CpuKernel {
 public:
  explicit RangeKernel(nxrt_dtype dtype) : CpuKernel(false), dtype_(dtype) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    Dispatch(RangeTypes{}, dtype_, "Range", [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T start = *DataAs<T>(inputs[0].tensor);
      const T limit = *DataAs<T>(inputs[1].tensor);
      const T delta = *DataAs<T>(inputs[2].tensor);
      if (delta == T(0)) FailInvalid("Range: delta is zero");
      const double steps = std::ceil((static_cast<double>(limit) - static_cast<double>(start)) /
                                     static_cast<double>(delta));
      const int64_t n = std::max<int64_t>(0, static_cast<int64_t>(steps));
      nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, dtype_, Dims{n});
      T* y = MutableDataAs<T>(out);
      for (int64_t i = 0; i < n; ++i) y[i] = static_cast<T>(start + static_cast<T>(i) * delta);
    });
  }

 private:
  nxrt_dtype dtype_;
};

class EyeLikeKernel : public CpuKernel {
 public:
  EyeLikeKernel(nxrt_dtype dtype, int64_t k) : CpuKernel(false), dtype_(dtype), k_(k) {}

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const Dims dims = DimsOf(inputs[0].tensor);
    if (dims.size() != 2) FailInvalid("EyeLike: input must be 2-D");
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, dtype_, dims);
    Dispatch(AllTypes{}, dtype_, "EyeLike", [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* y = MutableDataAs<T>(out);
      for (int64_t r = 0; r < dims[0]; ++r) {
        for (int64_t c = 0; c < dims[1]; ++c) {
          y[r * dims[1] + c] = static_cast<T>(c - r == k_ ? 1.0f : 0.0f);
        }
      }
    });
  }

 private:
  nxrt_dtype dtype_;
  int64_t k_;
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
                        int64_t) -> std::unique_ptr<sdk::Kernel> {
                       return std::make_unique<ConstantKernel>(ConstantValue(host, node));
                     }});
  r.Add("ConstantOfShape",
        {9, ClaimInputDtype(TypeList<int64_t>{}),
         [](const sdk::Host& host, const sdk::Node& node, std::span<const nxrt_shape>,
            int64_t) -> std::unique_ptr<sdk::Kernel> {
           OwnedTensor value = ReadTensorAttribute(host, node, "value")
                                   .value_or(OwnedFrom(std::vector<float>{0.0f}, {1}));
           if (value.dtype == NXRT_DTYPE_STRING || value.bytes.size() != DtypeSize(value.dtype)) {
             FailUnsupported("ConstantOfShape: value must be one numeric element");
           }
           return std::make_unique<ConstantOfShapeKernel>(std::move(value));
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
                      const auto dtype =
                          static_cast<nxrt_dtype>(node.AttrInt("dtype", inputs[0].dtype));
                      if (!Contains(AllTypes{}, dtype)) {
                        return sdk::ClaimResult::Declined("EyeLike: dtype " + DtypeName(dtype) +
                                                          " not supported");
                      }
                      return sdk::ClaimResult::Claimed();
                    },
                    [](const sdk::Node& node, std::span<const nxrt_shape> inputs, int64_t) {
                      return std::make_unique<EyeLikeKernel>(
                          static_cast<nxrt_dtype>(node.AttrInt("dtype", inputs[0].dtype)),
                          node.AttrInt("k", 0));
                    }});
}

}  // namespace nxrt::cpu
