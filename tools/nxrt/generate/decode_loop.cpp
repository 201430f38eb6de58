#include "generate/decode_loop.hpp"

#include <algorithm>
#include <chrono>
#include <optional>

#include "common/time_limit.hpp"
#include "generate/prompt_lookup.hpp"

namespace nxrt::cli {
namespace {

using Clock = std::chrono::steady_clock;

double MicrosecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

// Copies the logits of the last `positions` positions of each row of a
// [batch, sequence, vocab] output into `picked`, row after row.
Status GatherLogits(const Tensor& logits, int64_t batch, int64_t positions,
                    std::vector<float>& picked) {
  const std::vector<int64_t>& shape = logits.shape();
  if (shape.size() != 3 || shape[0] != batch || shape[1] < positions || shape[2] < 1) {
    return FailedPrecondition("the logits came back with a shape other than [" +
                              std::to_string(batch) + ", S, vocab] for " +
                              std::to_string(positions) + " positions or more");
  }
  const auto vocab = static_cast<size_t>(shape[2]);
  const auto width = static_cast<size_t>(shape[1]);
  const auto kept = static_cast<size_t>(positions);
  const std::span<const float> values = logits.values<float>();
  picked.resize(static_cast<size_t>(batch) * kept * vocab);
  for (size_t row = 0; row < static_cast<size_t>(batch); ++row) {
    const size_t first = row * width + width - kept;
    std::copy_n(values.begin() + static_cast<ptrdiff_t>(first * vocab), kept * vocab,
                picked.begin() + static_cast<ptrdiff_t>(row * kept * vocab));
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
  const auto batch = static_cast<size_t>(feeds.batch());
  if (request.draft_tokens > 0 && (batch != 1 || !sampler.greedy())) {
    return InvalidArgument("speculative decoding needs one row and greedy picks (temperature 0)");
  }
  Generation generation;
  generation.tokens.resize(batch);
  std::vector<Tensor> outputs;
  std::vector<float> logits;
  std::vector<int64_t> next(batch);
  std::vector<bool> stopped(batch, false);
  int64_t decoded = 0;  // tokens after the prefill's
  RunOptions run_options;
  run_options.profile = request.profile;
  const auto run = [&](std::optional<DeviceGraphSlot> slot) {
    run_options.deadline = RunDeadline(request.run_time_limit_s);
    return WithTimeLimitAdvice(
        slot ? session.Run(*slot, feeds.feeds(), feeds.output_names(), outputs, run_options)
             : session.Run(feeds.feeds(), feeds.output_names(), outputs, run_options));
  };
  // The logits that picked each token of the last run, row after row per
  // token, handed to the sink once the run's time is taken.
  std::vector<float> picked;
  // Picks each row's token from the logits at `position` of `positions`.
  const auto pick = [&](int64_t position, int64_t positions) {
    const size_t vocab = logits.size() / batch / static_cast<size_t>(positions);
    for (size_t row = 0; row < batch; ++row) {
      const size_t at = row * static_cast<size_t>(positions) + static_cast<size_t>(position);
      const std::span<const float> scores(logits.data() + at * vocab, vocab);
      picked.insert(picked.end(), scores.begin(), scores.end());
      next[row] = sampler.Next(scores);
      generation.tokens[row].push_back(next[row]);
      stopped[row] = stopped[row] ||
                     std::ranges::find(request.stop_tokens, next[row]) != request.stop_tokens.end();
    }
  };
  // Hands the sink the logits of the tokens `first` onwards.
  const auto flush = [&](int64_t first) -> Status {
    const size_t each = picked.size() / static_cast<size_t>(decoded + 1 - first);
    for (int64_t token = first; token <= decoded; ++token) {
      const size_t at = static_cast<size_t>(token - first) * each;
      NXRT_RETURN_IF_ERROR(sink(token, std::span<const float>(picked).subspan(at, each)));
    }
    picked.clear();
    return Status::Ok();
  };

  const Clock::time_point prefill_start = Clock::now();
  NXRT_RETURN_IF_ERROR(feeds.BindPrompts(request.prompts));
  NXRT_RETURN_IF_ERROR(run(std::nullopt));
  NXRT_RETURN_IF_ERROR(GatherLogits(outputs[0], feeds.batch(), 1, logits));
  feeds.Commit(outputs);
  pick(0, 1);
  generation.prefill_us = MicrosecondsSince(prefill_start);
  NXRT_RETURN_IF_ERROR(flush(0));

  std::vector<int64_t> context = request.prompts[0];
  while (decoded < request.steps) {
    if (!request.stop_tokens.empty() && std::ranges::all_of(stopped, std::identity())) {
      generation.stop = StopReason::kStopToken;
      break;
    }
    // After a run a row holds the cache, the tokens fed and the one it gives.
    const int64_t room = request.max_len - feeds.length() - 2;
    if (room < 0) {
      generation.stop = StopReason::kMaxLen;
      break;
    }
    // A run's time includes drafting its tokens.
    const Clock::time_point start = Clock::now();
    std::vector<int64_t> fed = next;
    if (request.draft_tokens > 0) {
      context.push_back(next[0]);
      const size_t count = std::min(
          request.draft_tokens, static_cast<size_t>(std::min(request.steps - decoded - 1, room)));
      std::vector<int64_t> draft = PromptLookup(context, count);
      // A short draft is padded with its last token, so that every verify
      // run has one shape and its capture replays.
      if (!draft.empty()) draft.resize(count, draft.back());
      fed.insert(fed.end(), draft.begin(), draft.end());
    }
    const auto positions = static_cast<int64_t>(fed.size() / batch);
    NXRT_RETURN_IF_ERROR(feeds.BindStep(fed));
    NXRT_RETURN_IF_ERROR(run(positions > 1 ? DeviceGraphSlot::kVerify : DeviceGraphSlot::kPrimary));
    NXRT_RETURN_IF_ERROR(GatherLogits(outputs[0], feeds.batch(), positions, logits));
    feeds.Commit(outputs);
    // Keep the draft up to its first token greedy decoding would not pick.
    const int64_t first = decoded + 1;
    int64_t kept = 0;
    while (true) {
      ++decoded;
      pick(kept, positions);
      const bool matches = kept + 1 < positions && next[0] == fed[static_cast<size_t>(kept) + 1];
      if (!matches || decoded >= request.steps || stopped[0]) break;
      context.push_back(next[0]);
      ++kept;
    }
    NXRT_RETURN_IF_ERROR(feeds.Rewind(positions - 1 - kept));
    generation.step_us.push_back(MicrosecondsSince(start));
    NXRT_RETURN_IF_ERROR(flush(first));
    if (positions > 1) {
      generation.speculation.verify_runs += 1;
      generation.speculation.drafted += positions - 1;
      generation.speculation.accepted += kept;
      generation.speculation.verify_us.push_back(generation.step_us.back());
    }
  }
  return generation;
}

}  // namespace nxrt::cli
