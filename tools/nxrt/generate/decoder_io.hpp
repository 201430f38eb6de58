// The inputs and outputs `nxrt generate` feeds and reads, from the session's
// decoder signature (nxrt/graph/decoder_signature.hpp): the roles of the
// model's inputs whatever their names, each KV past with the present that
// extends it, and the geometry of the cache. The token ids, mask, position
// ids and cache position must be int64; each past has at most one symbolic
// axis besides its growing one, the batch, and static extents elsewhere.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nxrt/graph/decoder_signature.hpp"
#include "nxrt/session.hpp"
#include "nxrt/support/status.hpp"

namespace nxrt::cli {

struct DecoderKvIo {
  std::string past;
  std::string present;
  DataType dtype = DataType::kFloat32;
  std::vector<int64_t> dims;         // static extents; the batch and growing axes are set per run
  std::optional<size_t> batch_axis;  // unset where the model's batch is static
  size_t axis = 0;                   // the growing axis
};

struct DecoderIo {
  graph::DecoderSignature roles;
  std::vector<DecoderKvIo> kv;
  int64_t vocab = 0;
  // The batch the token ids declare, where it is a number.
  std::optional<int64_t> static_batch;
  // The growing axis of the pasts when it is a number (a fixed-capacity
  // cache); unset when it is symbolic and the cache grows.
  std::optional<int64_t> kv_capacity;
};

// Fails with one line naming `model_name` and every input or output it
// could not place.
Result<DecoderIo> DiscoverDecoderIo(const Session& session, const std::string& model_name);

}  // namespace nxrt::cli
