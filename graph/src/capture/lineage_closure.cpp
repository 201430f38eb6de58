#include "nxrt/graph/lineage_closure.hpp"

#include <algorithm>
#include <utility>

#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/compressed_sparse_row_graph.hpp>

namespace nxrt::graph {
namespace {

using LineageGraph =
    boost::compressed_sparse_row_graph<boost::directedS, boost::no_property, LineageLink,
                                       boost::no_property, uint32_t, size_t>;
using Vertex = boost::graph_traits<LineageGraph>::vertex_descriptor;
using Edge = boost::graph_traits<LineageGraph>::edge_descriptor;

constexpr uint32_t kNoSymbol = UINT32_MAX;

// The search's FIFO is the closure's reached list with a read cursor: the
// search enqueues each symbol right as it reaches it, so the two orders are
// one and no second per-symbol array is written.
class ReachedQueue {
 public:
  explicit ReachedQueue(std::vector<SymbolId>* reached) : reached_(reached) {}
  void push(Vertex v) { reached_->push_back(SymbolId{v}); }
  void pop() { ++head_; }
  Vertex top() const { return (*reached_)[head_].index; }
  bool empty() const { return head_ == reached_->size(); }

 private:
  std::vector<SymbolId>* reached_;
  size_t head_ = 0;
};

// The search's colour map, one byte per symbol in the closure's reached
// table, so that "not white" is the membership test and the search touches
// no second per-symbol array.
struct ByteColorMap {
  using key_type = Vertex;
  using value_type = boost::default_color_type;
  using reference = value_type;
  using category = boost::read_write_property_map_tag;
  uint8_t* colors;
};
static_assert(boost::white_color == 0, "an unreached symbol must read as 0");

boost::default_color_type get(const ByteColorMap& map, Vertex v) {
  return static_cast<boost::default_color_type>(map.colors[v]);
}
void put(const ByteColorMap& map, Vertex v, boost::default_color_type color) {
  map.colors[v] = static_cast<uint8_t>(color);
}

// Records the search tree for explanations; copied by value into the search,
// so it holds pointers to the closure's tables (null for membership only).
class TreeRecorder : public boost::default_bfs_visitor {
 public:
  TreeRecorder(uint32_t* predecessor, uint32_t* root, LineageLink* via)
      : predecessor_(predecessor), root_(root), via_(via) {}

  void tree_edge(Edge e, const LineageGraph& g) const {
    if (predecessor_ == nullptr) return;
    const Vertex from = boost::source(e, g);
    const Vertex to = boost::target(e, g);
    predecessor_[to] = from;
    root_[to] = root_[from];
    via_[to] = g[e];
  }

 private:
  uint32_t* predecessor_;
  uint32_t* root_;
  LineageLink* via_;
};

size_t VertexCount(const SymbolLineage& lineage, std::span<const SymbolId> seeds,
                   size_t symbol_count) {
  size_t count = symbol_count;
  auto widen = [&count](SymbolId s) {
    if (s.valid()) count = std::max(count, static_cast<size_t>(s.index) + 1);
  };
  for (const auto& [a, b] : lineage.unifications) {
    widen(a);
    widen(b);
  }
  for (const auto& [derived, source] : lineage.derivations) {
    widen(derived);
    widen(source);
  }
  for (SymbolId s : seeds) widen(s);
  return count;
}

}  // namespace

LineageClosure LineageClosure::Compute(const SymbolLineage& lineage,
                                       std::span<const SymbolId> seeds, size_t symbol_count,
                                       ClosureDetail detail) {
  LineageClosure closure;
  const size_t vertex_count = VertexCount(lineage, seeds, symbol_count);
  closure.colors_.assign(vertex_count, 0);
  closure.reached_.reserve(vertex_count);
  const bool explain = detail == ClosureDetail::kExplain;
  if (explain) {
    closure.predecessor_.assign(vertex_count, kNoSymbol);
    closure.root_.assign(vertex_count, kNoSymbol);
    closure.via_.assign(vertex_count, LineageLink::kUnification);
  }

  // Seeds are marked as the search will mark them, which also drops repeats.
  std::vector<Vertex> sources;
  sources.reserve(seeds.size());
  for (SymbolId s : seeds) {
    if (!s.valid() || closure.colors_[s.index] != boost::white_color) continue;
    closure.colors_[s.index] = boost::gray_color;
    sources.push_back(s.index);
    if (explain) closure.root_[s.index] = s.index;
  }
  if (sources.empty()) return closure;

  std::vector<std::pair<Vertex, Vertex>> edges;
  std::vector<LineageLink> links;
  edges.reserve(2 * lineage.unifications.size() + lineage.derivations.size());
  links.reserve(edges.capacity());
  for (const auto& [a, b] : lineage.unifications) {
    if (!a.valid() || !b.valid() || a == b) continue;
    edges.emplace_back(a.index, b.index);
    edges.emplace_back(b.index, a.index);
    links.insert(links.end(), 2, LineageLink::kUnification);
  }
  for (const auto& [derived, source] : lineage.derivations) {
    if (!derived.valid() || !source.valid() || derived == source) continue;
    edges.emplace_back(source.index, derived.index);
    links.push_back(LineageLink::kDerivation);
  }
  closure.edge_count_ = edges.size();
  if (edges.empty()) {
    for (Vertex v : sources) closure.reached_.push_back(SymbolId{v});
    return closure;
  }

  const LineageGraph graph(boost::edges_are_unsorted_multi_pass, edges.begin(), edges.end(),
                           links.begin(), vertex_count);
  edges = {};
  links = {};

  ReachedQueue queue(&closure.reached_);
  TreeRecorder visitor(explain ? closure.predecessor_.data() : nullptr,
                       explain ? closure.root_.data() : nullptr,
                       explain ? closure.via_.data() : nullptr);
  boost::breadth_first_visit(graph, sources.begin(), sources.end(), queue, visitor,
                             ByteColorMap{closure.colors_.data()});
  return closure;
}

SymbolId LineageClosure::RootOf(SymbolId symbol) const {
  if (!Contains(symbol) || root_.empty()) return SymbolId{};
  return SymbolId{root_[symbol.index]};
}

std::vector<LineageClosure::Step> LineageClosure::PathTo(SymbolId symbol) const {
  std::vector<Step> path;
  if (!RootOf(symbol).valid()) return path;
  for (uint32_t at = symbol.index; at != kNoSymbol; at = predecessor_[at]) {
    path.push_back(Step{SymbolId{at}, via_[at]});
  }
  std::reverse(path.begin(), path.end());
  return path;
}

}  // namespace nxrt::graph
