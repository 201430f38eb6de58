// Symbols the runtime holds constant when it binds the KV cache at fixed
// physical capacity, so they never disqualify a node from capture.
//
// Capacity KV symbols: the sequence axes of the past inputs and present
// outputs of each attention node whose every past-KV input is read at
// capacity (attention_geometry.hpp). The kernel's grid spans the whole buffer
// and reads the valid length on the device, so a replay sees the same
// extents. A growing (concatenating) or paged form, or an op without past
// inputs, keeps its symbols.
//
// Freeze-safe mask symbols: every symbolic dim on every value of the additive
// mask cone of each attention-mask graph input that feeds a capacity-form
// attention. A single-token decode step binds such a mask at full capacity;
// the cumulative sum then saturates at the valid length and the padded tail
// becomes -inf, so the bias a replay builds equals the eager one. The whole
// cone is collected because inference may mint the bias axis afresh rather
// than derive it from the mask's symbol.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "nxrt/graph/ids.hpp"
#include "nxrt/graph/ir.hpp"

namespace nxrt::graph {

// Sorted, each once.
std::vector<SymbolId> CollectCapacityPinnedKvSymbols(const Graph& graph);

// Sorted, each once. `bound_mask_names` names graph inputs the caller binds as
// attention masks besides those named like one.
std::vector<SymbolId> CollectFreezeSafeMaskSymbols(const Graph& graph,
                                                   std::span<const std::string> bound_mask_names);

}  // namespace nxrt::graph
