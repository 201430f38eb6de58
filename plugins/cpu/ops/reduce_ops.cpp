// Reductions (ReduceSum, Mean, Max, Min, Prod, L1, L2, LogSum, LogSumExp,
// SumSquare) with axes from the attribute or, from ReduceSum-13 and the
// others' opset 18, from the optional second input; keepdims and
// noop_with_empty_axes. ReduceMax and ReduceMin also take bool (any and
// all). Also ArgMax and ArgMin. The reduction walks the input
// once in order, each element landing on its output slot through strides
// that are zero along reduced axes; a sum, mean, sum of squares or L2 norm
// over the trailing axes (a pooled image, a normalised row) sums each
// contiguous row in vector lanes instead. Floats accumulate in double.
#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include "broadcast.hpp"
#include "cpu_kernel.hpp"
#include "isa_clones.hpp"

namespace nxrt::cpu {
namespace {

enum class Reduction { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kLogSum, kLogSumExp, kSumSquare };

// The axes an int32 or int64 tensor holds equal `axes`; reads in place, so the
// check allocates nothing.
bool SameAxes(const nxrt_tensor& t, const Dims& axes) {
  if (ElementCount(t) != static_cast<int64_t>(axes.size())) return false;
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t v = t.dtype == NXRT_DTYPE_INT32 ? DataAs<int32_t>(t)[i] : DataAs<int64_t>(t)[i];
    if (v != axes[i]) return false;
  }
  return true;
}

// The sum of each of `rows` contiguous rows of `width` values of `x` (of
// their squares when `squares`) into `sums`, in double, over eight lanes the
// vectoriser can widen.
template <typename T>
NXRT_ISA_CLONES void SumRows(const T* x, int64_t rows, int64_t width, bool squares, double* sums) {
  constexpr int64_t kLanes = 8;
  for (int64_t r = 0; r < rows; ++r) {
    const T* row = x + r * width;
    double lanes[kLanes] = {};
    int64_t i = 0;
    if (squares) {
      for (; i + kLanes <= width; i += kLanes) {
        for (int64_t k = 0; k < kLanes; ++k) {
          const double v = static_cast<double>(static_cast<ComputeType<T>>(row[i + k]));
          lanes[k] += v * v;
        }
      }
    } else {
      for (; i + kLanes <= width; i += kLanes) {
        for (int64_t k = 0; k < kLanes; ++k) {
          lanes[k] += static_cast<double>(static_cast<ComputeType<T>>(row[i + k]));
        }
      }
    }
    double total = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) +
                   ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
    for (; i < width; ++i) {
      const double v = static_cast<double>(static_cast<ComputeType<T>>(row[i]));
      total += squares ? v * v : v;
    }
    sums[r] = total;
  }
}

// The plan (output dims, broadcast walk, accumulators) is made for the
// kernel's input dims and the axes of its first eager run, so a replay with
// the same axes allocates nothing: capture-safe. A replay whose axes input
// changed throws instead of planning again. A call at other input dims
// plans them, so one kernel serves every shape of the node's ranks.
class ReduceKernel : public CpuKernel {
 public:
  ReduceKernel(Reduction reduction, nxrt_dtype dtype, std::string op, bool axes_from_input,
               std::vector<int64_t> axes, bool keepdims, bool noop_with_empty_axes,
               std::span<const int64_t> dims)
      : CpuKernel(true),
        reduction_(reduction),
        dtype_(dtype),
        op_(std::move(op)),
        axes_from_input_(axes_from_input),
        axes_(std::move(axes)),
        keepdims_(keepdims),
        noop_(noop_with_empty_axes),
        dims_(dims.begin(), dims.end()) {
    if (!axes_from_input_) Plan(axes_);
  }
  bool ServesOtherShapes() const override { return true; }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& in = inputs[0].tensor;
    if (!DimsEqual(DimsSpan(in), dims_)) Replan(DimsSpan(in));
    if (axes_from_input_) {
      const bool present = IsPresent(inputs, 1);
      const bool same =
          planned_ && (present ? SameAxes(inputs[1].tensor, planned_axes_) : planned_axes_.empty());
      if (!same) {
        if (!ctx.available()) {
          FailInvalid(op_ + ": the axes input differs from the axes the replayed graph was " +
                      "captured with; capture again");
        }
        Plan(present ? ReadInt64s(inputs[1].tensor) : Dims{});
      }
    }
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, dtype_, out_dims_);
    Dispatch(AllTypes{}, dtype_, op_, [&](auto tag) {
      Reduce<typename decltype(tag)::type>(in, MutableDataAs<typename decltype(tag)::type>(out));
    });
  }

 private:
  template <typename T>
  using AccOf =
      std::conditional_t<kIsFloat<T>, double,
                         std::conditional_t<std::is_signed_v<ComputeType<T>>, int64_t, uint64_t>>;

  // Plans input dims `dims` with the axes planned last (or the attribute's).
  [[gnu::noinline]] void Replan(std::span<const int64_t> dims) {
    dims_.assign(dims.begin(), dims.end());
    try {
      Plan(planned_ ? planned_axes_ : axes_);
    } catch (...) {
      dims_.assign(1, -1);  // matches no input (no extent is negative) until a plan is made
      planned_ = false;
      throw;
    }
  }

  void Plan(Dims axes) {
    const int64_t rank = static_cast<int64_t>(dims_.size());
    std::vector<bool> reduced(dims_.size(), axes.empty() && !noop_);
    for (int64_t axis : axes) reduced[NormalizeAxis(axis, rank, op_)] = true;
    Dims kept_dims;  // the output with reduced axes kept as 1
    out_dims_.clear();
    for (size_t i = 0; i < dims_.size(); ++i) {
      kept_dims.push_back(reduced[i] ? 1 : dims_[i]);
      if (!reduced[i] || keepdims_) out_dims_.push_back(kept_dims.back());
    }
    out_count_ = ElementCount(kept_dims);
    const int64_t in_count = ElementCount(dims_);
    group_ = out_count_ ? in_count / out_count_ : 0;
    // Trailing axes reduced, and none before them: each output is a row.
    const auto first = std::find(reduced.begin(), reduced.end(), true);
    rows_ = std::find(first, reduced.end(), false) == reduced.end() && group_ > 0;
    plan_ = MakeBroadcastPlan<2>({dims_, kept_dims}, op_);
    Dispatch(AllTypes{}, dtype_, op_, [&](auto tag) {
      using Acc = AccOf<typename decltype(tag)::type>;
      std::get<std::vector<Acc>>(acc_).resize(out_count_);
      std::get<std::vector<Acc>>(max_).resize(reduction_ == Reduction::kLogSumExp ? out_count_ : 0);
    });
    planned_axes_ = std::move(axes);
    planned_ = true;
  }

  template <typename T>
  void Reduce(const nxrt_tensor& in, T* y) {
    using C = ComputeType<T>;
    using Acc = AccOf<T>;
    const int64_t out_count = out_count_;
    const int64_t group = group_;
    const T* x = DataAs<T>(in);
    const auto& plan = plan_;
    const int64_t so = plan.strides[1].back();
    auto walk = [&](auto&& visit) {
      ForEachRow(plan, [&](const std::array<int64_t, 2>& off, int64_t o, int64_t n) {
        for (int64_t i = 0; i < n; ++i) visit(off[1] + i * so, static_cast<Acc>(C(x[o + i])));
      });
    };
    const bool extremum = reduction_ == Reduction::kMax || reduction_ == Reduction::kMin ||
                          reduction_ == Reduction::kLogSumExp;
    std::vector<Acc>& acc = std::get<std::vector<Acc>>(acc_);
    std::vector<Acc>& max = std::get<std::vector<Acc>>(max_);
    const bool squares = reduction_ == Reduction::kSumSquare || reduction_ == Reduction::kL2;
    if constexpr (kIsFloat<T>) {
      if (rows_ && (squares || reduction_ == Reduction::kSum || reduction_ == Reduction::kMean)) {
        SumRows(x, out_count, group, squares, acc.data());
        Finish(acc, max, y);
        return;
      }
    }
    std::fill(acc.begin(), acc.end(), Acc(0));
    if (extremum) {
      const bool is_max = reduction_ != Reduction::kMin;
      std::vector<Acc>& target = reduction_ == Reduction::kLogSumExp ? max : acc;
      const Acc start =
          is_max ? (std::numeric_limits<Acc>::has_infinity ? -std::numeric_limits<Acc>::infinity()
                                                           : std::numeric_limits<Acc>::lowest())
                 : (std::numeric_limits<Acc>::has_infinity ? std::numeric_limits<Acc>::infinity()
                                                           : std::numeric_limits<Acc>::max());
      std::fill(target.begin(), target.end(), start);
      walk([&](int64_t slot, Acc v) {
        target[slot] = is_max ? std::max(target[slot], v) : std::min(target[slot], v);
      });
    }
    if (reduction_ == Reduction::kProd) std::fill(acc.begin(), acc.end(), Acc(1));
    switch (reduction_) {
      case Reduction::kSum:
      case Reduction::kMean:
      case Reduction::kLogSum:
        walk([&](int64_t slot, Acc v) { acc[slot] += v; });
        break;
      case Reduction::kProd:
        walk([&](int64_t slot, Acc v) { acc[slot] *= v; });
        break;
      case Reduction::kL1:
        walk([&](int64_t slot, Acc v) { acc[slot] += v < Acc(0) ? Acc(0) - v : v; });
        break;
      case Reduction::kL2:
      case Reduction::kSumSquare:
        walk([&](int64_t slot, Acc v) { acc[slot] += v * v; });
        break;
      case Reduction::kLogSumExp:
        walk([&](int64_t slot, Acc v) {
          acc[slot] += static_cast<Acc>(std::exp(static_cast<double>(v - max[slot])));
        });
        break;
      default:
        break;
    }
    Finish(acc, max, y);
  }

  // The outputs from the accumulators: the mean's division, the norm's root,
  // the logarithms.
  template <typename T, typename Acc>
  void Finish(const std::vector<Acc>& acc, const std::vector<Acc>& max, T* y) const {
    using C = ComputeType<T>;
    const int64_t out_count = out_count_;
    const int64_t group = group_;
    for (int64_t i = 0; i < out_count; ++i) {
      double v = static_cast<double>(acc[i]);
      switch (reduction_) {
        case Reduction::kMean:
          v = group ? v / static_cast<double>(group) : std::nan("");
          break;
        case Reduction::kL2:
          v = std::sqrt(v);
          break;
        case Reduction::kLogSum:
          v = std::log(v);
          break;
        case Reduction::kLogSumExp:
          v = std::log(v) + static_cast<double>(max[i]);
          break;
        default:
          break;
      }
      if constexpr (kIsFloat<T>) {
        y[i] = static_cast<T>(static_cast<C>(v));
      } else if (reduction_ == Reduction::kMean || reduction_ == Reduction::kL2 ||
                 reduction_ == Reduction::kLogSum || reduction_ == Reduction::kLogSumExp) {
        y[i] = static_cast<T>(v);
      } else {
        y[i] = static_cast<T>(acc[i]);
      }
    }
  }

  Reduction reduction_;
  nxrt_dtype dtype_;
  std::string op_;
  bool axes_from_input_;
  std::vector<int64_t> axes_;
  bool keepdims_;
  bool noop_;
  Dims dims_;
  bool planned_ = false;
  Dims planned_axes_;
  Dims out_dims_;
  int64_t out_count_ = 0;
  int64_t group_ = 0;
  bool rows_ = false;  // each output reduces one contiguous row of group_ values
  BroadcastPlan<2> plan_;
  // One accumulator array per accumulation type; only the dtype's is sized.
  std::tuple<std::vector<double>, std::vector<int64_t>, std::vector<uint64_t>> acc_;
  std::tuple<std::vector<double>, std::vector<int64_t>, std::vector<uint64_t>> max_;
};

// The claim says which dtypes a reduction takes; compute covers them all.
template <typename List>
void AddReduce(OpRegistry& r, const char* name, Reduction reduction, int64_t axes_input_opset,
               List list) {
  r.Add(name, {1, ClaimInputDtype(list),
               [=](const sdk::Node& node, std::span<const nxrt_shape> inputs, int64_t opset) {
                 return std::make_unique<ReduceKernel>(
                     reduction, inputs[0].dtype, name, opset >= axes_input_opset,
                     node.AttrInts("axes"), node.AttrInt("keepdims", 1) != 0,
                     node.AttrInt("noop_with_empty_axes", 0) != 0,
                     std::span<const int64_t>(inputs[0].dims, inputs[0].rank));
               }});
}

// The output dims follow from the input dims alone, so they are worked out
// when the kernel is made and compute allocates nothing: capture-safe.
class ArgKernel : public CpuKernel {
 public:
  ArgKernel(bool is_max, nxrt_dtype dtype, int64_t axis_attr, bool keepdims, bool last,
            std::span<const int64_t> dims)
      : CpuKernel(true),
        is_max_(is_max),
        dtype_(dtype),
        last_(last),
        dims_(dims.begin(), dims.end()) {
    const int64_t rank = static_cast<int64_t>(dims_.size());
    const int64_t axis = NormalizeAxis(axis_attr, rank, is_max_ ? "ArgMax" : "ArgMin");
    for (int64_t i = 0; i < rank; ++i) {
      if (i < axis) outer_ *= dims_[i];
      if (i > axis) inner_ *= dims_[i];
      if (i != axis || keepdims) out_dims_.push_back(i == axis ? 1 : dims_[i]);
    }
    n_ = dims_[axis];
    if (n_ == 0 && outer_ * inner_ != 0) {
      FailInvalid(std::string(is_max_ ? "ArgMax" : "ArgMin") + ": axis " + std::to_string(axis) +
                  " of " + DimsText(dims_) + " is empty, so it has no index to give");
    }
  }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& in = inputs[0].tensor;
    if (!DimsEqual(DimsSpan(in), dims_)) {
      FailInvalid(std::string(is_max_ ? "ArgMax" : "ArgMin") + ": kernel made for " +
                  DimsText(dims_) + " got " + DimsText(DimsSpan(in)) +
                  "; make a kernel for this shape");
    }
    const int64_t outer = outer_;
    const int64_t inner = inner_;
    const int64_t n = n_;
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, NXRT_DTYPE_INT64, out_dims_);
    int64_t* y = MutableDataAs<int64_t>(out);
    Dispatch(NumericTypes{}, dtype_, "ArgMax", [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = ComputeType<T>;
      const T* x = DataAs<T>(in);
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t j = 0; j < inner; ++j) {
          const T* row = x + o * n * inner + j;
          int64_t best = 0;
          C best_value = static_cast<C>(row[0]);
          for (int64_t i = 1; i < n; ++i) {
            const C v = static_cast<C>(row[i * inner]);
            const bool better = is_max_ ? (v > best_value || (last_ && v == best_value))
                                        : (v < best_value || (last_ && v == best_value));
            if (better) {
              best = i;
              best_value = v;
            }
          }
          y[o * inner + j] = best;
        }
      }
    });
  }

 private:
  bool is_max_;
  nxrt_dtype dtype_;
  bool last_;
  Dims dims_;
  Dims out_dims_;
  int64_t outer_ = 1;
  int64_t inner_ = 1;
  int64_t n_ = 0;
};

void AddArg(OpRegistry& r, const char* name, bool is_max) {
  r.Add(name, {1, ClaimInputDtype(NumericTypes{}),
               [is_max](const sdk::Node& node, std::span<const nxrt_shape> inputs, int64_t) {
                 return std::make_unique<ArgKernel>(
                     is_max, inputs[0].dtype, node.AttrInt("axis", 0),
                     node.AttrInt("keepdims", 1) != 0, node.AttrInt("select_last_index", 0) != 0,
                     std::span<const int64_t>(inputs[0].dims, inputs[0].rank));
               }});
}

}  // namespace

void RegisterReduceOps(OpRegistry& r) {
  AddReduce(r, "ReduceSum", Reduction::kSum, 13, NumericTypes{});
  AddReduce(r, "ReduceMean", Reduction::kMean, 18, NumericTypes{});
  AddReduce(r, "ReduceMax", Reduction::kMax, 18, AllTypes{});
  AddReduce(r, "ReduceMin", Reduction::kMin, 18, AllTypes{});
  AddReduce(r, "ReduceProd", Reduction::kProd, 18, NumericTypes{});
  AddReduce(r, "ReduceL1", Reduction::kL1, 18, NumericTypes{});
  AddReduce(r, "ReduceL2", Reduction::kL2, 18, NumericTypes{});
  AddReduce(r, "ReduceLogSum", Reduction::kLogSum, 18, NumericTypes{});
  AddReduce(r, "ReduceLogSumExp", Reduction::kLogSumExp, 18, NumericTypes{});
  AddReduce(r, "ReduceSumSquare", Reduction::kSumSquare, 18, NumericTypes{});
  AddArg(r, "ArgMax", true);
  AddArg(r, "ArgMin", false);
}

}  // namespace nxrt::cpu
