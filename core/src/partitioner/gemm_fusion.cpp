#include "partitioner/gemm_fusion.hpp"

#include <optional>

#include "partitioner/fusion_chain.hpp"

namespace nxrt::partitioner {

std::vector<std::string> FuseGemmChains(
    const graph::Graph& graph, std::vector<std::shared_ptr<const plugin_host::NodeView>>& views,
    std::span<const RankedProvider> providers, const graph::CapturePlan& capture_plan,
    Partition& partition) {
  return FuseChains(
      graph, views, providers, capture_plan, partition, "Gemm",
      [&](graph::NodeId head, const ChainRules& rules) -> std::vector<FusionCandidate> {
        const graph::Node& gemm = graph.node(head);
        const std::optional<graph::NodeId> relu = rules.Next(head, "Relu");
        if (!relu || NodeOpset(graph, gemm) < 7) return {};
        auto fused = std::make_shared<graph::Node>(gemm);
        fused->op_type = "FusedGemm";
        fused->domain = "com.microsoft";
        fused->outputs = {graph.node(*relu).outputs[0]};
        fused->attributes.push_back(StringAttribute("activation", "Relu"));
        return {{std::move(fused), {*relu}}};
      });
}

}  // namespace nxrt::partitioner
