// The table of explicit shape rules, keyed by domain and op type. Each rule
// family registers itself from its own file; ops without a rule go to the
// libonnx schema fallback.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>

#include "inference/node_context.hpp"

namespace nxrt::graph::inference {

using ShapeRule = Status (*)(NodeContext&);

class RuleTable {
 public:
  void Add(std::string_view domain, std::string_view op, ShapeRule rule);
  ShapeRule Find(const std::string& domain, const std::string& op) const;

 private:
  std::unordered_map<std::string, ShapeRule> rules_;
};

// The table with every family registered; built once.
const RuleTable& Rules();

void AddElementwiseRules(RuleTable& table);
void AddMatMulRules(RuleTable& table);
void AddConvPoolRules(RuleTable& table);
void AddReductionRules(RuleTable& table);
void AddReshapeRules(RuleTable& table);
void AddIndexingRules(RuleTable& table);
void AddConstantRules(RuleTable& table);
void AddNormalizationRules(RuleTable& table);
void AddAttentionRules(RuleTable& table);
void AddControlFlowRules(RuleTable& table);
void AddDataDependentRules(RuleTable& table);
void AddSignalRules(RuleTable& table);
void AddResizeRules(RuleTable& table);

}  // namespace nxrt::graph::inference
