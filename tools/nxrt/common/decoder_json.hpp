// A decoder signature (nxrt/graph/decoder_signature.hpp) as the JSON member
// both `nxrt inspect --json` and `nxrt generate --json` write, so scripts
// can feed another runtime the way nxrt feeds the model.
#pragma once

#include "common/json_writer.hpp"
#include "nxrt/graph/decoder_signature.hpp"

namespace nxrt::cli {

// The member "decoder" of the object `json` is writing: the roles' input
// and output names ("" for a role the model lacks), "kv" with each pair's
// past, present, past_axis, present_axis and traced, and "problems".
void WriteDecoderSignature(JsonWriter& json, const graph::DecoderSignature& decoder);

}  // namespace nxrt::cli
