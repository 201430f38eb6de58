#include "int8_convolution.hpp"

#include <cstddef>
#include <vector>

#include "convolution_dims.hpp"
#include "quantized/byte_transpose.hpp"
#include "thread_workspace.hpp"

namespace nxrt::cpu::onednn {
namespace {

using Desc = dnnl::memory::desc;
using dnnl::memory;

memory::data_type TypeOf(nxrt_dtype dtype) {
  switch (dtype) {
    case NXRT_DTYPE_UINT8:
      return memory::data_type::u8;
    case NXRT_DTYPE_INT8:
      return memory::data_type::s8;
    default:
      return memory::data_type::s32;
  }
}

Desc Plain(const memory::dims& dims, memory::data_type type) {
  using Tag = memory::format_tag;
  static constexpr Tag kTags[] = {Tag::abc, Tag::abcd, Tag::abcde, Tag::abcdef};
  return Desc(dims, type, kTags[dims.size() - 3]);
}

// An image of 1 to 3 spatial axes with its channels last.
Desc ChannelsLast(const memory::dims& dims, memory::data_type type) {
  using Tag = memory::format_tag;
  static constexpr Tag kTags[] = {Tag::acb, Tag::acdb, Tag::acdeb};
  return Desc(dims, type, kTags[dims.size() - 3]);
}

// How a call brings an image between NCHW and the plan's layout.
Int8Convolution::Layout LayoutOf(const Desc& planned, const Desc& plain) {
  if (planned == plain) return Int8Convolution::Layout::kAsGiven;
  const bool bytes = plain.data_type() != memory::data_type::s32;
  return bytes && planned == ChannelsLast(plain.dims(), plain.data_type())
             ? Int8Convolution::Layout::kChannelsLast
             : Int8Convolution::Layout::kReordered;
}

}  // namespace

std::optional<Int8Convolution> Int8Convolution::Plan(const Int8ConvolutionShape& given) {
  const ConvolutionShape& shape = given.convolution;
  const WindowGeometry& g = shape.geometry;
  if (g.in.empty() || g.in.size() > 3) return std::nullopt;
  const memory::dims x_dims = WithSpatial({shape.batch, shape.channels}, g.in);
  const memory::dims y_dims = WithSpatial({shape.batch, shape.maps}, g.out);
  const int64_t group_channels = shape.channels / shape.group;
  const memory::dims w_dims =
      shape.group == 1
          ? WithSpatial({shape.maps, group_channels}, g.kernel)
          : WithSpatial({shape.group, shape.maps / shape.group, group_channels}, g.kernel);
  const WindowDims window = WindowDimsOf(g);
  const bool requantised = given.y_dtype != NXRT_DTYPE_INT32;
  const Desc x(x_dims, TypeOf(given.x_dtype), memory::format_tag::any);
  const Desc w(w_dims, memory::data_type::s8, memory::format_tag::any);
  const Desc y(y_dims, TypeOf(given.y_dtype), memory::format_tag::any);
  const Desc bias({shape.maps}, memory::data_type::s32, memory::format_tag::a);
  dnnl::primitive_attr attributes = PlanningAttributes();
  attributes.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
  if (requantised) {
    attributes.set_output_scales(given.scales.size() == 1 ? 0 : 1 << 1, given.scales);
    attributes.set_zero_points(DNNL_ARG_DST, 0, {DNNL_RUNTIME_S32_VAL});
  }
  using Conv = dnnl::convolution_forward;
  const auto kind = dnnl::prop_kind::forward_inference;
  const auto algorithm = dnnl::algorithm::convolution_direct;
  try {
    const Conv::primitive_desc plan(
        requantised ? Conv::desc(kind, algorithm, x, w, bias, y, window.strides, window.dilations,
                                 window.pad_begin, window.pad_end)
                    : Conv::desc(kind, algorithm, x, w, y, window.strides, window.dilations,
                                 window.pad_begin, window.pad_end),
        attributes, Engine());
    if (IsReference(plan.impl_info_str())) return std::nullopt;
    Int8Convolution c;
    c.implementation_ = plan.impl_info_str();
    c.requantised_ = requantised;
    c.scales_ = given.scales;
    c.given_w_desc_ = Plain(w_dims, memory::data_type::s8);
    c.w_desc_ = plan.weights_desc();
    const Desc given_x = Plain(x_dims, TypeOf(given.x_dtype));
    const Desc given_y = Plain(y_dims, TypeOf(given.y_dtype));
    c.batch_ = shape.batch;
    c.channels_ = shape.channels;
    c.maps_ = shape.maps;
    c.in_size_ = ElementCount(g.in);
    c.out_size_ = ElementCount(g.out);
    c.x_layout_ = LayoutOf(plan.src_desc(), given_x);
    if (c.x_layout_ != Layout::kAsGiven) {
      // Rounded up so that Y's copy after it stays 64-byte aligned.
      c.x_blocked_bytes_ = (plan.src_desc().get_size() + 63) / 64 * 64;
    }
    if (c.x_layout_ == Layout::kReordered) c.x_reorder_ = PlanReorder(given_x, plan.src_desc());
    c.y_layout_ = LayoutOf(plan.dst_desc(), given_y);
    if (c.y_layout_ != Layout::kAsGiven) c.y_blocked_bytes_ = plan.dst_desc().get_size();
    if (c.y_layout_ == Layout::kReordered) c.y_reorder_ = PlanReorder(plan.dst_desc(), given_y);
    // The arguments in the order Run passes them.
    const Desc one_s32({1}, memory::data_type::s32, memory::format_tag::a);
    std::vector<std::pair<int, Desc>> args = {{DNNL_ARG_SRC, plan.src_desc()},
                                              {DNNL_ARG_WEIGHTS, c.w_desc_},
                                              {DNNL_ARG_DST, plan.dst_desc()},
                                              {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, one_s32}};
    if (requantised) {
      args.emplace_back(DNNL_ARG_BIAS, plan.bias_desc());
      args.emplace_back(DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_DST, one_s32);
      c.zero_bias_.assign(shape.maps, 0);
    }
    c.convolution_ = PrimitiveRunner(Conv(plan), plan.scratchpad_desc(), args);
    return c;
  } catch (const dnnl::error&) {
    return std::nullopt;
  }
}

std::shared_ptr<PreparedWeights> Int8Convolution::PrepareWeights(const int8_t* w) const {
  return std::make_shared<PreparedWeights>(given_w_desc_, w, w_desc_);
}

void Int8Convolution::Run(const void* x, int32_t x_zero, const int8_t* w,
                          const PreparedWeights* prepared, const int32_t* bias, int32_t y_zero,
                          void* y) {
  auto* blocked = static_cast<uint8_t*>(
      ThreadWorkspace(Workspace::kActivations, x_blocked_bytes_ + y_blocked_bytes_));
  const void* x_in = x;
  if (x_layout_ == Layout::kChannelsLast) {
    x_in = blocked;
    for (int64_t n = 0; n < batch_; ++n) {
      const int64_t image = n * channels_ * in_size_;
      TransposeBytes(static_cast<const uint8_t*>(x) + image, channels_, in_size_, blocked + image);
    }
  } else if (x_layout_ == Layout::kReordered) {
    x_in = blocked;
    const void* buffers[] = {x, x_in};
    x_reorder_.Run(buffers);
  }
  const void* w_in = prepared != nullptr ? prepared->data() : w;
  if (prepared == nullptr && given_w_desc_ != w_desc_) {
    // Made on the first call whose weights are not constant: constant
    // weights never need them.
    if (!w_reordered_) {
      w_reordered_ = memory(w_desc_, Engine());
      w_reorder_ = PlanReorder(given_w_desc_, w_desc_);
    }
    w_in = w_reordered_.get_data_handle();
    const void* buffers[] = {w, w_in};
    w_reorder_.Run(buffers);
  }
  uint8_t* y_blocked = blocked + x_blocked_bytes_;
  void* y_out = y_layout_ == Layout::kAsGiven ? y : y_blocked;
  const void* buffers[] = {x_in,   w_in, y_out, &x_zero, bias != nullptr ? bias : zero_bias_.data(),
                           &y_zero};
  convolution_.Run(std::span(buffers, requantised_ ? 6 : 4));
  if (y_layout_ == Layout::kChannelsLast) {
    for (int64_t n = 0; n < batch_; ++n) {
      const int64_t image = n * maps_ * out_size_;
      TransposeBytes(y_blocked + image, out_size_, maps_, static_cast<uint8_t*>(y) + image);
    }
  } else if (y_layout_ == Layout::kReordered) {
    const void* back[] = {y_out, y};
    y_reorder_.Run(back);
  }
}

}  // namespace nxrt::cpu::onednn
