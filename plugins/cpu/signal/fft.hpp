// A complex discrete Fourier transform of any length, for DFT and STFT:
// iterative radix-2 for powers of two, Bluestein's chirp-z (a convolution
// done with power-of-two transforms) for every other length, primes
// included. Runs in double whatever the tensor dtype, so float32 results
// are rounded once, on output.
#pragma once

#include <complex>
#include <cstdint>
#include <vector>

namespace nxrt::cpu {

class Fft {
 public:
  explicit Fft(int64_t length);

  int64_t length() const { return length_; }
  // In place over length() values: sum_n x[n] e^(-+2 pi i k n / N), the sign
  // positive when `inverse`. Unscaled: the caller divides an inverse by N.
  void Transform(std::complex<double>* data, bool inverse) const;

 private:
  void PowerOfTwo(std::complex<double>* data, bool inverse) const;

  int64_t length_;
  int64_t padded_;                              // the power-of-two transform length
  std::vector<std::complex<double>> twiddles_;  // e^(-2 pi i k / padded), k < padded / 2
  std::vector<std::complex<double>> chirp_;     // Bluestein: e^(-pi i k^2 / N), k < N
  std::vector<std::complex<double>> kernel_;    // Bluestein: transformed conj(chirp), wrapped
  mutable std::vector<std::complex<double>> work_;
};

}  // namespace nxrt::cpu
