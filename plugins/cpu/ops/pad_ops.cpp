// Pad in its four modes (constant, reflect, edge, wrap), pads and the
// constant from attributes (before opset 11) or inputs, and the axes input
// (opset 18), for every fixed-size dtype. A row of the output along the last
// axis is padding, or one copy from its source row with the pads at its ends.
#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "cpu_kernel.hpp"

namespace nxrt::cpu {
namespace {

enum class PadMode { kConstant, kReflect, kEdge, kWrap };

class PadKernel : public CpuKernel {
 public:
  PadKernel(PadMode mode, int64_t opset, std::vector<int64_t> pads, float value)
      : CpuKernel(false), mode_(mode), opset_(opset), pads_(std::move(pads)), value_(value) {}

  // Where position `i` of an axis of `d` elements reads from, by the mode;
  // nullopt for the constant.
  std::optional<int64_t> SourceIndex(int64_t i, int64_t d) const {
    if (i >= 0 && i < d) return i;
    switch (mode_) {
      case PadMode::kConstant:
        return std::nullopt;
      case PadMode::kEdge:
        return std::clamp<int64_t>(i, 0, d - 1);
      case PadMode::kReflect: {
        const int64_t period = std::max<int64_t>(2 * (d - 1), 1);
        i = ((i % period) + period) % period;
        return i >= d ? period - i : i;
      }
      case PadMode::kWrap:
        return ((i % d) + d) % d;
    }
    return std::nullopt;
  }

  void Compute(sdk::ComputeContext& ctx, std::span<const nxrt_value> inputs,
               std::span<nxrt_value> outputs) override {
    const nxrt_tensor& in = inputs[0].tensor;
    const Dims dims = DimsOf(in);
    const int64_t rank = static_cast<int64_t>(dims.size());
    std::vector<int64_t> pads(2 * rank, 0);
    std::vector<int64_t> given = opset_ >= 11 ? ReadInt64s(inputs[1].tensor) : pads_;
    std::vector<int64_t> axes;
    if (opset_ >= 18 && IsPresent(inputs, 3)) axes = ReadInt64s(inputs[3].tensor);
    if (axes.empty()) {
      for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
    }
    const int64_t n = static_cast<int64_t>(axes.size());
    if (static_cast<int64_t>(given.size()) != 2 * n) FailInvalid("Pad: pads has the wrong length");
    for (int64_t i = 0; i < n; ++i) {
      const int64_t axis = NormalizeAxis(axes[i], rank, "Pad");
      pads[axis] = given[i];
      pads[axis + rank] = given[i + n];
    }
    Dims out_dims(rank);
    for (int64_t i = 0; i < rank; ++i) {
      out_dims[i] = dims[i] + pads[i] + pads[i + rank];
      if (out_dims[i] < 0) {
        FailInvalid("Pad: the pads of axis " + std::to_string(i) + " crop more than its " +
                    std::to_string(dims[i]) + " elements; fix the pads");
      }
      // Edge, reflect and wrap copy from the axis itself, which must have something to copy.
      if (mode_ != PadMode::kConstant && dims[i] == 0 && out_dims[i] > 0) {
        FailInvalid("Pad: axis " + std::to_string(i) +
                    " is empty, so only constant mode can pad it; fix the mode or the input");
      }
    }
    nxrt_tensor& out = PrepareOutput(ctx, outputs, 0, in.dtype, out_dims);
    const size_t size = ElementSize(in.dtype);
    std::vector<std::byte> fill(size);
    Dispatch(AllTypes{}, in.dtype, "Pad", [&](auto tag) {
      using T = typename decltype(tag)::type;
      T value = static_cast<T>(value_);
      if (opset_ >= 11 && IsPresent(inputs, 2) && ElementCount(inputs[2].tensor) > 0) {
        value = *DataAs<T>(inputs[2].tensor);
      }
      std::memcpy(fill.data(), &value, size);
    });
    const int64_t total = ElementCount(out_dims);
    if (total == 0) return;
    const Dims strides = StridesOf(dims);
    const auto* x = static_cast<const std::byte*>(in.data);
    auto* y = static_cast<std::byte*>(out.data);
    const bool zero_fill =
        std::all_of(fill.begin(), fill.end(), [](std::byte b) { return b == std::byte{0}; });
    const auto fill_run = [&](std::byte* to, int64_t count) {
      if (zero_fill) {
        std::memset(to, 0, static_cast<size_t>(count) * size);
        return;
      }
      for (int64_t k = 0; k < count; ++k) std::memcpy(to + k * size, fill.data(), size);
    };
    // Row by row along the last axis: the rows of the outer axes map to a
    // source row or to padding, and within a row the part from the source is
    // one copy.
    const int64_t last = rank - 1;
    const int64_t width = rank > 0 ? out_dims[last] : 1;
    const int64_t begin = rank > 0 ? pads[last] : 0;
    const int64_t extent = rank > 0 ? dims[last] : 1;
    const int64_t copy_first = std::clamp<int64_t>(begin, 0, width);
    const int64_t copy_last = std::clamp<int64_t>(begin + extent, copy_first, width);
    std::vector<int64_t> index(static_cast<size_t>(std::max<int64_t>(last, 0)), 0);
    for (int64_t row = 0; row < total / width; ++row) {
      std::byte* out_row = y + row * width * static_cast<int64_t>(size);
      int64_t src = 0;
      bool inside = true;
      for (int64_t a = 0; a < last && inside; ++a) {
        const std::optional<int64_t> i = SourceIndex(index[a] - pads[a], dims[a]);
        inside = i.has_value();
        if (inside) src += *i * strides[a];
      }
      if (!inside) {
        fill_run(out_row, width);
      } else {
        const std::byte* in_row = x + src * static_cast<int64_t>(size);
        std::memcpy(out_row + copy_first * static_cast<int64_t>(size),
                    in_row + (copy_first - begin) * static_cast<int64_t>(size),
                    static_cast<size_t>(copy_last - copy_first) * size);
        for (int64_t o = 0; o < width; ++o) {
          if (o == copy_first) o = copy_last;
          if (o >= width) break;
          const std::optional<int64_t> i = SourceIndex(o - begin, extent);
          std::byte* to = out_row + o * static_cast<int64_t>(size);
          if (i) {
            std::memcpy(to, in_row + *i * static_cast<int64_t>(size), size);
          } else {
            fill_run(to, 1);
          }
        }
      }
      for (int64_t a = last; a-- > 0;) {
        if (++index[a] < out_dims[a]) break;
        index[a] = 0;
      }
    }
  }

 private:
  PadMode mode_;
  int64_t opset_;
  std::vector<int64_t> pads_;
  float value_;
};

}  // namespace

void RegisterPadOps(OpRegistry& r) {
  r.Add("Pad", {2,
                [](const sdk::Node& node, int64_t, std::span<const nxrt_value_info> inputs) {
                  const std::string mode = node.AttrString("mode", "constant");
                  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap") {
                    return sdk::ClaimResult::Declined(
                        "Pad: mode '" + mode +
                        "' is not an ONNX mode; use constant, reflect, edge or wrap");
                  }
                  return ClaimUnless(CheckInputDtype(node, inputs, 0, AllTypes{}));
                },
                [](const sdk::Node& node, std::span<const nxrt_shape>, int64_t opset) {
                  const std::string mode = node.AttrString("mode", "constant");
                  const PadMode m = mode == "reflect" ? PadMode::kReflect
                                    : mode == "edge"  ? PadMode::kEdge
                                    : mode == "wrap"  ? PadMode::kWrap
                                                      : PadMode::kConstant;
                  return std::make_unique<PadKernel>(m, opset, node.AttrInts("pads"),
                                                     node.AttrFloat("value", 0.0f));
                }});
}

}  // namespace nxrt::cpu
