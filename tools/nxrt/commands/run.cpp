// `nxrt run`: runs a model once (or --repeat times) on inputs from .pb files
// or random ones, prints each output in a line and writes it as a
// TensorProto file: output_K.pb for the K-th output, output_K_E.pb for
// element E of a sequence output (the backend test-case layout, so a run's
// files can serve as expected outputs).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "commands/command.hpp"
#include "common/environment_setup.hpp"
#include "common/free_dimensions.hpp"
#include "common/json_writer.hpp"
#include "common/memory_limit.hpp"
#include "common/model_inputs.hpp"
#include "common/model_session.hpp"
#include "common/name_value.hpp"
#include "common/profile_report.hpp"
#include "common/provider_list.hpp"
#include "common/tensor_summary.hpp"
#include "common/test_value_conversion.hpp"
#include "common/time_limit.hpp"
#include "nxrt/graph/test_data.hpp"

namespace nxrt::cli {
namespace {

struct RunFlags {
  std::string model;
  ProviderFlags providers;
  double memory_limit_mib = 0;
  std::vector<std::string> inputs;
  bool random = false;
  std::vector<std::string> dims;
  std::vector<std::string> shapes;
  std::vector<std::string> free_dims;
  uint64_t seed = 0;
  std::string output_dir;
  int repeat = 1;
  double time_limit_s = 0;
  std::string profile;
  bool json = false;
  EnvironmentFlags environment;
};

struct WrittenTensor {
  const Tensor* tensor;
  std::string file;  // "" when no output folder was given
};

Result<std::string> WriteOutputFile(const RunFlags& flags, const std::string& file_name,
                                    const Tensor& tensor, const std::string& name) {
  if (flags.output_dir.empty()) return std::string();
  const std::filesystem::path file = std::filesystem::path(flags.output_dir) / file_name;
  NXRT_RETURN_IF_ERROR(graph::WriteTensorProtoFile(file, TestTensorFromTensor(tensor, name)));
  return file.string();
}

Result<int> RunModel(const RunFlags& flags) {
  if (flags.repeat < 1) return InvalidArgument("--repeat must be at least 1");
  NXRT_ASSIGN_OR_RETURN(std::vector<ExecutionProviderSpec> providers,
                        ParseProviderList(flags.providers));
  InputSources sources;
  sources.files = flags.inputs;
  sources.random_for_rest = flags.random;
  NXRT_ASSIGN_OR_RETURN(sources.random_shapes.dims, ParseDimBindings(flags.dims));
  NXRT_ASSIGN_OR_RETURN(sources.random_shapes.shapes, ParseShapeBindings(flags.shapes));
  sources.seed = flags.seed;
  NXRT_ASSIGN_OR_RETURN(std::shared_ptr<Environment> environment,
                        MakeEnvironment(flags.environment));
  SessionOptions options;
  options.providers = providers;
  options.memory_limit_bytes = MemoryLimitBytes(flags.memory_limit_mib);
  NXRT_ASSIGN_OR_RETURN(options.free_dimension_overrides, ParseFreeDimensions(flags.free_dims));
  NXRT_ASSIGN_OR_RETURN(ModelSession model,
                        LoadModelSession(environment, flags.model, std::move(options)));
  NXRT_ASSIGN_OR_RETURN(std::vector<NamedValue> inputs, PrepareInputs(model, sources));

  std::vector<Value> outputs;
  std::vector<double> run_us;
  RunProfile profile;
  for (int i = 0; i < flags.repeat; ++i) {
    const auto start = std::chrono::steady_clock::now();
    RunOptions run_options;
    if (!flags.profile.empty()) run_options.profile = &profile;
    run_options.deadline = RunDeadline(flags.time_limit_s);
    Result<std::vector<Value>> ran = model.session->RunValues(inputs, {}, run_options);
    if (!ran.ok()) return WithTimeLimitAdvice(ran.status());
    outputs = std::move(ran).value();
    const std::chrono::duration<double, std::micro> took = std::chrono::steady_clock::now() - start;
    run_us.push_back(took.count());
  }
  std::sort(run_us.begin(), run_us.end());
  const double median_us = run_us.size() % 2
                               ? run_us[run_us.size() / 2]
                               : (run_us[run_us.size() / 2 - 1] + run_us[run_us.size() / 2]) / 2;

  if (!flags.output_dir.empty()) {
    std::error_code error;
    std::filesystem::create_directories(flags.output_dir, error);
    if (error) {
      return InvalidArgument("--output-dir " + flags.output_dir + ": " + error.message());
    }
  }

  if (!flags.profile.empty()) NXRT_RETURN_IF_ERROR(WriteProfileTrace(profile, flags.profile));

  const std::vector<ValueDescription>& declared = model.session->outputs();
  JsonWriter json;
  json.BeginObject();
  json.Key("model").String(flags.model);
  json.Key("providers").BeginArray();
  for (const ExecutionProviderSpec& spec : providers) json.String(spec.name_or_path);
  json.EndArray();
  json.Key("runs").Integer(flags.repeat);
  json.Key("median_us").Number(median_us);
  json.Key("outputs").BeginArray();
  if (!flags.json) {
    std::printf("%s: %d run%s, median %.1f us per run\n", flags.model.c_str(), flags.repeat,
                flags.repeat == 1 ? "" : "s", median_us);
  }
  for (size_t k = 0; k < outputs.size(); ++k) {
    const std::string& name = declared[k].name;
    const Value& value = outputs[k];
    const std::string index = std::to_string(k);
    json.BeginObject().Key("name").String(name);
    if (value.is_tensor()) {
      NXRT_ASSIGN_OR_RETURN(
          const std::string file,
          WriteOutputFile(flags, "output_" + index + ".pb", value.tensor(), name));
      json.Key("kind").String("tensor");
      WriteTensorSummary(json, value.tensor());
      if (!file.empty()) json.Key("file").String(file);
      if (!flags.json) {
        std::printf("%s: %s%s\n", name.c_str(), SummarizeTensor(value.tensor()).c_str(),
                    file.empty() ? "" : (" -> " + file).c_str());
      }
    } else if (value.is_sequence()) {
      json.Key("kind").String("sequence").Key("elements").BeginArray();
      if (!flags.json) {
        std::printf("%s: sequence of %zu tensors\n", name.c_str(), value.sequence().size());
      }
      for (size_t e = 0; e < value.sequence().size(); ++e) {
        const Tensor& element = value.sequence()[e];
        NXRT_ASSIGN_OR_RETURN(
            const std::string file,
            WriteOutputFile(flags, "output_" + index + "_" + std::to_string(e) + ".pb", element,
                            name + "[" + std::to_string(e) + "]"));
        json.BeginObject();
        WriteTensorSummary(json, element);
        if (!file.empty()) json.Key("file").String(file);
        json.EndObject();
        if (!flags.json) {
          std::printf("  [%zu]: %s%s\n", e, SummarizeTensor(element).c_str(),
                      file.empty() ? "" : (" -> " + file).c_str());
        }
      }
      json.EndArray();
    } else {
      json.Key("kind").String("none");
      if (!flags.json) std::printf("%s: none (an absent optional)\n", name.c_str());
    }
    json.EndObject();
  }
  json.EndArray();
  if (!flags.profile.empty()) {
    if (flags.json) {
      WriteProfileSummary(json, profile, flags.profile);
    } else {
      std::fputs(ProfileSummaryText(profile, flags.profile).c_str(), stdout);
    }
  }
  json.EndObject();
  if (flags.json) std::printf("%s\n", json.text().c_str());
  return 0;
}

}  // namespace

void RegisterRunCommand(CLI::App& app, CommandAction& selected) {
  auto flags = std::make_shared<RunFlags>();
  CLI::App* command = app.add_subcommand("run", "run a model and write its outputs");
  command->add_option("model", flags->model, "the .onnx model file")->required();
  AddProviderOptions(*command, flags->providers);
  AddMemoryLimitOption(*command, flags->memory_limit_mib);
  command->add_option("--input", flags->inputs,
                      "NAME=FILE.pb: an input from a TensorProto, "
                      "SequenceProto or OptionalProto file; repeatable");
  command->add_flag("--random", flags->random, "random values for inputs given no --input");
  command->add_option("--dim", flags->dims,
                      "NAME=VALUE: binds a symbolic dim of random inputs; repeatable");
  command->add_option("--shape", flags->shapes,
                      "NAME=D,D,...: the whole shape of random input NAME (=scalar for "
                      "rank 0); repeatable");
  AddFreeDimensionOption(*command, flags->free_dims);
  command->add_option("--seed", flags->seed, "seed of the random inputs (default 0)");
  command->add_option("--output-dir", flags->output_dir,
                      "folder for the outputs as output_K.pb TensorProto files");
  command->add_option("--repeat", flags->repeat, "run this many times (default 1)");
  AddTimeLimitOption(*command, flags->time_limit_s);
  AddProfileOption(*command, flags->profile);
  command->add_flag("--json", flags->json, "print one JSON object instead of text");
  AddEnvironmentOptions(*command, flags->environment);
  command->callback([flags, &selected] { selected = [flags] { return RunModel(*flags); }; });
}

}  // namespace nxrt::cli
