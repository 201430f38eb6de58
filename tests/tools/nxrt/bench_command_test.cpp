// `nxrt bench`: timings and counters as text and JSON (median_us and p90_us
// are what scripts/bench-vs-ort reads, create_us and first_run_us what
// scripts/zoo-vs-ort adds, with cold_first_us under --warm-process), input files, --threads
// reaching the cpu EP only, --ep-option reaching the provider it names, --profile and
// --time-limit.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>

#include "model_files.hpp"
#include "nxrt_process.hpp"
#include "trace_file.hpp"

namespace nxrt_test {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::StartsWith;

class BenchCommandTest : public ::testing::Test {
 protected:
  void SetUp() override { WriteAddReluModel(model_, {"batch", 8}); }

  ScratchFolder scratch_{"bench"};
  std::filesystem::path model_ = scratch_.path() / "add_relu.onnx";
};

double JsonNumber(const std::string& json, const std::string& key) {
  std::smatch match;
  const std::regex pattern("\"" + key + "\":([-0-9.e+]+)");
  if (!std::regex_search(json, match, pattern)) return -1;
  return std::stod(match[1]);
}

TEST_F(BenchCommandTest, JsonReportsPercentilesAndCounters) {
  const ProcessResult result = RunNxrt({"bench", model_.string(), "--dim", "batch=2", "--runs", "5",
                                        "--warmup", "2", "--threads", "1", "--json"},
                                       scratch_.path());
  ASSERT_EQ(result.exit_code, 0) << result.err;
  ASSERT_THAT(result.out, StartsWith("{"));
  const double median = JsonNumber(result.out, "median_us");
  const double p90 = JsonNumber(result.out, "p90_us");
  EXPECT_GT(median, 0);
  EXPECT_GE(p90, median);
  EXPECT_THAT(result.out, HasSubstr("\"runs\":5,\"warmup\":2"));
  // Two nodes at one shape: two misses on the first run, hits after.
  EXPECT_EQ(JsonNumber(result.out, "misses"), 2);
  EXPECT_THAT(result.out, HasSubstr("\"device_graphs\":{\"captures\":"));
  EXPECT_GT(JsonNumber(result.out, "peak_rss_kib"), 1024);
  // The session's creation and its first run are timed apart from the runs.
  EXPECT_GT(JsonNumber(result.out, "create_us"), 0);
  EXPECT_GT(JsonNumber(result.out, "first_run_us"), 0);
}

// --warm-process times a second session of the model: it makes its own
// kernels (two misses), and the first session's creation plus first run is
// reported apart.
TEST_F(BenchCommandTest, WarmProcessTimesASecondSession) {
  const std::vector<std::string> args = {"bench", model_.string(), "--dim", "batch=2",   "--runs",
                                         "3",     "--warmup",      "1",     "--threads", "1",
                                         "--json"};
  const ProcessResult plain = RunNxrt(args, scratch_.path());
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(JsonNumber(plain.out, "cold_first_us"), -1);

  std::vector<std::string> warm = args;
  warm.push_back("--warm-process");
  const ProcessResult result = RunNxrt(warm, scratch_.path());
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_GT(JsonNumber(result.out, "cold_first_us"), 0);
  EXPECT_GT(JsonNumber(result.out, "create_us"), 0);
  EXPECT_GT(JsonNumber(result.out, "first_run_us"), 0);
  EXPECT_EQ(JsonNumber(result.out, "misses"), 2);
}

// Random decoder inputs at a long past: the attention mask must say every
// position is valid, or the mask-derived lengths exceed the KV cache.
TEST(BenchDecoderTest, RandomInputsDecodeAtALongPast) {
  const std::filesystem::path decoder =
      std::filesystem::path(NXRT_BINARY_DIR) / "models" / "decoder.onnx";
  if (!std::filesystem::exists(decoder)) {
    GTEST_SKIP() << "no generated " << decoder << "; build the 'models' target";
  }
  ScratchFolder scratch{"bench_decoder"};
  const ProcessResult result =
      RunNxrt({"bench", decoder.string(), "--ep", "cpu", "--dim", "batch_size=1", "--dim",
               "sequence_length=1", "--dim", "past_sequence_length=128", "--dim",
               "total_sequence_length=129", "--runs", "2", "--warmup", "1"},
              scratch.path());
  EXPECT_EQ(result.exit_code, 0) << result.err;
}

TEST_F(BenchCommandTest, TextReportNamesTheNumbers) {
  const ProcessResult result =
      RunNxrt({"bench", model_.string(), "--dim", "batch=3", "--runs", "3", "--warmup", "0"},
              scratch_.path());
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::vector<std::string> lines = Lines(result.out);
  ASSERT_EQ(lines.size(), 4u) << result.out;
  EXPECT_THAT(lines[0], MatchesRegex(".*: 3 runs after 0 warm-up, median [0-9.]+ us, p90 .*"));
  EXPECT_THAT(lines[1], StartsWith("kernel cache: "));
  EXPECT_THAT(lines[2], StartsWith("device graphs: "));
  EXPECT_THAT(lines[3], MatchesRegex("peak memory: [0-9]+\\.[0-9] MiB resident"));
}

TEST_F(BenchCommandTest, ThreadsGoOnlyToTheCpuProvider) {
  // The mock EP refuses options it does not know; --threads must not reach it.
  const ProcessResult result = RunNxrt({"bench", model_.string(), "--ep", "mock", "--dim",
                                        "batch=2", "--runs", "2", "--threads", "2"},
                                       scratch_.path());
  EXPECT_EQ(result.exit_code, 0) << result.err;
}

TEST_F(BenchCommandTest, EpOptionsReachTheNamedProvider) {
  const auto bench = [&](std::vector<std::string> extra) {
    std::vector<std::string> args{"bench", model_.string(), "--dim", "batch=2", "--runs", "2"};
    args.insert(args.end(), extra.begin(), extra.end());
    return RunNxrt(args, scratch_.path());
  };
  const ProcessResult taken = bench({"--ep-option", "cpu:device_graphs=0"});
  EXPECT_EQ(taken.exit_code, 0) << taken.err;
  // The cpu EP refuses an option it does not know, so the option reached it.
  const ProcessResult unknown = bench({"--ep-option", "cpu:no_such_option=1"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_THAT(unknown.err, HasSubstr("unknown option 'no_such_option'"));
  const ProcessResult elsewhere = bench({"--ep-option", "cuda:threads=2"});
  EXPECT_EQ(elsewhere.exit_code, 1);
  EXPECT_THAT(elsewhere.err, HasSubstr("'cuda', which is not among the providers (cpu)"));
  const ProcessResult malformed = bench({"--ep-option", "cpu-threads-2"});
  EXPECT_EQ(malformed.exit_code, 1);
  EXPECT_THAT(malformed.err, HasSubstr("is not NAME:KEY=VALUE"));
}

TEST_F(BenchCommandTest, UsesGivenInputFiles) {
  const auto a_file = scratch_.path() / "a.pb";
  WriteTensorFile(a_file, FloatTensor("a", {1, 8}, std::vector<float>(8, 1.0f)));
  const ProcessResult wrong_shape =
      RunNxrt({"bench", model_.string(), "--input", "a=" + a_file.string(), "--dim", "batch=2",
               "--runs", "2"},
              scratch_.path());
  // a is [1,8] and the random b [2,8]: the two bindings of 'batch' disagree.
  EXPECT_EQ(wrong_shape.exit_code, 1);
  EXPECT_EQ(Lines(wrong_shape.err).size(), 1u) << wrong_shape.err;
  const ProcessResult right = RunNxrt({"bench", model_.string(), "--input", "a=" + a_file.string(),
                                       "--dim", "batch=1", "--runs", "2"},
                                      scratch_.path());
  EXPECT_EQ(right.exit_code, 0) << right.err;
}

TEST_F(BenchCommandTest, ProfileCoversAsManyRunsAgainAfterTheTimedOnes) {
  const auto trace = scratch_.path() / "bench.trace.json";
  const ProcessResult result =
      RunNxrt({"bench", model_.string(), "--dim", "batch=2", "--runs", "3", "--warmup", "1",
               "--no-rewrites", "--json", "--profile", trace.string()},
              scratch_.path());
  ASSERT_EQ(result.exit_code, 0) << result.err;
  // Add and Relu, unfused, in each of the three profiled runs.
  EXPECT_EQ(JsonNumber(result.out, "events"), 6);
  EXPECT_THAT(result.out, HasSubstr("\"op\":\"Add\",\"provider\":\"cpu#1\",\"step\":\"node\","
                                    "\"calls\":3,"));
  EXPECT_THAT(result.out, HasSubstr("\"op\":\"Relu\",\"provider\":\"cpu#1\",\"step\":\"node\","
                                    "\"calls\":3,"));
  const std::vector<TraceEvent> events = ReadTrace(trace);
  ASSERT_EQ(events.size(), 6u);
  for (size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(events[i].op_type, i % 2 == 0 ? "Add" : "Relu");
    EXPECT_EQ(events[i].input_shapes, i % 2 == 0 ? "[2,8] [2,8]" : "[2,8]");
    if (i > 0) {
      // One nanosecond of slack for the microseconds' rounding.
      EXPECT_GE(events[i].start_us + 1e-3, events[i - 1].start_us + events[i - 1].duration_us);
    }
  }
}

TEST_F(BenchCommandTest, TimeLimitStopsARunInOneLine) {
  const ProcessResult stopped =
      RunNxrt({"bench", model_.string(), "--dim", "batch=2", "--runs", "3", "--time-limit", "1e-9"},
              scratch_.path());
  EXPECT_EQ(stopped.exit_code, 1);
  EXPECT_THAT(Lines(stopped.err), ::testing::ElementsAre(StartsWith("nxrt: error: ")));
  EXPECT_THAT(stopped.err, HasSubstr("deadline passed"));
  EXPECT_THAT(stopped.err, HasSubstr("raise --time-limit"));
  const ProcessResult usage =
      RunNxrt({"bench", model_.string(), "--time-limit", "soon"}, scratch_.path());
  EXPECT_EQ(usage.exit_code, 2);
  EXPECT_THAT(usage.err, HasSubstr("not a number of seconds"));
}

}  // namespace
}  // namespace nxrt_test
