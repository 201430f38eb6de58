// Shape inference over a synthetic 10,000-node transformer-like chain with
// symbolic batch and sequence: MatMul, Add, Reshape to heads, Transpose there
// and back, Reshape to hidden. Building the graph is excluded from the timing.
#include <cstring>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "nxrt/graph/ir.hpp"
#include "nxrt/graph/shape_inference.hpp"

namespace {

using namespace nxrt::graph;

constexpr int64_t kHidden = 64;
constexpr int64_t kHeads = 8;

ValueId AddInitializer(Graph& g, const std::string& name, DataType dtype, std::vector<int64_t> dims,
                       std::vector<std::byte> bytes) {
  Value v;
  v.name = name;
  v.dtype = dtype;
  v.initializer = g.weights->AddOwned(dtype, std::move(dims), std::move(bytes));
  return g.AddValue(std::move(v));
}

std::vector<std::byte> Int64Bytes(const std::vector<int64_t>& values) {
  std::vector<std::byte> bytes(values.size() * sizeof(int64_t));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

ValueId AddNode(Graph& g, const std::string& op, std::vector<ValueId> inputs,
                std::vector<Attribute> attributes = {}) {
  Value out;
  out.name = "v" + std::to_string(g.values.size());
  ValueId out_id = g.AddValue(std::move(out));
  Node n;
  n.op_type = op;
  n.name = op + std::to_string(g.nodes.size());
  n.attributes = std::move(attributes);
  for (ValueId in : inputs) n.inputs.push_back(in);
  n.outputs.push_back(out_id);
  g.AddNode(std::move(n));
  return out_id;
}

Attribute Perm(std::vector<int64_t> perm) {
  Attribute a;
  a.name = "perm";
  a.type = AttributeType::kInts;
  a.ints = std::move(perm);
  return a;
}

Graph MakeChain(size_t node_count) {
  Graph g;
  g.opset_imports[""] = 21;
  Value x;
  x.name = "x";
  x.dtype = DataType::kFloat32;
  x.shape = Shape{Dim::Symbolic(g.DeclareSymbol("batch")), Dim::Symbolic(g.DeclareSymbol("seq")),
                  Dim::Static(kHidden)};
  x.is_graph_input = true;
  ValueId current = g.AddValue(std::move(x));
  g.inputs.push_back(current);
  const ValueId weight = AddInitializer(g, "w", DataType::kFloat32, {kHidden, kHidden},
                                        std::vector<std::byte>(kHidden * kHidden * sizeof(float)));
  const ValueId bias = AddInitializer(g, "b", DataType::kFloat32, {kHidden},
                                      std::vector<std::byte>(kHidden * sizeof(float)));
  const ValueId to_heads = AddInitializer(g, "to_heads", DataType::kInt64, {4},
                                          Int64Bytes({0, 0, kHeads, kHidden / kHeads}));
  const ValueId to_hidden =
      AddInitializer(g, "to_hidden", DataType::kInt64, {3}, Int64Bytes({0, -1, kHidden}));
  while (g.nodes.size() + 6 <= node_count) {
    current = AddNode(g, "MatMul", {current, weight});
    current = AddNode(g, "Add", {current, bias});
    current = AddNode(g, "Reshape", {current, to_heads});
    current = AddNode(g, "Transpose", {current}, {Perm({0, 2, 1, 3})});
    current = AddNode(g, "Transpose", {current}, {Perm({0, 2, 1, 3})});
    current = AddNode(g, "Reshape", {current, to_hidden});
  }
  g.outputs.push_back(current);
  return g;
}

void BM_InferShapesChain(benchmark::State& state) {
  const auto node_count = static_cast<size_t>(state.range(0));
  for (auto _ : state) {
    state.PauseTiming();
    Graph g = MakeChain(node_count);
    state.ResumeTiming();
    nxrt::Status status = InferShapes(g);
    if (!status.ok()) {
      state.SkipWithError(status.message().c_str());
      break;
    }
    benchmark::DoNotOptimize(g.values.back().shape);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(node_count));
}
BENCHMARK(BM_InferShapesChain)->Arg(10000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
