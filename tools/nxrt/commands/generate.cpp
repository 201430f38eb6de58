// `nxrt generate`: token generation with a decoder model and its KV cache.
// The model's inputs are placed by what its graph does (token ids, mask,
// position ids, cache position, KV pasts paired with their presents), so
// Optimum, transformers and ONNX Runtime GenAI exports run alike. The
// prompts (given ids, or random ones from --seed; one per row of --batch,
// left-padded) run in one eager prefill, then each decode step feeds each
// row's last token on the Primary device-graph slot. The cache grows with every step (--kv growing)
// or sits at the model's static capacity and is updated in place (--kv fixed), the form whose steps
// can be captured whole and replayed. Generation ends after
// --steps, at --max-len, or at a --stop token. Reports the tokens,
// step latency, kernel-cache statistics and device-graph counters, and with
// --output-dir every run's last-position logits for comparison with another
// runtime.
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "commands/command.hpp"
#include "common/environment_setup.hpp"
#include "common/memory_limit.hpp"
#include "common/model_session.hpp"
#include "common/profile_report.hpp"
#include "common/provider_list.hpp"
#include "common/time_limit.hpp"
#include "generate/decode_loop.hpp"
#include "generate/decoder_feeds.hpp"
#include "generate/decoder_io.hpp"
#include "generate/generation_report.hpp"
#include "generate/prompt_tokens.hpp"
#include "generate/step_logits_files.hpp"
#include "generate/token_sampler.hpp"

namespace nxrt::cli {
namespace {

struct GenerateFlags {
  std::string model;
  ProviderFlags providers;
  double memory_limit_mib = 0;
  int64_t prompt_tokens = 16;
  int64_t batch = 1;
  std::optional<std::string> prompt;
  int64_t steps = 32;
  std::string kv = "growing";
  std::optional<int64_t> max_len;
  double temperature = 0;
  int64_t top_k = 0;
  double top_p = 1;
  std::optional<std::string> stop;
  std::optional<std::string> speculate;
  uint64_t seed = 0;
  std::optional<int> threads;
  bool json = false;
  std::string output_dir;
  std::string profile;
  double time_limit_s = 0;
  EnvironmentFlags environment;
};

Status CheckNumbers(const GenerateFlags& flags) {
  if (flags.prompt_tokens < 1) return InvalidArgument("--prompt-tokens must be at least 1");
  if (flags.batch < 1) return InvalidArgument("--batch must be at least 1");
  if (flags.steps < 0) return InvalidArgument("--steps must not be negative");
  if (!(flags.temperature >= 0)) {
    return InvalidArgument("--temperature must be 0 (greedy) or positive");
  }
  if (flags.top_k < 0) return InvalidArgument("--top-k must be 0 (every token) or positive");
  if (!(flags.top_p > 0 && flags.top_p <= 1)) {
    return InvalidArgument("--top-p must be above 0 and at most 1 (every token)");
  }
  return Status::Ok();
}

// The form must match the model's pasts: a static capacity needs the fixed
// form, a growing sequence axis the growing one.
Status CheckKvForm(const GenerateFlags& flags, KvForm form, const DecoderIo& io) {
  if (form == KvForm::kFixed && !io.kv_capacity) {
    return FailedPrecondition("--kv fixed: model '" + flags.model +
                              "' has past_key_values with a growing sequence axis; use a model "
                              "whose past_key_values have a static capacity (such as "
                              "decoder_fixed_kv256.onnx), or --kv growing");
  }
  if (form == KvForm::kGrowing && io.kv_capacity) {
    return FailedPrecondition("model '" + flags.model +
                              "' holds its KV cache at a static capacity of " +
                              std::to_string(*io.kv_capacity) + " tokens; run it with --kv fixed");
  }
  return Status::Ok();
}

// --speculate ngram:K, K draft tokens a run; nullopt when not given.
Result<size_t> DraftTokens(const GenerateFlags& flags) {
  if (!flags.speculate) return size_t{0};
  const std::string& text = *flags.speculate;
  constexpr std::string_view kPrefix = "ngram:";
  size_t count = 0;
  const char* digits = text.data() + std::min(kPrefix.size(), text.size());
  const auto [end, error] = std::from_chars(digits, text.data() + text.size(), count);
  if (!text.starts_with(kPrefix) || error != std::errc() || end != text.data() + text.size() ||
      count < 1 || count > 32) {
    return InvalidArgument("--speculate '" + text +
                           "': give ngram:K, K draft tokens from prompt lookup in [1, 32], e.g. "
                           "--speculate ngram:4");
  }
  if (flags.temperature != 0 || flags.batch != 1 ||
      (flags.prompt && flags.prompt->find(';') != std::string::npos)) {
    return InvalidArgument(
        "--speculate keeps greedy decoding's tokens: it needs --temperature 0 "
        "and one prompt");
  }
  return count;
}

// Random prompts of --prompt-tokens ids, shortened by two per row so that a
// batch exercises left padding.
std::vector<std::vector<int64_t>> RandomPrompts(const GenerateFlags& flags, int64_t vocab) {
  std::vector<std::vector<int64_t>> prompts;
  for (int64_t row = 0; row < flags.batch; ++row) {
    const int64_t length = std::max<int64_t>(1, flags.prompt_tokens - 2 * row);
    prompts.push_back(RandomPromptTokens(length, vocab, flags.seed + static_cast<uint64_t>(row)));
  }
  return prompts;
}

Result<int64_t> MaxLen(const GenerateFlags& flags, const DecoderIo& io, int64_t prompt_length) {
  if (io.kv_capacity && flags.max_len && *flags.max_len > *io.kv_capacity) {
    return InvalidArgument("--max-len " + std::to_string(*flags.max_len) +
                           " exceeds the KV cache capacity of model '" + flags.model + "'; give " +
                           "at most " + std::to_string(*io.kv_capacity));
  }
  const int64_t max_len =
      flags.max_len.value_or(io.kv_capacity.value_or(prompt_length + flags.steps + 1));
  if (prompt_length >= max_len) {
    return InvalidArgument("the prompt of " + std::to_string(prompt_length) +
                           " tokens leaves no room under a maximum length of " +
                           std::to_string(max_len) +
                           " for a generated token; give a shorter prompt or a larger --max-len");
  }
  return max_len;
}

Result<int> Generate(const GenerateFlags& flags) {
  NXRT_RETURN_IF_ERROR(CheckNumbers(flags));
  NXRT_ASSIGN_OR_RETURN(const size_t draft_tokens, DraftTokens(flags));
  const KvForm form = flags.kv == "fixed" ? KvForm::kFixed : KvForm::kGrowing;
  SessionOptions options;
  NXRT_ASSIGN_OR_RETURN(options.providers, ParseProviderList(flags.providers, flags.threads));
  options.memory_limit_bytes = MemoryLimitBytes(flags.memory_limit_mib);
  options.fixed_capacity_kv = form == KvForm::kFixed;
  // The fixed pasts are never read back here, so an EP with memory of its
  // own may keep the cache there.
  options.kv_in_ep_memory = form == KvForm::kFixed;
  NXRT_ASSIGN_OR_RETURN(std::shared_ptr<Environment> environment,
                        MakeEnvironment(flags.environment));
  NXRT_ASSIGN_OR_RETURN(ModelSession model,
                        LoadModelSession(environment, flags.model, std::move(options)));
  Session& session = *model.session;
  NXRT_ASSIGN_OR_RETURN(const DecoderIo io, DiscoverDecoderIo(session, flags.model));
  NXRT_RETURN_IF_ERROR(CheckKvForm(flags, form, io));

  GenerationReport report;
  report.model = flags.model;
  report.io = &io;
  report.kv = form;
  report.requested_steps = flags.steps;
  report.streamed_weight_bytes = model.streamed_weight_bytes;
  if (flags.prompt) {
    NXRT_ASSIGN_OR_RETURN(report.prompts, ParseTokenRows("--prompt", *flags.prompt, io.vocab));
  } else {
    report.prompts = RandomPrompts(flags, io.vocab);
  }
  size_t longest = 0;
  for (const std::vector<int64_t>& prompt : report.prompts) {
    longest = std::max(longest, prompt.size());
  }
  NXRT_ASSIGN_OR_RETURN(report.max_len, MaxLen(flags, io, static_cast<int64_t>(longest)));
  if (!flags.output_dir.empty()) NXRT_RETURN_IF_ERROR(PrepareStepLogitsFolder(flags.output_dir));

  NXRT_ASSIGN_OR_RETURN(
      DecoderFeeds feeds,
      DecoderFeeds::Create(io, form, static_cast<int64_t>(report.prompts.size())));
  TokenSampler sampler(flags.temperature, static_cast<size_t>(flags.top_k), flags.top_p,
                       flags.seed);
  const LogitsSink sink = [&flags](int64_t run, std::span<const float> logits) {
    if (flags.output_dir.empty()) return Status::Ok();
    return WriteStepLogits(flags.output_dir, run, logits);
  };
  DecodeRequest request{report.prompts, flags.steps,        {},          report.max_len,
                        nullptr,        flags.time_limit_s, draft_tokens};
  if (flags.stop) {
    NXRT_ASSIGN_OR_RETURN(request.stop_tokens, ParseTokenIds("--stop", *flags.stop, io.vocab));
  }
  RunProfile profile;
  if (!flags.profile.empty()) {
    request.profile = &profile;
    report.profile = &profile;
    report.profile_path = flags.profile;
  }
  NXRT_ASSIGN_OR_RETURN(report.generation, Decode(session, feeds, sampler, request, sink));
  report.counters = ReadRunCounters(session);
  if (!flags.profile.empty()) NXRT_RETURN_IF_ERROR(WriteProfileTrace(profile, flags.profile));

  if (flags.json) {
    std::fputs(GenerationJson(report).c_str(), stdout);
    // The JSON says so too; the note keeps it visible to a person watching.
    if (report.generation.stop != StopReason::kSteps) {
      std::fprintf(stderr, "nxrt: %s\n", StopNote(report).c_str());
    }
  } else {
    std::fputs(GenerationText(report).c_str(), stdout);
  }
  return 0;
}

}  // namespace

void RegisterGenerateCommand(CLI::App& app, CommandAction& selected) {
  auto flags = std::make_shared<GenerateFlags>();
  CLI::App* command =
      app.add_subcommand("generate", "generate tokens with a decoder model and its KV cache");
  command->add_option("model", flags->model, "the decoder .onnx model file")->required();
  AddProviderOptions(*command, flags->providers);
  AddMemoryLimitOption(*command, flags->memory_limit_mib);
  CLI::Option* count =
      command->add_option("--prompt-tokens", flags->prompt_tokens,
                          "a prompt of N random token ids from --seed (default 16)");
  CLI::Option* batch = command->add_option(
      "--batch", flags->batch,
      "rows of random prompts, each two ids shorter than the last, left-padded (default 1)");
  command
      ->add_option("--prompt", flags->prompt,
                   "the prompt as comma-separated token ids, e.g. 1,2,3; rows of a batch "
                   "separated by ';', e.g. '1,2,3;4,5'")
      ->excludes(count)
      ->excludes(batch);
  command->add_option("--steps", flags->steps, "decode steps after the prefill (default 32)");
  command
      ->add_option("--kv", flags->kv,
                   "KV cache form: growing (default) or fixed (static capacity, updated in place)")
      ->check(CLI::IsMember({"growing", "fixed"}));
  command->add_option("--max-len", flags->max_len,
                      "the most tokens, prompt and generated, the sequence may hold (default and "
                      "limit: the fixed cache's capacity)");
  command->add_option("--temperature", flags->temperature,
                      "0 (default) picks the likeliest token; above 0 samples from "
                      "softmax(logits / T)");
  command->add_option("--top-k", flags->top_k,
                      "sample among the K likeliest tokens (default 0: all)");
  command->add_option("--top-p", flags->top_p,
                      "sample among the fewest likeliest tokens whose probabilities sum to at "
                      "least P, in (0, 1] (default 1: all)");
  command->add_option("--stop", flags->stop,
                      "comma-separated token ids that end generation once generated (an "
                      "end-of-sequence id), e.g. 2");
  command->add_option("--speculate", flags->speculate,
                      "ngram:K: speculative decoding, K draft tokens a run by prompt lookup, "
                      "verified in one run on the Verify slot; greedy, one prompt; the tokens "
                      "are greedy decoding's");
  command->add_option("--seed", flags->seed,
                      "seed of the random prompt and of sampling (default 0)");
  command->add_option("--threads", flags->threads, "threads of the cpu EP");
  command->add_flag(
      "--json", flags->json,
      "print one JSON object (tokens and prompt, each flat for one row and nested for a batch; "
      "batch, decoder (the inputs' roles), step_us, prefill_us, median_us, p90_us, "
      "tokens_per_s, weight_bytes_per_step, stop_reason, kernel_cache, device_graphs, "
      "peak_rss_kib, kv, model)");
  command->add_option("--output-dir", flags->output_dir,
                      "folder for each run's last-position logits as step_NNN.pb TensorProto files "
                      "(step_000.pb: the prefill)");
  AddProfileOption(*command, flags->profile);
  AddTimeLimitOption(*command, flags->time_limit_s);
  AddEnvironmentOptions(*command, flags->environment);
  command->callback([flags, &selected] { selected = [flags] { return Generate(*flags); }; });
}

}  // namespace nxrt::cli
