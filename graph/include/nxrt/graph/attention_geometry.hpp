// Attention geometry: which attention inputs a kernel reads at the physical
// capacity of a fixed-size KV buffer, and which attention-mask graph inputs
// feed an additive causal-mask builder that a decode step freezes to that
// capacity. Under these forms a captured replay sees the same extents at
// every step, so their sequence symbols may be pinned when the runtime binds
// the KV cache at fixed capacity.
//
// Capacity forms, as the CPU execution provider implements them:
//  - com.microsoft GroupQueryAttention: past_key/past_value (inputs 3,4) and
//    present_key/present_value (outputs 1,2) share one buffer of the maximum
//    length and seqlens_k (input 5) gives the valid length. A past input is
//    read at capacity when seqlens_k is present and its sequence axis equals
//    its present output's (same symbol or same number), i.e. in place.
//  - Attention (default domain): the valid length comes from attn_mask
//    (input 3). A past input (4,5) is read at capacity when attn_mask is
//    present and the past sequence axis equals the mask's last axis.
//  - pkg.nxrt IndexShare: like GroupQueryAttention, with its attention bias
//    (input 5) in place of seqlens_k.
//  - CompressedSparseAttention has no past inputs, so it never qualifies.
//
// An attention-mask graph input is one named like attention_mask (its name
// contains "attention_mask" or "attn_mask", any case) or bound as the mask by
// the caller. It feeds an additive causal builder when its forward cone
// through the builder ops below reaches, past at least one builder, the mask
// input of a capacity-form attention (Attention input 3, IndexShare input 5).
// The builder ops are the default-domain ops that turn a 0/1 padding mask into
// an additive bias without making an extent from data: Cast, CumSum, Slice,
// Where, Add, Sub, Mul, Neg, Min, Max, Less, LessOrEqual, Greater,
// GreaterOrEqual, Equal, Not, And, Or, Unsqueeze, Expand, Reshape.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "nxrt/graph/ids.hpp"
#include "nxrt/graph/ir.hpp"
#include "nxrt/graph/value_consumers.hpp"

namespace nxrt::graph {

// Whether `node` reads its past-KV input at `input_slot` at physical capacity.
// False for any slot that is not one of the node's past-KV inputs.
bool ReadsInputAtCapacity(const Graph& graph, const Node& node, size_t input_slot);

// Whether `node` is a recognised attention op with past-KV inputs, every one
// of them read at capacity.
bool IsCapacityFormAttention(const Graph& graph, const Node& node);

// Whether `input_slot` of `node` is the mask (or bias) input of a
// capacity-form attention.
bool IsCapacityFormMaskInput(const Graph& graph, const Node& node, size_t input_slot);

bool IsAdditiveMaskBuilderOp(const Node& node);

bool IsAttentionMaskName(std::string_view value_name);

// Whether `input`, one of the graph's inputs, is an attention mask, by name
// or by binding.
bool IsAttentionMaskInput(const Graph& graph, ValueId input,
                          std::span<const std::string> bound_mask_names);

// The values reached forward from `mask` through builder ops (the mask
// first), stopping at, not entering, capacity-form attention mask inputs.
struct AdditiveMaskCone {
  std::vector<ValueId> values;
  bool reaches_capacity_mask_input = false;  // through at least one builder
};
AdditiveMaskCone WalkAdditiveMaskCone(const Graph& graph, const ValueConsumers& consumers,
                                      ValueId mask);

// Whether `input`, one of the graph's inputs, is an attention mask whose cone
// feeds a capacity-form attention through an additive causal builder.
bool FeedsAdditiveCausalBuilder(const Graph& graph, const ValueConsumers& consumers, ValueId input,
                                std::span<const std::string> bound_mask_names);

}  // namespace nxrt::graph
