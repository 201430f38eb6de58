// Graph rewrites through a CPU session on the benchmark CNN (the models
// target): BatchNormalization folded into each Conv, and each Conv run with
// its Relu and MaxPool as one ConvPool kernel, give the outputs of the model
// as written, and the session reports what it changed.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "cpu_environment.hpp"
#include "nxrt/environment.hpp"
#include "nxrt/session.hpp"

namespace nxrt_test {
namespace {

const char* const kCnn = NXRT_BINARY_DIR "/models/cnn.onnx";

std::unique_ptr<nxrt::Session> CnnSession(bool rewrite_graph) {
  nxrt::SessionOptions options;
  options.providers = {{"cpu", {{"threads", "1"}}}};
  options.rewrite_graph = rewrite_graph;
  auto session = nxrt::Session::Create(CpuEnvironment(), kCnn, options);
  EXPECT_TRUE(session.ok()) << session.status().ToString();
  return session.ok() ? std::move(session).value() : nullptr;
}

std::vector<float> Logits(nxrt::Session& session, std::vector<float>& image) {
  const nxrt::NamedTensor inputs[] = {
      {"image", nxrt::Tensor::Borrow(nxrt::graph::DataType::kFloat32, {1, 3, 64, 64}, image.data(),
                                     image.size() * sizeof(float))}};
  auto outputs = session.Run(inputs, {});
  EXPECT_TRUE(outputs.ok()) << outputs.status().ToString();
  if (!outputs.ok()) return {};
  auto values = (*outputs)[0].values<float>();
  return {values.begin(), values.end()};
}

TEST(GraphRewrite, FoldedCnnGivesTheLogitsOfTheModelAsWritten) {
  auto folded = CnnSession(true);
  auto as_written = CnnSession(false);
  ASSERT_TRUE(folded && as_written);
  EXPECT_EQ(folded->graph_rewrites(),
            (std::vector<std::string>{
                "BatchNormalization 'bn0' folded into Conv 'conv0'",
                "BatchNormalization 'bn1' folded into Conv 'conv1'",
                "Conv 'conv0', Relu 'relu0' and MaxPool 'pool0' fused as pkg.nxrt::ConvPool on "
                "cpu#1",
                "Conv 'conv1', Relu 'relu1' and MaxPool 'pool1' fused as pkg.nxrt::ConvPool on "
                "cpu#1"}));
  EXPECT_TRUE(as_written->graph_rewrites().empty());
  EXPECT_EQ(folded->placements().size() + 2, as_written->placements().size());
  for (const nxrt::NodePlacement& placement : folded->placements()) {
    EXPECT_NE(placement.op_type, "BatchNormalization") << placement.node;
    if (placement.op_type == "Relu" || placement.op_type == "MaxPool") {
      EXPECT_NE(placement.fused_into, "") << placement.node;
    }
  }
  for (const nxrt::NodePlacement& placement : as_written->placements()) {
    EXPECT_EQ(placement.fused_into, "") << placement.node;
  }

  std::mt19937 rng(11);
  std::normal_distribution<float> normal;
  std::vector<float> image(3 * 64 * 64);
  for (int trial = 0; trial < 3; ++trial) {
    for (float& v : image) v = normal(rng);
    const std::vector<float> expected = Logits(*as_written, image);
    const std::vector<float> actual = Logits(*folded, image);
    ASSERT_EQ(actual.size(), 10u);
    ASSERT_EQ(expected.size(), 10u);
    for (size_t i = 0; i < actual.size(); ++i) {
      EXPECT_NEAR(actual[i], expected[i], 1e-4 + 1e-4 * std::abs(expected[i])) << i;
    }
  }
}

}  // namespace
}  // namespace nxrt_test
