#include "partitioner/qdq_fusion.hpp"

#include <algorithm>
#include <cstring>
#include <optional>

#include "nxrt/graph/weight_store.hpp"
#include "partitioner/fusion_chain.hpp"

namespace nxrt::partitioner {
namespace {

using graph::DataType;
using graph::NodeId;
using graph::ValueId;

// The tensor, scale and zero point a DequantizeLinear or QuantizeLinear reads.
struct Quantization {
  ValueId data, scale, zero;
  int64_t axis = 1;
};

// `node`'s operands, when it quantizes per tensor or per axis with a float32
// scale and a zero point given.
std::optional<Quantization> OperandsOf(const graph::Graph& graph, const graph::Node& node) {
  if (node.inputs.size() != 3 || !node.inputs[0] || !node.inputs[1] || !node.inputs[2]) {
    return std::nullopt;
  }
  const graph::Attribute* block = node.FindAttribute("block_size");
  if (block != nullptr && block->i != 0) return std::nullopt;
  if (graph.value(*node.inputs[1]).dtype != DataType::kFloat32) return std::nullopt;
  const graph::Attribute* axis = node.FindAttribute("axis");
  return Quantization{*node.inputs[0], *node.inputs[1], *node.inputs[2], axis ? axis->i : 1};
}

bool IsByte(DataType dtype) {
  return dtype == DataType::kUint8 || dtype == DataType::kInt8;
}

size_t RankOf(const graph::Graph& graph, ValueId id) {
  const std::optional<graph::Shape>& shape = graph.value(id).shape;
  return shape ? shape->size() : 0;
}

bool PerTensor(const graph::Graph& graph, const Quantization& q) {
  return StaticCount(graph, q.scale) == 1 && StaticCount(graph, q.zero) == 1;
}

// Per tensor, or one scale and zero point per slice of axis `axis` of a
// tensor of rank `rank` with `slices` of them.
bool PerTensorOrAxis(const graph::Graph& graph, const Quantization& q, int64_t axis, size_t rank,
                     int64_t slices) {
  if (PerTensor(graph, q)) return true;
  const int64_t given = q.axis < 0 ? q.axis + static_cast<int64_t>(rank) : q.axis;
  return given == axis && RankOf(graph, q.scale) == 1 && StaticCount(graph, q.scale) == slices &&
         StaticCount(graph, q.zero) == slices;
}

// The quantized operand of a DequantizeLinear that reads an 8-bit tensor,
// its zero point of the same dtype.
std::optional<Quantization> ByteDequantize(const graph::Graph& graph, NodeId id) {
  std::optional<Quantization> q = OperandsOf(graph, graph.node(id));
  if (!q || !IsByte(graph.value(q->data).dtype) ||
      graph.value(q->zero).dtype != graph.value(q->data).dtype) {
    return std::nullopt;
  }
  return q;
}

// A constant's elements, for a constant of dtype `dtype` with element type T.
template <typename T>
std::optional<std::vector<T>> ConstantValues(const graph::Graph& graph, ValueId id,
                                             DataType dtype) {
  const graph::Value& value = graph.value(id);
  if (!value.is_constant() || value.dtype != dtype) return std::nullopt;
  const graph::TensorData& data = graph.weights->Get(*value.initializer);
  std::vector<T> values(data.bytes.size() / sizeof(T));
  std::memcpy(values.data(), data.bytes.data(), values.size() * sizeof(T));
  return values;
}

// Whether the bias DequantizeLinear `b` makes exactly the int32 bias
// QLinearConv adds: no zero point but 0, and a scale of x_scale * w_scale.
bool IsAccumulatorBias(const graph::Graph& graph, const Quantization& b, const Quantization& x,
                       const Quantization& w, int64_t maps) {
  const auto zeros = ConstantValues<int32_t>(graph, b.zero, DataType::kInt32);
  const auto scales = ConstantValues<float>(graph, b.scale, DataType::kFloat32);
  const auto x_scale = ConstantValues<float>(graph, x.scale, DataType::kFloat32);
  const auto w_scale = ConstantValues<float>(graph, w.scale, DataType::kFloat32);
  if (graph.value(b.data).dtype != DataType::kInt32 || !zeros || !scales || !x_scale || !w_scale ||
      x_scale->size() != 1 || w_scale->empty() || StaticCount(graph, b.data) != maps) {
    return false;
  }
  for (int32_t z : *zeros) {
    if (z != 0) return false;
  }
  for (int64_t m = 0; m < maps; ++m) {
    const float want = (*x_scale)[0] * (*w_scale)[w_scale->size() == 1 ? 0 : m];
    if ((*scales)[scales->size() == 1 ? 0 : m] != want) return false;
  }
  return true;
}

// The chain around `head`: its quantized inputs (with their DequantizeLinear
// nodes) and the QuantizeLinear of its result.
struct QdqChain {
  NodeId quantize;
  Quantization y;
  std::vector<NodeId> dequantizes;  // those a fused node may absorb
};

std::optional<QdqChain> OutputChain(const graph::Graph& graph, NodeId head,
                                    const ChainRules& rules) {
  const std::optional<NodeId> q = rules.Next(head, "QuantizeLinear");
  if (!q) return std::nullopt;
  const std::optional<Quantization> y = OperandsOf(graph, graph.node(*q));
  if (!y || !IsByte(graph.value(y->zero).dtype) || !PerTensor(graph, *y)) return std::nullopt;
  return QdqChain{*q, *y, {}};
}

// Notes `dq` for absorption when `head` alone reads it.
void Absorb(QdqChain& chain, NodeId dq, NodeId head, const ChainRules& rules) {
  if (rules.MayAbsorb(dq, head)) chain.dequantizes.push_back(dq);
}

FusionCandidate Fused(const graph::Node& head, const char* domain, const char* op,
                      std::vector<std::optional<ValueId>> inputs, const QdqChain& chain,
                      const graph::Graph& graph,
                      std::vector<graph::Attribute> more_attributes = {}) {
  auto fused = std::make_shared<graph::Node>(head);
  fused->op_type = op;
  fused->domain = domain;
  for (graph::Attribute& a : more_attributes) fused->attributes.push_back(std::move(a));
  fused->inputs.assign(inputs.begin(), inputs.end());
  fused->outputs = {graph.node(chain.quantize).outputs[0]};
  std::vector<NodeId> absorbed = chain.dequantizes;
  absorbed.push_back(chain.quantize);
  return {std::move(fused), std::move(absorbed)};
}

std::vector<FusionCandidate> ConvCandidates(const graph::Graph& graph, NodeId conv_id,
                                            const ChainRules& rules) {
  const graph::Node& conv = graph.node(conv_id);
  const std::optional<NodeId> x_dq = rules.Producer(conv_id, 0, "DequantizeLinear");
  const std::optional<NodeId> w_dq = rules.Producer(conv_id, 1, "DequantizeLinear");
  std::optional<QdqChain> chain = OutputChain(graph, conv_id, rules);
  if (!x_dq || !w_dq || !chain) return {};
  const std::optional<Quantization> x = ByteDequantize(graph, *x_dq);
  const std::optional<Quantization> w = ByteDequantize(graph, *w_dq);
  if (!x || !w || !PerTensor(graph, *x)) return {};
  const size_t w_rank = RankOf(graph, w->data);
  const graph::Value& weights = graph.value(w->data);
  if (w_rank < 3 || !weights.shape || !(*weights.shape)[0].is_static()) return {};
  const int64_t maps = (*weights.shape)[0].extent();
  if (!PerTensorOrAxis(graph, *w, 0, w_rank, maps)) return {};
  std::vector<std::optional<ValueId>> inputs = {x->data,  x->scale, x->zero,        w->data,
                                                w->scale, w->zero,  chain->y.scale, chain->y.zero};
  Absorb(*chain, *x_dq, conv_id, rules);
  Absorb(*chain, *w_dq, conv_id, rules);
  if (conv.inputs.size() > 2 && conv.inputs[2]) {
    const std::optional<NodeId> b_dq = rules.Producer(conv_id, 2, "DequantizeLinear");
    if (!b_dq) return {};
    const std::optional<Quantization> b = OperandsOf(graph, graph.node(*b_dq));
    if (!b || !IsAccumulatorBias(graph, *b, *x, *w, maps)) return {};
    inputs.push_back(b->data);
    Absorb(*chain, *b_dq, conv_id, rules);
  }
  return {Fused(conv, "", "QLinearConv", std::move(inputs), *chain, graph)};
}

std::vector<FusionCandidate> MatMulCandidates(const graph::Graph& graph, NodeId matmul_id,
                                              const ChainRules& rules) {
  const graph::Node& matmul = graph.node(matmul_id);
  const std::optional<NodeId> a_dq = rules.Producer(matmul_id, 0, "DequantizeLinear");
  const std::optional<NodeId> b_dq = rules.Producer(matmul_id, 1, "DequantizeLinear");
  std::optional<QdqChain> chain = OutputChain(graph, matmul_id, rules);
  if (!a_dq || !b_dq || !chain) return {};
  const std::optional<Quantization> a = ByteDequantize(graph, *a_dq);
  const std::optional<Quantization> b = ByteDequantize(graph, *b_dq);
  if (!a || !b || !PerTensor(graph, *a)) return {};
  // Per-column scales only for a 2-D B of known columns.
  const graph::Value& b_value = graph.value(b->data);
  const bool matrix = RankOf(graph, b->data) == 2 && (*b_value.shape)[1].is_static();
  if (!PerTensor(graph, *b) &&
      !(matrix && PerTensorOrAxis(graph, *b, 1, 2, (*b_value.shape)[1].extent()))) {
    return {};
  }
  Absorb(*chain, *a_dq, matmul_id, rules);
  Absorb(*chain, *b_dq, matmul_id, rules);
  return {
      Fused(matmul, "", "QLinearMatMul",
            {a->data, a->scale, a->zero, b->data, b->scale, b->zero, chain->y.scale, chain->y.zero},
            *chain, graph)};
}

// DQ(a), DQ(b)[, DQ(c)] -> Gemm -> Q: ONNX Runtime's QGemm, B per tensor or
// per output column, a bias only at the accumulator's scale (beta 1).
std::vector<FusionCandidate> GemmCandidates(const graph::Graph& graph, NodeId gemm_id,
                                            const ChainRules& rules) {
  const graph::Node& gemm = graph.node(gemm_id);
  const std::optional<NodeId> a_dq = rules.Producer(gemm_id, 0, "DequantizeLinear");
  const std::optional<NodeId> b_dq = rules.Producer(gemm_id, 1, "DequantizeLinear");
  std::optional<QdqChain> chain = OutputChain(graph, gemm_id, rules);
  if (!a_dq || !b_dq || !chain) return {};
  const std::optional<Quantization> a = ByteDequantize(graph, *a_dq);
  const std::optional<Quantization> b = ByteDequantize(graph, *b_dq);
  if (!a || !b || !PerTensor(graph, *a) || RankOf(graph, b->data) != 2) return {};
  const graph::Value& b_value = graph.value(b->data);
  const graph::Attribute* trans_b = gemm.FindAttribute("transB");
  const int64_t column_axis = trans_b != nullptr && trans_b->i != 0 ? 0 : 1;
  const graph::Dim& columns = (*b_value.shape)[column_axis];
  if (!columns.is_static() || !PerTensorOrAxis(graph, *b, column_axis, 2, columns.extent())) {
    return {};
  }
  std::vector<std::optional<ValueId>> inputs = {a->data, a->scale, a->zero,
                                                b->data, b->scale, b->zero};
  Absorb(*chain, *a_dq, gemm_id, rules);
  Absorb(*chain, *b_dq, gemm_id, rules);
  if (gemm.inputs.size() > 2 && gemm.inputs[2]) {
    const graph::Attribute* beta = gemm.FindAttribute("beta");
    const std::optional<NodeId> c_dq = rules.Producer(gemm_id, 2, "DequantizeLinear");
    if ((beta != nullptr && beta->f != 1.0f) || !c_dq) return {};
    const std::optional<Quantization> c = OperandsOf(graph, graph.node(*c_dq));
    if (!c || !IsAccumulatorBias(graph, *c, *a, *b, columns.extent())) return {};
    inputs.push_back(c->data);
    Absorb(*chain, *c_dq, gemm_id, rules);
  } else {
    inputs.push_back(std::nullopt);
  }
  inputs.push_back(chain->y.scale);
  inputs.push_back(chain->y.zero);
  return {Fused(gemm, "com.microsoft", "QGemm", std::move(inputs), *chain, graph)};
}

// DQ(x) -> head -> Q with x (input `x_at`) per tensor: x and the chain,
// x's DequantizeLinear noted for absorption.
struct ByteChain {
  Quantization x;
  QdqChain chain;
};
std::optional<ByteChain> ByteInputChain(const graph::Graph& graph, NodeId head_id, size_t x_at,
                                        const ChainRules& rules) {
  const std::optional<NodeId> x_dq = rules.Producer(head_id, x_at, "DequantizeLinear");
  std::optional<QdqChain> chain = OutputChain(graph, head_id, rules);
  if (!x_dq || !chain) return std::nullopt;
  const std::optional<Quantization> x = ByteDequantize(graph, *x_dq);
  if (!x || !PerTensor(graph, *x)) return std::nullopt;
  Absorb(*chain, *x_dq, head_id, rules);
  return ByteChain{*x, std::move(*chain)};
}

// DQ(x) -> a one-input head -> Q, x and the result of one 8-bit dtype: the
// contrib op `fused_op` that reads (X, its scale and zero point, Y's).
std::vector<FusionCandidate> OneInputCandidates(const graph::Graph& graph, NodeId head_id,
                                                const ChainRules& rules, const char* fused_op) {
  const std::optional<ByteChain> c = ByteInputChain(graph, head_id, 0, rules);
  if (!c || graph.value(c->chain.y.zero).dtype != graph.value(c->x.data).dtype) return {};
  return {Fused(graph.node(head_id), "com.microsoft", fused_op,
                {c->x.data, c->x.scale, c->x.zero, c->chain.y.scale, c->chain.y.zero}, c->chain,
                graph)};
}

// DQ(x) -> GlobalAveragePool -> Q: ONNX Runtime's QLinearGlobalAveragePool.
std::vector<FusionCandidate> GlobalAveragePoolCandidates(const graph::Graph& graph, NodeId head_id,
                                                         const ChainRules& rules) {
  return OneInputCandidates(graph, head_id, rules, "QLinearGlobalAveragePool");
}

// DQ(x) -> Sigmoid -> Q: ONNX Runtime's QLinearSigmoid.
std::vector<FusionCandidate> SigmoidCandidates(const graph::Graph& graph, NodeId head_id,
                                               const ChainRules& rules) {
  return OneInputCandidates(graph, head_id, rules, "QLinearSigmoid");
}

// DQ(a), DQ(b) -> Add or Mul -> Q, all per tensor and of one 8-bit dtype.
std::vector<FusionCandidate> ElementwiseCandidates(const graph::Graph& graph, NodeId head_id,
                                                   const ChainRules& rules, const char* fused_op) {
  const graph::Node& head = graph.node(head_id);
  if (head.inputs.size() != 2) return {};
  const std::optional<NodeId> a_dq = rules.Producer(head_id, 0, "DequantizeLinear");
  const std::optional<NodeId> b_dq = rules.Producer(head_id, 1, "DequantizeLinear");
  std::optional<QdqChain> chain = OutputChain(graph, head_id, rules);
  if (!a_dq || !b_dq || !chain) return {};
  const std::optional<Quantization> a = ByteDequantize(graph, *a_dq);
  const std::optional<Quantization> b = ByteDequantize(graph, *b_dq);
  if (!a || !b || !PerTensor(graph, *a) || !PerTensor(graph, *b)) return {};
  const DataType dtype = graph.value(a->data).dtype;
  if (graph.value(b->data).dtype != dtype || graph.value(chain->y.zero).dtype != dtype) return {};
  Absorb(*chain, *a_dq, head_id, rules);
  if (*b_dq != *a_dq) Absorb(*chain, *b_dq, head_id, rules);
  return {
      Fused(head, "com.microsoft", fused_op,
            {a->data, a->scale, a->zero, b->data, b->scale, b->zero, chain->y.scale, chain->y.zero},
            *chain, graph)};
}

// DQ(x) -> Add, Sub, Mul or Div with a float32 constant of one element ->
// Q, x and the result of one 8-bit dtype: a function of x's byte alone.
std::vector<FusionCandidate> ScalarCandidates(const graph::Graph& graph, NodeId head_id,
                                              const ChainRules& rules) {
  const graph::Node& head = graph.node(head_id);
  if (head.inputs.size() != 2 || !head.inputs[0] || !head.inputs[1]) return {};
  for (const size_t x_at : {size_t{0}, size_t{1}}) {
    const ValueId constant = *head.inputs[1 - x_at];
    if (!rules.Producer(head_id, x_at, "DequantizeLinear") || !FloatScalar(graph, constant)) {
      continue;
    }
    const std::optional<ByteChain> c = ByteInputChain(graph, head_id, x_at, rules);
    // A constant of higher rank than x would widen the result's shape.
    if (!c || RankOf(graph, constant) > RankOf(graph, c->x.data) ||
        graph.value(c->chain.y.zero).dtype != graph.value(c->x.data).dtype) {
      return {};
    }
    return {Fused(
        head, "pkg.nxrt", "QLinearScalar",
        {c->x.data, c->x.scale, c->x.zero, constant, c->chain.y.scale, c->chain.y.zero}, c->chain,
        graph,
        {StringAttribute("op", head.op_type), IntAttribute("constant_first", x_at == 1 ? 1 : 0)})};
  }
  return {};
}

// Whether two quantizations give every byte the same value: the same scale
// and zero point values, or constants of the same dtype and bytes.
bool SameQuantization(const graph::Graph& graph, const Quantization& a, const Quantization& b) {
  const auto same = [&](ValueId x, ValueId y) {
    if (x == y) return true;
    const graph::Value& u = graph.value(x);
    const graph::Value& v = graph.value(y);
    if (!u.is_constant() || !v.is_constant() || u.dtype != v.dtype) return false;
    const auto ub = graph.weights->Get(*u.initializer).bytes;
    const auto vb = graph.weights->Get(*v.initializer).bytes;
    return std::equal(ub.begin(), ub.end(), vb.begin(), vb.end());
  };
  return same(a.scale, b.scale) && same(a.zero, b.zero);
}

// DQ(x) -> a data movement op -> Q with the same scale and zero point: the
// Q gives back each byte of x where the op put it, so the op moves the
// bytes themselves, as ONNX Runtime's QDQ transformer drops such pairs.
std::vector<FusionCandidate> MovementCandidates(const graph::Graph& graph, NodeId head_id,
                                                const ChainRules& rules) {
  const graph::Node& head = graph.node(head_id);
  // Only a nearest Resize moves values; the others blend them.
  const graph::Attribute* mode = head.FindAttribute("mode");
  if (head.op_type == "Resize" && mode != nullptr && mode->s != "nearest") return {};
  const std::optional<ByteChain> c = ByteInputChain(graph, head_id, 0, rules);
  if (!c || !SameQuantization(graph, c->x, c->chain.y)) return {};
  std::vector<std::optional<ValueId>> inputs = head.inputs;
  inputs[0] = c->x.data;
  return {Fused(head, "", head.op_type.c_str(), std::move(inputs), c->chain, graph)};
}

// DQ(x1), ..., DQ(xn) -> Concat -> Q, one 8-bit dtype: ONNX Runtime's
// QLinearConcat, each operand requantised from its own scale into Y's.
std::vector<FusionCandidate> ConcatCandidates(const graph::Graph& graph, NodeId head_id,
                                              const ChainRules& rules) {
  const graph::Node& head = graph.node(head_id);
  std::optional<QdqChain> chain = OutputChain(graph, head_id, rules);
  if (!chain || head.inputs.empty()) return {};
  const DataType dtype = graph.value(chain->y.zero).dtype;
  std::vector<std::optional<ValueId>> inputs = {chain->y.scale, chain->y.zero};
  std::vector<NodeId> dequantizes;
  for (size_t i = 0; i < head.inputs.size(); ++i) {
    const std::optional<NodeId> dq = rules.Producer(head_id, i, "DequantizeLinear");
    const std::optional<Quantization> x =
        dq ? ByteDequantize(graph, *dq) : std::optional<Quantization>();
    if (!x || !PerTensor(graph, *x) || graph.value(x->data).dtype != dtype) return {};
    inputs.insert(inputs.end(), {x->data, x->scale, x->zero});
    if (std::find(dequantizes.begin(), dequantizes.end(), *dq) == dequantizes.end()) {
      dequantizes.push_back(*dq);
    }
  }
  for (NodeId dq : dequantizes) Absorb(*chain, dq, head_id, rules);
  return {Fused(head, "com.microsoft", "QLinearConcat", std::move(inputs), *chain, graph)};
}

// Add and Mul of two dequantized operands, else of one and a constant.
std::vector<FusionCandidate> AddCandidates(const graph::Graph& graph, NodeId head_id,
                                           const ChainRules& rules) {
  std::vector<FusionCandidate> both = ElementwiseCandidates(graph, head_id, rules, "QLinearAdd");
  return both.empty() ? ScalarCandidates(graph, head_id, rules) : both;
}

std::vector<FusionCandidate> MulCandidates(const graph::Graph& graph, NodeId head_id,
                                           const ChainRules& rules) {
  std::vector<FusionCandidate> both = ElementwiseCandidates(graph, head_id, rules, "QLinearMul");
  return both.empty() ? ScalarCandidates(graph, head_id, rules) : both;
}

// Each head op and its fusions, offered in this order.
struct Head {
  std::string_view op;
  std::vector<FusionCandidate> (*candidates)(const graph::Graph&, NodeId, const ChainRules&);
};
constexpr Head kHeads[] = {
    {"Conv", ConvCandidates},
    {"MatMul", MatMulCandidates},
    {"Gemm", GemmCandidates},
    {"GlobalAveragePool", GlobalAveragePoolCandidates},
    {"Add", AddCandidates},
    {"Sub", ScalarCandidates},
    {"Mul", MulCandidates},
    {"Div", ScalarCandidates},
    {"Sigmoid", SigmoidCandidates},
    {"Transpose", MovementCandidates},
    {"Reshape", MovementCandidates},
    {"Squeeze", MovementCandidates},
    {"Unsqueeze", MovementCandidates},
    {"Flatten", MovementCandidates},
    {"Resize", MovementCandidates},
    {"Concat", ConcatCandidates},
};

}  // namespace

bool QdqFusionMayTake(std::string_view op_type) {
  return std::any_of(std::begin(kHeads), std::end(kHeads),
                     [&](const Head& head) { return head.op == op_type; });
}

std::vector<std::string> FuseQdqChains(
    const graph::Graph& graph, std::vector<std::shared_ptr<const plugin_host::NodeView>>& views,
    std::span<const RankedProvider> providers, const graph::CapturePlan& capture_plan,
    Partition& partition) {
  std::vector<std::string> lines;
  for (const Head& head : kHeads) {
    for (std::string& line : FuseChains(graph, views, providers, capture_plan, partition, head.op,
                                        [&](NodeId id, const ChainRules&rules) {
                                          return head.candidates(graph, id, rules);
                                        })) {
      lines.push_back(std::move(line));
    }
  }
  return lines;
}

}  // namespace nxrt::partitioner
