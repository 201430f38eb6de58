// `nxrt inspect`: what the model says about itself, the declared inputs and
// outputs with symbolic dims (or fixed by --free-dim), which EP runs each
// node with the declines before it, and the capture plan, as text and as
// JSON.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "model_files.hpp"
#include "nxrt_process.hpp"

namespace nxrt_test {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

class InspectCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The cpu EP declines the custom op; the mock EP after it claims everything.
    WriteAddReluModel(model_, {"batch", 3}, "Frobnicate");
  }

  ScratchFolder scratch_{"inspect"};
  std::filesystem::path model_ = scratch_.path() / "custom.onnx";
};

TEST_F(InspectCommandTest, ShowsDimsPlacementsDeclinesAndCapturePlan) {
  const ProcessResult result =
      RunNxrt({"inspect", model_.string(), "--ep", "cpu,mock"}, scratch_.path());
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("  a: float [batch,3]\n"));
  EXPECT_THAT(result.out, HasSubstr("  y: float [batch,3]\n"));
  EXPECT_THAT(result.out, HasSubstr("partition (2 nodes):\n"));
  EXPECT_THAT(result.out, HasSubstr("node 'add' (Add) -> cpu#1"));
  EXPECT_THAT(result.out, HasSubstr("node 'relu' (com.example::Frobnicate) -> mock#2"));
  EXPECT_THAT(result.out, HasSubstr("    declined by cpu#1: "));
  EXPECT_THAT(result.out, HasSubstr("capture plan:\n"));
  EXPECT_THAT(result.out, HasSubstr("eager seams: "));
}

TEST_F(InspectCommandTest, JsonHoldsTheSameFacts) {
  const ProcessResult result = RunNxrt(
      {"inspect", model_.string(), "--ep", "cpu", "--ep", "mock", "--json"}, scratch_.path());
  ASSERT_EQ(result.exit_code, 0) << result.err;
  ASSERT_THAT(result.out, StartsWith("{\"model\":"));
  EXPECT_THAT(result.out,
              HasSubstr("\"inputs\":[{\"name\":\"a\",\"dtype\":\"float\",\"shape\":[\"batch\","
                        "\"3\"]}"));
  EXPECT_THAT(result.out, HasSubstr("{\"node\":\"relu\",\"op_type\":\"Frobnicate\",\"domain\":"
                                    "\"com.example\",\"provider\":\"mock#2\""));
  EXPECT_THAT(result.out, HasSubstr("\"declines\":[{\"provider\":\"cpu#1\",\"reason\":\""));
  EXPECT_THAT(result.out, HasSubstr("\"capture\":{\"mode\":"));
  EXPECT_THAT(result.out, HasSubstr("\"segments\":["));
  EXPECT_THAT(result.out, HasSubstr("\"ineligible\":["));
}

TEST_F(InspectCommandTest, NodeNobodyClaimsIsAOneLineError) {
  const ProcessResult result =
      RunNxrt({"inspect", model_.string(), "--ep", "cpu"}, scratch_.path());
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(Lines(result.err).size(), 1u) << result.err;
  EXPECT_THAT(result.err, HasSubstr("Frobnicate"));
}

TEST_F(InspectCommandTest, FreeDimFixesTheDimAndWhatFollowsFromIt) {
  const ProcessResult result = RunNxrt(
      {"inspect", model_.string(), "--ep", "cpu,mock", "--free-dim", "batch=2"}, scratch_.path());
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("  a: float [2,3]\n"));
  EXPECT_THAT(result.out, HasSubstr("  y: float [2,3]\n"));
}

TEST_F(InspectCommandTest, FreeDimsTheInputsCannotTakeAreOneLineErrors) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"bacth=2", "no input has a dim of that name (the inputs' named dims: batch)"},
      {"batch=two", "--free-dim 'batch=two': the value must be a non-negative integer"},
      {"batch", "--free-dim 'batch': expected NAME=VALUE"}};
  for (const auto& [value, said] : cases) {
    const ProcessResult result = RunNxrt(
        {"inspect", model_.string(), "--ep", "cpu,mock", "--free-dim", value}, scratch_.path());
    EXPECT_EQ(result.exit_code, 1) << value;
    EXPECT_EQ(Lines(result.err).size(), 1u) << result.err;
    EXPECT_THAT(result.err, HasSubstr(said));
  }
}

// The add-relu model with a producer, a version, a two-line description and
// metadata_props, one of whose values holds an escape character.
void WriteDescribedModel(const std::filesystem::path& file) {
  WriteAddReluModel(file, {2, 3});
  onnx::ModelProto model;
  {
    std::ifstream in(file, std::ios::binary);
    ASSERT_TRUE(model.ParseFromIstream(&in));
  }
  model.set_producer_name("exporter");
  model.set_producer_version("2.1");
  model.set_model_version(7);
  model.set_doc_string("line one\nline two");
  for (const auto& [key, value] :
       {std::pair<std::string, std::string>{"labels", "cat,dog"}, {"colour", "\x1b[31mred"}}) {
    auto* property = model.add_metadata_props();
    property->set_key(key);
    property->set_value(value);
  }
  std::ofstream out(file, std::ios::binary);
  ASSERT_TRUE(model.SerializeToOstream(&out));
}

TEST(InspectMetadataTest, ShowsWhatTheModelSaysAboutItselfOneLineEach) {
  ScratchFolder scratch("inspect_metadata");
  const auto model = scratch.path() / "described.onnx";
  WriteDescribedModel(model);
  const ProcessResult result = RunNxrt({"inspect", model.string(), "--ep", "cpu"}, scratch.path());
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("\nproducer: exporter 2.1\nmodel version: 7\n"
                                    "description: line one\\nline two\n"));
  EXPECT_THAT(result.out,
              HasSubstr("metadata:\n  colour: \\x1b[31mred\n  labels: cat,dog\ninputs:\n"));
}

TEST(InspectMetadataTest, JsonHoldsTheMetadata) {
  ScratchFolder scratch("inspect_metadata_json");
  const auto model = scratch.path() / "described.onnx";
  WriteDescribedModel(model);
  const ProcessResult result =
      RunNxrt({"inspect", model.string(), "--ep", "cpu", "--json"}, scratch.path());
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(
      result.out,
      HasSubstr("\"metadata\":{\"producer_name\":\"exporter\",\"producer_version\":\"2.1\","
                "\"domain\":\"\",\"model_version\":7,\"description\":\"line one\\nline two\","
                "\"graph_description\":\"\",\"custom\":{\"colour\":\"\\u001b[31mred\","
                "\"labels\":\"cat,dog\"}}"));
}

}  // namespace
}  // namespace nxrt_test
