// Memory descriptors of float tensors as the CPU EP hands them to oneDNN:
// plain row-major (how every tensor between kernels is laid out), or "any",
// leaving the layout to the primitive being planned.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

namespace nxrt::cpu::onednn {

// Dims of rank 1 to 6.
inline dnnl::memory::desc PlainFloat(const dnnl::memory::dims& dims) {
  using Tag = dnnl::memory::format_tag;
  static constexpr Tag kTags[] = {Tag::a, Tag::ab, Tag::abc, Tag::abcd, Tag::abcde, Tag::abcdef};
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, kTags[dims.size() - 1]);
}

inline dnnl::memory::desc AnyFloat(const dnnl::memory::dims& dims) {
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, dnnl::memory::format_tag::any);
}

}  // namespace nxrt::cpu::onednn
