#include "nxrt/graph/ir.hpp"

namespace nxrt::graph {

const Attribute* Node::FindAttribute(const std::string& attr_name) const {
  for (const Attribute& a : attributes) {
    if (a.name == attr_name) return &a;
  }
  return nullptr;
}

Graph::Graph() : weights(std::make_shared<WeightStore>()) {}
Graph::~Graph() = default;
Graph::Graph(Graph&&) noexcept = default;
Graph& Graph::operator=(Graph&&) noexcept = default;

std::optional<ValueId> Graph::FindValue(const std::string& value_name) const {
  auto it = value_by_name_.find(value_name);
  if (it == value_by_name_.end()) return std::nullopt;
  return it->second;
}

ValueId Graph::AddValue(Value v) {
  ValueId id{static_cast<uint32_t>(values.size())};
  if (!v.name.empty()) value_by_name_.emplace(v.name, id);
  values.push_back(std::move(v));
  return id;
}

NodeId Graph::AddNode(Node n) {
  NodeId id{static_cast<uint32_t>(nodes.size())};
  for (const auto& out : n.outputs) {
    if (out) values.at(out->index).producer = id;
  }
  nodes.push_back(std::move(n));
  return id;
}

void Graph::RemoveNodes(const std::vector<bool>& removed) {
  std::vector<Node> kept;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (i >= removed.size() || !removed[i]) kept.push_back(std::move(nodes[i]));
  }
  nodes.clear();
  for (Value& value : values) value.producer = NodeId{};
  for (Node& node : kept) AddNode(std::move(node));
}

SymbolId Graph::AddSymbol(Symbol s) {
  SymbolId id{static_cast<uint32_t>(symbols.size())};
  if (s.origin == SymbolOrigin::kDeclared && !s.name.empty()) symbol_by_name_.emplace(s.name, id);
  symbols.push_back(std::move(s));
  return id;
}

SymbolId Graph::DeclareSymbol(const std::string& dim_param) {
  auto it = symbol_by_name_.find(dim_param);
  if (it != symbol_by_name_.end()) return it->second;
  return AddSymbol(Symbol{dim_param, SymbolOrigin::kDeclared, {}});
}

std::optional<int64_t> Graph::OpsetFor(const std::string& domain) const {
  auto it = opset_imports.find(domain);
  if (it == opset_imports.end()) return std::nullopt;
  return it->second;
}

std::string Graph::Describe(NodeId id) const {
  const Node& n = node(id);
  std::string out = model_path.empty() ? std::string("<model bytes>") : model_path;
  out += ": node '" + (n.name.empty() ? "#" + std::to_string(id.index) : n.name) + "' (";
  if (!n.domain.empty()) out += n.domain + "::";
  out += n.op_type + ")";
  return out;
}

}  // namespace nxrt::graph
