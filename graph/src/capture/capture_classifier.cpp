#include "nxrt/graph/capture_classifier.hpp"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <unordered_set>

#include "nxrt/graph/capture_explain.hpp"
#include "nxrt/graph/capture_pinning.hpp"
#include "nxrt/graph/decoder_lineage.hpp"
#include "nxrt/graph/decoder_signature.hpp"
#include "nxrt/support/log.hpp"

namespace nxrt::graph {
namespace {

std::vector<SymbolId> CollectPinned(const Graph& graph, const CaptureOptions& options) {
  std::vector<SymbolId> pinned;
  for (SymbolId symbol : options.extra_pinned) {
    if (symbol.valid()) pinned.push_back(symbol);
  }
  if (options.fixed_capacity_kv) {
    const auto kv = CollectCapacityPinnedKvSymbols(graph);
    const auto mask = CollectFreezeSafeMaskSymbols(graph, options.mask_input_names);
    pinned.insert(pinned.end(), kv.begin(), kv.end());
    pinned.insert(pinned.end(), mask.begin(), mask.end());
  }
  std::sort(pinned.begin(), pinned.end());
  pinned.erase(std::unique(pinned.begin(), pinned.end()), pinned.end());
  return pinned;
}

// The first axis of `value` that carries a disqualifying symbol.
std::optional<DisqualifiedEdge> CheckEdge(const Graph& graph, EdgeSide side, size_t slot,
                                          const std::optional<ValueId>& value,
                                          const std::vector<SymbolId>& disqualifying) {
  if (!value) return std::nullopt;
  const Value* v = graph.try_value(*value);
  if (v == nullptr || !v->shape) return std::nullopt;
  for (size_t axis = 0; axis < v->shape->size(); ++axis) {
    const Dim& dim = (*v->shape)[axis];
    if (dim.is_symbolic() &&
        std::binary_search(disqualifying.begin(), disqualifying.end(), dim.symbol())) {
      return DisqualifiedEdge{side, slot, *value, axis, dim.symbol()};
    }
  }
  return std::nullopt;
}

void LogIfAsked(const Graph& graph, const CapturePlan& plan) {
  if (std::getenv("NXRT_LOG_CAPTURE_SYMBOLS") == nullptr) return;
  auto logger = GetLogger();
  if (logger->level() == spdlog::level::off) return;
  const auto level = std::max(spdlog::level::info, logger->level());
  logger->log(level, "capture classifier: mode {}, {} disqualifying symbol(s): [{}], pinned: [{}]",
              CaptureModeName(plan.mode), plan.disqualifying.size(),
              JoinSymbolNames(graph, plan.disqualifying), JoinSymbolNames(graph, plan.pinned));
}

}  // namespace

bool CapturePlan::Disqualifies(SymbolId symbol) const {
  return std::binary_search(disqualifying.begin(), disqualifying.end(), symbol);
}

size_t CapturePlan::EligibleCount() const {
  return static_cast<size_t>(
      std::count_if(nodes.begin(), nodes.end(), [](const NodeCapture& n) { return n.eligible(); }));
}

NodeCapture CheckNodeCapture(const Graph& graph, const Node& node,
                             const std::vector<SymbolId>& disqualifying) {
  NodeCapture verdict;
  const bool has_output = std::any_of(node.outputs.begin(), node.outputs.end(),
                                      [](const auto& output) { return output.has_value(); });
  if (!has_output) {
    verdict.verdict = CaptureVerdict::kNoOutputs;
    return verdict;
  }
  for (size_t slot = 0; slot < node.inputs.size(); ++slot) {
    if (auto edge = CheckEdge(graph, EdgeSide::kInput, slot, node.inputs[slot], disqualifying)) {
      verdict.edges.push_back(*edge);
    }
  }
  for (size_t slot = 0; slot < node.outputs.size(); ++slot) {
    if (auto edge = CheckEdge(graph, EdgeSide::kOutput, slot, node.outputs[slot], disqualifying)) {
      verdict.edges.push_back(*edge);
    }
  }
  if (!verdict.edges.empty()) verdict.verdict = CaptureVerdict::kDisqualifyingSymbol;
  return verdict;
}

CapturePlan ClassifyCapture(const Graph& graph, const CaptureOptions& options) {
  CapturePlan plan;
  plan.mode = ResolveCaptureMode(options.mode);
  plan.pinned = CollectPinned(graph, options);
  std::optional<DecoderSignature> described;
  if (options.decoder == nullptr) described = DescribeDecoder(graph);
  const DecoderSignature& decoder = options.decoder != nullptr ? *options.decoder : *described;
  plan.seed = CollectCaptureSeed(graph, decoder, plan.mode, plan.pinned);
  const SymbolLineage lineage = WithDecoderContract(graph, decoder);
  plan.closure = LineageClosure::Compute(lineage, plan.seed.symbols, graph.symbols.size(),
                                         ClosureDetail::kExplain);
  const std::unordered_set<SymbolId> pinned(plan.pinned.begin(), plan.pinned.end());
  for (SymbolId symbol : plan.closure.reached()) {
    if (!pinned.contains(symbol)) plan.disqualifying.push_back(symbol);
  }
  std::sort(plan.disqualifying.begin(), plan.disqualifying.end());
  plan.nodes.reserve(graph.nodes.size());
  for (const Node& node : graph.nodes) {
    plan.nodes.push_back(CheckNodeCapture(graph, node, plan.disqualifying));
  }
  LogIfAsked(graph, plan);
  return plan;
}

}  // namespace nxrt::graph
