// Per-request kernel telemetry through the session (arm, snapshot, reset,
// disarm), and runs whose inputs and outputs are Values.
#include <gtest/gtest.h>

#include "session/mock_session_support.hpp"

namespace {

using nxrt_test::Floats;
using nxrt_test::ModelBuilder;

nxrt::graph::Graph AddThenRelu() {
  return ModelBuilder()
      .Input("a", {int64_t{2}})
      .Input("b", {int64_t{2}})
      .Node("Add", {"a", "b"}, "s")
      .Node("Relu", {"s"}, "y")
      .Output("y")
      .Output("s")
      .Build();
}

TEST(SessionTelemetry, SumsOneKernelPerNodeAndDisarms) {
  const std::string log = nxrt_test::TestLogId();
  auto session = nxrt::Session::Create(
      nxrt_test::TestEnvironment(), AddThenRelu(),
      nxrt_test::MockOptions(log, {{"telemetry", "logical_bytes:100,physical_bytes:25"}}));
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  std::vector<nxrt::NamedTensor> inputs{{"a", Floats({2}, {1, -3})}, {"b", Floats({2}, {1, 1})}};
  ASSERT_TRUE((*session)->Run(inputs).ok());

  auto armed = (*session)->ArmTelemetry(7);
  ASSERT_TRUE(armed.ok()) << armed.status().ToString();
  EXPECT_EQ(*armed, 2u);
  ASSERT_TRUE((*session)->Run(inputs).ok());
  auto totals = (*session)->TelemetrySnapshot();
  ASSERT_TRUE(totals.ok()) << totals.status().ToString();
  EXPECT_EQ(totals->logical_bytes, 200u);
  ASSERT_TRUE(totals->physical_bytes.has_value());
  EXPECT_EQ(*totals->physical_bytes, 50u);
  ASSERT_TRUE(totals->byte_hit_rate.has_value());
  EXPECT_DOUBLE_EQ(*totals->byte_hit_rate, 0.75);

  EXPECT_TRUE((*session)->ResetTelemetry().ok());
  EXPECT_TRUE((*session)->DisarmTelemetry().ok());
  const auto calls = nxrt_test::MockLibrary::Get().CallLog(log);
  EXPECT_EQ(nxrt_test::CountPrefix(calls, "telemetry_arm"), 2u);
  EXPECT_EQ(nxrt_test::CountPrefix(calls, "telemetry_reset"), 2u);
  EXPECT_EQ(nxrt_test::CountPrefix(calls, "telemetry_disarm"), 2u);
  auto after = (*session)->TelemetrySnapshot();
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->logical_bytes, 0u);
}

TEST(SessionValues, RunValuesTakesAndGivesTensorValues) {
  auto session = nxrt::Session::Create(nxrt_test::TestEnvironment(), AddThenRelu(),
                                       nxrt_test::MockOptions(nxrt_test::TestLogId()));
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  std::vector<nxrt::NamedValue> inputs{{"a", nxrt::Value(Floats({2}, {1, -3}))},
                                       {"b", nxrt::Value(Floats({2}, {1, 1}))}};
  const std::vector<std::string> names{"s", "y"};
  auto outputs = (*session)->RunValues(inputs, names);
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  ASSERT_EQ(outputs->size(), 2u);
  ASSERT_TRUE((*outputs)[0].is_tensor());
  EXPECT_EQ(nxrt_test::ValuesOf((*outputs)[0].tensor()), (std::vector<float>{2, -2}));
  EXPECT_EQ(nxrt_test::ValuesOf((*outputs)[1].tensor()), (std::vector<float>{2, 0}));
}

TEST(SessionValues, AbsentValueForATensorInputIsRefused) {
  auto session = nxrt::Session::Create(nxrt_test::TestEnvironment(), AddThenRelu(),
                                       nxrt_test::MockOptions(nxrt_test::TestLogId()));
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  std::vector<nxrt::NamedValue> inputs{{"a", nxrt::Value()},
                                       {"b", nxrt::Value(Floats({2}, {1, 1}))}};
  auto outputs = (*session)->RunValues(inputs);
  ASSERT_FALSE(outputs.ok());
  EXPECT_NE(outputs.status().message().find("input 'a'"), std::string::npos)
      << outputs.status().message();
}

TEST(SessionValues, StringTensorsPassThroughIdentity) {
  auto session = nxrt::Session::Create(nxrt_test::TestEnvironment(),
                                       ModelBuilder()
                                           .Input("t", {int64_t{3}}, nxrt::graph::DataType::kString)
                                           .Node("Identity", {"t"}, "u")
                                           .Output("u")
                                           .Build(),
                                       nxrt_test::MockOptions(nxrt_test::TestLogId()));
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  auto text = nxrt::Tensor::FromStrings({3}, {"one", "", "a string longer than fifteen bytes"});
  ASSERT_TRUE(text.ok());
  std::vector<nxrt::NamedTensor> inputs{{"t", std::move(text).value()}};
  for (int i = 0; i < 2; ++i) {
    auto outputs = (*session)->Run(inputs);
    ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
    EXPECT_EQ((*outputs)[0].dtype(), nxrt::DataType::kString);
    EXPECT_EQ((*outputs)[0].strings(),
              (std::vector<std::string>{"one", "", "a string longer than fifteen bytes"}));
  }
}

}  // namespace
