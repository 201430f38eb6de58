// Building one Graph from an ONNX GraphProto, recursing into the bodies held
// in its nodes' attributes. Shared by the top-level graph and every body, so
// subgraphs resolve enclosing names and report errors the same way.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <unordered_set>

#include "nxrt/graph/ir.hpp"
#include "nxrt/support/status.hpp"

namespace nxrt::graph {

// What every graph of one model shares while it loads.
struct ModelLoadContext {
  std::string model_name;  // for error messages
  std::filesystem::path external_data_dir;
  std::shared_ptr<WeightStore> weights;
  // Every dim_param the model names, so generated symbol names never clash.
  std::unordered_set<std::string> dim_params;
  uint64_t fresh_symbols = 0;
  // The main graph of a model the loader owns: each of its initializers is
  // emptied once the store holds a copy, so loading never holds a model's
  // weights twice. Null: leave the model as it is.
  onnx::GraphProto* releasable_graph = nullptr;
};

// The graphs enclosing a body, innermost first; their values are visible in it.
struct EnclosingScope {
  const Graph* graph = nullptr;
  const EnclosingScope* parent = nullptr;
};

// Builds the graph `proto`. `location` prefixes its errors (the model name,
// or the model and the attribute that holds the body).
Result<Graph> BuildGraph(const onnx::GraphProto& proto, ModelLoadContext& context,
                         const EnclosingScope* enclosing,
                         const std::map<std::string, int64_t>& opset_imports,
                         const std::string& location);

// Collects every dim_param in `proto` and its bodies into `names`.
void CollectDimParams(const onnx::GraphProto& proto, std::unordered_set<std::string>& names);

// "" for the default ONNX domain, however the file spells it.
std::string NormalizeDomain(const std::string& domain);

}  // namespace nxrt::graph
