// The token generation loop: the prompts in one eager run (the prefill),
// then one decode step per new token of each row on the Primary device-graph
// slot, which captures once warm and replays after. Each row's last-position
// logits pick its next token; only the runs themselves and the token picks
// are timed, not what the caller does with the logits.
//
// Speculative decoding (one row, greedy): where prompt lookup drafts tokens
// (prompt_lookup.hpp), one run on the Verify slot feeds the last token and
// the draft together; the logits of each position give the token greedy
// decoding would have picked there, so the draft is kept up to its first
// token that differs, that position's pick follows, and the cache drops the
// rejected rest. A short draft is padded to full length with its last
// token, so the verify runs keep one shape. The tokens are the ones plain
// greedy decoding gives, with fewer runs.
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
  // Draft tokens per speculative run; 0 decodes one token per run.
  size_t draft_tokens = 0;
};

struct SpeculationStats {
  int64_t verify_runs = 0;        // runs that fed a draft, on the Verify slot
  int64_t drafted = 0;            // draft tokens fed
  int64_t accepted = 0;           // draft tokens kept
  std::vector<double> verify_us;  // each verify run's time, also in step_us
};

// Why generation ended: the requested steps ran, the rows reached max_len,
// or every row gave a stop token.
enum class StopReason { kSteps, kMaxLen, kStopToken };
const char* StopReasonName(StopReason reason);

struct Generation {
  // Generated per row: one from the prefill, then one per step (more from a
  // speculative run that keeps some of its draft).
  std::vector<std::vector<int64_t>> tokens;
  double prefill_us = 0;
  std::vector<double> step_us;  // one per decode run
  SpeculationStats speculation;
  StopReason stop = StopReason::kSteps;
};

// Called with each token's index (the prefill's is 0) and the logits that
// picked it, row after row: a speculative run calls it once per token kept.
using LogitsSink = std::function<Status(int64_t run, std::span<const float> logits)>;

// The prompt must leave room under max_len for one generated token.
// Speculation needs one row and a greedy sampler.
Result<Generation> Decode(Session& session, DecoderFeeds& feeds, TokenSampler& sampler,
                          const DecodeRequest& request, const LogitsSink& sink);

}  // namespace nxrt::cli
