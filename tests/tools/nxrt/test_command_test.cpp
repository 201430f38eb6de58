// `nxrt test` on a folder of hand-made backend test cases: one that passes,
// one whose expected output is deliberately wrong, one whose model no EP
// can run, and one without data: the verdict lines, the closing totals, the
// exit status and the JSON report; and --timeout stopping a run in process.
#include <limits>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "model_files.hpp"
#include "nxrt_process.hpp"

namespace nxrt_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

class TestCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::vector<float> a{1, -2, 3, -4};
    const std::vector<float> b{0.5f, 1, -4, 2};
    std::vector<float> wrong = AddRelu(a, b);
    wrong[2] += 1.0f;
    WriteCase("good", "", a, b, AddRelu(a, b));
    WriteCase("wrong", "", a, b, wrong);
    WriteCase("unclaimed", "Frobnicate", a, b, AddRelu(a, b));
    std::filesystem::create_directories(cases_ / "no_data");
    WriteAddReluModel(cases_ / "no_data" / "model.onnx", {4});
  }

  void WriteCase(const std::string& name, const std::string& domain_op, const std::vector<float>& a,
                 const std::vector<float>& b, const std::vector<float>& y) {
    const auto folder = cases_ / name;
    std::filesystem::create_directories(folder);
    WriteAddReluModel(folder / "model.onnx", {4}, domain_op);
    WriteTensorFile(folder / "test_data_set_0" / "input_0.pb", FloatTensor("a", {4}, a));
    WriteTensorFile(folder / "test_data_set_0" / "input_1.pb", FloatTensor("b", {4}, b));
    WriteTensorFile(folder / "test_data_set_0" / "output_0.pb", FloatTensor("y", {4}, y));
  }

  ScratchFolder scratch_{"test"};
  std::filesystem::path cases_ = scratch_.path() / "cases";
};

TEST_F(TestCommandTest, PrintsOneVerdictPerCaseAndTheTotals) {
  const ProcessResult result = RunNxrt({"test", "--ep", "cpu", cases_.string()}, scratch_.path());
  EXPECT_EQ(result.exit_code, 1) << result.err;
  const std::vector<std::string> lines = Lines(result.out);
  ASSERT_EQ(lines.size(), 5u) << result.out;
  EXPECT_EQ(lines[0], "PASS good");
  EXPECT_THAT(lines[1], StartsWith("SKIP no_data: "));
  EXPECT_THAT(lines[2], StartsWith("ERROR unclaimed: "));
  EXPECT_THAT(lines[2], HasSubstr("Frobnicate"));
  // The third value was made one larger than Relu(3 + -4) = 0.
  EXPECT_EQ(lines[3],
            "FAIL wrong: output 'y' (test_data_set_0/output_0.pb): element 2 is 0, expected 1");
  EXPECT_EQ(lines[4], "1 passed, 2 failed, 1 skipped");
}

TEST_F(TestCommandTest, PassingCaseAloneExitsZero) {
  const ProcessResult result = RunNxrt({"test", (cases_ / "good").string()}, scratch_.path());
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(Lines(result.out), ElementsAre("PASS good", "1 passed, 0 failed"));
}

TEST_F(TestCommandTest, EpTakesOneValueSoEveryFolderAfterItIsACase) {
  const ProcessResult result =
      RunNxrt({"test", "--ep", "cpu", (cases_ / "good").string(), (cases_ / "good").string()},
              scratch_.path());
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(Lines(result.out), ElementsAre("PASS good", "PASS good", "2 passed, 0 failed"));
}

TEST_F(TestCommandTest, ToleranceDecidesAClosePair) {
  // |0 - 1| passes with atol 1 and fails with the default atol.
  const auto wrong = (cases_ / "wrong").string();
  EXPECT_EQ(RunNxrt({"test", "--atol", "1", wrong}, scratch_.path()).exit_code, 0);
  EXPECT_EQ(RunNxrt({"test", wrong}, scratch_.path()).exit_code, 1);
}

TEST_F(TestCommandTest, InProcessRunsGiveTheSameVerdicts) {
  const ProcessResult forked = RunNxrt({"test", cases_.string()}, scratch_.path());
  const ProcessResult in_process = RunNxrt({"test", "--no-fork", cases_.string()}, scratch_.path());
  EXPECT_EQ(in_process.exit_code, 1);
  EXPECT_EQ(in_process.out, forked.out);
}

TEST_F(TestCommandTest, JsonReportListsEveryCase) {
  const ProcessResult result = RunNxrt({"test", "--json", cases_.string()}, scratch_.path());
  EXPECT_EQ(result.exit_code, 1) << result.err;
  ASSERT_EQ(Lines(result.out).size(), 1u) << result.out;
  EXPECT_THAT(result.out,
              StartsWith("{\"cases\":[{\"name\":\"good\",\"path\":\"" + (cases_ / "good").string() +
                         "\",\"status\":\"pass\",\"message\":\"\"}"));
  EXPECT_THAT(result.out,
              HasSubstr("{\"name\":\"wrong\",\"path\":\"" + (cases_ / "wrong").string() +
                        "\",\"status\":\"fail\",\"message\":\"output 'y'"));
  EXPECT_THAT(result.out, HasSubstr("{\"name\":\"unclaimed\",\"path\":\"" +
                                    (cases_ / "unclaimed").string() + "\",\"status\":\"error\""));
  EXPECT_THAT(result.out, HasSubstr("\"status\":\"skip\""));
  EXPECT_THAT(result.out, HasSubstr("],\"passed\":1,\"failed\":2,\"skipped\":1}"));
}

TEST_F(TestCommandTest, CaseOverItsTimeLimitIsAnErrorLine) {
  // No child process loads a plugin and runs a model within a microsecond.
  const ProcessResult result =
      RunNxrt({"test", "--timeout", "0.000001", (cases_ / "good").string()}, scratch_.path());
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_THAT(Lines(result.out),
              ElementsAre(StartsWith("ERROR good: timed out after 1e-06 s"), "0 passed, 1 failed"));
}

// In this process, --timeout stops a run between nodes: here inside the
// Loop of onnx's expanded Range case, given INT32_MIN as its start, which
// makes 2^31 / 3 trips.
TEST_F(TestCommandTest, InProcessRunOverItsTimeLimitStopsBetweenNodes) {
  const std::filesystem::path& source = kRangeAsLoopCase;
  if (!std::filesystem::exists(source)) GTEST_SKIP() << source << " is missing";
  const auto folder = cases_ / "long_loop";
  std::filesystem::create_directories(folder / "test_data_set_0");
  std::filesystem::copy_file(source / "model.onnx", folder / "model.onnx");
  for (const char* file : {"input_1.pb", "input_2.pb", "output_0.pb"}) {
    std::filesystem::copy_file(source / "test_data_set_0" / file,
                               folder / "test_data_set_0" / file);
  }
  WriteTensorFile(folder / "test_data_set_0" / "input_0.pb",
                  Int32Scalar("start", std::numeric_limits<int32_t>::min()));

  const ProcessResult result =
      RunNxrt({"test", "--no-fork", "--timeout", "0.3", folder.string()}, scratch_.path());
  EXPECT_EQ(result.exit_code, 1) << result.err;
  const std::vector<std::string> lines = Lines(result.out);
  ASSERT_EQ(lines.size(), 2u) << result.out;
  EXPECT_THAT(lines[0], StartsWith("ERROR long_loop: "));
  EXPECT_THAT(lines[0], HasSubstr("(Loop)"));
  EXPECT_THAT(lines[0], HasSubstr("deadline passed"));
  EXPECT_THAT(lines[0], HasSubstr("raise --timeout"));
  EXPECT_EQ(lines[1], "0 passed, 1 failed");
}

TEST_F(TestCommandTest, MissingFolderIsAOneLineError) {
  const auto missing = scratch_.path() / "nowhere";
  const ProcessResult result = RunNxrt({"test", missing.string()}, scratch_.path());
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(Lines(result.err).size(), 1u) << result.err;
  EXPECT_THAT(result.err, HasSubstr(missing.string()));
}

}  // namespace
}  // namespace nxrt_test
