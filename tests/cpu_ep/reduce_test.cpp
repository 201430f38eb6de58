// Reductions and ArgMax/ArgMin on the ONNX node test cases; ReduceMax and
// ReduceMin of bool are any and all, checked here (an empty set gives false
// and true); sums over the trailing axes (summed row by row in vector lanes)
// and over a middle axis (the strided walk) against double sums.
#include <gtest/gtest.h>

#include <cmath>

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

TEST(CpuEpReduce, SumsOverTrailingOrMiddleAxesMatchDoubleSums) {
  // [3, 5, 37]: 37 is no multiple of the eight lanes, so each row has a tail.
  constexpr int64_t kA = 3, kB = 5, kC = 37;
  std::vector<float> x(kA * kB * kC);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.7f * static_cast<float>(i)) * 3.0f;
  const auto at = [&](int64_t a, int64_t b, int64_t c) {
    return static_cast<double>(x[(a * kB + b) * kC + c]);
  };
  struct Form {
    std::vector<int64_t> axes;
    int64_t outer, inner;  // output extents: reduced over the rest
  };
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceSumSquare", "ReduceL2"}) {
    for (const Form& form : {Form{{2}, kA, kB}, Form{{1, 2}, kA, 1}, Form{{1}, kA, kC}}) {
      auto y = RunSingleNode(
          op, 18,
          {Input("x", DataType::kFloat32, {kA, kB, kC}, x),
           Input("axes", DataType::kInt64, {static_cast<int64_t>(form.axes.size())}, form.axes)},
          {IntAttribute("keepdims", 0)}, DataType::kFloat32);
      ASSERT_TRUE(y.has_value()) << op;
      const auto v = y->values<float>();
      ASSERT_EQ(v.size(), static_cast<size_t>(form.outer * form.inner)) << op;
      const std::string name = op;
      const bool squares = name == "ReduceSumSquare" || name == "ReduceL2";
      for (int64_t o = 0; o < form.outer; ++o) {
        for (int64_t i = 0; i < form.inner; ++i) {
          double sum = 0;
          int64_t count = 0;
          for (int64_t b = 0; b < kB; ++b) {
            for (int64_t c = 0; c < kC; ++c) {
              const bool taken = form.axes == std::vector<int64_t>{2}   ? b == i
                                 : form.axes == std::vector<int64_t>{1} ? c == i
                                                                        : true;
              if (!taken) continue;
              sum += squares ? at(o, b, c) * at(o, b, c) : at(o, b, c);
              ++count;
            }
          }
          const double expected = name == "ReduceMean" ? sum / static_cast<double>(count)
                                  : name == "ReduceL2" ? std::sqrt(sum)
                                                       : sum;
          EXPECT_NEAR(v[o * form.inner + i], expected, 1e-5 * (1 + std::abs(expected)))
              << op << " over " << form.axes.size() << " axes at " << o << "," << i;
        }
      }
    }
  }
}

}  // namespace
}  // namespace nxrt_test
