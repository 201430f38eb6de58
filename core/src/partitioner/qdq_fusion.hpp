// Fusion of the QDQ form ONNX Runtime's quantizers write, an op between
// DequantizeLinear of its 8-bit inputs and QuantizeLinear of its result,
// into the op that computes the same on the 8-bit tensors:
//   DQ(x), DQ(w)[, DQ(b)] -> Conv -> Q    => QLinearConv
//   DQ(a), DQ(b) -> MatMul -> Q           => QLinearMatMul
//   DQ(a), DQ(b)[, DQ(c)] -> Gemm -> Q    => com.microsoft QGemm
//   DQ(x) -> GlobalAveragePool -> Q       => com.microsoft
//                                            QLinearGlobalAveragePool
//   DQ(a), DQ(b) -> Add or Mul -> Q       => com.microsoft QLinearAdd or
//                                            QLinearMul
//   DQ(x) -> Add, Sub, Mul or Div with a  => pkg.nxrt QLinearScalar, one
//     float constant of one element -> Q      table lookup per element
//   DQ(x) -> Sigmoid -> Q                 => com.microsoft QLinearSigmoid
//   DQ(xi)... -> Concat -> Q              => com.microsoft QLinearConcat
//   DQ(x) -> Transpose, Reshape, Squeeze, => the op on x's bytes, when the
//     Unsqueeze, Flatten or nearest          Q's scale and zero point are
//     Resize -> Q                            the DQ's (Q(DQ(x)) is x)
// the fused node reading the quantized tensors, their scales and zero
// points, with the head's attributes and the Q's output.
//
// X, A, the elementwise operands and the result are quantized per tensor,
// the elementwise ones all of one dtype; W per tensor or per output
// map (axis 0), B per tensor or, as a constant 2-D matrix, per column
// (axis 1, or 0 for a Gemm's transposed B). Every zero point is given and every scale a float32. A
// bias joins as QLinearConv's or QGemm's int32 bias only when its DQ has zero points of 0 and a
// constant scale equal to x_scale * w_scale (float32), as the quantizers write it, so the fused
// node computes exactly what the QDQ graph specifies, up to the rounding the integer ops allow. A
// DQ read by other nodes too stays and runs for them. The chain rules and the offer are
// fusion_chain.hpp's; a decline leaves the nodes as they are.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "nxrt/graph/capture_classifier.hpp"
#include "nxrt/graph/ir.hpp"
#include "partitioner/partition.hpp"
#include "plugin_host/node_view.hpp"

namespace nxrt::partitioner {

// Whether a DequantizeLinear that a default-domain `op_type` node reads may
// be taken into a fusion below (constant folding leaves those for it).
bool QdqFusionMayTake(std::string_view op_type);

// Offers each Conv, MatMul, Gemm, GlobalAveragePool, Add, Sub, Mul, Div,
// Sigmoid, Concat and data movement op in QDQ form to the provider that placed
// it, replacing the view of each one claimed in `views` (by node id) and marking the
// DequantizeLinear and QuantizeLinear nodes it absorbs in `partition`. Returns one line per fusion.
std::vector<std::string> FuseQdqChains(
    const graph::Graph& graph, std::vector<std::shared_ptr<const plugin_host::NodeView>>& views,
    std::span<const RankedProvider> providers, const graph::CapturePlan& capture_plan,
    Partition& partition);

}  // namespace nxrt::partitioner
