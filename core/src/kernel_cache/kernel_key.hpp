// What a cached kernel was made for: one node of one graph at concrete input
// shapes.
//
// Attributes are fixed per node, so node + shapes identify a kernel exactly;
// a kernel is never reused for a shape it was not made for. An absent
// optional input has empty dims and is marked absent, so it never collides
// with a present scalar. Matching compares against the executor's reused
// shape scratch without allocating.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "nxrt/graph/ids.hpp"
#include "nxrt/graph/ir.hpp"

namespace nxrt::kernel_cache {

// The concrete shape of one node input as the executor resolved it.
struct InputShape {
  std::vector<int64_t> dims;
  bool absent = false;  // an optional input the node leaves out

  friend bool operator==(const InputShape&, const InputShape&) = default;
};

// A node within its graph: a cache may serve a model's subgraphs too, whose
// node ids restart at zero.
struct NodeRef {
  const graph::Graph* graph = nullptr;
  graph::NodeId node;

  friend bool operator==(const NodeRef&, const NodeRef&) = default;
};

struct NodeRefHash {
  size_t operator()(const NodeRef& ref) const noexcept;
};

struct KernelKey {
  NodeRef node;
  std::vector<InputShape> inputs;

  // Whether `shapes` are exactly the shapes of this key; never allocates.
  bool MatchesShapes(std::span<const InputShape> shapes) const;
  // Whether `shapes` have the key's ranks and absent inputs, whatever their
  // extents: what a kernel that serves other shapes is keyed by.
  bool MatchesRanks(std::span<const InputShape> shapes) const;
};

// "[1,4],[],(absent)" for error messages.
std::string FormatShapes(std::span<const InputShape> shapes);

}  // namespace nxrt::kernel_cache
