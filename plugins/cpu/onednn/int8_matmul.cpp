#include "int8_matmul.hpp"

#include <string>
#include <vector>

#include "tensor.hpp"

namespace nxrt::cpu::onednn {
namespace {

using Desc = dnnl::memory::desc;
using dnnl::memory;

memory::data_type ByteType(nxrt_dtype dtype) {
  return dtype == NXRT_DTYPE_UINT8 ? memory::data_type::u8 : memory::data_type::s8;
}

Desc RowMajor(int64_t rows, int64_t cols, memory::data_type type) {
  return Desc({rows, cols}, type, memory::format_tag::ab);
}

}  // namespace

Int8Matmul::Int8Matmul(nxrt_dtype a_dtype, int64_t m, int64_t n, int64_t k, bool prepared_b,
                       const Int8Requantisation* requantisation)
    : m_(m), n_(n), k_(k), prepared_b_(prepared_b) {
  const memory::data_type a_type = ByteType(a_dtype);
  const Desc given_b = RowMajor(k, n, memory::data_type::s8);
  const Desc planned_b =
      prepared_b ? Desc({k, n}, memory::data_type::s8, memory::format_tag::any) : given_b;
  const memory::data_type y_type =
      requantisation ? ByteType(requantisation->y_dtype) : memory::data_type::s32;
  dnnl::primitive_attr attributes = PlanningAttributes();
  if (requantisation) {
    scales_ = requantisation->scales;
    attributes.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
    attributes.set_output_scales(scales_.size() == 1 ? 0 : 1 << 1, scales_);
    attributes.set_zero_points(DNNL_ARG_DST, 0, {DNNL_RUNTIME_S32_VAL});
  }
  try {
    const dnnl::matmul::primitive_desc plan(
        dnnl::matmul::desc(RowMajor(m, k, a_type), planned_b, RowMajor(m, n, y_type)), attributes,
        Engine());
    b_ = plan.weights_desc();
    const Desc one_s32({1}, memory::data_type::s32, memory::format_tag::a);
    std::vector<std::pair<int, Desc>> args = {{DNNL_ARG_SRC, RowMajor(m, k, a_type)},
                                              {DNNL_ARG_WEIGHTS, b_},
                                              {DNNL_ARG_DST, RowMajor(m, n, y_type)}};
    if (requantisation) {
      args.emplace_back(DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, one_s32);
      args.emplace_back(DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_DST, one_s32);
    }
    runner_ = PrimitiveRunner(dnnl::matmul(plan), plan.scratchpad_desc(), args);
  } catch (const dnnl::error& e) {
    FailUnsupported(std::string("oneDNN has no 8-bit matmul for this shape: ") + e.what());
  }
}

std::shared_ptr<PreparedWeights> Int8Matmul::PrepareWeights(const int8_t* b) const {
  return std::make_shared<PreparedWeights>(RowMajor(k_, n_, memory::data_type::s8), b, b_);
}

void Int8Matmul::Run(const void* a, const void* b, int32_t* p) {
  const void* buffers[] = {a, b, p};
  runner_.Run(buffers);
}

void Int8Matmul::RunRequantised(const void* a, int32_t a_zero, const void* b, int32_t y_zero,
                                void* y) {
  const void* buffers[] = {a, b, y, &a_zero, &y_zero};
  runner_.Run(buffers);
}

}  // namespace nxrt::cpu::onednn
