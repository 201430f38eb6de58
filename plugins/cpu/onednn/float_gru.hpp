// A float GRU layer in the form torch exports (linear_before_reset, the
// default Sigmoid and Tanh, no clip, one direction, every batch row the whole
// sequence) on oneDNN's linear-before-reset GRU, planned once for its
// shape. It keeps the whole recurrence inside oneDNN, whose packed products
// and fused gates take a step in about half the time of the CPU EP's own
// layer (recurrent/sequence_layer.hpp), which runs every other form.
//
// ONNX and oneDNN agree on the gate order (update, reset, hidden) and on
// the layouts of X, Y, initial_h and Y_h; W and R are reordered once into
// the plan's layouts, and the bias becomes oneDNN's four rows: Wbz + Rbz,
// Wbr + Rbr, Wbh, and Rbh, which the reset gate scales.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "nxrt/ep_sdk.hpp"
#include "primitive_runner.hpp"

namespace nxrt::cpu::onednn {

struct GruShape {
  int64_t seq = 0;
  int64_t batch = 0;
  int64_t input = 0;
  int64_t hidden = 0;
  bool reverse = false;
  bool initial_h = false;  // initial_h is given; else the state starts at zero
};

// W, R and B in the layouts a plan takes, shared between shape variants.
class GruWeights : public sdk::SharedState {
 public:
  dnnl::memory::desc layer_desc, iteration_desc;  // the layouts of layer and iteration
  std::vector<float> layer, iteration, bias;
};

class FloatGru {
 public:
  // The plan, or nullopt when oneDNN has none. Every extent must be
  // positive. (oneDNN names its RNN "ref" even where its products run on
  // its packed GEMM, as here.)
  static std::optional<FloatGru> Plan(const GruShape& shape);

  // `w` [1, 3H, input], `r` [1, 3H, H] and `b` [1, 6H] (null for none) as
  // ONNX lays them out.
  std::shared_ptr<GruWeights> PrepareWeights(const float* w, const float* r, const float* b) const;
  bool Takes(const GruWeights& weights) const {
    return weights.layer_desc == layer_desc_ && weights.iteration_desc == iteration_desc_;
  }

  // `x` [seq, batch, input]; `initial_h` [1, batch, H] when the shape has it;
  // `y` [seq, 1, batch, H] and `y_h` [1, batch, H], either null when unused.
  void Run(const float* x, const GruWeights& weights, const float* initial_h, float* y, float* y_h);

 private:
  FloatGru() = default;

  GruShape shape_;
  dnnl::memory::desc layer_desc_, iteration_desc_;
  PrimitiveRunner gru_;
  std::vector<float> unused_y_, unused_y_h_;  // where the outputs no one reads go
};

}  // namespace nxrt::cpu::onednn
