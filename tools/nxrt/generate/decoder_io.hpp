// The inputs and outputs of a decoder model under ONNX Runtime GenAI names,
// read from a loaded Session: input_ids and attention_mask, one
// past_key_values.N.key/.value pair per layer, logits and the matching
// present.N.key/.value. `nxrt generate` feeds a model by these names only,
// so discovery refuses a model that lacks any of them or asks for more.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nxrt/session.hpp"
#include "nxrt/support/status.hpp"

namespace nxrt::cli {

struct DecoderLayerIo {
  std::string past_key;
  std::string past_value;
  std::string present_key;
  std::string present_value;
};

struct DecoderIo {
  std::vector<DecoderLayerIo> layers;
  int64_t kv_heads = 0;
  int64_t head_dim = 0;
  int64_t vocab = 0;
  // The sequence axis of the pasts when it is a number (a fixed-capacity
  // cache); unset when it is symbolic and the cache grows.
  std::optional<int64_t> kv_capacity;
};

inline constexpr const char* kInputIdsName = "input_ids";
inline constexpr const char* kAttentionMaskName = "attention_mask";
inline constexpr const char* kLogitsName = "logits";

// Fails with one line naming `model_name` and every missing or mistyped
// input and output.
Result<DecoderIo> DiscoverDecoderIo(const Session& session, const std::string& model_name);

}  // namespace nxrt::cli
