// Ordering a graph's nodes so every node comes after the nodes it reads
// from. ONNX requires files to be sorted already, but many exporters and
// hand-edited models are not; the order is kept wherever it is valid.
#pragma once

#include <cstddef>
#include <variant>
#include <vector>

namespace nxrt::graph {

// A node that lies on a dependency cycle.
struct CycleMember {
  size_t node = 0;
};

// `depends_on[n]` lists the nodes whose outputs node n reads. Returns the
// nodes in an order where each follows all it depends on, the smallest index
// first among the ready ones; or a node on a cycle when there is none.
std::variant<std::vector<size_t>, CycleMember> TopologicalOrder(
    const std::vector<std::vector<size_t>>& depends_on);

}  // namespace nxrt::graph
