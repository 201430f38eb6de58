// An initializer the model also lists among its graph inputs: a run may feed
// a replacement by name and otherwise takes the model's data, run after run
// (settled dispatch included); the session lists it apart from the inputs;
// a replacement must fit the declared type.
#include <onnx/onnx_pb.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "onnx_model_builder.hpp"
#include "session/mock_session_support.hpp"

namespace {

using ::testing::HasSubstr;
namespace model = nxrt::graph::testing;

// y = Relu(a + b) over float [2, 2], with b an initializer {10, -10} that is
// also declared as the graph input b: float [1, 2].
std::string ModelWithOverridableBias() {
  onnx::ModelProto proto = model::NewModel();
  model::AddInput(proto, "a", {2, 2});
  model::AddInput(proto, "b", {1, 2});
  model::AddOutput(proto, "y", {2, 2});
  onnx::TensorProto* bias = proto.mutable_graph()->add_initializer();
  bias->set_name("b");
  bias->set_data_type(onnx::TensorProto::FLOAT);
  bias->add_dims(1);
  bias->add_dims(2);
  bias->add_float_data(10);
  bias->add_float_data(-10);
  model::AddNode(proto, "Add", "add", {"a", "b"}, {"s"});
  model::AddNode(proto, "Relu", "relu", {"s"}, {"y"});
  return proto.SerializeAsString();
}

class OverridableInitializer : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string bytes = ModelWithOverridableBias();
    auto session = nxrt::Session::Create(
        nxrt_test::TestEnvironment(),
        std::span<const std::byte>(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()),
        "overridable_bias.onnx", std::filesystem::temp_directory_path(),
        nxrt_test::MockOptions(nxrt_test::TestLogId()));
    ASSERT_TRUE(session.ok()) << session.status().ToString();
    session_ = std::move(session).value();
  }

  nxrt::Result<std::vector<nxrt::Tensor>> Run(const std::vector<float>* bias) {
    std::vector<nxrt::NamedTensor> inputs{{"a", nxrt_test::Floats({2, 2}, a_)}};
    if (bias != nullptr) inputs.push_back({"b", nxrt_test::Floats({1, 2}, *bias)});
    return session_->Run(inputs);
  }

  void ExpectBias(const std::vector<float>* bias, const std::vector<float>& expected) {
    const auto outputs = Run(bias);
    ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
    EXPECT_EQ(nxrt_test::ValuesOf((*outputs)[0]), expected);
  }

  std::vector<float> a_{1, 2, -3, 4};
  std::unique_ptr<nxrt::Session> session_;
};

TEST_F(OverridableInitializer, IsListedApartFromTheInputs) {
  ASSERT_EQ(session_->inputs().size(), 1u);
  EXPECT_EQ(session_->inputs()[0].name, "a");
  ASSERT_EQ(session_->overridable_initializers().size(), 1u);
  const nxrt::ValueDescription& bias = session_->overridable_initializers()[0];
  EXPECT_EQ(bias.name, "b");
  EXPECT_EQ(bias.dtype, nxrt::DataType::kFloat32);
  EXPECT_EQ(bias.shape, (std::vector<std::string>{"1", "2"}));
}

TEST_F(OverridableInitializer, ARunTakesTheFedValueAndOtherwiseTheModels) {
  const std::vector<float> model_bias_result{11, 0, 7, 0};
  const std::vector<float> fed{-1, 1};
  const std::vector<float> other{0.5f, -5};
  // Repeated, so the later runs go through settled dispatch.
  for (int round = 0; round < 3; ++round) {
    ExpectBias(nullptr, model_bias_result);
    ExpectBias(&fed, {0, 3, 0, 5});
    ExpectBias(&other, {1.5f, 0, 0, 0});
  }
  ExpectBias(nullptr, model_bias_result);
}

TEST_F(OverridableInitializer, AReplacementMustFitTheDeclaredType) {
  std::vector<nxrt::NamedTensor> inputs{{"a", nxrt_test::Floats({2, 2}, a_)},
                                        {"b", nxrt_test::Floats({1, 3}, {1, 2, 3})}};
  const auto wrong = session_->Run(inputs);
  ASSERT_FALSE(wrong.ok());
  EXPECT_THAT(wrong.status().message(), HasSubstr("'b'"));
  ExpectBias(nullptr, {11, 0, 7, 0});
}

TEST_F(OverridableInitializer, AnUnknownNameListsTheOverridableInitializersToo) {
  std::vector<nxrt::NamedTensor> inputs{{"a", nxrt_test::Floats({2, 2}, a_)},
                                        {"c", nxrt_test::Floats({1, 2}, {1, 2})}};
  const auto unknown = session_->Run(inputs);
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.status().message(),
              HasSubstr("its inputs are: a; its overridable initializers: b"));
}

}  // namespace
