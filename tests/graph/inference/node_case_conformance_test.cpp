// Conformance of inferred shapes with the ONNX backend node test cases: load
// each case's model, infer, and compare every output's inferred dtype and
// shape with the expected output_K.pb.
//
// Small graph inputs (up to kBakedElements elements) are made constant from
// the case's input files first, because ops such as Reshape, Expand, Tile,
// Resize or Range take their output extents from those values. Declared shapes of non-input values
// are cleared so that only inference answers. A static inferred dim must equal the expected one; a
// declared or derived symbolic dim is accepted only when some graph input had
// a symbolic dim; a Minted or Opaque dim (a data-dependent extent) is counted
// as data-dependent, and a rank-unknown output as not covered.
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "nxrt/graph/loader.hpp"
#include "nxrt/graph/shape_inference.hpp"
#include "nxrt/graph/test_data.hpp"

namespace nxrt::graph {
namespace {

namespace fs = std::filesystem;

struct Tally {
  size_t cases = 0, outputs = 0, matched = 0, data_dependent = 0, not_covered = 0;
  std::vector<std::string> mismatches;
};

constexpr int64_t kBakedElements = 64;

bool IsSmall(const Value& v) {
  if (!v.shape) return false;
  int64_t count = 1;
  for (const Dim& d : *v.shape) {
    if (!d.is_static()) return false;
    count *= d.extent();
  }
  return count <= kBakedElements;
}

// Makes small graph inputs constant with the values of the case's inputs.
void BakeSmallInputs(Graph& graph, const fs::path& data_set) {
  for (size_t k = 0; k < graph.inputs.size(); ++k) {
    Value& v = graph.value(graph.inputs[k]);
    if (v.kind != ValueKind::kTensor || v.dtype == DataType::kString || !IsSmall(v)) continue;
    auto decoded = ReadTestValueFile(data_set / ("input_" + std::to_string(k) + ".pb"),
                                     TestProtoKind::kTensor);
    if (!decoded.ok() || decoded->kind != TestValueKind::kTensor) continue;
    TestTensor& t = decoded->tensor;
    v.initializer = graph.weights->AddOwned(t.dtype, t.dims, t.bytes);
    v.is_graph_input = false;
    Shape shape;
    for (int64_t d : t.dims) shape.push_back(Dim::Static(d));
    v.shape = std::move(shape);
  }
}

bool AnyInputSymbolic(const Graph& graph) {
  for (ValueId id : graph.inputs) {
    const Value& v = graph.value(id);
    if (!v.is_graph_input || !v.shape) continue;
    for (const Dim& d : *v.shape) {
      if (d.is_symbolic()) return true;
    }
  }
  return false;
}

// The element types the model declares for its outputs; old test files store
// bfloat16 data as uint16, so the model, not the file, says what is right.
std::vector<DataType> DeclaredOutputTypes(const Graph& graph) {
  std::vector<DataType> types;
  for (ValueId id : graph.outputs) types.push_back(graph.value(id).dtype);
  return types;
}

void ClearInferredFacts(Graph& graph) {
  for (Value& v : graph.values) {
    if (v.is_graph_input || v.initializer || v.is_outer_scope || !v.producer.valid()) continue;
    v.shape.reset();
    v.dtype = DataType::kUndefined;
  }
}

std::string DimsText(const std::vector<int64_t>& dims) {
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i) out += (i ? "," : "") + std::to_string(dims[i]);
  return out + "]";
}

std::string ShapeText(const Graph& g, const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) {
    out += i ? "," : "";
    out += s[i].is_static() ? std::to_string(s[i].extent()) : g.symbol(s[i].symbol()).name;
  }
  return out + "]";
}

void CheckCase(const fs::path& dir, Tally& tally) {
  const fs::path data_set = dir / "test_data_set_0";
  if (!fs::exists(dir / "model.onnx") || !fs::exists(data_set)) return;
  const std::string name = dir.filename().string();
  auto loaded = LoadModelFromFile(dir / "model.onnx");
  if (!loaded.ok()) return;  // the loader tests own load failures
  Graph graph = std::move(loaded).value();
  ++tally.cases;
  BakeSmallInputs(graph, data_set);
  const std::vector<DataType> declared_types = DeclaredOutputTypes(graph);
  ClearInferredFacts(graph);
  const bool symbolic_inputs = AnyInputSymbolic(graph);
  Status status = InferShapes(graph);
  if (!status.ok()) {
    tally.mismatches.push_back(name + ": inference failed: " + status.message());
    return;
  }
  for (size_t k = 0; k < graph.outputs.size(); ++k) {
    const Value& out = graph.value(graph.outputs[k]);
    ++tally.outputs;
    if (out.kind != ValueKind::kTensor) {
      ++tally.not_covered;
      continue;
    }
    auto expected = ReadTestValueFile(data_set / ("output_" + std::to_string(k) + ".pb"),
                                      TestProtoKind::kTensor);
    if (!expected.ok() || expected->kind != TestValueKind::kTensor || !out.shape) {
      ++tally.not_covered;
      continue;
    }
    const TestTensor& want = expected->tensor;
    const std::string where = name + " output " + std::to_string(k) + " '" + out.name + "': ";
    const DataType want_type =
        declared_types[k] != DataType::kUndefined ? declared_types[k] : want.dtype;
    if (out.dtype != DataType::kUndefined && out.dtype != want_type) {
      tally.mismatches.push_back(where + "dtype " + std::string(DataTypeName(out.dtype)) +
                                 ", expected " + std::string(DataTypeName(want_type)));
      continue;
    }
    const Shape& got = *out.shape;
    bool wrong = got.size() != want.dims.size();
    bool data_dependent = false;
    for (size_t i = 0; i < got.size() && !wrong; ++i) {
      if (got[i].is_static()) {
        wrong = got[i].extent() != want.dims[i];
        continue;
      }
      const SymbolOrigin origin = graph.symbol(got[i].symbol()).origin;
      if (origin == SymbolOrigin::kMinted || origin == SymbolOrigin::kOpaque) {
        data_dependent = true;
      } else {
        wrong = !symbolic_inputs;
      }
    }
    if (wrong) {
      tally.mismatches.push_back(where + "inferred " + ShapeText(graph, got) + ", expected " +
                                 DimsText(want.dims));
    } else if (data_dependent) {
      ++tally.data_dependent;
    } else {
      ++tally.matched;
    }
  }
}

std::vector<fs::path> CaseDirs(const fs::path& root) {
  std::vector<fs::path> dirs;
  for (const auto& entry : fs::directory_iterator(root)) {
    if (entry.is_directory()) dirs.push_back(entry.path());
  }
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

void RunSuite(const std::string& label, const fs::path& root) {
  Tally tally;
  for (const fs::path& dir : CaseDirs(root)) CheckCase(dir, tally);
  std::cout << "[ shapes   ] " << label << ": " << tally.cases << " cases, " << tally.outputs
            << " outputs: " << tally.matched << " matched, " << tally.data_dependent
            << " data-dependent, " << tally.not_covered << " not covered, "
            << tally.mismatches.size() << " mismatched\n";
  std::string listing;
  for (const std::string& m : tally.mismatches) listing += m + "\n";
  EXPECT_TRUE(tally.mismatches.empty()) << tally.mismatches.size() << " mismatches:\n" << listing;
  EXPECT_GT(tally.matched, tally.outputs / 2) << "inference covers too little of " << label;
}

TEST(NodeCaseConformance, DebianModelSuites) {
  const fs::path data = "/usr/share/libonnx-testdata/data";
  if (!fs::exists(data)) GTEST_SKIP() << data << " is missing; install libonnx-testdata";
  for (const char* suite : {"pytorch-converted", "pytorch-operator", "simple"}) {
    RunSuite(std::string("debian ") + suite + " cases", data / suite);
  }
}

fs::path OnnxNodeCasesDir() {
  if (const char* env = std::getenv("NXRT_ONNX_NODE_CASES")) return env;
  const fs::path in_build = fs::path(NXRT_BINARY_DIR) / "onnx-node-cases";
  if (fs::exists(in_build)) return in_build;
  return fs::path(NXRT_SOURCE_DIR) / "build" / "onnx-node-cases";
}

TEST(NodeCaseConformance, DebianNodeCases) {
  const fs::path root = "/usr/share/libonnx-testdata/data/node";
  if (!fs::exists(root)) GTEST_SKIP() << root << " is missing; install libonnx-testdata";
  RunSuite("debian node cases", root);
}

TEST(NodeCaseConformance, ExportedOnnxNodeCases) {
  const fs::path root = OnnxNodeCasesDir();
  if (!fs::exists(root / ".export-complete")) {
    GTEST_SKIP() << "no exported onnx node cases at " << root
                 << "; run scripts/export-onnx-node-cases (needs .venv)";
  }
  RunSuite("exported onnx node cases", root);
}

}  // namespace
}  // namespace nxrt::graph
