// Constant folding, as ONNX Runtime does at load: the nodes whose inputs
// are all constants (initializers no run can replace, or outputs of such
// nodes) are run once, when the session is made, on the session's own
// providers, and their results become initializers. The main graph folds
// first, then each If, Loop and Scan body, which reads the enclosing
// graph's constants, folded ones too, as its own.
// Exporters leave such chains behind: the dynamo exporter slices and
// concatenates an LSTM's gate weights, the TorchScript one transposes shared
// weights and builds masks from constant shapes.
//
// Only deterministic tensor ops of the default domain fold (an allow-list,
// and a DequantizeLinear no QDQ fusion may take),
// never a graph output, and only while their results stay within a bound
// (kFoldedBytesLimit), so a ConstantOfShape of a vast shape stays a node and
// fails, if ever, where any run would. A fold that cannot be made (a node
// no provider claims, a run that fails) leaves the graph as it was: folding
// is an optimisation, never a new way to fail.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "nxrt/environment.hpp"
#include "nxrt/graph/ir.hpp"
#include "nxrt/session_options.hpp"

namespace nxrt::session {

// The most bytes the folded results of one graph may hold.
inline constexpr size_t kFoldedBytesLimit = size_t{64} << 20;

// Folds the constant nodes of `graph` and of its bodies (in place), running
// them on `environment` with `options`' providers; returns one line naming
// how many folded, or none.
std::vector<std::string> FoldConstants(graph::Graph& graph,
                                       const std::shared_ptr<Environment>& environment,
                                       const SessionOptions& options);

}  // namespace nxrt::session
