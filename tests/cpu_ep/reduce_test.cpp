// Reductions and ArgMax/ArgMin on the ONNX node test cases.
#include <gtest/gtest.h>

#include "node_case_runner.hpp"

namespace nxrt_test {
namespace {

TEST(CpuEpReduce, NodeCases) {
  ExpectFamilyPasses("reduce", {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
                                "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp",
                                "ReduceSumSquare", "ArgMax", "ArgMin"});
}

}  // namespace
}  // namespace nxrt_test
