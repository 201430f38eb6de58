#include "nxrt/graph/capture_explain.hpp"

namespace nxrt::graph {
namespace {

std::string NodeLabel(const Graph& graph, NodeId id) {
  if (id.index >= graph.nodes.size()) return "node #" + std::to_string(id.index);
  const Node& node = graph.node(id);
  std::string label = "node '" + (node.name.empty() ? "#" + std::to_string(id.index) : node.name);
  label += "' (";
  if (!node.domain.empty()) label += node.domain + "::";
  return label + node.op_type + ")";
}

std::string ValueName(const Graph& graph, ValueId id) {
  const Value* value = graph.try_value(id);
  if (value == nullptr || value->name.empty()) return "#" + std::to_string(id.index);
  return value->name;
}

std::string_view SeedKindName(SeedKind kind) {
  switch (kind) {
    case SeedKind::kKvSlotInput:
      return "kv-slot-input";
    case SeedKind::kKvSlotOutput:
      return "kv-slot-output";
    case SeedKind::kKvSlotLastAxis:
      return "kv-slot-last-axis";
    case SeedKind::kDeclaredPastInput:
      return "declared-past-input";
    case SeedKind::kDeclaredPresentOutput:
      return "declared-present-output";
    case SeedKind::kTracedPastInput:
      return "traced-past-input";
    case SeedKind::kTracedPresentOutput:
      return "traced-present-output";
    case SeedKind::kDecoderAttentionMask:
      return "decoder-attention-mask";
    case SeedKind::kOpaque:
      return "opaque";
    case SeedKind::kMintedWithoutProvenance:
      return "minted-without-provenance";
  }
  return "opaque";
}

std::string DescribeSeed(const Graph& graph, const SeedOrigin& origin) {
  const std::string slot = std::to_string(origin.slot) + " '" + ValueName(graph, origin.value) +
                           "' of " + NodeLabel(graph, origin.node);
  switch (origin.kind) {
    case SeedKind::kKvSlotInput:
      return "KV cache sequence axis of input " + slot;
    case SeedKind::kKvSlotOutput:
      return "KV cache sequence axis of output " + slot;
    case SeedKind::kKvSlotLastAxis:
      return "growing last axis of output " + slot;
    case SeedKind::kDeclaredPastInput:
      return "sequence axis of KV graph input '" + ValueName(graph, origin.value) + "'";
    case SeedKind::kDeclaredPresentOutput:
      return "sequence axis of KV graph output '" + ValueName(graph, origin.value) + "'";
    case SeedKind::kTracedPastInput:
      return "growing axis of KV graph input '" + ValueName(graph, origin.value) +
             "', which a graph output extends";
    case SeedKind::kTracedPresentOutput:
      return "growing axis of KV graph output '" + ValueName(graph, origin.value) +
             "', which extends a graph input";
    case SeedKind::kDecoderAttentionMask:
      return "width of the decoder's attention mask '" + ValueName(graph, origin.value) +
             "', which spans the KV cache";
    case SeedKind::kOpaque:
      return "opaque: inference could not know its extent";
    case SeedKind::kMintedWithoutProvenance:
      return "minted by inference with no recorded source";
  }
  return "opaque: inference could not know its extent";
}

std::vector<LineagePathStep> PathSteps(const Graph& graph, const LineageClosure& closure,
                                       SymbolId symbol) {
  std::vector<LineagePathStep> steps;
  const auto path = closure.PathTo(symbol);
  for (size_t i = 0; i < path.size(); ++i) {
    std::string link;
    if (i > 0) link = path[i].via == LineageLink::kDerivation ? "derivation" : "unification";
    steps.push_back({SymbolName(graph, path[i].symbol), std::move(link)});
  }
  return steps;
}

std::string PathText(const std::vector<LineagePathStep>& steps) {
  std::string text;
  for (const LineagePathStep& step : steps) {
    if (!step.link.empty()) text += step.link == "derivation" ? " -> " : " = ";
    text += step.symbol;
  }
  return text;
}

DisqualifiedEdgeReport ExplainEdge(const Graph& graph, const CapturePlan& plan,
                                   const DisqualifiedEdge& edge) {
  DisqualifiedEdgeReport report;
  report.side = edge.side == EdgeSide::kInput ? "input" : "output";
  report.slot = edge.slot;
  report.value = ValueName(graph, edge.value);
  report.axis = edge.axis;
  report.symbol = SymbolName(graph, edge.symbol);
  report.path = PathSteps(graph, plan.closure, edge.symbol);
  report.path_text = PathText(report.path);
  const SymbolId root = plan.closure.RootOf(edge.symbol);
  if (auto it = plan.seed.origins.find(root); it != plan.seed.origins.end()) {
    report.root_kind = SeedKindName(it->second.kind);
    report.root = DescribeSeed(graph, it->second);
  }
  return report;
}

}  // namespace

std::string SymbolName(const Graph& graph, SymbolId symbol) {
  if (symbol.index < graph.symbols.size() && !graph.symbol(symbol).name.empty()) {
    return graph.symbol(symbol).name;
  }
  return "#" + std::to_string(symbol.index);
}

std::string JoinSymbolNames(const Graph& graph, std::span<const SymbolId> symbols) {
  std::string text;
  for (SymbolId symbol : symbols) {
    if (!text.empty()) text += ", ";
    text += SymbolName(graph, symbol);
  }
  return text;
}

std::string FormatLineagePath(const Graph& graph, const LineageClosure& closure, SymbolId symbol) {
  return PathText(PathSteps(graph, closure, symbol));
}

CaptureReport ExplainCapture(const Graph& graph, const CapturePlan& plan) {
  CaptureReport report;
  report.mode = std::string(CaptureModeName(plan.mode));
  report.node_count = plan.nodes.size();
  report.eligible_count = plan.EligibleCount();
  for (SymbolId symbol : plan.disqualifying)
    report.disqualifying.push_back(SymbolName(graph, symbol));
  for (SymbolId symbol : plan.pinned) report.pinned.push_back(SymbolName(graph, symbol));
  for (uint32_t n = 0; n < plan.nodes.size() && n < graph.nodes.size(); ++n) {
    const NodeCapture& capture = plan.nodes[n];
    if (capture.eligible()) continue;
    const Node& node = graph.nodes[n];
    NodeCaptureReport entry;
    entry.node_index = n;
    entry.node = NodeLabel(graph, NodeId{n});
    entry.op_type = node.op_type;
    entry.domain = node.domain;
    entry.verdict =
        capture.verdict == CaptureVerdict::kNoOutputs ? "no-outputs" : "disqualifying-symbol";
    for (const DisqualifiedEdge& edge : capture.edges) {
      entry.edges.push_back(ExplainEdge(graph, plan, edge));
    }
    report.ineligible.push_back(std::move(entry));
  }
  return report;
}

std::vector<std::string> FormatCaptureReport(const CaptureReport& report) {
  auto join = [](const std::vector<std::string>& names) {
    std::string text;
    for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
    return text;
  };
  std::vector<std::string> lines;
  lines.push_back("capture classifier: mode " + report.mode + ", " +
                  std::to_string(report.eligible_count) + " of " +
                  std::to_string(report.node_count) + " nodes eligible, disqualifying [" +
                  join(report.disqualifying) + "], pinned [" + join(report.pinned) + "]");
  for (const NodeCaptureReport& node : report.ineligible) {
    std::string line = node.node + ": eager, ";
    if (node.verdict == "no-outputs" || node.edges.empty()) {
      lines.push_back(line + "it has no outputs");
      continue;
    }
    const DisqualifiedEdgeReport& edge = node.edges.front();
    line += edge.side + " " + std::to_string(edge.slot) + " '" + edge.value + "' axis " +
            std::to_string(edge.axis) + " carries '" + edge.symbol + "'";
    if (!edge.path_text.empty()) line += "; lineage " + edge.path_text;
    if (!edge.root.empty()) line += "; root '" + edge.path.front().symbol + "': " + edge.root;
    if (node.edges.size() > 1) {
      line += " (and " + std::to_string(node.edges.size() - 1) + " more edge(s))";
    }
    lines.push_back(std::move(line));
  }
  return lines;
}

}  // namespace nxrt::graph
