#include "fft.hpp"

#include <algorithm>
#include <numbers>
#include <utility>

namespace nxrt::cpu {
namespace {

bool IsPowerOfTwo(int64_t n) {
  return n > 0 && (n & (n - 1)) == 0;
}

}  // namespace

Fft::Fft(int64_t length) : length_(length), padded_(1) {
  if (length <= 1) return;  // the identity
  const int64_t wanted = IsPowerOfTwo(length) ? length : 2 * length - 1;
  while (padded_ < wanted) padded_ *= 2;
  twiddles_.resize(padded_ / 2);
  for (int64_t k = 0; k < padded_ / 2; ++k) {
    twiddles_[k] = std::polar(
        1.0, -2.0 * std::numbers::pi * static_cast<double>(k) / static_cast<double>(padded_));
  }
  if (padded_ == length) return;
  chirp_.resize(length);
  for (int64_t k = 0; k < length; ++k) {
    // k^2 mod 2N keeps the angle small, so long transforms stay accurate.
    const int64_t k2 = (k * k) % (2 * length);
    chirp_[k] =
        std::polar(1.0, -std::numbers::pi * static_cast<double>(k2) / static_cast<double>(length));
  }
  kernel_.assign(padded_, {0.0, 0.0});
  kernel_[0] = std::conj(chirp_[0]);
  for (int64_t k = 1; k < length; ++k) {
    kernel_[k] = std::conj(chirp_[k]);
    kernel_[padded_ - k] = std::conj(chirp_[k]);
  }
  PowerOfTwo(kernel_.data(), false);
  work_.resize(padded_);
}

void Fft::PowerOfTwo(std::complex<double>* data, bool inverse) const {
  const int64_t n = padded_;
  for (int64_t i = 1, j = 0; i < n; ++i) {
    int64_t bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(data[i], data[j]);
  }
  for (int64_t half = 1; half < n; half *= 2) {
    const int64_t step = n / (2 * half);
    for (int64_t start = 0; start < n; start += 2 * half) {
      for (int64_t k = 0; k < half; ++k) {
        const std::complex<double> w =
            inverse ? std::conj(twiddles_[k * step]) : twiddles_[k * step];
        const std::complex<double> odd = data[start + k + half] * w;
        data[start + k + half] = data[start + k] - odd;
        data[start + k] += odd;
      }
    }
  }
}

void Fft::Transform(std::complex<double>* data, bool inverse) const {
  if (length_ <= 1) return;
  if (padded_ == length_) {
    PowerOfTwo(data, inverse);
    return;
  }
  // The inverse is the conjugate of the forward transform of the conjugate.
  for (int64_t k = 0; k < length_; ++k) {
    const std::complex<double> x = inverse ? std::conj(data[k]) : data[k];
    work_[k] = x * chirp_[k];
  }
  std::fill(work_.begin() + length_, work_.end(), std::complex<double>(0.0, 0.0));
  PowerOfTwo(work_.data(), false);
  for (int64_t k = 0; k < padded_; ++k) work_[k] *= kernel_[k];
  PowerOfTwo(work_.data(), true);
  const double scale = 1.0 / static_cast<double>(padded_);
  for (int64_t k = 0; k < length_; ++k) {
    const std::complex<double> y = work_[k] * scale * chirp_[k];
    data[k] = inverse ? std::conj(y) : y;
  }
}

}  // namespace nxrt::cpu
