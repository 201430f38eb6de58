// The bytes of weights a decode step reads whole: every constant a node of
// the graph takes, once even when several nodes share it, except the tables
// Gather and its kin index into, of which a step reads a few rows (the
// embedding table; tied to the head, it counts through the head's product).
// The step streams these from memory each token, so they bound its speed:
// a 4-bit decoder streams about an eighth of its float bytes.
#pragma once

#include <cstdint>

#include "nxrt/graph/ir.hpp"

namespace nxrt::cli {

uint64_t StreamedWeightBytes(const graph::Graph& graph);

}  // namespace nxrt::cli
