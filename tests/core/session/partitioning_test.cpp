// Placement of nodes across execution providers in priority order: claims,
// declines with reasons, and the error when nobody claims a node.
#include <gtest/gtest.h>

#include "session/mock_session_support.hpp"

namespace {

using nxrt_test::Floats;
using nxrt_test::Mock;
using nxrt_test::ModelBuilder;
using nxrt_test::ValuesOf;

nxrt::graph::Graph AddThenRelu() {
  return ModelBuilder()
      .Input("a", {int64_t{4}})
      .Input("b", {int64_t{4}})
      .Node("Add", {"a", "b"}, "sum")
      .Node("Relu", {"sum"}, "y")
      .Output("y")
      .Build();
}

TEST(Partitioning, DeclinedNodeFallsToTheNextProviderWithItsReason) {
  const std::string first = nxrt_test::TestLogId() + ".first";
  const std::string second = nxrt_test::TestLogId() + ".second";
  nxrt::SessionOptions options;
  options.providers.push_back(Mock(first, {{"claim", "Add"}, {"decline", "Relu:no relu here"}}));
  options.providers.push_back(Mock(second));
  auto session = nxrt::Session::Create(nxrt_test::TestEnvironment(), AddThenRelu(), options);
  ASSERT_TRUE(session.ok()) << session.status().ToString();

  const auto& placements = (*session)->placements();
  ASSERT_EQ(placements.size(), 2u);
  EXPECT_EQ(placements[0].op_type, "Add");
  EXPECT_EQ(placements[0].provider, "mock#1");
  EXPECT_TRUE(placements[0].declines.empty());
  EXPECT_EQ(placements[1].op_type, "Relu");
  EXPECT_EQ(placements[1].provider, "mock#2");
  ASSERT_EQ(placements[1].declines.size(), 1u);
  EXPECT_EQ(placements[1].declines[0].provider, "mock#1");
  EXPECT_EQ(placements[1].declines[0].reason, "no relu here");

  std::vector<nxrt::NamedTensor> inputs{{"a", Floats({4}, {1, -2, 3, -4})},
                                        {"b", Floats({4}, {1, 1, -5, 1})}};
  auto outputs = (*session)->Run(inputs);
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  ASSERT_EQ(outputs->size(), 1u);
  EXPECT_EQ(ValuesOf((*outputs)[0]), (std::vector<float>{2, 0, 0, 0}));

  // Each EP computed the node it claimed.
  auto& mock = nxrt_test::MockLibrary::Get();
  EXPECT_EQ(nxrt_test::CountPrefix(mock.CallLog(first), "create_kernel Add"), 1u);
  EXPECT_EQ(nxrt_test::CountPrefix(mock.CallLog(first), "create_kernel Relu"), 0u);
  EXPECT_EQ(nxrt_test::CountPrefix(mock.CallLog(second), "create_kernel Relu"), 1u);
  EXPECT_EQ(nxrt_test::CountPrefix(mock.CallLog(second), "create_kernel Add"), 0u);
}

TEST(Partitioning, NodeNobodyClaimsFailsCreationNamingEveryReason) {
  const std::string log = nxrt_test::TestLogId();
  nxrt::SessionOptions options;
  options.providers.push_back(Mock(log, {{"decline", "Relu:first says no"}}));
  options.providers.push_back(Mock(log, {{"claim", "Add"}}));
  auto session = nxrt::Session::Create(nxrt_test::TestEnvironment(), AddThenRelu(), options);
  ASSERT_FALSE(session.ok());
  const std::string& message = session.status().message();
  EXPECT_EQ(session.status().code(), nxrt::StatusCode::kUnsupported);
  EXPECT_NE(message.find("test.onnx"), std::string::npos) << message;
  EXPECT_NE(message.find("y_Relu"), std::string::npos) << message;
  EXPECT_NE(message.find("(Relu)"), std::string::npos) << message;
  EXPECT_NE(message.find("domain ai.onnx"), std::string::npos) << message;
  EXPECT_NE(message.find("opset 17"), std::string::npos) << message;
  EXPECT_NE(message.find("mock#1 declined: first says no"), std::string::npos) << message;
  EXPECT_NE(message.find("mock#2 declined: the mock EP was not told to claim Relu"),
            std::string::npos)
      << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << "one line: " << message;
}

TEST(Partitioning, UnknownProviderFailsCreation) {
  nxrt::SessionOptions options;
  options.providers.push_back({"no_such_plugin", {}});
  auto session = nxrt::Session::Create(nxrt_test::TestEnvironment(), AddThenRelu(), options);
  ASSERT_FALSE(session.ok());
  EXPECT_NE(session.status().message().find("no_such_plugin"), std::string::npos)
      << session.status().message();
}

TEST(Partitioning, ReportsDeclaredInputsAndOutputs) {
  auto session = nxrt::Session::Create(nxrt_test::TestEnvironment(),
                                       ModelBuilder()
                                           .Input("x", {std::string("N"), int64_t{3}})
                                           .Node("Relu", {"x"}, "y")
                                           .Output("y")
                                           .Build(),
                                       nxrt_test::MockOptions(nxrt_test::TestLogId()));
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  ASSERT_EQ((*session)->inputs().size(), 1u);
  EXPECT_EQ((*session)->inputs()[0].name, "x");
  EXPECT_EQ((*session)->inputs()[0].dtype, nxrt::DataType::kFloat32);
  EXPECT_EQ((*session)->inputs()[0].shape, (std::vector<std::string>{"N", "3"}));
  ASSERT_EQ((*session)->outputs().size(), 1u);
  EXPECT_EQ((*session)->outputs()[0].name, "y");
  EXPECT_EQ((*session)->outputs()[0].shape, (std::vector<std::string>{"N", "3"}));
}

}  // namespace

TEST(Partitioning, ProviderWithoutItsDeviceIsSkippedForTheNext) {
  const std::string log = nxrt_test::TestLogId();
  nxrt::SessionOptions options;
  options.providers.push_back(Mock(log, {{"unavailable", "no mock device: none here"}}));
  options.providers.push_back(Mock(log));
  auto session = nxrt::Session::Create(nxrt_test::TestEnvironment(), AddThenRelu(), options);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  for (const auto& placement : (*session)->placements()) EXPECT_EQ(placement.provider, "mock#2");

  std::vector<nxrt::NamedTensor> inputs{{"a", Floats({4}, {1, -2, 3, -4})},
                                        {"b", Floats({4}, {1, 1, -5, 1})}};
  auto outputs = (*session)->Run(inputs);
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  EXPECT_EQ(ValuesOf((*outputs)[0]), (std::vector<float>{2, 0, 0, 0}));
}

TEST(Partitioning, NoAvailableProviderFailsCreationSayingWhy) {
  const std::string log = nxrt_test::TestLogId();
  nxrt::SessionOptions options;
  options.providers.push_back(Mock(log, {{"unavailable", "no mock device: none here"}}));
  auto session = nxrt::Session::Create(nxrt_test::TestEnvironment(), AddThenRelu(), options);
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.status().code(), nxrt::StatusCode::kUnavailable);
  EXPECT_NE(session.status().message().find("create_ep failed: no mock device: none here"),
            std::string::npos)
      << session.status().message();
}
