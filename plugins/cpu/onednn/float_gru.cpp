#include "float_gru.hpp"

#include <algorithm>
#include <utility>

namespace nxrt::cpu::onednn {
namespace {

using Desc = dnnl::memory::desc;
using Tag = dnnl::memory::format_tag;
using dnnl::memory;

constexpr int64_t kGates = 3;
constexpr int64_t kBiasRows = 4;

Desc Float(const memory::dims& dims, Tag tag) {
  return Desc(dims, memory::data_type::f32, tag);
}

}  // namespace

std::optional<FloatGru> FloatGru::Plan(const GruShape& shape) {
  const int64_t t = shape.seq, n = shape.batch, i = shape.input, h = shape.hidden;
  const Desc x = Float({t, n, i}, Tag::tnc);
  const Desc y = Float({t, n, h}, Tag::tnc);
  const Desc state = Float({1, 1, n, h}, Tag::ldnc);
  const Desc bias = Float({1, 1, kBiasRows, h}, Tag::ldgo);
  const auto direction = shape.reverse ? dnnl::rnn_direction::unidirectional_right2left
                                       : dnnl::rnn_direction::unidirectional_left2right;
  try {
    const dnnl::lbr_gru_forward::primitive_desc plan(
        dnnl::lbr_gru_forward::desc(dnnl::prop_kind::forward_inference, direction, x,
                                    shape.initial_h ? state : Desc(),
                                    Float({1, 1, i, kGates, h}, Tag::any),
                                    Float({1, 1, h, kGates, h}, Tag::any), bias, y, state),
        PlanningAttributes(), Engine());
    FloatGru gru;
    gru.shape_ = shape;
    gru.layer_desc_ = plan.weights_layer_desc();
    gru.iteration_desc_ = plan.weights_iter_desc();
    const std::pair<int, Desc> args[] = {{DNNL_ARG_SRC_LAYER, x},
                                         {DNNL_ARG_SRC_ITER, shape.initial_h ? state : Desc()},
                                         {DNNL_ARG_WEIGHTS_LAYER, gru.layer_desc_},
                                         {DNNL_ARG_WEIGHTS_ITER, gru.iteration_desc_},
                                         {DNNL_ARG_BIAS, bias},
                                         {DNNL_ARG_DST_LAYER, y},
                                         {DNNL_ARG_DST_ITER, state}};
    gru.gru_ = PrimitiveRunner(dnnl::lbr_gru_forward(plan), plan.scratchpad_desc(), args);
    gru.unused_y_.resize(static_cast<size_t>(t * n * h));
    gru.unused_y_h_.resize(static_cast<size_t>(n * h));
    return gru;
  } catch (const dnnl::error&) {
    return std::nullopt;
  }
}

std::shared_ptr<GruWeights> FloatGru::PrepareWeights(const float* w, const float* r,
                                                     const float* b) const {
  const int64_t i = shape_.input, h = shape_.hidden;
  auto prepared = std::make_shared<GruWeights>();
  prepared->layer_desc = layer_desc_;
  prepared->iteration_desc = iteration_desc_;
  prepared->layer.resize(layer_desc_.get_size() / sizeof(float));
  prepared->iteration.resize(iteration_desc_.get_size() / sizeof(float));
  // ONNX's [3H, input] per direction is oneDNN's ldgoi.
  ReorderOnce(Float({1, 1, i, kGates, h}, Tag::ldgoi), w, layer_desc_, prepared->layer.data());
  ReorderOnce(Float({1, 1, h, kGates, h}, Tag::ldgoi), r, iteration_desc_,
              prepared->iteration.data());
  prepared->bias.assign(static_cast<size_t>(kBiasRows * h), 0.0f);
  if (b != nullptr) {
    const float* wb = b;
    const float* rb = b + kGates * h;
    float* out = prepared->bias.data();
    for (int64_t j = 0; j < 2 * h; ++j) out[j] = wb[j] + rb[j];  // update, reset
    std::copy_n(wb + 2 * h, h, out + 2 * h);                     // hidden, outside the reset
    std::copy_n(rb + 2 * h, h, out + 3 * h);                     // hidden, scaled by the reset
  }
  return prepared;
}

void FloatGru::Run(const float* x, const GruWeights& weights, const float* initial_h, float* y,
                   float* y_h) {
  if (y == nullptr) y = unused_y_.data();
  if (y_h == nullptr) y_h = unused_y_h_.data();
  const void* buffers[] = {
      x, initial_h, weights.layer.data(), weights.iteration.data(), weights.bias.data(), y, y_h};
  gru_.Run(buffers);
}

}  // namespace nxrt::cpu::onednn
