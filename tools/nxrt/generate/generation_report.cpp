#include "generate/generation_report.hpp"

#include <cstdarg>
#include <cstdio>
#include <span>

#include "common/json_writer.hpp"
#include "common/profile_report.hpp"
#include "generate/step_latency.hpp"

namespace nxrt::cli {
namespace {

std::string JoinTokens(std::span<const int64_t> tokens) {
  std::string text;
  for (const int64_t token : tokens) text += (text.empty() ? "" : " ") + std::to_string(token);
  return text;
}

[[gnu::format(printf, 1, 2)]] std::string Format(const char* format, ...) {
  char line[512];
  va_list values;
  va_start(values, format);
  std::vsnprintf(line, sizeof line, format, values);
  va_end(values);
  return line;
}

}  // namespace

std::string StopNote(const GenerationReport& report) {
  const Generation& generation = report.generation;
  const size_t steps = generation.step_us.size();
  const auto requested = static_cast<long long>(report.requested_steps);
  switch (generation.stop) {
    case StopReason::kSteps:
      return "";
    case StopReason::kMaxLen:
      return Format("stopped at --max-len %lld after %zu of %lld decode steps",
                    static_cast<long long>(report.max_len), steps, requested);
    case StopReason::kStopToken:
      return Format("stopped at stop token %lld after %zu of %lld decode steps",
                    static_cast<long long>(generation.tokens.back()), steps, requested);
  }
  return "";
}

std::string GenerationText(const GenerationReport& report) {
  const Generation& generation = report.generation;
  const StepLatency latency = SummarizeSteps(generation.step_us);
  std::string text = report.model + " (kv " + KvFormName(report.kv) + ")\n";
  text +=
      "prompt (" + std::to_string(report.prompt.size()) + "): " + JoinTokens(report.prompt) + "\n";
  text += "generated (" + std::to_string(generation.tokens.size()) +
          "): " + JoinTokens(generation.tokens) + "\n";
  text += Format(
      "prefill %.1f us; %zu decode steps: median %.1f us, p90 %.1f us, min %.1f us, "
      "max %.1f us, %.1f tokens/s\n",
      generation.prefill_us, generation.step_us.size(), latency.median_us, latency.p90_us,
      latency.min_us, latency.max_us, latency.tokens_per_s);
  const double mib = static_cast<double>(report.streamed_weight_bytes) / (1 << 20);
  text += Format("weights streamed per step: %.2f MiB", mib);
  if (latency.median_us > 0) {
    text += Format(", %.1f GB/s at the median step",
                   static_cast<double>(report.streamed_weight_bytes) / latency.median_us / 1e3);
  }
  text += "\n";
  if (generation.stop != StopReason::kSteps) text += StopNote(report) + "\n";
  text += RunCountersText(report.counters);
  if (report.profile != nullptr) text += ProfileSummaryText(*report.profile, report.profile_path);
  return text;
}

std::string GenerationJson(const GenerationReport& report) {
  const Generation& generation = report.generation;
  const StepLatency latency = SummarizeSteps(generation.step_us);
  JsonWriter json;
  json.BeginObject();
  json.Key("model").String(report.model);
  json.Key("kv").String(KvFormName(report.kv));
  json.Key("prompt").BeginArray();
  for (const int64_t token : report.prompt) json.Integer(token);
  json.EndArray();
  json.Key("tokens").BeginArray();
  for (const int64_t token : generation.tokens) json.Integer(token);
  json.EndArray();
  json.Key("steps").Unsigned(generation.step_us.size());
  json.Key("requested_steps").Integer(report.requested_steps);
  json.Key("max_len").Integer(report.max_len);
  json.Key("stop_reason").String(StopReasonName(generation.stop));
  json.Key("prefill_us").Number(generation.prefill_us);
  json.Key("step_us").BeginArray();
  for (const double us : generation.step_us) json.Number(us);
  json.EndArray();
  json.Key("median_us").Number(latency.median_us);
  json.Key("p90_us").Number(latency.p90_us);
  json.Key("min_us").Number(latency.min_us);
  json.Key("max_us").Number(latency.max_us);
  json.Key("tokens_per_s").Number(latency.tokens_per_s);
  json.Key("weight_bytes_per_step").Unsigned(report.streamed_weight_bytes);
  WriteRunCounters(json, report.counters);
  if (report.profile != nullptr) WriteProfileSummary(json, *report.profile, report.profile_path);
  json.EndObject();
  return json.text() + "\n";
}

}  // namespace nxrt::cli
