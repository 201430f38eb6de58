#include "ops/shape_general_conv.hpp"

#include <optional>
#include <string>
#include <utility>

namespace nxrt::cpu {

bool ShapeGeneralConvKernel::NoteShape(const nxrt_tensor& x, const nxrt_tensor& w) {
  if (DimsEqual(DimsSpan(x), x_dims_) && DimsEqual(DimsSpan(w), w_dims_)) return true;
  if (w.rank != x.rank || w.dims[1] != x.dims[1]) {
    FailInvalid("Conv: W " + DimsText(DimsSpan(w)) + " does not fit X " + DimsText(DimsSpan(x)) +
                "; W needs [maps, channels, kernel...] with X's channels");
  }
  const int64_t rows = w.dims[1] * ElementCount(DimsSpan(w).subspan(2));
  const onednn::PointwiseShape& planned = product_.shape();
  if (w.dims[0] != planned.maps || rows != planned.channels) {
    std::optional<onednn::FloatPointwiseProduct> replanned =
        onednn::FloatPointwiseProduct::Plan({w.dims[0], rows, planned.bias, planned.activation});
    if (!replanned) {
      FailUnsupported("Conv: oneDNN has no product for W " + DimsText(DimsSpan(w)) +
                      "; run the node on another provider");
    }
    product_ = std::move(*replanned);
  }
  x_dims_.assign(x.dims, x.dims + x.rank);
  w_dims_.assign(w.dims, w.dims + w.rank);
  return false;
}

const float* ShapeGeneralConvKernel::BiasOf(std::span<const nxrt_value> inputs, int64_t maps) {
  if (!IsPresent(inputs, 2)) return nullptr;
  if (ElementCount(inputs[2].tensor) != maps) {
    FailInvalid("Conv: B holds " + std::to_string(ElementCount(inputs[2].tensor)) + " values for " +
                std::to_string(maps) + " output maps; give B one per map");
  }
  return DataAs<float>(inputs[2].tensor);
}

}  // namespace nxrt::cpu
