// Symbolic shape inference: fills in every Value's dtype and shape, keeping
// unknown extents as symbols, and records the symbol lineage the capture
// classifier closes over (broadcast unifications, derivations, opaque symbols).
//
// Symbols present before inference are the declared roots; every symbol made
// here has an id at or above graph.inference_symbol_floor. A Derived symbol is
// always an expression over earlier symbols and constants, so the run-time
// binder (symbol_binding.hpp) can evaluate it; a Minted or Opaque symbol is
// bound from the first output that carries it.
#pragma once

#include <cstddef>

#include "nxrt/graph/ir.hpp"
#include "nxrt/support/status.hpp"

namespace nxrt::graph {

struct ShapeInferenceOptions {
  // Ask libonnx's schema inference for ops that have no rule of our own.
  bool use_onnx_schema_fallback = true;
  // Treat an output whose shape could not be inferred as an error instead of
  // leaving it rank-unknown.
  bool fail_on_unknown_shape = false;
  // Largest integer tensor whose element values are tracked for shape
  // computations (Shape -> Gather -> Concat -> Reshape).
  size_t max_tracked_elements = 1024;
};

// Infers dtypes and shapes of `graph` (and of its subgraphs where feasible).
// Fails only when the model is provably inconsistent (an impossible static
// broadcast, a Reshape whose static sizes cannot match), or when
// fail_on_unknown_shape is set and some output stayed unknown.
Status InferShapes(Graph& graph, const ShapeInferenceOptions& options = {});

}  // namespace nxrt::graph
