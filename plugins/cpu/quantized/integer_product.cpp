#include "quantized/integer_product.hpp"

#include <algorithm>

#include "tensor.hpp"

namespace nxrt::cpu {
namespace {

// What a B byte of `dtype` is shifted by to become int8.
int32_t ShiftOf(nxrt_dtype dtype) {
  return dtype == NXRT_DTYPE_UINT8 ? 128 : 0;
}

// `count` uint8 values as int8, shifted by -128.
void ShiftBytes(const uint8_t* from, int64_t count, int8_t* to) {
  for (int64_t i = 0; i < count; ++i) to[i] = static_cast<int8_t>(from[i] - 128);
}

// The column sums of `b` ([K,N] int8).
void ColumnSums(const int8_t* b, int64_t k, int64_t n, int32_t* sums) {
  std::fill(sums, sums + n, 0);
  for (int64_t p = 0; p < k; ++p) {
    for (int64_t j = 0; j < n; ++j) sums[j] += b[p * n + j];
  }
}

template <typename T>
void ShiftedRowSums(const T* a, int64_t m, int64_t k, std::span<const int32_t> a_zero,
                    int32_t* sums) {
  for (int64_t i = 0; i < m; ++i) {
    int32_t sum = 0;
    for (int64_t p = 0; p < k; ++p) sum += a[i * k + p];
    sums[i] = sum - static_cast<int32_t>(k) * a_zero[a_zero.size() == 1 ? 0 : i];
  }
}

}  // namespace

IntegerProduct::PreparedB::PreparedB(const onednn::Int8Matmul& plan, nxrt_dtype dtype,
                                     const void* b)
    : dtype_(dtype), column_sums_(plan.n()) {
  const int64_t count = plan.k() * plan.n();
  std::vector<int8_t> shifted;
  const int8_t* b8 = static_cast<const int8_t*>(b);
  if (dtype == NXRT_DTYPE_UINT8) {
    shifted.resize(count);
    ShiftBytes(static_cast<const uint8_t*>(b), count, shifted.data());
    b8 = shifted.data();
  }
  ColumnSums(b8, plan.k(), plan.n(), column_sums_.data());
  weights_ = plan.PrepareWeights(b8);
}

IntegerProduct::IntegerProduct(nxrt_dtype a_dtype, nxrt_dtype b_dtype, int64_t m, int64_t n,
                               int64_t k)
    : a_dtype_(a_dtype), b_dtype_(b_dtype), m_(m), n_(n), k_(k) {}

void IntegerProduct::PrepareB(const void* b) {
  sums_.emplace(a_dtype_, m_, n_, k_, true);
  prepared_ = std::make_shared<PreparedB>(*sums_, b_dtype_, b);
}

bool IntegerProduct::AdoptB(const std::shared_ptr<sdk::SharedState>& state) {
  auto prepared = std::dynamic_pointer_cast<PreparedB>(state);
  if (!prepared || prepared->dtype() != b_dtype_ ||
      static_cast<int64_t>(prepared->column_sums().size()) != n_) {
    return false;
  }
  onednn::Int8Matmul plan(a_dtype_, m_, n_, k_, true);
  if (!plan.Takes(prepared->weights())) return false;
  sums_ = std::move(plan);
  prepared_ = std::move(prepared);
  return true;
}

const void* IntegerProduct::SignedB(const void* b) {
  if (prepared_) return prepared_->weights().data();
  if (b_dtype_ != NXRT_DTYPE_UINT8) return b;
  shifted_b_.resize(k_ * n_);
  ShiftBytes(static_cast<const uint8_t*>(b), k_ * n_, shifted_b_.data());
  return shifted_b_.data();
}

bool IntegerProduct::RunRequantised(const void* a, int32_t a_zero, const void* b,
                                    std::span<const int32_t> b_zero,
                                    const std::vector<float>& multipliers, nxrt_dtype y_dtype,
                                    int32_t y_zero, void* y) {
  const int32_t shift = ShiftOf(b_dtype_);
  if (std::any_of(b_zero.begin(), b_zero.end(), [&](int32_t z) { return z != shift; })) {
    return false;
  }
  if (!requantised_ || requantised_->scales() != multipliers) {
    const onednn::Int8Requantisation requantisation{y_dtype, multipliers};
    onednn::Int8Matmul plan(a_dtype_, m_, n_, k_, prepared_ != nullptr, &requantisation);
    if (prepared_ && !plan.Takes(prepared_->weights())) return false;
    requantised_ = std::move(plan);
  }
  requantised_->RunRequantised(a, a_zero, SignedB(b), y_zero, y);
  return true;
}

void IntegerProduct::Run(const void* a, std::span<const int32_t> a_zero, const void* b,
                         std::span<const int32_t> b_zero, int32_t* y) {
  const int64_t m = m_, n = n_, k = k_;
  if (!sums_) sums_.emplace(a_dtype_, m, n, k, false);
  const void* b_read = SignedB(b);
  sums_->Run(a, b_read, y);

  const int32_t shift = ShiftOf(b_dtype_);
  b_zero_.resize(b_zero.size());
  bool any_b_zero = false;
  for (size_t j = 0; j < b_zero.size(); ++j) {
    b_zero_[j] = b_zero[j] - shift;
    any_b_zero |= b_zero_[j] != 0;
  }
  const bool any_a_zero = std::any_of(a_zero.begin(), a_zero.end(), [](int32_t z) { return z; });
  if (!any_a_zero && !any_b_zero) return;
  // B's column sums serve A's zero points alone.
  std::span<const int32_t> column_sums;
  if (prepared_) {
    column_sums = prepared_->column_sums();
  } else if (any_a_zero) {
    column_sums_.resize(n);
    ColumnSums(static_cast<const int8_t*>(b_read), k, n, column_sums_.data());
    column_sums = column_sums_;
  }
  if (any_b_zero) {
    shifted_rows_.resize(m);
    if (a_dtype_ == NXRT_DTYPE_UINT8) {
      ShiftedRowSums(static_cast<const uint8_t*>(a), m, k, a_zero, shifted_rows_.data());
    } else {
      ShiftedRowSums(static_cast<const int8_t*>(a), m, k, a_zero, shifted_rows_.data());
    }
  }
  for (int64_t i = 0; i < m; ++i) {
    const int32_t za = a_zero[a_zero.size() == 1 ? 0 : i];
    int32_t* row = y + i * n;
    if (za != 0) {
      for (int64_t j = 0; j < n; ++j) row[j] -= za * column_sums[j];
    }
    if (any_b_zero) {
      const int32_t rows = shifted_rows_[i];
      if (b_zero_.size() == 1) {
        for (int64_t j = 0; j < n; ++j) row[j] -= b_zero_[0] * rows;
      } else {
        for (int64_t j = 0; j < n; ++j) row[j] -= b_zero_[j] * rows;
      }
    }
  }
}

}  // namespace nxrt::cpu
