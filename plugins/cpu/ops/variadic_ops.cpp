// Max, Min, Sum and Mean over any number of broadcast inputs, and Where. The
// variadic ops fold each input into the output in place: the output is the
// left operand with contiguous strides, so each fold is one broadcast pass.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "broadcast.hpp"
#include "cpu_kernel.hpp"
#include "isa_clones.hpp"

namespace nxrt::cpu {
namespace {

enum class Fold { kMax, kMin, kSum, kMean };

template <typename C>
bool IsNan(C v) {
  if constexpr (std::is_floating_point_v<C>) {
    return std::isnan(v);
  } else {
    return false;
  }
}

template <typename T>
void FoldInto(Fold fold, const BroadcastPlan<2>& plan, T* out, const nxrt_tensor& in, bool first) {
  using C = ComputeType<T>;
  const T* x = DataAs<T>(in);
  const int64_t sx = plan.strides[1].back();
  ForEachRow(plan, [&](const std::array<int64_t, 2>& offsets, int64_t o, int64_t n) {
    const T* px = x + offsets[1];
    T* py = out + o;
    if (first) {
      for (int64_t i = 0; i < n; ++i) py[i] = px[i * sx];
      return;
    }
    for (int64_t i = 0; i < n; ++i) {
      const C a = static_cast<C>(py[i]);
      const C b = static_cast<C>(px[i * sx]);
      C r;
      switch (fold) {
        case Fold::kMax:
          r = (IsNan(a) || IsNan(b)) ? (IsNan(a) ? a : b) : std::max(a, b);  // NaN wins
          break;
        case Fold::kMin:
          r = (IsNan(a) || IsNan(b)) ? (IsNan(a) ? a : b) : std::min(a, b);
          break;
        default:
          r = static_cast<C>(a + b);
      }
      py[i] = static_cast<T>(r);
    }
  });
}

// Every input's dims are known when the kernel is made, so the output dims
// and each fold's broadcast plan are too, and compute allocates nothing.
class VariadicKernel : public CpuKernel {
 public:
  VariadicKernel(Fold fold, nxrt_dtype dtype, std::string op, std::span<const nxrt_shape> inputs)
      : CpuKernel(true), fold_(fold), dtype_(dtype), op_(std::move(op)) {
    for (const nxrt_shape& shape : inputs)
      in_dims_.emplace_back(shape.dims, shape.dims + shape.rank);
    out_dims_ = BroadcastDims(in_dims_, op_);
    for (const Dims& d : in_dims_) plans_.push_back(MakeBroadcastPlan<2>({out_dims_, d}, op_));
  }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    if (inputs.size() != in_dims_.size()) {
      FailInvalid(op_ + ": input count differs from the kernel's");
    }
    for (size_t k = 0; k < inputs.size(); ++k) {
      if (!DimsEqual(DimsSpan(inputs[k].tensor), in_dims_[k])) {
        FailInvalid(op_ + ": kernel made for input " + std::to_string(k) + " of " +
                    DimsText(in_dims_[k]) + " got " + DimsText(DimsSpan(inputs[k].tensor)) +
                    "; make a kernel for these shapes");
      }
    }
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, dtype_, out_dims_);
    if (ElementCount(out_dims_) == 0) return;
    Dispatch(NumericTypes{}, dtype_, op_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* y = MutableDataAs<T>(out);
      for (size_t k = 0; k < inputs.size(); ++k) {
        FoldInto<T>(fold_, plans_[k], y, inputs[k].tensor, k == 0);
      }
      if (fold_ == Fold::kMean) {
        using C = ComputeType<T>;
        const int64_t n = ElementCount(out_dims_);
        const C count = static_cast<C>(inputs.size());
        for (int64_t i = 0; i < n; ++i) y[i] = static_cast<T>(static_cast<C>(y[i]) / count);
      }
    });
  }

 private:
  Fold fold_;
  nxrt_dtype dtype_;
  std::string op_;
  std::vector<Dims> in_dims_;
  Dims out_dims_;
  std::vector<BroadcastPlan<2>> plans_;  // one per input, folding it into the output
};

ClaimFn ClaimAllInputs(auto list) {
  return [list](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
    if (inputs.empty())
      return sdk::ClaimResult::Declined(std::string(node.op_type()) + ": needs at least one input");
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (auto reason = CheckInputDtype(node, inputs, i, list)) {
        return sdk::ClaimResult::Declined(*reason);
      }
    }
    return sdk::ClaimResult::Claimed();
  };
}

void AddVariadic(OpRegistry& r, const char* name, Fold fold, auto list) {
  r.Add(name, {1, ClaimAllInputs(list),
               [fold, name](const sdk::Node&, std::span<const nxrt_shape> inputs, int64_t) {
                 return std::make_unique<VariadicKernel>(fold, inputs[0].dtype, name, inputs);
               }});
}

// One row of Where for elements moved as E (an unsigned integer of their
// size), each operand's step 0 or 1 as a template argument so that the
// common rows (a mask over a tensor and a scalar) vectorise.
template <typename E, int kC, int kX, int kY>
NXRT_ISA_CLONES void SelectRow(const bool* __restrict c, const E* __restrict x,
                               const E* __restrict y, int64_t n, E* __restrict z) {
  for (int64_t i = 0; i < n; ++i) z[i] = c[i * kC] ? x[i * kX] : y[i * kY];
}

template <typename E>
void SelectRow(const bool* c, int64_t sc, const E* x, int64_t sx, const E* y, int64_t sy, int64_t n,
               E* z) {
  const int form = (sc << 2) | (sx << 1) | sy;  // each step 0 or 1 here
  switch (form) {
    case 0b100:
      return SelectRow<E, 1, 0, 0>(c, x, y, n, z);
    case 0b101:
      return SelectRow<E, 1, 0, 1>(c, x, y, n, z);
    case 0b110:
      return SelectRow<E, 1, 1, 0>(c, x, y, n, z);
    case 0b111:
      return SelectRow<E, 1, 1, 1>(c, x, y, n, z);
    default:
      for (int64_t i = 0; i < n; ++i) z[i] = c[i * sc] ? x[i * sx] : y[i * sy];
  }
}

// The three input dims are known when the kernel is made, so the broadcast
// plan is too, and compute allocates nothing.
class WhereKernel : public CpuKernel {
 public:
  WhereKernel(nxrt_dtype dtype, std::span<const nxrt_shape> inputs)
      : CpuKernel(true), dtype_(dtype) {
    for (size_t k = 0; k < 3; ++k)
      in_dims_[k].assign(inputs[k].dims, inputs[k].dims + inputs[k].rank);
    plan_ = MakeBroadcastPlan<3>(in_dims_, "Where");
  }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    for (size_t k = 0; k < 3; ++k) {
      if (!DimsEqual(DimsSpan(inputs[k].tensor), in_dims_[k])) {
        FailInvalid("Where: kernel made for input " + std::to_string(k) + " of " +
                    DimsText(in_dims_[k]) + " got " + DimsText(DimsSpan(inputs[k].tensor)) +
                    "; make a kernel for these shapes");
      }
    }
    const auto& plan = plan_;
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, dtype_, plan.out_dims);
    const bool* c = DataAs<bool>(inputs[0].tensor);
    const size_t size = ElementSize(dtype_);
    const auto* x = static_cast<const std::byte*>(inputs[1].tensor.data);
    const auto* y = static_cast<const std::byte*>(inputs[2].tensor.data);
    auto* z = static_cast<std::byte*>(out.data);
    const int64_t sc = plan.strides[0].back();
    const int64_t sx = plan.strides[1].back();
    const int64_t sy = plan.strides[2].back();
    const bool unit_steps = sc <= 1 && sx <= 1 && sy <= 1;
    ForEachRow(plan, [&](const std::array<int64_t, 3>& off, int64_t o, int64_t n) {
      const auto as = [&](auto element) {
        using E = decltype(element);
        SelectRow(c + off[0], sc, reinterpret_cast<const E*>(x) + off[1], sx,
                  reinterpret_cast<const E*>(y) + off[2], sy, n, reinterpret_cast<E*>(z) + o);
      };
      if (unit_steps && size == 4) return as(uint32_t{});
      if (unit_steps && size == 8) return as(uint64_t{});
      if (unit_steps && size == 2) return as(uint16_t{});
      if (unit_steps && size == 1) return as(uint8_t{});
      for (int64_t i = 0; i < n; ++i) {
        const std::byte* src =
            c[off[0] + i * sc] ? x + (off[1] + i * sx) * size : y + (off[2] + i * sy) * size;
        std::memcpy(z + (o + i) * size, src, size);
      }
    });
  }

 private:
  nxrt_dtype dtype_;
  std::array<Dims, 3> in_dims_;
  BroadcastPlan<3> plan_;
};

}  // namespace

void RegisterVariadicOps(OpRegistry& r) {
  AddVariadic(r, "Max", Fold::kMax, NumericTypes{});
  AddVariadic(r, "Min", Fold::kMin, NumericTypes{});
  AddVariadic(r, "Sum", Fold::kSum, NumericTypes{});
  AddVariadic(r, "Mean", Fold::kMean, FloatTypes{});
  r.Add("Where", {1,
                  [](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
                    if (auto reason = CheckInputDtype(node, inputs, 0, TypeList<bool>{})) {
                      return sdk::ClaimResult::Declined(*reason);
                    }
                    if (auto reason = CheckInputDtype(node, inputs, 1, AllTypes{})) {
                      return sdk::ClaimResult::Declined(*reason);
                    }
                    return ClaimUnless(CheckInputDtype(node, inputs, 2, AllTypes{}));
                  },
                  [](const sdk::Node&, std::span<const nxrt_shape> inputs, int64_t) {
                    return std::make_unique<WhereKernel>(inputs[1].dtype, inputs);
                  }});
}

}  // namespace nxrt::cpu
