// The token generation loop: the prompt in one eager run (the prefill), then
// one decode step per new token on the Primary device-graph slot, which
// captures once warm and replays after. Each run's last-position logits
// pick the next token; only the runs themselves and the token picks are
// timed, not what the caller does with the logits.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "generate/decoder_feeds.hpp"
#include "generate/token_sampler.hpp"
#include "nxrt/run_profile.hpp"
#include "nxrt/session.hpp"
#include "nxrt/support/status.hpp"

namespace nxrt::cli {

struct DecodeRequest {
  std::vector<int64_t> prompt;
  int64_t steps = 0;
  // Generation ends once it gives one of these (an end-of-sequence id).
  std::vector<int64_t> stop_tokens;
  // The most tokens the sequence (prompt and generated) may hold.
  int64_t max_len = 0;
  // For every run, the prefill's included: the profile it adds to (null for
  // none), and the seconds it may take (0 for no limit).
  RunProfile* profile = nullptr;
  double run_time_limit_s = 0;
};

// Why generation ended: the requested steps ran, the sequence reached
// max_len, or a stop token came.
enum class StopReason { kSteps, kMaxLen, kStopToken };
const char* StopReasonName(StopReason reason);

struct Generation {
  std::vector<int64_t> tokens;  // generated: one from the prefill, one per step
  double prefill_us = 0;
  std::vector<double> step_us;  // one per decode step run
  StopReason stop = StopReason::kSteps;
};

// Called after each run with its index (the prefill is 0) and the logits of
// its last position.
using LogitsSink = std::function<Status(int64_t run, std::span<const float> logits)>;

// The prompt must leave room under max_len for one generated token.
Result<Generation> Decode(Session& session, DecoderFeeds& feeds, TokenSampler& sampler,
                          const DecodeRequest& request, const LogitsSink& sink);

}  // namespace nxrt::cli
