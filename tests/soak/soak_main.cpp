// nxrt_soak: long runs of the workloads a server lives on (decoding with a
// growing KV cache, shape churn, sessions and plugins opened and closed),
// watching resident memory, open file descriptors and malloc's bytes in use
// as they go. Per workload it prints each one's slope after warm-up (a
// least-squares fit per 1,000 steps), the kernel cache's and device graphs'
// counters, and exits 1 when a slope passes its threshold or a bound breaks.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "churn_workload.hpp"
#include "decode_workload.hpp"
#include "session_workload.hpp"
#include "soak_report.hpp"

namespace {

struct SoakFlags {
  nxrt::soak::SoakSettings settings;
  nxrt::soak::DecodeSoak decode;
  nxrt::soak::ChurnSoak churn;
  nxrt::soak::SessionSoak sessions;
  std::vector<std::string> only;
  std::string samples_csv;
  nxrt::soak::Thresholds thresholds;
};

void AddOptions(CLI::App& app, SoakFlags& f) {
  app.add_option("--models", f.settings.models,
                 "folder of the generated models (decoder.onnx, bert_layer.onnx, mlp.onnx)")
      ->default_str(NXRT_BINARY_DIR "/models");
  app.add_option("--only", f.only, "run only these workloads: decode, churn, sessions")
      ->check(CLI::IsMember({"decode", "churn", "sessions"}));
  app.add_option("--decode-steps", f.decode.steps, "decode steps")->capture_default_str();
  app.add_option("--reset-every", f.decode.reset_every, "decode steps per prompt")
      ->capture_default_str();
  app.add_option("--max-prompt", f.decode.max_prompt, "longest prompt, in tokens")
      ->capture_default_str();
  app.add_option("--churn-runs", f.churn.runs, "runs of the shape-churn encoder")
      ->capture_default_str();
  app.add_option("--churn-max-batch", f.churn.max_batch, "largest batch the churn draws")
      ->capture_default_str();
  app.add_option("--churn-max-sequence", f.churn.max_sequence, "longest sequence it draws")
      ->capture_default_str();
  app.add_option("--sessions", f.sessions.sessions, "environments and sessions opened and closed")
      ->capture_default_str();
  app.add_option("--threads", f.settings.threads, "the CPU EP's threads")->capture_default_str();
  app.add_option("--variants-per-node", f.settings.variants_per_node,
                 "the kernel cache's bound of shape variants per node")
      ->capture_default_str();
  app.add_option("--seed", f.settings.seed, "seed of prompts, shapes and values")
      ->capture_default_str();
  app.add_option("--warmup", f.thresholds.warmup_fraction,
                 "fraction of each workload's steps left out of the fit")
      ->capture_default_str();
  app.add_option("--max-rss-slope", f.thresholds.rss_kib,
                 "most RSS growth allowed, KiB per 1,000 steps")
      ->capture_default_str();
  app.add_option("--max-heap-slope", f.thresholds.heap_kib,
                 "most growth of malloc's bytes in use allowed, KiB per 1,000 steps (unchecked "
                 "unless given)");
  app.add_option("--max-fd-slope", f.thresholds.fds, "most fd growth allowed, per 1,000 steps")
      ->capture_default_str();
  app.add_option("--samples", f.samples_csv, "write every sample to this CSV file");
  app.add_option("--leak-per-step", f.settings.leak_bytes_per_step,
                 "bytes to leak on purpose after every step, to show the soak catches a leak");
}

bool Wanted(const SoakFlags& f, const std::string& name) {
  return f.only.empty() || std::find(f.only.begin(), f.only.end(), name) != f.only.end();
}

nxrt::Result<std::vector<nxrt::soak::WorkloadResult>> RunWorkloads(const SoakFlags& f) {
  using nxrt::soak::WorkloadResult;
  std::vector<WorkloadResult> results;
  // Each workload has an Environment of its own, closed before the session
  // soak, which checks that closing one unloads the plugin.
  if (Wanted(f, "decode")) {
    NXRT_ASSIGN_OR_RETURN(auto environment, nxrt::Environment::Create());
    NXRT_ASSIGN_OR_RETURN(WorkloadResult result,
                          RunDecodeSoak(std::move(environment), f.settings, f.decode));
    nxrt::soak::PrintWorkload(result, f.thresholds);
    results.push_back(std::move(result));
  }
  if (Wanted(f, "churn")) {
    NXRT_ASSIGN_OR_RETURN(auto environment, nxrt::Environment::Create());
    NXRT_ASSIGN_OR_RETURN(WorkloadResult result,
                          RunChurnSoak(std::move(environment), f.settings, f.churn));
    nxrt::soak::PrintWorkload(result, f.thresholds);
    results.push_back(std::move(result));
  }
  if (Wanted(f, "sessions")) {
    NXRT_ASSIGN_OR_RETURN(WorkloadResult result, RunSessionSoak(f.settings, f.sessions));
    nxrt::soak::PrintWorkload(result, f.thresholds);
    results.push_back(std::move(result));
  }
  return results;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "nxrt_soak: memory and descriptors over long runs of decoding, shape churn and "
      "sessions opened and closed",
      "nxrt_soak"};
  SoakFlags flags;
  flags.settings.models = NXRT_BINARY_DIR "/models";
  AddOptions(app, flags);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    nxrt::Result<std::vector<nxrt::soak::WorkloadResult>> results = RunWorkloads(flags);
    if (!results.ok()) {
      std::fprintf(stderr, "nxrt_soak: error: %s\n", results.status().message().c_str());
      return 1;
    }
    if (!flags.samples_csv.empty()) {
      const nxrt::Status written = nxrt::soak::WriteSamples(*results, flags.samples_csv);
      if (!written.ok()) {
        std::fprintf(stderr, "nxrt_soak: error: %s\n", written.message().c_str());
        return 1;
      }
    }
    return nxrt::soak::PrintSummary(*results, flags.thresholds) ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nxrt_soak: error: %s\n", e.what());
    return 1;
  }
}
