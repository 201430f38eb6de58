// Who reads each value of a graph: (node, input slot) pairs, indexed once so
// a forward walk over the graph costs time linear in its edges; and which
// values its subgraphs read from outside.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <unordered_set>
#include <vector>

#include "nxrt/graph/ids.hpp"
#include "nxrt/graph/ir.hpp"

namespace nxrt::graph {

struct ValueConsumer {
  NodeId node;
  size_t input_slot = 0;
};

// Names of values of `graph` (or of graphs enclosing it) that its
// subgraphs read from an enclosing scope, at any depth of nesting.
std::unordered_set<std::string> OuterScopeReads(const Graph& graph);

class ValueConsumers {
 public:
  explicit ValueConsumers(const Graph& graph);

  // The readers of `value` in node order; empty for an unknown value.
  std::span<const ValueConsumer> Of(ValueId value) const;

 private:
  std::vector<size_t> offsets_;  // by value index; one past the last value
  std::vector<ValueConsumer> consumers_;
};

}  // namespace nxrt::graph
