// `nxrt test`: runs ONNX backend test-case folders and prints a verdict line
// per case (PASS, FAIL, ERROR, SKIP) and the totals, or one JSON report.
// Each case runs in its own Session in a forked child with a time limit
// (see test_cases/isolated_run.hpp), so one crashing or hanging case never
// takes the run down; --no-fork runs them in this process instead, which is
// easier to debug.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "commands/command.hpp"
#include "common/environment_setup.hpp"
#include "common/json_writer.hpp"
#include "common/memory_limit.hpp"
#include "common/provider_list.hpp"
#include "test_cases/case_discovery.hpp"
#include "test_cases/case_runner.hpp"
#include "test_cases/isolated_run.hpp"
#include "test_cases/progress_bar.hpp"

namespace nxrt::cli {
namespace {

struct TestFlags {
  std::vector<std::string> case_dirs;
  ProviderFlags providers;
  double memory_limit_mib = 0;
  double rtol = 1e-3;
  double atol = 1e-5;
  double timeout = 60;
  bool no_fork = false;
  bool json = false;
  EnvironmentFlags environment;
};

const char* VerdictWord(CaseStatus status) {
  switch (status) {
    case CaseStatus::kPass:
      return "PASS";
    case CaseStatus::kFail:
      return "FAIL";
    case CaseStatus::kError:
      return "ERROR";
    case CaseStatus::kSkip:
      return "SKIP";
  }
  return "ERROR";
}

Result<int> RunTests(const TestFlags& flags) {
  if (flags.rtol < 0 || flags.atol < 0) return InvalidArgument("--rtol and --atol must be >= 0");
  if (flags.timeout <= 0) return InvalidArgument("--timeout must be a positive number of seconds");
  CaseSettings settings;
  NXRT_ASSIGN_OR_RETURN(settings.providers, ParseProviderList(flags.providers));
  settings.tolerance = {flags.rtol, flags.atol};
  settings.memory_limit_bytes = MemoryLimitBytes(flags.memory_limit_mib);
  if (flags.no_fork) settings.run_time_limit_s = flags.timeout;
  std::vector<std::filesystem::path> roots(flags.case_dirs.begin(), flags.case_dirs.end());
  NXRT_ASSIGN_OR_RETURN(const std::vector<std::filesystem::path> cases, FindTestCases(roots));

  // In-process runs share one environment; a forked child makes its own so
  // this process never loads a plugin.
  std::shared_ptr<Environment> shared_environment;
  if (flags.no_fork) {
    NXRT_ASSIGN_OR_RETURN(shared_environment, MakeEnvironment(flags.environment));
  }

  size_t passed = 0, failed = 0, skipped = 0;
  JsonWriter json;
  json.BeginObject().Key("cases").BeginArray();
  ProgressBar progress(cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::filesystem::path& case_dir = cases[i];
    const std::string name = case_dir.filename().string();
    progress.Show(i, name);
    const auto run_case = [&]() -> CaseResult {
      std::shared_ptr<Environment> environment = shared_environment;
      if (!environment) {
        Result<std::shared_ptr<Environment>> made = MakeEnvironment(flags.environment);
        if (!made.ok()) return {CaseStatus::kError, made.status().message()};
        environment = *made;
      }
      return RunTestCase(case_dir, settings, environment);
    };
    const CaseResult result = flags.no_fork ? run_case() : RunIsolated(run_case, flags.timeout);
    switch (result.status) {
      case CaseStatus::kPass:
        ++passed;
        break;
      case CaseStatus::kSkip:
        ++skipped;
        break;
      case CaseStatus::kFail:
      case CaseStatus::kError:
        ++failed;
        break;
    }
    if (flags.json) {
      json.BeginObject();
      json.Key("name").String(name);
      json.Key("path").String(case_dir.string());
      json.Key("status").String(CaseStatusName(result.status));
      json.Key("message").String(result.message);
      json.EndObject();
    } else {
      progress.Clear();
      if (result.status == CaseStatus::kPass) {
        std::printf("PASS %s\n", name.c_str());
      } else {
        std::printf("%s %s: %s\n", VerdictWord(result.status), name.c_str(),
                    result.message.c_str());
      }
      std::fflush(stdout);
    }
  }
  progress.Clear();
  json.EndArray();
  json.Key("passed").Unsigned(passed).Key("failed").Unsigned(failed).Key("skipped").Unsigned(
      skipped);
  json.EndObject();
  if (flags.json) {
    std::printf("%s\n", json.text().c_str());
  } else {
    std::printf("%zu passed, %zu failed", passed, failed);
    if (skipped) std::printf(", %zu skipped", skipped);
    std::printf("\n");
  }
  return failed ? 1 : 0;
}

}  // namespace

void RegisterTestCommand(CLI::App& app, CommandAction& selected) {
  auto flags = std::make_shared<TestFlags>();
  CLI::App* command =
      app.add_subcommand("test", "run ONNX backend test-case folders and compare outputs");
  command
      ->add_option("case_dirs", flags->case_dirs,
                   "a case folder (model.onnx, test_data_set_N/) or a folder of them")
      ->required();
  AddProviderOptions(*command, flags->providers);
  AddMemoryLimitOption(*command, flags->memory_limit_mib);
  command->add_option("--rtol", flags->rtol, "relative tolerance (default 1e-3)");
  command->add_option("--atol", flags->atol, "absolute tolerance (default 1e-5)");
  command->add_option("--timeout", flags->timeout,
                      "seconds allowed per case (default 60); with --no-fork, per run, which "
                      "stops between nodes");
  command->add_flag("--no-fork", flags->no_fork,
                    "run the cases in this process, without a child per case");
  command->add_flag("--json", flags->json, "print one JSON report instead of lines");
  AddEnvironmentOptions(*command, flags->environment);
  command->callback([flags, &selected] { selected = [flags] { return RunTests(*flags); }; });
}

}  // namespace nxrt::cli
