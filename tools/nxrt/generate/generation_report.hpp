// What `nxrt generate` tells its user: the prompt and generated token ids
// of each row, how the model's inputs were placed, prefill time,
// decode-step latency and tokens per second (over all rows), kernel-cache
// statistics, device-graph counters and peak memory, and the profile's
// longest ops under --profile; as text, or as one JSON object for scripts
// (the keys scripts/lib/decode_summary.py reads).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/run_counters.hpp"
#include "generate/decode_loop.hpp"
#include "generate/decoder_feeds.hpp"
#include "generate/decoder_io.hpp"
#include "nxrt/run_profile.hpp"

namespace nxrt::cli {

struct GenerationReport {
  std::string model;
  KvForm kv = KvForm::kGrowing;
  std::vector<std::vector<int64_t>> prompts;  // one per row
  const DecoderIo* io = nullptr;
  int64_t requested_steps = 0;
  int64_t max_len = 0;
  uint64_t streamed_weight_bytes = 0;  // a decode step's (common/streamed_weights.hpp)
  Generation generation;
  RunCounters counters;
  // The runs' profile and its trace file, under --profile; else null.
  const RunProfile* profile = nullptr;
  std::string profile_path;
};

// Several lines, each ending in a newline.
std::string GenerationText(const GenerationReport& report);
std::string GenerationJson(const GenerationReport& report);

// Why generation stopped short of the requested steps; "" when it did not.
std::string StopNote(const GenerationReport& report);

}  // namespace nxrt::cli
