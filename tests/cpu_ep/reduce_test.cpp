// Reductions and ArgMax/ArgMin on the ONNX node test cases; ReduceMax and
// ReduceMin of bool are any and all, checked here (an empty set gives false
// and true).
#include <gtest/gtest.h>

#include "node_case_runner.hpp"
#include "single_node_session.hpp"

namespace nxrt_test {
namespace {

using nxrt::graph::DataType;

TEST(CpuEpReduce, NodeCases) {
  ExpectFamilyPasses("reduce", {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
                                "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp",
                                "ReduceSumSquare", "ArgMax", "ArgMin"});
}

TEST(CpuEpReduce, BoolMaxIsAnyAndMinIsAll) {
  // [3, 4] rows: all false, mixed, all true; reduced along axis 1, then an
  // empty [0, 4] reduced along axis 0.
  const std::vector<uint8_t> x{0, 0, 0, 0, 0, 1, 0, 1, 1, 1, 1, 1};
  for (const char* op : {"ReduceMax", "ReduceMin"}) {
    const bool is_max = op[6] == 'M' && op[7] == 'a';
    auto y = RunSingleNode(op, 20,  // the opset that gave ReduceMax and ReduceMin bool
                           {Input("x", DataType::kBool, {3, 4}, x),
                            Input("axes", DataType::kInt64, {1}, std::vector<int64_t>{1})},
                           {IntAttribute("keepdims", 0)}, DataType::kBool);
    ASSERT_TRUE(y.has_value());
    const auto v = y->values<bool>();
    ASSERT_EQ(v.size(), 3u);
    for (int r = 0; r < 3; ++r) {
      bool any = false, all = true;
      for (int c = 0; c < 4; ++c) {
        any = any || x[r * 4 + c] != 0;
        all = all && x[r * 4 + c] != 0;
      }
      EXPECT_EQ(v[r], is_max ? any : all) << op << " row " << r;
    }
    auto empty = RunSingleNode(op, 20,
                               {Input("x", DataType::kBool, {0, 4}, std::vector<uint8_t>{}),
                                Input("axes", DataType::kInt64, {1}, std::vector<int64_t>{0})},
                               {IntAttribute("keepdims", 0)}, DataType::kBool);
    ASSERT_TRUE(empty.has_value());
    for (bool e : empty->values<bool>()) EXPECT_EQ(e, !is_max) << op << " of nothing";
  }
}

}  // namespace
}  // namespace nxrt_test
