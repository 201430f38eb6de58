#include "window_geometry.hpp"

#include <algorithm>
#include <limits>

namespace nxrt::cpu {

WindowAttributes WindowAttributes::Read(const sdk::Node& node, const std::string& prefix) {
  const auto name = [&prefix](const char* onnx_name) { return prefix + onnx_name; };
  WindowAttributes a;
  a.auto_pad = node.AttrString(name("auto_pad").c_str(), "NOTSET");
  a.kernel_shape = node.AttrInts(name("kernel_shape").c_str());
  a.strides = node.AttrInts(name("strides").c_str());
  a.dilations = node.AttrInts(name("dilations").c_str());
  a.pads = node.AttrInts(name("pads").c_str());
  a.ceil_mode = node.AttrInt(name("ceil_mode").c_str(), 0) != 0;
  return a;
}

namespace {

int64_t FloorDiv(int64_t a, int64_t b) {
  return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

}  // namespace

OffsetRange OffsetsWithin(int64_t start, int64_t dilation, int64_t kernel, int64_t lo, int64_t hi) {
  if (hi <= lo) return {};
  // lo <= start + k * dilation <= hi - 1, for dilation >= 1.
  const int64_t first = std::max<int64_t>(0, -FloorDiv(start - lo, dilation));
  const int64_t last = std::min(kernel, FloorDiv(hi - 1 - start, dilation) + 1);
  return last > first ? OffsetRange{first, last} : OffsetRange{first, first};
}

void CheckWindowAttributes(const WindowAttributes& a, const Dims& kernel, const std::string& op) {
  const size_t rank = kernel.size();
  if ((!a.strides.empty() && a.strides.size() != rank) ||
      (!a.dilations.empty() && a.dilations.size() != rank)) {
    FailInvalid(op + ": strides or dilations do not match the spatial rank");
  }
  if (!a.pads.empty() && a.pads.size() != 2 * rank) {
    FailInvalid(op + ": pads do not match the spatial rank");
  }
  // Zero strides divide by zero and a negative kernel or pad walks outside
  // the image; the specification allows none of them.
  for (size_t i = 0; i < rank; ++i) {
    const int64_t stride = a.strides.empty() ? 1 : a.strides[i];
    const int64_t dilation = a.dilations.empty() ? 1 : a.dilations[i];
    if (kernel[i] < 1) FailInvalid(op + ": kernel extents must be positive; fix kernel_shape");
    if (stride < 1) FailInvalid(op + ": strides must be positive; fix the strides");
    if (dilation < 1) FailInvalid(op + ": dilations must be positive; fix the dilations");
    if (!a.pads.empty() && (a.pads[i] < 0 || a.pads[i + rank] < 0)) {
      FailInvalid(op + ": pads must not be negative; fix the pads");
    }
    if (kernel[i] - 1 > (std::numeric_limits<int64_t>::max() - 1) / dilation) {
      FailInvalid(
          op +
          ": the dilated kernel's extent overflows 64 bits; fix kernel_shape or the dilations");
    }
  }
}

WindowGeometry ResolveWindow(const WindowAttributes& a, const Dims& in, const Dims& kernel,
                             const std::string& op) {
  const size_t rank = in.size();
  if (kernel.size() != rank) FailInvalid(op + ": kernel rank differs from the input's");
  CheckWindowAttributes(a, kernel, op);
  WindowGeometry g;
  g.in = in;
  g.kernel = kernel;
  g.strides = a.strides.empty() ? Dims(rank, 1) : a.strides;
  g.dilations = a.dilations.empty() ? Dims(rank, 1) : a.dilations;
  g.pad_begin.assign(rank, 0);
  g.pad_end.assign(rank, 0);
  g.out.assign(rank, 0);
  if (!a.pads.empty()) {
    for (size_t i = 0; i < rank; ++i) {
      g.pad_begin[i] = a.pads[i];
      g.pad_end[i] = a.pads[i + rank];
    }
  }
  for (size_t i = 0; i < rank; ++i) {
    const int64_t extent = (kernel[i] - 1) * g.dilations[i] + 1;
    const int64_t stride = g.strides[i];
    if (a.auto_pad == "SAME_UPPER" || a.auto_pad == "SAME_LOWER") {
      g.out[i] = (in[i] + stride - 1) / stride;
      const int64_t total = std::max<int64_t>(0, (g.out[i] - 1) * stride + extent - in[i]);
      const int64_t smaller = total / 2;
      g.pad_begin[i] = a.auto_pad == "SAME_UPPER" ? smaller : total - smaller;
      g.pad_end[i] = total - g.pad_begin[i];
      continue;
    }
    if (a.auto_pad == "VALID") {
      g.pad_begin[i] = 0;
      g.pad_end[i] = 0;
    } else if (a.auto_pad != "NOTSET") {
      FailUnsupported(op + ": auto_pad=" + a.auto_pad + " not implemented");
    }
    const int64_t span = in[i] + g.pad_begin[i] + g.pad_end[i] - extent;
    if (span < 0) FailInvalid(op + ": kernel larger than the padded input");
    g.out[i] = (a.ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
    // A ceil-mode window must start inside the input or its begin padding.
    if (a.ceil_mode && (g.out[i] - 1) * stride >= in[i] + g.pad_begin[i]) --g.out[i];
  }
  return g;
}

}  // namespace nxrt::cpu
