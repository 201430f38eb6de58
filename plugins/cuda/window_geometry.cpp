#include "window_geometry.hpp"

#include <algorithm>

namespace nxrt::cuda {
namespace {

[[noreturn]] void Invalid(const std::string& op, const std::string& why) {
  throw sdk::Error(NXRT_STATUS_INVALID_ARGUMENT, op + ": " + why);
}

// `values`, or `rank` ones when absent.
std::vector<int64_t> OrOnes(const std::vector<int64_t>& values, size_t rank, const std::string& op,
                            const char* what) {
  if (values.empty()) return std::vector<int64_t>(rank, 1);
  if (values.size() != rank) {
    Invalid(op, std::string(what) + " has " + std::to_string(values.size()) + " entries for " +
                    std::to_string(rank) + " spatial axes");
  }
  for (int64_t v : values) {
    if (v < 1) Invalid(op, std::string(what) + " must be positive");
  }
  return values;
}

}  // namespace

WindowAttributes WindowAttributes::Read(const sdk::Node& node) {
  WindowAttributes a;
  a.auto_pad = node.AttrString("auto_pad", "NOTSET");
  a.kernel_shape = node.AttrInts("kernel_shape");
  a.strides = node.AttrInts("strides");
  a.dilations = node.AttrInts("dilations");
  a.pads = node.AttrInts("pads");
  a.ceil_mode = node.AttrInt("ceil_mode", 0) != 0;
  return a;
}

bool WindowAxis::CudnnExpresses() const {
  // cuDNN's output extent: 1 + (in + 2 * pad - extent) / stride, rounded down.
  // Equal extents mean equal windows, as both start at o * stride - pad_begin.
  const int64_t span = in + 2 * pad_begin - Extent();
  return span >= 0 && span / stride + 1 == out;
}

std::vector<WindowAxis> ResolveWindow(const WindowAttributes& a, std::span<const int64_t> in,
                                      std::span<const int64_t> kernel, const std::string& op) {
  const size_t rank = in.size();
  if (kernel.size() != rank) Invalid(op, "the kernel's rank differs from the input's");
  const std::vector<int64_t> strides = OrOnes(a.strides, rank, op, "strides");
  const std::vector<int64_t> dilations = OrOnes(a.dilations, rank, op, "dilations");
  if (!a.pads.empty() && a.pads.size() != 2 * rank) {
    Invalid(op, "pads has " + std::to_string(a.pads.size()) + " entries for " +
                    std::to_string(rank) + " spatial axes");
  }
  const bool same = a.auto_pad == "SAME_UPPER" || a.auto_pad == "SAME_LOWER";
  if (!same && a.auto_pad != "VALID" && a.auto_pad != "NOTSET") {
    throw sdk::Error(NXRT_STATUS_UNSUPPORTED, op + ": auto_pad=" + a.auto_pad + " is not known");
  }
  std::vector<WindowAxis> axes(rank);
  for (size_t i = 0; i < rank; ++i) {
    WindowAxis& axis = axes[i];
    axis.in = in[i];
    axis.kernel = kernel[i];
    axis.stride = strides[i];
    axis.dilation = dilations[i];
    if (axis.kernel < 1) Invalid(op, "kernel extents must be positive");
    if (same) {
      // As many outputs as stride steps fit; the pads split the shortfall,
      // the odd one at the end (SAME_UPPER) or the beginning (SAME_LOWER).
      axis.out = (axis.in + axis.stride - 1) / axis.stride;
      const int64_t total =
          std::max<int64_t>(0, (axis.out - 1) * axis.stride + axis.Extent() - axis.in);
      axis.pad_begin = a.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      axis.pad_end = total - axis.pad_begin;
      continue;
    }
    if (a.auto_pad == "NOTSET" && !a.pads.empty()) {
      axis.pad_begin = a.pads[i];
      axis.pad_end = a.pads[i + rank];
      if (axis.pad_begin < 0 || axis.pad_end < 0) Invalid(op, "pads must not be negative");
    }
    const int64_t span = axis.in + axis.pad_begin + axis.pad_end - axis.Extent();
    if (span < 0) Invalid(op, "the kernel is larger than the padded input");
    axis.out = (a.ceil_mode ? (span + axis.stride - 1) / axis.stride : span / axis.stride) + 1;
    // A ceil-mode window must start inside the input or its begin padding.
    if (a.ceil_mode && (axis.out - 1) * axis.stride >= axis.in + axis.pad_begin) --axis.out;
  }
  return axes;
}

std::optional<std::string> AverageWindowProblem(std::span<const WindowAxis> axes,
                                                bool count_include_pad) {
  for (const WindowAxis& axis : axes) {
    if (count_include_pad && axis.PaddedIn() > axis.in + axis.pad_begin + axis.pad_end) {
      return "count_include_pad=1 with a ceil_mode window past the pads";
    }
    if (!count_include_pad && !axis.CudnnExpresses()) {
      return "count_include_pad=0 with pads cuDNN cannot express (one side padded more, or a "
             "ceil_mode window)";
    }
  }
  return std::nullopt;
}

}  // namespace nxrt::cuda
