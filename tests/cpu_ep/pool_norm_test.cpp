// Pooling, normalisation and softmax ops on the ONNX node test cases.
#include <gtest/gtest.h>

#include "node_case_runner.hpp"

namespace nxrt_test {
namespace {

TEST(CpuEpPoolNorm, PoolingNodeCases) {
  ExpectFamilyPasses("pooling", {"MaxPool", "AveragePool", "LpPool", "GlobalMaxPool",
                                 "GlobalAveragePool", "GlobalLpPool"});
}

TEST(CpuEpPoolNorm, NormalizationNodeCases) {
  ExpectFamilyPasses("normalization",
                     {"BatchNormalization", "LayerNormalization", "InstanceNormalization",
                      "MeanVarianceNormalization", "LRN"});
}

TEST(CpuEpPoolNorm, SoftmaxNodeCases) {
  ExpectFamilyPasses("softmax", {"Softmax", "LogSoftmax", "Hardmax"});
}

}  // namespace
}  // namespace nxrt_test
