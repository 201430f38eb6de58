#include "constant_matrix.hpp"

#include <vector>

#include "dtype.hpp"
#include "huge_page_arena.hpp"

namespace nxrt::cpu {
namespace {

// The host's bytes when they persist and already are B as given in its
// compute type.
const void* InPlace(const nxrt_constant_input& constant) {
  const bool compute_type =
      constant.dtype == NXRT_DTYPE_FLOAT32 || constant.dtype == NXRT_DTYPE_FLOAT64;
  return constant.bytes_persist != 0 && compute_type ? constant.bytes : nullptr;
}

}  // namespace

ConstantMatrix::ConstantMatrix(const nxrt_constant_input& constant)
    : dtype_(constant.dtype),
      dims_(constant.dims, constant.dims + constant.rank),
      in_place_(InPlace(constant)) {}

const void* ConstantMatrix::AsGiven(const nxrt_constant_input* source) {
  std::lock_guard lock(mutex_);
  return AsGivenLocked(source);
}

const void* ConstantMatrix::AsGivenLocked(const nxrt_constant_input* source) {
  if (in_place_ != nullptr) return in_place_;
  if (as_given_) return as_given_.get();
  const int64_t count = ElementCount(dims_);
  if (source != nullptr) {
    Dispatch(FloatTypes{}, dtype_, "constant matrix", [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = ComputeType<T>;
      as_given_ = AllocateOnHugePages(static_cast<size_t>(count) * sizeof(C));
      Widen(static_cast<const T*>(source->bytes), count, static_cast<C*>(as_given_.get()));
    });
    return as_given_.get();
  }
  if (!preferred_) {
    throw sdk::Error(NXRT_STATUS_INTERNAL, "a constant matrix has neither form to copy from");
  }
  as_given_ = AllocateOnHugePages(static_cast<size_t>(count) * sizeof(float));
  onednn::ReorderOnce(preferred_->desc(), preferred_->data(), preferred_source_, as_given_.get());
  return as_given_.get();
}

std::shared_ptr<const onednn::PreparedWeights> ConstantMatrix::Preferred(
    const onednn::FloatMatmul& plan, const nxrt_constant_input* source) {
  std::lock_guard lock(mutex_);
  if (preferred_ && preferred_->desc() == plan.weights_desc()) return preferred_;
  const float* b = nullptr;
  std::vector<float> widened;
  if (source != nullptr && dtype_ == NXRT_DTYPE_FLOAT32) {
    b = static_cast<const float*>(source->bytes);
  } else if (source != nullptr && !as_given_) {
    widened.resize(static_cast<size_t>(ElementCount(dims_)));
    Dispatch(TypeList<Float16, BFloat16>{}, dtype_, "constant matrix", [&](auto tag) {
      using T = typename decltype(tag)::type;
      Widen(static_cast<const T*>(source->bytes), ElementCount(dims_), widened.data());
    });
    b = widened.data();
  } else {
    b = static_cast<const float*>(AsGivenLocked(source));
  }
  auto made =
      std::make_shared<onednn::PreparedWeights>(plan.given_weights_desc(), b, plan.weights_desc());
  if (!preferred_) {
    preferred_ = made;
    preferred_source_ = plan.given_weights_desc();
  }
  return made;
}

}  // namespace nxrt::cpu
