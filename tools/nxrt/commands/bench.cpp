// `nxrt bench`: times runs of a model on fixed inputs (random with a fixed
// seed unless --input files are given) and reports the median and 90th
// percentile microseconds per run, kernel-cache statistics, device-graph
// counters and peak memory. Runs reuse their output tensors, as a serving loop would, so
// the steady state allocates nothing. --capture runs on the Primary
// device-graph slot, so capture-eligible segments are captured once warm and
// replayed after. --profile profiles as many runs again after the timed
// ones, so the numbers above stay unprofiled. --warm-process makes and runs
// a first session of the model before the timed one, so that create_us and
// first_run_us leave out what a process pays once (loading the plugins,
// generating oneDNN's code), as in a server that has run a model before.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands/command.hpp"
#include "common/environment_setup.hpp"
#include "common/free_dimensions.hpp"
#include "common/json_writer.hpp"
#include "common/memory_limit.hpp"
#include "common/model_inputs.hpp"
#include "common/model_session.hpp"
#include "common/name_value.hpp"
#include "common/percentile.hpp"
#include "common/profile_report.hpp"
#include "common/provider_list.hpp"
#include "common/run_counters.hpp"
#include "common/time_limit.hpp"

namespace nxrt::cli {
namespace {

struct BenchFlags {
  std::string model;
  ProviderFlags providers;
  double memory_limit_mib = 0;
  std::vector<std::string> inputs;
  std::vector<std::string> dims;
  std::vector<std::string> shapes;
  std::vector<std::string> free_dims;
  uint64_t seed = 0;
  int runs = 100;
  int warmup = 10;
  std::optional<int> threads;
  bool capture = false;
  bool json = false;
  bool no_rewrites = false;
  bool warm_process = false;
  std::string profile;
  double time_limit_s = 0;
  EnvironmentFlags environment;
};

Result<int> Bench(const BenchFlags& flags) {
  if (flags.runs < 1) return InvalidArgument("--runs must be at least 1");
  if (flags.warmup < 0) return InvalidArgument("--warmup must not be negative");
  SessionOptions options;
  NXRT_ASSIGN_OR_RETURN(options.providers, ParseProviderList(flags.providers, flags.threads));
  options.memory_limit_bytes = MemoryLimitBytes(flags.memory_limit_mib);
  options.rewrite_graph = !flags.no_rewrites;
  NXRT_ASSIGN_OR_RETURN(options.free_dimension_overrides, ParseFreeDimensions(flags.free_dims));
  InputSources sources;
  sources.files = flags.inputs;
  sources.random_for_rest = true;
  NXRT_ASSIGN_OR_RETURN(sources.random_shapes.dims, ParseDimBindings(flags.dims));
  NXRT_ASSIGN_OR_RETURN(sources.random_shapes.shapes, ParseShapeBindings(flags.shapes));
  sources.seed = flags.seed;
  NXRT_ASSIGN_OR_RETURN(std::shared_ptr<Environment> environment,
                        MakeEnvironment(flags.environment));
  using Clock = std::chrono::steady_clock;
  const auto micros_since = [](Clock::time_point start) {
    return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
  };
  // The earlier session's creation plus first run, with --warm-process.
  std::optional<double> cold_first_us;
  if (flags.warm_process) {
    const Clock::time_point cold = Clock::now();
    NXRT_ASSIGN_OR_RETURN(ModelSession earlier,
                          LoadModelSession(environment, flags.model, options));
    const double cold_create_us = micros_since(cold);
    NXRT_ASSIGN_OR_RETURN(std::vector<NamedValue> values, PrepareInputs(earlier, sources));
    NXRT_ASSIGN_OR_RETURN(const std::vector<NamedTensor> inputs, AsTensors(std::move(values)));
    std::vector<Tensor> outputs;
    const Clock::time_point cold_run = Clock::now();
    NXRT_RETURN_IF_ERROR(earlier.session->Run(inputs, {}, outputs, RunOptions{}));
    cold_first_us = cold_create_us + micros_since(cold_run);
  }
  const Clock::time_point creation = Clock::now();
  NXRT_ASSIGN_OR_RETURN(ModelSession model,
                        LoadModelSession(environment, flags.model, std::move(options)));
  const double create_us = micros_since(creation);
  NXRT_ASSIGN_OR_RETURN(std::vector<NamedValue> values, PrepareInputs(model, sources));
  NXRT_ASSIGN_OR_RETURN(const std::vector<NamedTensor> inputs, AsTensors(std::move(values)));

  Session& session = *model.session;
  std::vector<Tensor> outputs;
  const auto run_once = [&](RunProfile* profile = nullptr) -> Status {
    RunOptions run_options;
    run_options.profile = profile;
    run_options.deadline = RunDeadline(flags.time_limit_s);
    return WithTimeLimitAdvice(
        flags.capture ? session.Run(DeviceGraphSlot::kPrimary, inputs, {}, outputs, run_options)
                      : session.Run(inputs, {}, outputs, run_options));
  };
  // The first run makes every kernel: with the session's creation, what a
  // model costs before it is warm.
  const Clock::time_point first = Clock::now();
  NXRT_RETURN_IF_ERROR(run_once());
  const double first_run_us = micros_since(first);
  for (int i = 1; i < flags.warmup; ++i) NXRT_RETURN_IF_ERROR(run_once());
  std::vector<double> samples_us;
  samples_us.reserve(static_cast<size_t>(flags.runs));
  if (flags.warmup == 0) samples_us.push_back(first_run_us);
  while (samples_us.size() < static_cast<size_t>(flags.runs)) {
    const Clock::time_point start = Clock::now();
    NXRT_RETURN_IF_ERROR(run_once());
    samples_us.push_back(micros_since(start));
  }
  std::sort(samples_us.begin(), samples_us.end());
  const double median_us = Percentile(samples_us, 50);
  const double p90_us = Percentile(samples_us, 90);
  const RunCounters counters = ReadRunCounters(session);
  // As many runs again, profiled, so the profile's cost stays out of the timing.
  RunProfile profile;
  if (!flags.profile.empty()) {
    for (int i = 0; i < flags.runs; ++i) NXRT_RETURN_IF_ERROR(run_once(&profile));
    NXRT_RETURN_IF_ERROR(WriteProfileTrace(profile, flags.profile));
  }

  if (!flags.json) {
    std::printf("%s: %d runs after %d warm-up, median %.1f us, p90 %.1f us, min %.1f us\n",
                flags.model.c_str(), flags.runs, flags.warmup, median_us, p90_us,
                samples_us.front());
    std::fputs(RunCountersText(counters).c_str(), stdout);
    if (!flags.profile.empty()) {
      std::fputs(ProfileSummaryText(profile, flags.profile).c_str(), stdout);
    }
    return 0;
  }
  JsonWriter json;
  json.BeginObject();
  json.Key("model").String(flags.model);
  json.Key("runs").Integer(flags.runs);
  json.Key("warmup").Integer(flags.warmup);
  json.Key("median_us").Number(median_us);
  json.Key("p90_us").Number(p90_us);
  json.Key("min_us").Number(samples_us.front());
  json.Key("max_us").Number(samples_us.back());
  json.Key("create_us").Number(create_us);
  json.Key("first_run_us").Number(first_run_us);
  if (cold_first_us) json.Key("cold_first_us").Number(*cold_first_us);
  WriteRunCounters(json, counters);
  if (!flags.profile.empty()) WriteProfileSummary(json, profile, flags.profile);
  json.EndObject();
  std::printf("%s\n", json.text().c_str());
  return 0;
}

}  // namespace

void RegisterBenchCommand(CLI::App& app, CommandAction& selected) {
  auto flags = std::make_shared<BenchFlags>();
  CLI::App* command = app.add_subcommand("bench", "time runs of a model");
  command->add_option("model", flags->model, "the .onnx model file")->required();
  AddProviderOptions(*command, flags->providers);
  AddMemoryLimitOption(*command, flags->memory_limit_mib);
  command->add_option("--input", flags->inputs,
                      "NAME=FILE.pb: an input from a TensorProto file; repeatable (other "
                      "inputs are random)");
  command->add_option("--dim", flags->dims,
                      "NAME=VALUE: binds a symbolic dim of random inputs; repeatable");
  command->add_option("--shape", flags->shapes,
                      "NAME=D,D,...: the whole shape of random input NAME (=scalar for "
                      "rank 0); repeatable");
  AddFreeDimensionOption(*command, flags->free_dims);
  command->add_option("--seed", flags->seed, "seed of the random inputs (default 0)");
  command->add_option("--runs", flags->runs, "timed runs (default 100)");
  command->add_option("--warmup", flags->warmup, "untimed runs first (default 10)");
  command->add_option("--threads", flags->threads, "threads of the cpu EP");
  command->add_flag("--capture", flags->capture,
                    "run on the Primary device-graph slot (capture, then replay)");
  command->add_flag("--no-rewrites", flags->no_rewrites,
                    "run every node as the model spells it (no folding or fusion)");
  command->add_flag(
      "--json", flags->json,
      "print one JSON object (median_us, p90_us, create_us, first_run_us, cold_first_us "
      "with --warm-process, kernel_cache, device_graphs, peak_rss_kib)");
  command->add_flag("--warm-process", flags->warm_process,
                    "make and run a first session of the model before the timed one, so "
                    "create_us and first_run_us leave out what a process pays once");
  AddProfileOption(*command, flags->profile);
  AddTimeLimitOption(*command, flags->time_limit_s);
  AddEnvironmentOptions(*command, flags->environment);
  command->callback([flags, &selected] { selected = [flags] { return Bench(*flags); }; });
}

}  // namespace nxrt::cli
