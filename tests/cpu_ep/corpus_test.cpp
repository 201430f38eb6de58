// Every single-node case of the ONNX node test corpus, whatever its op: the
// CPU EP either declines it with a reason or computes it correctly. Also the
// ops added beyond the families: quantisation, losses, Det, ReverseSequence,
// Unique, MaxUnpool and NonMaxSuppression.
#include <gtest/gtest.h>

#include "node_case_runner.hpp"

namespace nxrt_test {
namespace {

TEST(CpuEpCorpus, EveryClaimedCasePasses) {
  ExpectFamilyPasses("all single-node cases", CorpusOpTypes());
}

TEST(CpuEpCorpus, QuantizationNodeCases) {
  ExpectFamilyPasses("quantization",
                     {"QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear"});
}

TEST(CpuEpCorpus, LossNodeCases) {
  ExpectFamilyPasses("losses", {"NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"});
}

TEST(CpuEpCorpus, FurtherOpNodeCases) {
  ExpectFamilyPasses("further ops",
                     {"Det", "ReverseSequence", "Unique", "MaxUnpool", "NonMaxSuppression"});
}

}  // namespace
}  // namespace nxrt_test
