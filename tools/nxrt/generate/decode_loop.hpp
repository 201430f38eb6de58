// The token generation loop: the prompts in one eager run (the prefill),
// then one decode step per new token of each row on the Primary device-graph
// slot, which captures once warm and replays after. Each row's last-position
// logits pick its next token; only the runs themselves and the token picks
// are timed, not what the caller does with the logits.
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
  std::vector<std::vector<int64_t>> prompts;  // one per row of the batch
  int64_t steps = 0;
  // Generation ends once every row has given one of these (an
  // end-of-sequence id).
  std::vector<int64_t> stop_tokens;
  // The most tokens a row (left padding, prompt and generated) may hold.
  int64_t max_len = 0;
  // For every run, the prefill's included: the profile it adds to (null for
  // none), and the seconds it may take (0 for no limit).
  RunProfile* profile = nullptr;
  double run_time_limit_s = 0;
};

// Why generation ended: the requested steps ran, the rows reached max_len,
// or every row gave a stop token.
enum class StopReason { kSteps, kMaxLen, kStopToken };
const char* StopReasonName(StopReason reason);

struct Generation {
  // Generated per row: one from the prefill, one per step.
  std::vector<std::vector<int64_t>> tokens;
  double prefill_us = 0;
  std::vector<double> step_us;  // one per decode step run
  StopReason stop = StopReason::kSteps;
};

// Called after each run with its index (the prefill is 0) and the logits of
// each row's last position, row after row.
using LogitsSink = std::function<Status(int64_t run, std::span<const float> logits)>;

// The prompt must leave room under max_len for one generated token.
Result<Generation> Decode(Session& session, DecoderFeeds& feeds, TokenSampler& sampler,
                          const DecodeRequest& request, const LogitsSink& sink);

}  // namespace nxrt::cli
