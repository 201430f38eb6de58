#include "generate/generation_report.hpp"

#include <cstdarg>
#include <cstdio>
#include <span>

#include "common/decoder_json.hpp"
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

// Tokens a row gained after the prefill's.
size_t DecodedTokens(const Generation& generation) {
  return generation.tokens.empty() ? 0 : generation.tokens[0].size() - 1;
}

// Decode tokens of every row over the decode runs' time: one token a row
// per run without speculation, more with.
double TokensPerSecond(const GenerationReport& report) {
  const Generation& generation = report.generation;
  double total_us = 0;
  for (const double us : generation.step_us) total_us += us;
  if (total_us <= 0 || generation.tokens.empty()) return 0;
  const auto decoded = static_cast<double>(DecodedTokens(generation));
  return decoded * static_cast<double>(generation.tokens.size()) * 1e6 / total_us;
}

double AcceptanceRate(const SpeculationStats& speculation) {
  return speculation.drafted == 0
             ? 0.0
             : static_cast<double>(speculation.accepted) / static_cast<double>(speculation.drafted);
}

// One row's ids as a flat array; several rows as an array of arrays.
void WriteRows(JsonWriter& json, const std::vector<std::vector<int64_t>>& rows) {
  const auto write_row = [&json](const std::vector<int64_t>& row) {
    json.BeginArray();
    for (const int64_t token : row) json.Integer(token);
    json.EndArray();
  };
  if (rows.size() == 1) {
    write_row(rows[0]);
    return;
  }
  json.BeginArray();
  for (const std::vector<int64_t>& row : rows) write_row(row);
  json.EndArray();
}

}  // namespace

std::string StopNote(const GenerationReport& report) {
  const Generation& generation = report.generation;
  const size_t steps = DecodedTokens(generation);
  const auto requested = static_cast<long long>(report.requested_steps);
  switch (generation.stop) {
    case StopReason::kSteps:
      return "";
    case StopReason::kMaxLen:
      return Format("stopped at --max-len %lld after %zu of %lld decode steps",
                    static_cast<long long>(report.max_len), steps, requested);
    case StopReason::kStopToken:
      if (generation.tokens.size() > 1) {
        return Format("stopped once every row gave a stop token, after %zu of %lld decode steps",
                      steps, requested);
      }
      return Format("stopped at stop token %lld after %zu of %lld decode steps",
                    static_cast<long long>(generation.tokens[0].back()), steps, requested);
  }
  return "";
}

std::string GenerationText(const GenerationReport& report) {
  const Generation& generation = report.generation;
  const StepLatency latency = SummarizeSteps(generation.step_us);
  const size_t rows = report.prompts.size();
  std::string text = report.model + " (kv " + KvFormName(report.kv) + ")\n";
  if (report.io != nullptr) text += "inputs: " + graph::FormatDecoderRoles(report.io->roles) + "\n";
  for (size_t row = 0; row < rows; ++row) {
    const std::string label = rows == 1 ? "" : " row " + std::to_string(row);
    text += "prompt" + label + " (" + std::to_string(report.prompts[row].size()) +
            "): " + JoinTokens(report.prompts[row]) + "\n";
    text += "generated" + label + " (" + std::to_string(generation.tokens[row].size()) +
            "): " + JoinTokens(generation.tokens[row]) + "\n";
  }
  text += Format(
      "prefill %.1f us; %zu decode steps: median %.1f us, p90 %.1f us, min %.1f us, "
      "max %.1f us, %.1f tokens/s\n",
      generation.prefill_us, DecodedTokens(generation), latency.median_us, latency.p90_us,
      latency.min_us, latency.max_us, TokensPerSecond(report));
  const SpeculationStats& speculation = generation.speculation;
  if (speculation.verify_runs > 0) {
    text += Format(
        "speculation: %lld verify runs (median %.1f us), %lld of %lld draft tokens accepted "
        "(%.1f%%)\n",
        static_cast<long long>(speculation.verify_runs),
        SummarizeSteps(speculation.verify_us).median_us,
        static_cast<long long>(speculation.accepted), static_cast<long long>(speculation.drafted),
        AcceptanceRate(speculation) * 100);
  }
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
  json.Key("batch").Unsigned(report.prompts.size());
  json.Key("prompt");
  WriteRows(json, report.prompts);
  json.Key("tokens");
  WriteRows(json, generation.tokens);
  if (report.io != nullptr) WriteDecoderSignature(json, report.io->roles);
  json.Key("steps").Unsigned(DecodedTokens(generation));
  json.Key("runs").Unsigned(generation.step_us.size());
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
  json.Key("tokens_per_s").Number(TokensPerSecond(report));
  const SpeculationStats& speculation = generation.speculation;
  json.Key("speculation").BeginObject();
  json.Key("verify_runs").Integer(speculation.verify_runs);
  json.Key("drafted").Integer(speculation.drafted);
  json.Key("accepted").Integer(speculation.accepted);
  json.Key("acceptance_rate").Number(AcceptanceRate(speculation));
  json.Key("verify_median_us").Number(SummarizeSteps(speculation.verify_us).median_us);
  json.EndObject();
  json.Key("weight_bytes_per_step").Unsigned(report.streamed_weight_bytes);
  WriteRunCounters(json, report.counters);
  if (report.profile != nullptr) WriteProfileSummary(json, *report.profile, report.profile_path);
  json.EndObject();
  return json.text() + "\n";
}

}  // namespace nxrt::cli
