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

// Copies the logits of each row's last position of a [batch, sequence,
// vocab] output into `last`, row after row.
Status GatherLastLogits(const Tensor& logits, int64_t batch, std::vector<float>& last) {
  const std::vector<int64_t>& shape = logits.shape();
  if (shape.size() != 3 || shape[0] != batch || shape[1] < 1 || shape[2] < 1) {
    return FailedPrecondition("the logits came back with a shape other than [" +
                              std::to_string(batch) + ", S, vocab]");
  }
  const auto vocab = static_cast<size_t>(shape[2]);
  const auto positions = static_cast<size_t>(shape[1]);
  const std::span<const float> values = logits.values<float>();
  last.resize(static_cast<size_t>(batch) * vocab);
  for (size_t row = 0; row < static_cast<size_t>(batch); ++row) {
    const auto start =
        values.begin() + static_cast<ptrdiff_t>((row * positions + positions - 1) * vocab);
    std::copy_n(start, vocab, last.begin() + static_cast<ptrdiff_t>(row * vocab));
  }
  return Status::Ok();
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
  const int64_t batch = feeds.batch();
  Generation generation;
  generation.tokens.resize(static_cast<size_t>(batch));
  std::vector<Tensor> outputs;
  std::vector<float> last;
  std::vector<int64_t> next(static_cast<size_t>(batch));
  std::vector<bool> stopped(static_cast<size_t>(batch), false);
  RunOptions run_options;
  run_options.profile = request.profile;
  const auto pick_next = [&]() -> Status {
    NXRT_RETURN_IF_ERROR(GatherLastLogits(outputs[0], batch, last));
    feeds.Commit(outputs);
    const size_t vocab = last.size() / next.size();
    for (size_t row = 0; row < next.size(); ++row) {
      next[row] = sampler.Next(std::span<const float>(last).subspan(row * vocab, vocab));
      generation.tokens[row].push_back(next[row]);
      if (std::ranges::find(request.stop_tokens, next[row]) != request.stop_tokens.end()) {
        stopped[row] = true;
      }
    }
    return Status::Ok();
  };

  const Clock::time_point prefill_start = Clock::now();
  NXRT_RETURN_IF_ERROR(feeds.BindPrompts(request.prompts));
  run_options.deadline = RunDeadline(request.run_time_limit_s);
  NXRT_RETURN_IF_ERROR(
      WithTimeLimitAdvice(session.Run(feeds.feeds(), feeds.output_names(), outputs, run_options)));
  NXRT_RETURN_IF_ERROR(pick_next());
  generation.prefill_us = MicrosecondsSince(prefill_start);
  NXRT_RETURN_IF_ERROR(sink(0, last));

  for (int64_t step = 1; step <= request.steps; ++step) {
    if (!request.stop_tokens.empty() && std::ranges::all_of(stopped, std::identity())) {
      generation.stop = StopReason::kStopToken;
      break;
    }
    // After this step a row holds the cache, the token fed and the one it gives.
    if (feeds.length() + 2 > request.max_len) {
      generation.stop = StopReason::kMaxLen;
      break;
    }
    const Clock::time_point start = Clock::now();
    NXRT_RETURN_IF_ERROR(feeds.BindStep(next));
    run_options.deadline = RunDeadline(request.run_time_limit_s);
    NXRT_RETURN_IF_ERROR(WithTimeLimitAdvice(session.Run(
        DeviceGraphSlot::kPrimary, feeds.feeds(), feeds.output_names(), outputs, run_options)));
    NXRT_RETURN_IF_ERROR(pick_next());
    generation.step_us.push_back(MicrosecondsSince(start));
    NXRT_RETURN_IF_ERROR(sink(step, last));
  }
  return generation;
}

}  // namespace nxrt::cli
