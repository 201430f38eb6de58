#include "generate/decode_loop.hpp"

#include <algorithm>
#include <chrono>

#include "common/time_limit.hpp"

namespace nxrt::cli {
namespace {

using Clock = std::chrono::steady_clock;

double MicrosecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

// The logits of the last position of a [batch, sequence, vocab] output.
Result<std::span<const float>> LastLogits(const Tensor& logits) {
  const std::vector<int64_t>& shape = logits.shape();
  if (shape.size() != 3 || shape[0] != 1 || shape[1] < 1 || shape[2] < 1) {
    return FailedPrecondition("output 'logits' came back with a shape other than [1, S, vocab]");
  }
  const size_t vocab = static_cast<size_t>(shape[2]);
  return logits.values<float>().subspan(static_cast<size_t>(shape[1] - 1) * vocab, vocab);
}

}  // namespace

const char* StopReasonName(StopReason reason) {
  switch (reason) {
    case StopReason::kSteps:
      return "steps";
    case StopReason::kMaxLen:
      return "max_len";
    case StopReason::kStopToken:
      return "stop_token";
  }
  return "?";
}

Result<Generation> Decode(Session& session, DecoderFeeds& feeds, TokenSampler& sampler,
                          const DecodeRequest& request, const LogitsSink& sink) {
  Generation generation;
  std::vector<Tensor> outputs;
  RunOptions run_options;
  run_options.profile = request.profile;
  const auto pick_next = [&]() -> Result<std::span<const float>> {
    NXRT_ASSIGN_OR_RETURN(const std::span<const float> logits, LastLogits(outputs[0]));
    feeds.Commit(outputs);
    generation.tokens.push_back(sampler.Next(logits));
    return logits;
  };

  const Clock::time_point prefill_start = Clock::now();
  NXRT_RETURN_IF_ERROR(feeds.BindTokens(request.prompt));
  run_options.deadline = RunDeadline(request.run_time_limit_s);
  NXRT_RETURN_IF_ERROR(
      WithTimeLimitAdvice(session.Run(feeds.feeds(), feeds.output_names(), outputs, run_options)));
  NXRT_ASSIGN_OR_RETURN(std::span<const float> logits, pick_next());
  generation.prefill_us = MicrosecondsSince(prefill_start);
  NXRT_RETURN_IF_ERROR(sink(0, logits));

  const int64_t prompt_length = static_cast<int64_t>(request.prompt.size());
  const auto stop_token = [&] {
    return std::ranges::find(request.stop_tokens, generation.tokens.back()) !=
           request.stop_tokens.end();
  };
  for (int64_t step = 1; step <= request.steps; ++step) {
    if (stop_token()) {
      generation.stop = StopReason::kStopToken;
      break;
    }
    // After this step the sequence holds the prompt and step + 1 generated tokens.
    if (prompt_length + step + 1 > request.max_len) {
      generation.stop = StopReason::kMaxLen;
      break;
    }
    const Clock::time_point start = Clock::now();
    const int64_t token[] = {generation.tokens.back()};
    NXRT_RETURN_IF_ERROR(feeds.BindTokens(token));
    run_options.deadline = RunDeadline(request.run_time_limit_s);
    NXRT_RETURN_IF_ERROR(WithTimeLimitAdvice(session.Run(
        DeviceGraphSlot::kPrimary, feeds.feeds(), feeds.output_names(), outputs, run_options)));
    NXRT_ASSIGN_OR_RETURN(logits, pick_next());
    generation.step_us.push_back(MicrosecondsSince(start));
    NXRT_RETURN_IF_ERROR(sink(step, logits));
  }
  return generation;
}

}  // namespace nxrt::cli
