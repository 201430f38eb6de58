#include "recurrent/sequence_layer.hpp"

#include <cblas.h>

#include <algorithm>
#include <string>
#include <type_traits>
#include <utility>

#include "math_threads.hpp"
#include "onednn/sgemm.hpp"
#include "tensor.hpp"

namespace nxrt::cpu {
namespace {

// c[m, n] = a[m, k] · b[n, k]^T with row strides lda, ldb and ldc. One row
// goes through OpenBLAS's gemv, which runs faster than a one-row gemm; more
// on oneDNN's sgemm, on the EP's threads.
void BlasGemmBt(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
                int64_t ldb, float* c, int64_t ldc) {
  if (m == 1) {
    cblas_sgemv(CblasRowMajor, CblasNoTrans, static_cast<int>(n), static_cast<int>(k), 1.0f, b,
                static_cast<int>(ldb), a, 1, 0.0f, c, 1);
    return;
  }
  onednn::Sgemm(false, true, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc, MathThreads());
}
void BlasGemmBt(int64_t m, int64_t n, int64_t k, const double* a, int64_t lda, const double* b,
                int64_t ldb, double* c, int64_t ldc) {
  if (m == 1) {
    cblas_dgemv(CblasRowMajor, CblasNoTrans, static_cast<int>(n), static_cast<int>(k), 1.0, b,
                static_cast<int>(ldb), a, 1, 0.0, c, 1);
    return;
  }
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(m), static_cast<int>(n),
              static_cast<int>(k), 1.0, a, static_cast<int>(lda), b, static_cast<int>(ldb), 0.0, c,
              static_cast<int>(ldc));
}

// As BlasGemmBt, also for empty operands (BLAS rejects a zero leading
// dimension).
template <typename T>
void GemmBt(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb, T* c,
            int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i) std::fill_n(c + i * ldc, n, T(0));
    return;
  }
  BlasGemmBt(m, n, k, a, lda, b, ldb, c, ldc);
}

}  // namespace

int64_t GateCount(CellKind cell) {
  switch (cell) {
    case CellKind::kRnn:
      return 1;
    case CellKind::kGru:
      return 3;
    case CellKind::kLstm:
      return 4;
  }
  return 0;
}

int64_t ActivationCount(CellKind cell) {
  switch (cell) {
    case CellKind::kRnn:
      return 1;
    case CellKind::kGru:
      return 2;
    case CellKind::kLstm:
      return 3;
  }
  return 0;
}

template <typename T>
SequenceLayer<T>::SequenceLayer(LayerConfig config, LayerDims dims)
    : config_(std::move(config)),
      dims_(dims),
      gates_(GateCount(config_.cell) * config_.hidden),
      clip_(static_cast<T>(config_.clip)) {
  const int64_t hidden = config_.hidden;
  const int64_t batch = dims_.batch;
  lengths_.resize(batch);
  projected_.resize(dims_.seq * batch * config_.directions * gates_);
  bias_.resize(gates_);
  recurrent_.resize(batch * gates_);
  h_.resize(batch * hidden);
  if (config_.cell == CellKind::kLstm) c_.resize(batch * hidden);
  if (config_.cell == CellKind::kGru) {
    reset_bias_.resize(hidden);
    reset_h_.resize(batch * hidden);
    reset_product_.resize(batch * hidden);
  }
}

template <typename T>
void SequenceLayer<T>::PrepareRecurrentWeights(const T* r) {
  if (!std::is_same_v<T, float> || dims_.batch != 1 || config_.hidden == 0) return;
  const int64_t hidden = config_.hidden;
  r_transposed_.resize(config_.directions * hidden * gates_);
  for (int64_t d = 0; d < config_.directions; ++d) {
    const T* from = r + d * gates_ * hidden;
    T* to = r_transposed_.data() + d * hidden * gates_;
    for (int64_t g = 0; g < gates_; ++g) {
      for (int64_t k = 0; k < hidden; ++k) to[k * gates_ + g] = from[g * hidden + k];
    }
  }
}

template <typename T>
void SequenceLayer<T>::TimesRecurrent(int64_t direction, const T* r, int64_t first, int64_t n,
                                      const T* a, T* c, int64_t ldc) const {
  const int64_t hidden = config_.hidden;
  if constexpr (std::is_same_v<T, float>) {
    if (!r_transposed_.empty()) {
      // One thread: a product this small gains nothing from a team.
      onednn::Sgemm(false, false, 1, n, hidden, 1.0f, a, hidden,
                    r_transposed_.data() + direction * hidden * gates_ + first, gates_, 0.0f, c,
                    ldc, 1);
      return;
    }
  }
  GemmBt(dims_.batch, n, hidden, a, hidden, r + first * hidden, hidden, c, ldc);
}

template <typename T>
void SequenceLayer<T>::Run(const LayerTensors<T>& io) {
  for (int64_t b = 0; b < dims_.batch; ++b) {
    const int64_t length = io.lengths ? io.lengths[b] : dims_.seq;
    if (length < 0 || length > dims_.seq) {
      FailInvalid("sequence_lens[" + std::to_string(b) + "] is " + std::to_string(length) +
                  "; it must lie in [0, " + std::to_string(dims_.seq) + "]");
    }
    lengths_[b] = length;
  }
  const int64_t all_gates = config_.directions * gates_;
  GemmBt(dims_.seq * dims_.batch, all_gates, dims_.input, io.x, dims_.input, io.w, dims_.input,
         projected_.data(), all_gates);
  if (io.y) {
    std::fill_n(io.y, dims_.seq * config_.directions * dims_.batch * config_.hidden, T(0));
  }
  for (int64_t d = 0; d < config_.directions; ++d) RunDirection(d, io);
}

template <typename T>
void SequenceLayer<T>::RunDirection(int64_t direction, const LayerTensors<T>& io) {
  const int64_t hidden = config_.hidden;
  const int64_t batch = dims_.batch;
  const bool backward = config_.directions == 2 ? direction == 1 : config_.reverse;
  // GRU's Rbh with linear_before_reset is added to h · Rh^T before the
  // reset gate scales it; every other recurrent bias folds into Wb.
  const bool split_reset_bias = config_.cell == CellKind::kGru && config_.linear_before_reset;
  std::fill(bias_.begin(), bias_.end(), T(0));
  std::fill(reset_bias_.begin(), reset_bias_.end(), T(0));
  if (io.b) {
    const T* wb = io.b + direction * 2 * gates_;
    const T* rb = wb + gates_;
    for (int64_t j = 0; j < gates_; ++j) {
      bias_[j] = wb[j] + (split_reset_bias && j >= 2 * hidden ? T(0) : rb[j]);
    }
    if (split_reset_bias) std::copy_n(rb + 2 * hidden, hidden, reset_bias_.begin());
  }
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t at = StateOffset(direction, b);
    T* h = h_.data() + b * hidden;
    if (io.initial_h) {
      std::copy_n(io.initial_h + at, hidden, h);
    } else {
      std::fill_n(h, hidden, T(0));
    }
    if (c_.empty()) continue;
    T* c = c_.data() + b * hidden;
    if (io.initial_c) {
      std::copy_n(io.initial_c + at, hidden, c);
    } else {
      std::fill_n(c, hidden, T(0));
    }
  }
  const T* r = io.r + direction * gates_ * hidden;
  const T* peepholes = io.peepholes ? io.peepholes + direction * 3 * hidden : nullptr;
  // GRU without linear_before_reset multiplies Rh by r ⊙ h, known only once
  // r is: the first product covers z and r alone.
  const int64_t first_product =
      config_.cell == CellKind::kGru && !config_.linear_before_reset ? 2 * hidden : gates_;
  const int64_t steps = batch ? *std::max_element(lengths_.begin(), lengths_.end()) : 0;
  for (int64_t step = 0; step < steps; ++step) {
    TimesRecurrent(direction, r, 0, first_product, h_.data(), recurrent_.data(), gates_);
    switch (config_.cell) {
      case CellKind::kRnn:
        RnnStep(direction, step, backward, io.y);
        break;
      case CellKind::kGru:
        GruStep(direction, step, backward, r, io.y);
        break;
      case CellKind::kLstm:
        LstmStep(direction, step, backward, peepholes, io.y);
        break;
    }
  }
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t at = StateOffset(direction, b);
    if (io.y_h) std::copy_n(h_.data() + b * hidden, hidden, io.y_h + at);
    if (io.y_c) std::copy_n(c_.data() + b * hidden, hidden, io.y_c + at);
  }
}

template <typename T>
void SequenceLayer<T>::RnnStep(int64_t direction, int64_t step, bool backward, T* y) {
  const int64_t hidden = config_.hidden;
  const Activation& f = ActivationOf(direction, 0);
  for (int64_t b = 0; b < dims_.batch; ++b) {
    const int64_t t = TimeOf(b, step, backward);
    if (t < 0) continue;
    T* pre = recurrent_.data() + b * gates_;
    const T* x = Projected(direction, t, b);
    for (int64_t j = 0; j < hidden; ++j) pre[j] += x[j] + bias_[j];
    ApplyActivation(f, clip_, pre, hidden);
    std::copy_n(pre, hidden, h_.data() + b * hidden);
    if (y) std::copy_n(pre, hidden, YRow(y, direction, t, b));
  }
}

template <typename T>
void SequenceLayer<T>::GruStep(int64_t direction, int64_t step, bool backward, const T* r, T* y) {
  const int64_t hidden = config_.hidden;
  const bool linear_before_reset = config_.linear_before_reset;
  const Activation& f = ActivationOf(direction, 0);
  const Activation& g = ActivationOf(direction, 1);
  // The update and reset gates of every live row.
  for (int64_t b = 0; b < dims_.batch; ++b) {
    const int64_t t = TimeOf(b, step, backward);
    if (t < 0) continue;
    T* pre = recurrent_.data() + b * gates_;
    const T* x = Projected(direction, t, b);
    for (int64_t j = 0; j < 2 * hidden; ++j) pre[j] += x[j] + bias_[j];
    ApplyActivation(f, clip_, pre, 2 * hidden);
    if (linear_before_reset) continue;
    const T* reset = pre + hidden;
    const T* h = h_.data() + b * hidden;
    T* reset_h = reset_h_.data() + b * hidden;
    for (int64_t j = 0; j < hidden; ++j) reset_h[j] = reset[j] * h[j];
  }
  if (!linear_before_reset) {
    TimesRecurrent(direction, r, 2 * hidden, hidden, reset_h_.data(), reset_product_.data(),
                   hidden);
  }
  for (int64_t b = 0; b < dims_.batch; ++b) {
    const int64_t t = TimeOf(b, step, backward);
    if (t < 0) continue;
    T* pre = recurrent_.data() + b * gates_;
    const T* update = pre;
    const T* reset = pre + hidden;
    T* candidate = pre + 2 * hidden;
    const T* x = Projected(direction, t, b) + 2 * hidden;
    const T* bias = bias_.data() + 2 * hidden;
    if (linear_before_reset) {
      for (int64_t j = 0; j < hidden; ++j) {
        candidate[j] = x[j] + bias[j] + reset[j] * (candidate[j] + reset_bias_[j]);
      }
    } else {
      const T* product = reset_product_.data() + b * hidden;
      for (int64_t j = 0; j < hidden; ++j) candidate[j] = x[j] + bias[j] + product[j];
    }
    ApplyActivation(g, clip_, candidate, hidden);
    T* h = h_.data() + b * hidden;
    for (int64_t j = 0; j < hidden; ++j) {
      h[j] = (T(1) - update[j]) * candidate[j] + update[j] * h[j];
    }
    if (y) std::copy_n(h, hidden, YRow(y, direction, t, b));
  }
}

template <typename T>
void SequenceLayer<T>::LstmStep(int64_t direction, int64_t step, bool backward, const T* peepholes,
                                T* y) {
  const int64_t hidden = config_.hidden;
  const Activation& f = ActivationOf(direction, 0);
  const Activation& g = ActivationOf(direction, 1);
  const Activation& h_of = ActivationOf(direction, 2);
  for (int64_t b = 0; b < dims_.batch; ++b) {
    const int64_t t = TimeOf(b, step, backward);
    if (t < 0) continue;
    T* pre = recurrent_.data() + b * gates_;
    const T* x = Projected(direction, t, b);
    for (int64_t j = 0; j < gates_; ++j) pre[j] += x[j] + bias_[j];
    T* input = pre;
    T* output = pre + hidden;
    T* forget = pre + 2 * hidden;
    T* cell = pre + 3 * hidden;
    T* c = c_.data() + b * hidden;
    T* h = h_.data() + b * hidden;
    if (peepholes) {
      for (int64_t j = 0; j < hidden; ++j) {
        input[j] += peepholes[j] * c[j];
        forget[j] += peepholes[2 * hidden + j] * c[j];
      }
    }
    ApplyActivation(f, clip_, input, hidden);
    if (config_.input_forget) {
      for (int64_t j = 0; j < hidden; ++j) forget[j] = T(1) - input[j];
    } else {
      ApplyActivation(f, clip_, forget, hidden);
    }
    ApplyActivation(g, clip_, cell, hidden);
    for (int64_t j = 0; j < hidden; ++j) c[j] = forget[j] * c[j] + input[j] * cell[j];
    if (peepholes) {
      for (int64_t j = 0; j < hidden; ++j) output[j] += peepholes[hidden + j] * c[j];
    }
    ApplyActivation(f, clip_, output, hidden);
    // h(C) goes where the spent cell gate was.
    std::copy_n(c, hidden, cell);
    ApplyActivation(h_of, clip_, cell, hidden);
    for (int64_t j = 0; j < hidden; ++j) h[j] = output[j] * cell[j];
    if (y) std::copy_n(h, hidden, YRow(y, direction, t, b));
  }
}

template <typename T>
int64_t SequenceLayer<T>::TimeOf(int64_t b, int64_t step, bool backward) const {
  const int64_t length = lengths_[b];
  if (step >= length) return -1;
  return backward ? length - 1 - step : step;
}

template <typename T>
const T* SequenceLayer<T>::Projected(int64_t direction, int64_t t, int64_t b) const {
  const int64_t row = config_.batch_major ? b * dims_.seq + t : t * dims_.batch + b;
  return projected_.data() + (row * config_.directions + direction) * gates_;
}

template <typename T>
T* SequenceLayer<T>::YRow(T* y, int64_t direction, int64_t t, int64_t b) const {
  const int64_t directions = config_.directions;
  const int64_t row = config_.batch_major ? (b * dims_.seq + t) * directions + direction
                                          : (t * directions + direction) * dims_.batch + b;
  return y + row * config_.hidden;
}

template <typename T>
int64_t SequenceLayer<T>::StateOffset(int64_t direction, int64_t b) const {
  const int64_t row =
      config_.batch_major ? b * config_.directions + direction : direction * dims_.batch + b;
  return row * config_.hidden;
}

template <typename T>
const Activation& SequenceLayer<T>::ActivationOf(int64_t direction, int64_t k) const {
  return config_.activations[direction * ActivationCount(config_.cell) + k];
}

template class SequenceLayer<float>;
template class SequenceLayer<double>;

}  // namespace nxrt::cpu
