// The constant (initializer) inputs of a node, as a kernel prepares them:
// dtype, concrete shape and bytes borrowed from the graph's weight store.
#pragma once

#include <span>
#include <vector>

#include "kernel_cache/kernel_key.hpp"
#include "nxrt/ep_abi.h"
#include "nxrt/graph/ir.hpp"
#include "nxrt/support/status.hpp"

namespace nxrt::kernel_cache {

// One entry per initializer input of `node`, in input order: the graph's
// node `node_id`, or the node the host fused in its place, whose inputs the
// kernel takes and `shapes` gives; the pointers
// borrow from `graph.weights` and `shapes`, which must outlive the result.
// Each entry says its bytes persist: whoever prepares a kernel with them keeps
// `graph.weights` alive for the kernel's lifetime (Kernel::RetainConstantBytes).
// An initializer whose bytes or shape cannot be found is an Internal error
// naming the value.
Result<std::vector<nxrt_constant_input>> ResolveKernelConstantInputs(
    const graph::Graph& graph, graph::NodeId node_id, const graph::Node& node,
    std::span<const InputShape> shapes);

}  // namespace nxrt::kernel_cache
