// `nxrt run`: outputs written as TensorProto files that read back to the
// model's answer, random inputs with --dim, --shape or --free-dim, the JSON report,
// and one-line errors for a missing model, an unknown EP, a wrong input name,
// an unbound symbolic dim, an input the fixed dim refuses, a model that needs
// more memory than --memory-limit and a run that passes --time-limit; and the
// trace --profile writes.
#include <fstream>
#include <limits>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "model_files.hpp"
#include "nxrt/graph/test_data.hpp"
#include "nxrt_process.hpp"
#include "trace_file.hpp"

namespace nxrt_test {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

class RunCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteAddReluModel(model_, {2, 3});
    WriteTensorFile(a_file_, FloatTensor("a", {2, 3}, a_));
    WriteTensorFile(b_file_, FloatTensor("b", {2, 3}, b_));
  }

  ScratchFolder scratch_{"run"};
  std::filesystem::path model_ = scratch_.path() / "add_relu.onnx";
  std::filesystem::path a_file_ = scratch_.path() / "in" / "a.pb";
  std::filesystem::path b_file_ = scratch_.path() / "in" / "b.pb";
  std::vector<float> a_{1, -2, 3, -4, 5, -6};
  std::vector<float> b_{0.5f, 1, -4, 2, 0.25f, 7};
};

void ExpectOneLineError(const ProcessResult& result) {
  EXPECT_EQ(result.exit_code, 1) << result.err;
  const std::vector<std::string> lines = Lines(result.err);
  ASSERT_EQ(lines.size(), 1u) << result.err;
  EXPECT_THAT(lines[0], StartsWith("nxrt: error: "));
}

TEST_F(RunCommandTest, WritesOutputsThatReadBackAsTheModelsAnswer) {
  const auto out_dir = scratch_.path() / "out";
  const ProcessResult result =
      RunNxrt({"run", model_.string(), "--ep", "cpu", "--input", "a=" + a_file_.string(), "--input",
               "b=" + b_file_.string(), "--output-dir", out_dir.string()},
              scratch_.path());
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("y: float [2,3] "));

  auto read = nxrt::graph::ReadTestValueFile(out_dir / "output_0.pb");
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(read->tensor.name, "y");
  EXPECT_EQ(read->tensor.dims, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(FloatValues(read->tensor), AddRelu(a_, b_));
}

TEST_F(RunCommandTest, RandomInputsNeedEverySymbolicDimBound) {
  const auto symbolic = scratch_.path() / "symbolic.onnx";
  WriteAddReluModel(symbolic, {"batch", 3});
  const ProcessResult unbound = RunNxrt({"run", symbolic.string(), "--random"}, scratch_.path());
  ExpectOneLineError(unbound);
  EXPECT_THAT(unbound.err, HasSubstr("input 'a'"));
  EXPECT_THAT(unbound.err, HasSubstr("'batch'"));
  EXPECT_THAT(unbound.err, HasSubstr("--dim batch=VALUE"));

  const ProcessResult bound =
      RunNxrt({"run", symbolic.string(), "--random", "--dim", "batch=4"}, scratch_.path());
  ASSERT_EQ(bound.exit_code, 0) << bound.err;
  EXPECT_THAT(bound.out, HasSubstr("y: float [4,3] "));
}

TEST_F(RunCommandTest, ShapeGivesARandomInputItsWholeShape) {
  // '?' is paddle2onnx's unnamed dim: no --dim can name it.
  const auto unnamed = scratch_.path() / "unnamed.onnx";
  WriteAddReluModel(unnamed, {"?", 3});
  const ProcessResult unbound = RunNxrt({"run", unnamed.string(), "--random"}, scratch_.path());
  ExpectOneLineError(unbound);
  EXPECT_THAT(unbound.err, HasSubstr("--shape a=D,D,..."));
  const ProcessResult sized =
      RunNxrt({"run", unnamed.string(), "--random", "--shape", "a=4,3", "--shape", "b=4,3"},
              scratch_.path());
  ASSERT_EQ(sized.exit_code, 0) << sized.err;
  EXPECT_THAT(sized.out, HasSubstr("y: float [4,3] "));
}

TEST_F(RunCommandTest, ShapesThatCannotBeMetAreOneLineErrors) {
  const auto unnamed = scratch_.path() / "unnamed.onnx";
  WriteAddReluModel(unnamed, {"?", 3});
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"a=4,5", "dim 1 is declared 3"},        {"a=4", "declares rank 2"},
      {"c=1,3", "the model has no input 'c'"}, {"a=4,x", "non-negative integer"},
      {"a=4,", "non-negative integer"},
  };
  for (const auto& [shape, expected] : cases) {
    const ProcessResult refused =
        RunNxrt({"run", unnamed.string(), "--random", "--shape", shape, "--shape", "b=4,3"},
                scratch_.path());
    ExpectOneLineError(refused);
    EXPECT_THAT(refused.err, HasSubstr(expected)) << shape;
  }
}

TEST_F(RunCommandTest, FreeDimFixesTheDimSoRandomInputsNeedNoDim) {
  const auto symbolic = scratch_.path() / "symbolic.onnx";
  WriteAddReluModel(symbolic, {"batch", 3});
  const ProcessResult fixed =
      RunNxrt({"run", symbolic.string(), "--random", "--free-dim", "batch=5"}, scratch_.path());
  ASSERT_EQ(fixed.exit_code, 0) << fixed.err;
  EXPECT_THAT(fixed.out, HasSubstr("y: float [5,3] "));
  // An input file of another extent no longer fits the session.
  const ProcessResult refused =
      RunNxrt({"run", symbolic.string(), "--input", "a=" + a_file_.string(), "--random",
               "--free-dim", "batch=5"},
              scratch_.path());
  ExpectOneLineError(refused);
  EXPECT_THAT(refused.err, HasSubstr("input 'a' dim 0 is 2, expected 5"));
}

TEST_F(RunCommandTest, RandomInputsRepeatWithTheSeed) {
  const auto first_dir = scratch_.path() / "first";
  const auto second_dir = scratch_.path() / "second";
  const auto third_dir = scratch_.path() / "third";
  ASSERT_EQ(RunNxrt({"run", model_.string(), "--random", "--seed", "7", "--output-dir",
                     first_dir.string()},
                    scratch_.path())
                .exit_code,
            0);
  ASSERT_EQ(RunNxrt({"run", model_.string(), "--random", "--seed", "7", "--output-dir",
                     second_dir.string()},
                    scratch_.path())
                .exit_code,
            0);
  ASSERT_EQ(RunNxrt({"run", model_.string(), "--random", "--seed", "8", "--output-dir",
                     third_dir.string()},
                    scratch_.path())
                .exit_code,
            0);
  const std::string first = ReadWholeFile(first_dir / "output_0.pb");
  EXPECT_FALSE(first.empty());
  EXPECT_EQ(first, ReadWholeFile(second_dir / "output_0.pb"));
  EXPECT_NE(first, ReadWholeFile(third_dir / "output_0.pb"));
}

TEST_F(RunCommandTest, JsonReportDescribesEachOutput) {
  const ProcessResult result =
      RunNxrt({"run", model_.string(), "--input", "a=" + a_file_.string(), "--input",
               "b=" + b_file_.string(), "--repeat", "3", "--json"},
              scratch_.path());
  ASSERT_EQ(result.exit_code, 0) << result.err;
  ASSERT_THAT(result.out, StartsWith("{"));
  EXPECT_EQ(Lines(result.out).size(), 1u);
  EXPECT_THAT(result.out, HasSubstr("\"runs\":3"));
  EXPECT_THAT(result.out, HasSubstr("\"outputs\":[{\"name\":\"y\",\"kind\":\"tensor\","
                                    "\"dtype\":\"float\",\"shape\":[2,3],\"first_values\":["));
  // Relu(1 + 0.5) is the first value.
  EXPECT_THAT(result.out, HasSubstr("\"first_values\":[1.5,"));
}

TEST_F(RunCommandTest, MissingModelIsAOneLineError) {
  const auto missing = scratch_.path() / "missing.onnx";
  const ProcessResult result = RunNxrt({"run", missing.string(), "--random"}, scratch_.path());
  ExpectOneLineError(result);
  EXPECT_THAT(result.err, HasSubstr(missing.string()));
  EXPECT_THAT(result.err, HasSubstr("not found"));
}

TEST_F(RunCommandTest, UnknownProviderIsAOneLineError) {
  const ProcessResult result =
      RunNxrt({"run", model_.string(), "--random", "--ep", "nosuch"}, scratch_.path());
  ExpectOneLineError(result);
  EXPECT_THAT(result.err, HasSubstr("'nosuch'"));
}

TEST_F(RunCommandTest, WrongInputNameIsAOneLineError) {
  const ProcessResult result = RunNxrt(
      {"run", model_.string(), "--input", "c=" + a_file_.string(), "--random"}, scratch_.path());
  ExpectOneLineError(result);
  EXPECT_THAT(result.err, HasSubstr("no input 'c'"));
  EXPECT_THAT(result.err, HasSubstr("its inputs are a, b"));
}

TEST_F(RunCommandTest, InputWithoutValueSaysHowToGiveOne) {
  const ProcessResult result =
      RunNxrt({"run", model_.string(), "--input", "a=" + a_file_.string()}, scratch_.path());
  ExpectOneLineError(result);
  EXPECT_THAT(result.err, HasSubstr("input 'b' has no value"));
}

TEST_F(RunCommandTest, BadFlagIsAOneLineUsageError) {
  const ProcessResult result = RunNxrt({"run", model_.string(), "--no-such-flag"}, scratch_.path());
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(Lines(result.err), ::testing::ElementsAre(StartsWith("nxrt: error: ")));
  EXPECT_THAT(result.err, HasSubstr("--no-such-flag"));
}

TEST_F(RunCommandTest, UnconvertibleValueIsAOneLineUsageError) {
  const ProcessResult result =
      RunNxrt({"run", model_.string(), "--random", "--repeat", "many"}, scratch_.path());
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(Lines(result.err), ::testing::ElementsAre(StartsWith("nxrt: error: ")));
  EXPECT_THAT(result.err, HasSubstr("--repeat"));
}

TEST_F(RunCommandTest, MemoryLimitRefusesAModelThatNeedsMoreInOneLine) {
  const auto symbolic = scratch_.path() / "symbolic.onnx";
  WriteAddReluModel(symbolic, {"batch", 3});
  // 100,000 rows of 3 floats: 1.2 MB a value.
  const ProcessResult over = RunNxrt(
      {"run", symbolic.string(), "--random", "--dim", "batch=100000", "--memory-limit", "0.5"},
      scratch_.path());
  ExpectOneLineError(over);
  EXPECT_THAT(over.err, HasSubstr(symbolic.string()));
  EXPECT_THAT(over.err, HasSubstr("memory limit of 0.5 MiB"));
  EXPECT_THAT(over.err, HasSubstr("--memory-limit"));

  const ProcessResult under = RunNxrt(
      {"run", symbolic.string(), "--random", "--dim", "batch=1000", "--memory-limit", "0.5"},
      scratch_.path());
  ASSERT_EQ(under.exit_code, 0) << under.err;

  const ProcessResult negative =
      RunNxrt({"run", model_.string(), "--random", "--memory-limit", "-1"}, scratch_.path());
  EXPECT_EQ(negative.exit_code, 2);
  EXPECT_THAT(Lines(negative.err), ::testing::ElementsAre(StartsWith("nxrt: error: ")));
  EXPECT_THAT(negative.err, HasSubstr("0 (no limit) or more"));
}

// Range expanded into a Loop (onnx's test case): from INT32_MIN down to
// 10 by -3 the Loop counts 2^31 / 3 trips, and --time-limit stops it inside
// the body; the case's own inputs finish well within the limit.
TEST_F(RunCommandTest, TimeLimitStopsALoopBetweenBodyNodes) {
  const std::filesystem::path& case_dir = kRangeAsLoopCase;
  if (!std::filesystem::exists(case_dir)) GTEST_SKIP() << case_dir << " is missing";
  const auto data = case_dir / "test_data_set_0";
  const auto start_file = scratch_.path() / "in" / "start.pb";
  WriteTensorFile(start_file, Int32Scalar("start", std::numeric_limits<int32_t>::min()));

  const ProcessResult stopped =
      RunNxrt({"run", (case_dir / "model.onnx").string(), "--input", "start=" + start_file.string(),
               "--input", "limit=" + (data / "input_1.pb").string(), "--input",
               "delta=" + (data / "input_2.pb").string(), "--time-limit", "0.3"},
              scratch_.path());
  ExpectOneLineError(stopped);
  EXPECT_THAT(stopped.err, HasSubstr("(Loop)"));
  EXPECT_THAT(stopped.err, HasSubstr("deadline passed"));
  EXPECT_THAT(stopped.err, HasSubstr("raise --time-limit"));

  const ProcessResult finished =
      RunNxrt({"run", (case_dir / "model.onnx").string(), "--input",
               "start=" + (data / "input_0.pb").string(), "--input",
               "limit=" + (data / "input_1.pb").string(), "--input",
               "delta=" + (data / "input_2.pb").string(), "--time-limit", "60"},
              scratch_.path());
  EXPECT_EQ(finished.exit_code, 0) << finished.err;
}

// onnx's Loop case: one Loop node whose 9-node body runs 5 trips a run; its
// two Constant nodes (no body outputs) become initializers, so 7 run.
TEST_F(RunCommandTest, ProfileTracesEveryNodeWithTheLoopsBodyInsideIt) {
  const std::filesystem::path case_dir = "/usr/share/libonnx-testdata/data/node/test_loop11";
  if (!std::filesystem::exists(case_dir)) GTEST_SKIP() << case_dir << " is missing";
  onnx::ModelProto model;
  std::ifstream model_file(case_dir / "model.onnx", std::ios::binary);
  ASSERT_TRUE(model.ParseFromIstream(&model_file));
  ASSERT_EQ(model.graph().node_size(), 1);
  const onnx::GraphProto& body = model.graph().node(0).attribute(0).g();
  std::set<std::string> body_outputs;
  for (const auto& output : body.output()) body_outputs.insert(output.name());
  int body_nodes = 0;
  for (const auto& node : body.node()) {
    const bool made_initializer = node.op_type() == "Constant" &&
                                  node.attribute(0).name() == "value" &&
                                  !body_outputs.contains(node.output(0));
    body_nodes += made_initializer ? 0 : 1;
  }
  ASSERT_EQ(body_nodes, 7);
  constexpr int kTrips = 5;
  constexpr int kRuns = 2;

  const auto data = case_dir / "test_data_set_0";
  const auto trace = scratch_.path() / "loop.trace.json";
  const ProcessResult result = RunNxrt(
      {"run", (case_dir / "model.onnx").string(), "--input",
       "trip_count=" + (data / "input_0.pb").string(), "--input",
       "cond=" + (data / "input_1.pb").string(), "--input", "y=" + (data / "input_2.pb").string(),
       "--repeat", std::to_string(kRuns), "--profile", trace.string()},
      scratch_.path());
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const size_t events = static_cast<size_t>(kRuns * (1 + kTrips * body_nodes));
  EXPECT_THAT(result.out,
              HasSubstr("profile: " + std::to_string(events) + " events -> " + trace.string()));
  EXPECT_THAT(result.out, HasSubstr("  Loop "));

  const std::vector<TraceEvent> trace_events = ReadTrace(trace);
  ASSERT_EQ(trace_events.size(), events);
  std::vector<const TraceEvent*> loops;
  for (const TraceEvent& event : trace_events) {
    EXPECT_EQ(event.phase, "X");
    EXPECT_EQ(event.category, "node");
    EXPECT_EQ(event.provider, "cpu#1");
    EXPECT_GE(event.duration_us, 0);
    if (event.depth == 0) loops.push_back(&event);
  }
  ASSERT_EQ(loops.size(), static_cast<size_t>(kRuns));
  for (const TraceEvent* loop : loops) {
    EXPECT_EQ(loop->op_type, "Loop");
    EXPECT_EQ(loop->input_shapes, "[] [] [1]");
    int inside = 0;
    for (const TraceEvent& event : trace_events) {
      // One nanosecond of slack for the microseconds' rounding.
      if (event.depth != 1 || event.start_us + 1e-3 < loop->start_us ||
          event.start_us + event.duration_us > loop->start_us + loop->duration_us + 1e-3) {
        continue;
      }
      EXPECT_EQ(event.graph, "loop_body");
      ++inside;
    }
    EXPECT_EQ(inside, kTrips * body_nodes);
  }
}

TEST_F(RunCommandTest, ProfileIntoAMissingFolderIsAOneLineError) {
  const auto trace = scratch_.path() / "no such folder" / "trace.json";
  const ProcessResult result =
      RunNxrt({"run", model_.string(), "--input", "a=" + a_file_.string(), "--input",
               "b=" + b_file_.string(), "--profile", trace.string()},
              scratch_.path());
  ExpectOneLineError(result);
  EXPECT_THAT(result.err, HasSubstr("--profile " + trace.string()));
  EXPECT_THAT(result.err, HasSubstr("check that its folder exists"));
}

// y = a x w, with w an initializer {1, 2; 3, 4} the model also lists as the
// graph input w: float [2, 2]. The cpu EP prepares a constant B of MatMul
// ahead of the run, so a w treated as constant would ignore --input.
TEST_F(RunCommandTest, InputReplacesAnOverridableInitializer) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  onnx::GraphProto* graph = model.mutable_graph();
  graph->set_name("overridable_weight");
  SetFloatTensorType(graph->add_input(), "a", {1, 2});
  SetFloatTensorType(graph->add_input(), "w", {2, 2});
  SetFloatTensorType(graph->add_output(), "y", {1, 2});
  onnx::TensorProto* weight = graph->add_initializer();
  weight->set_name("w");
  weight->set_data_type(onnx::TensorProto::FLOAT);
  weight->add_dims(2);
  weight->add_dims(2);
  for (float v : {1.0f, 2.0f, 3.0f, 4.0f}) weight->add_float_data(v);
  onnx::NodeProto* matmul = graph->add_node();
  matmul->set_op_type("MatMul");
  matmul->add_input("a");
  matmul->add_input("w");
  matmul->add_output("y");
  const auto model_file = scratch_.path() / "overridable_weight.onnx";
  {
    std::ofstream out(model_file, std::ios::binary);
    ASSERT_TRUE(model.SerializeToOstream(&out));
  }
  const auto a_file = scratch_.path() / "in" / "a_row.pb";
  const auto w_file = scratch_.path() / "in" / "w.pb";
  WriteTensorFile(a_file, FloatTensor("a", {1, 2}, {1, 1}));
  WriteTensorFile(w_file, FloatTensor("w", {2, 2}, {-1, 0, 0, 10}));

  const ProcessResult inspected = RunNxrt({"inspect", model_file.string()}, scratch_.path());
  ASSERT_EQ(inspected.exit_code, 0) << inspected.err;
  EXPECT_THAT(inspected.out, HasSubstr("overridable initializers"));
  EXPECT_THAT(inspected.out, HasSubstr("  w: float [2,2]"));

  const ProcessResult with_model_weight =
      RunNxrt({"run", model_file.string(), "--input", "a=" + a_file.string()}, scratch_.path());
  ASSERT_EQ(with_model_weight.exit_code, 0) << with_model_weight.err;
  EXPECT_THAT(with_model_weight.out, HasSubstr("y: float [1,2] 4, 6"));

  const ProcessResult replaced =
      RunNxrt({"run", model_file.string(), "--input", "a=" + a_file.string(), "--input",
               "w=" + w_file.string(), "--repeat", "3"},
              scratch_.path());
  ASSERT_EQ(replaced.exit_code, 0) << replaced.err;
  EXPECT_THAT(replaced.out, HasSubstr("y: float [1,2] -1, 10"));
}

}  // namespace
}  // namespace nxrt_test
