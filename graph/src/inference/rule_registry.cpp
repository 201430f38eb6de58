#include "inference/rule_registry.hpp"

namespace nxrt::graph::inference {
namespace {

std::string Key(std::string_view domain, std::string_view op) {
  std::string key(domain);
  key += "::";
  key += op;
  return key;
}

}  // namespace

void RuleTable::Add(std::string_view domain, std::string_view op, ShapeRule rule) {
  rules_[Key(domain, op)] = rule;
}

ShapeRule RuleTable::Find(const std::string& domain, const std::string& op) const {
  auto it = rules_.find(Key(domain, op));
  return it == rules_.end() ? nullptr : it->second;
}

const RuleTable& Rules() {
  static const RuleTable table = [] {
    RuleTable t;
    AddElementwiseRules(t);
    AddMatMulRules(t);
    AddConvPoolRules(t);
    AddReductionRules(t);
    AddReshapeRules(t);
    AddIndexingRules(t);
    AddConstantRules(t);
    AddNormalizationRules(t);
    AddAttentionRules(t);
    AddControlFlowRules(t);
    AddDataDependentRules(t);
    AddSignalRules(t);
    AddResizeRules(t);
    return t;
  }();
  return table;
}

}  // namespace nxrt::graph::inference
