// Small stable integer ids for the IR's nodes, values and symbols. An id is an
// index into its graph's table and never changes once assigned, except that
// graph rewrites, before anything else reads the graph, may remove nodes.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>

namespace nxrt::graph {

template <typename Tag>
struct Id {
  uint32_t index = UINT32_MAX;

  constexpr bool valid() const { return index != UINT32_MAX; }
  friend constexpr auto operator<=>(Id, Id) = default;
};

struct NodeTag;
struct ValueTag;
struct SymbolTag;
using NodeId = Id<NodeTag>;
using ValueId = Id<ValueTag>;
using SymbolId = Id<SymbolTag>;

}  // namespace nxrt::graph

template <typename Tag>
struct std::hash<nxrt::graph::Id<Tag>> {
  size_t operator()(nxrt::graph::Id<Tag> id) const noexcept {
    return std::hash<uint32_t>{}(id.index);
  }
};
