#include "nxrt/graph/free_dimensions.hpp"

#include <map>
#include <set>

namespace nxrt::graph {
namespace {

// The names of the symbols the graph inputs' dims have, sorted.
std::set<std::string> InputSymbolNames(const Graph& graph) {
  std::set<std::string> names;
  for (ValueId id : graph.inputs) {
    const Value& input = graph.value(id);
    if (!input.shape) continue;
    for (const Dim& dim : *input.shape) {
      if (dim.is_symbolic()) names.insert(graph.symbol(dim.symbol()).name);
    }
  }
  return names;
}

std::string Listed(const std::set<std::string>& names) {
  if (names.empty()) return "none";
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

}  // namespace

Status OverrideFreeDimensions(Graph& graph,
                              const std::vector<std::pair<std::string, int64_t>>& overrides) {
  if (overrides.empty()) return Status::Ok();
  const std::string model = graph.model_path.empty() ? "the model" : graph.model_path;
  const std::set<std::string> input_symbols = InputSymbolNames(graph);
  std::map<std::string, int64_t> extent_by_name;
  for (const auto& [name, extent] : overrides) {
    const std::string prefix =
        model + ": free dimension override " + name + "=" + std::to_string(extent) + ": ";
    if (extent < 0) return InvalidArgument(prefix + "the extent must be 0 or more");
    if (!extent_by_name.emplace(name, extent).second) {
      return InvalidArgument(prefix + "the dim is overridden twice; give each name once");
    }
    if (!input_symbols.contains(name)) {
      return InvalidArgument(prefix + "no input has a dim of that name (the inputs' named dims: " +
                             Listed(input_symbols) + ")");
    }
  }
  for (Value& value : graph.values) {
    if (!value.shape) continue;
    for (Dim& dim : *value.shape) {
      if (!dim.is_symbolic()) continue;
      const auto it = extent_by_name.find(graph.symbol(dim.symbol()).name);
      if (it != extent_by_name.end()) dim = Dim::Static(it->second);
    }
  }
  return Status::Ok();
}

}  // namespace nxrt::graph
