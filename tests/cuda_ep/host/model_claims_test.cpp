// The CUDA EP's claims over whole generated models (the models target): each
// model is loaded and shape-inferred as a session does, and every node is
// offered to the CUDA claim rules at its inferred, possibly symbolic, input
// infos with the opset of its domain, as the partitioner offers it. This
// proves without a GPU that the benchmark models and the decoders run
// entirely on the CUDA EP, except for the nodes each case lists as left to
// the CPU EP.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "claim_rules.hpp"
#include "nxrt/graph/loader.hpp"
#include "nxrt/graph/shape_inference.hpp"
#include "partitioner/partition.hpp"
#include "plugin_host/host_api.hpp"
#include "plugin_host/node_view.hpp"

namespace {

struct ModelCase {
  const char* file;  // under <build>/models
  // Op types of the nodes the CUDA EP declines, sorted, one per node.
  std::vector<std::string> declined_ops;
};

// Names the model in failure messages instead of dumping the struct's bytes.
void PrintTo(const ModelCase& c, std::ostream* os) {
  *os << c.file;
}

class CudaModelClaims : public ::testing::TestWithParam<ModelCase> {};

TEST_P(CudaModelClaims, EveryNodeIsClaimedExceptTheListedOnes) {
  const std::filesystem::path path =
      std::filesystem::path(NXRT_BINARY_DIR) / "models" / GetParam().file;
  if (!std::filesystem::exists(path)) {
    GTEST_SKIP() << path << " is missing; build the models target";
  }
  auto loaded = nxrt::graph::LoadModelFromFile(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  nxrt::graph::Graph graph = std::move(loaded).value();
  const nxrt::Status inferred = nxrt::graph::InferShapes(graph);
  ASSERT_TRUE(inferred.ok()) << inferred.ToString();
  ASSERT_FALSE(graph.nodes.empty()) << path;

  const nxrt::sdk::Host host(nxrt::plugin_host::HostApi(), nullptr);
  std::vector<std::string> declined_ops;
  std::string declines;  // one line per declined node, for the failure message
  for (uint32_t i = 0; i < graph.nodes.size(); ++i) {
    const nxrt::graph::Node& node = graph.nodes[i];
    const nxrt::plugin_host::NodeView view(graph, nxrt::graph::NodeId{i});
    const std::vector<nxrt_layout> layouts(view.input_infos().size(), NXRT_LAYOUT_CONTIGUOUS);
    const nxrt::sdk::ClaimResult claim = nxrt::cuda::ClaimOnCuda(
        nxrt::sdk::Node(host, &view), nxrt::partitioner::NodeOpset(graph, node), view.input_infos(),
        layouts);
    if (claim.claimed) continue;
    declined_ops.push_back(node.op_type);
    declines += "\n  node '" + node.name + "' (" + node.op_type + "): " + claim.reason;
  }
  std::sort(declined_ops.begin(), declined_ops.end());
  EXPECT_EQ(declined_ops, GetParam().declined_ops) << "declined:" << declines;
}

INSTANTIATE_TEST_SUITE_P(
    GeneratedModels, CudaModelClaims,
    ::testing::Values(ModelCase{"cnn.onnx", {}}, ModelCase{"mlp.onnx", {}},
                      ModelCase{"bert_layer.onnx", {}}, ModelCase{"add_chain_1000.onnx", {}},
                      ModelCase{"decoder.onnx", {}}, ModelCase{"decoder_fixed_kv256.onnx", {}},
                      ModelCase{"decoder_2l_h512.onnx", {}}),
    [](const ::testing::TestParamInfo<ModelCase>& info) {
      std::string name = std::filesystem::path(info.param.file).stem().string();
      std::replace_if(
          name.begin(), name.end(), [](unsigned char c) { return !std::isalnum(c); }, '_');
      return name;
    });

}  // namespace
