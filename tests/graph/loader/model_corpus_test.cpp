// Loads every model of the ONNX backend test suites: Debian's libonnx
// test data (onnx 1.12) and the node cases exported from the onnx package
// in .venv (see cmake/NxrtTestData.cmake).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "nxrt/graph/loader.hpp"
#include "test_case_folders.hpp"

namespace nxrt::graph {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> ModelsUnder(const fs::path& root) {
  std::vector<fs::path> models;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file() && it->path().filename() == "model.onnx")
      models.push_back(it->path());
  }
  std::sort(models.begin(), models.end());
  return models;
}

// What every loaded graph and body must satisfy: each node reads values that
// exist and were produced earlier (or come from inputs, initializers or an
// enclosing graph), and is the producer of its outputs. Appends problems.
void CheckInvariants(const Graph& graph, const std::string& where,
                     std::vector<std::string>& problems) {
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const Node& node = graph.nodes[n];
    for (const auto& input : node.inputs) {
      if (!input) continue;
      const Value* value = graph.try_value(*input);
      if (value == nullptr) {
        problems.push_back(where + ": node " + node.name + " reads a missing value");
      } else if (value->producer.valid() && value->producer.index >= n) {
        problems.push_back(where + ": node " + node.name + " reads '" + value->name +
                           "' before its producer");
      } else if (!value->producer.valid() && !value->is_graph_input && !value->initializer &&
                 !value->is_outer_scope) {
        problems.push_back(where + ": '" + value->name + "' has no source");
      }
    }
    for (const auto& output : node.outputs) {
      if (output && graph.value(*output).producer.index != n) {
        problems.push_back(where + ": node " + node.name + " is not its output's producer");
      }
    }
    for (const Attribute& a : node.attributes) {
      if (a.graph) CheckInvariants(*a.graph, where + "/" + a.name, problems);
      for (const auto& body : a.graphs) CheckInvariants(*body, where + "/" + a.name, problems);
    }
  }
  for (ValueId input : graph.inputs) {
    if (graph.value(input).initializer) problems.push_back(where + ": initializer among inputs");
  }
}

// Loads each model; returns "path: error" for every failure.
std::vector<std::string> LoadAll(const std::vector<fs::path>& models) {
  std::vector<std::string> failures;
  for (const fs::path& model : models) {
    Result<Graph> graph = LoadModelFromFile(model);
    if (!graph.ok()) {
      failures.push_back(graph.status().ToString());
      continue;
    }
    CheckInvariants(*graph, model.string(), failures);
  }
  return failures;
}

std::string Join(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& line : lines) out += line + "\n";
  return out;
}

TEST(ModelCorpusTest, EveryDebianTestModelLoads) {
  const fs::path& data = testing::kDebianTestData;
  if (!fs::exists(data)) GTEST_SKIP() << data << " is missing; install libonnx-testdata";
  size_t total = 0;
  for (const char* suite : {"node", "pytorch-converted", "pytorch-operator", "simple", "real"}) {
    const std::vector<fs::path> models = ModelsUnder(data / suite);
    const std::vector<std::string> failures = LoadAll(models);
    std::cout << "[ corpus   ] " << suite << ": " << models.size() << " models, " << failures.size()
              << " failures\n";
    EXPECT_TRUE(failures.empty()) << failures.size() << " models failed:\n" << Join(failures);
    total += models.size();
  }
  // The node suite alone holds hundreds; finding none means the walk broke.
  EXPECT_GT(total, 900u);
}

TEST(ModelCorpusTest, EveryExportedOnnxNodeCaseLoads) {
  const fs::path cases = testing::OnnxNodeCasesDir();
  if (!fs::exists(cases / ".export-complete")) {
    GTEST_SKIP() << "no exported onnx node cases at " << cases
                 << "; run scripts/export-onnx-node-cases (needs .venv)";
  }
  const std::vector<fs::path> models = ModelsUnder(cases);
  const std::vector<std::string> failures = LoadAll(models);
  std::cout << "[ corpus   ] exported onnx node cases: " << models.size() << " models, "
            << failures.size() << " failures\n";
  EXPECT_GT(models.size(), 1000u);
  EXPECT_TRUE(failures.empty()) << failures.size() << " models failed:\n" << Join(failures);
}

}  // namespace
}  // namespace nxrt::graph
