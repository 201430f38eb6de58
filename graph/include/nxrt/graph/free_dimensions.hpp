// Free-dimension overrides, as ONNX Runtime's AddFreeDimensionOverrideByName:
// a caller that knows a symbolic extent of the model's inputs (a batch of 1,
// a sequence of 128) fixes it before shape inference, so every shape that
// follows from it is static and plans, kernels and captures are made for
// that extent alone.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "nxrt/graph/ir.hpp"
#include "nxrt/support/status.hpp"

namespace nxrt::graph {

// Replaces every dim of `graph`'s values (inputs, outputs and declared
// intermediates, not subgraphs) whose symbol is named `name` with the static
// `extent`, for each (name, extent). Call it before shape inference. Fails,
// changing nothing, when an extent is negative, a name is given twice, or
// no graph input has a dim of that name; the message names the model, the
// override and the symbols the inputs have.
Status OverrideFreeDimensions(Graph& graph,
                              const std::vector<std::pair<std::string, int64_t>>& overrides);

}  // namespace nxrt::graph
