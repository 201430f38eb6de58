// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss refusing targets
// and weights that do not fit the scores, which they would read past.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tensor_node_session.hpp"

namespace nxrt_test {
namespace {

using nxrt::graph::DataType;

TEST(CpuEpLoss, TargetsAndWeightsMustFitTheScores) {
  struct Case {
    const char* op;
    std::vector<int64_t> target_dims;
    int64_t weights;  // 0: none
    const char* fault;
  };
  // Scores [2, 3, 4]: N 2, C 3, one extra axis of 4.
  const Case cases[] = {
      {"SoftmaxCrossEntropyLoss", {2}, 0, "must be the scores' without the class axis ([2,4])"},
      {"NegativeLogLikelihoodLoss", {0, 4}, 0, "not [0,4]"},
      {"SoftmaxCrossEntropyLoss", {2, 4}, 2, "one value per class (3), not 2"},
  };
  for (const Case& c : cases) {
    size_t targets = 1;
    for (int64_t d : c.target_dims) targets *= static_cast<size_t>(d);
    TensorNode node;
    node.op = c.op;
    node.opset = 13;
    node.inputs = {{"scores", Values<float>({2, 3, 4}, std::vector<float>(24, 0.5f))},
                   {"target", Values<int64_t>(c.target_dims, std::vector<int64_t>(targets, 1))}};
    if (c.weights) {
      node.inputs.push_back(
          {"weights", Values<float>({c.weights}, std::vector<float>(c.weights, 1.0f))});
    }
    node.outputs = {DataType::kFloat32};
    ExpectRefused(node, c.fault);
  }
}

}  // namespace
}  // namespace nxrt_test
