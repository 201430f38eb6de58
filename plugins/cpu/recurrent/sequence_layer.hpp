// One ONNX recurrent layer (RNN, GRU or LSTM) over a whole sequence, in
// float or double. The input projections X·W^T of every time step and
// direction are one GEMM up front; each step then multiplies the hidden
// state by R^T (one GEMM over the batch, a GEMV for batch 1) and applies the
// cell's gates. A float layer of batch 1 whose R is constant keeps R^T
// (PrepareRecurrentWeights) and runs each step's product on oneDNN's
// sgemm, which streams R^T row by row: 1.1 us a step for LSTM's 384x96
// against OpenBLAS's 1.7-2.0 us for the GEMV over R. sequence_lens cuts each batch row short: a
// reverse direction starts at the row's own last step, Y past a row's length stays zero, and a row
// of length 0 keeps its initial state in Y_h and Y_c. Buffers are sized at construction, so a run
// allocates nothing.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "recurrent/activation.hpp"

namespace nxrt::cpu {

enum class CellKind { kRnn, kGru, kLstm };

// Gate blocks per hidden unit, in W, R and B order: RNN i; GRU z, r, h;
// LSTM i, o, f, c.
int64_t GateCount(CellKind cell);
// Activations per direction: RNN f; GRU f, g; LSTM f, g, h.
int64_t ActivationCount(CellKind cell);

struct LayerConfig {
  CellKind cell = CellKind::kRnn;
  int64_t hidden = 0;
  int64_t directions = 1;               // 2: forward, then reverse
  bool reverse = false;                 // the single direction runs backward
  bool batch_major = false;             // layout=1: X [batch, seq, input]
  std::vector<Activation> activations;  // ActivationCount per direction
  double clip = std::numeric_limits<double>::infinity();
  bool linear_before_reset = false;  // GRU
  bool input_forget = false;         // LSTM: forget gate = 1 - input gate
};

struct LayerDims {
  int64_t seq = 0;
  int64_t batch = 0;
  int64_t input = 0;
};

// The tensors of one run, in the layouts the ONNX ops define; an absent
// optional input or output is null.
template <typename T>
struct LayerTensors {
  const T* x = nullptr;
  const T* w = nullptr;
  const T* r = nullptr;
  const T* b = nullptr;
  const int32_t* lengths = nullptr;
  const T* initial_h = nullptr;
  const T* initial_c = nullptr;
  const T* peepholes = nullptr;
  T* y = nullptr;
  T* y_h = nullptr;
  T* y_c = nullptr;
};

template <typename T>
class SequenceLayer {
 public:
  SequenceLayer(LayerConfig config, LayerDims dims);
  // Throws INVALID_ARGUMENT for a sequence length outside [0, seq].
  void Run(const LayerTensors<T>& io);
  // R ([directions, gates, hidden]), constant for every run: kept as R^T
  // where the steps read it so (float, batch 1); a no-op otherwise. Run then
  // reads R^T instead of io.r.
  void PrepareRecurrentWeights(const T* r);

 private:
  void RunDirection(int64_t direction, const LayerTensors<T>& io);
  void RnnStep(int64_t direction, int64_t step, bool backward, T* y);
  void GruStep(int64_t direction, int64_t step, bool backward, const T* r, T* y);
  void LstmStep(int64_t direction, int64_t step, bool backward, const T* peepholes, T* y);
  // The time index of batch row `b` at `step`, or -1 once the row is done.
  int64_t TimeOf(int64_t b, int64_t step, bool backward) const;
  const T* Projected(int64_t direction, int64_t t, int64_t b) const;
  T* YRow(T* y, int64_t direction, int64_t t, int64_t b) const;
  // Where row `b` of `direction` lies in initial_h, initial_c, Y_h and Y_c.
  int64_t StateOffset(int64_t direction, int64_t b) const;
  const Activation& ActivationOf(int64_t direction, int64_t k) const;
  // c [batch, n] = a [batch, hidden] · R^T of `direction`, columns
  // [first, first + n) of R^T (rows of R), with c's row stride `ldc`.
  void TimesRecurrent(int64_t direction, const T* r, int64_t first, int64_t n, const T* a, T* c,
                      int64_t ldc) const;

  LayerConfig config_;
  LayerDims dims_;
  int64_t gates_;  // GateCount * hidden
  T clip_;
  std::vector<int64_t> lengths_;  // [batch]
  std::vector<T> projected_;      // [seq * batch, directions * gates_], X's row order
  std::vector<T> bias_;           // [gates_]: Wb + Rb, less GRU's Rbh when applied after reset
  std::vector<T> reset_bias_;     // [hidden]: GRU's Rbh with linear_before_reset
  std::vector<T> recurrent_;      // [batch, gates_]: h · R^T
  std::vector<T> h_;              // [batch, hidden]
  std::vector<T> c_;              // [batch, hidden], LSTM
  std::vector<T> reset_h_;        // [batch, hidden]: r ⊙ h, GRU without linear_before_reset
  std::vector<T> reset_product_;  // [batch, hidden]: (r ⊙ h) · Rh^T
  std::vector<T> r_transposed_;   // [directions, hidden, gates_] when prepared, else empty
};

extern template class SequenceLayer<float>;
extern template class SequenceLayer<double>;

}  // namespace nxrt::cpu
