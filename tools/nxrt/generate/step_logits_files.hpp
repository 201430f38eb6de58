// `nxrt generate --output-dir`: the logits of the last position of every
// run as TensorProto files step_000.pb (the prefill), step_001.pb (the first
// decode step) and so on, each [1, vocab] and named "logits", written as
// `nxrt run --output-dir` writes its outputs, so scripts can compare each
// step with another runtime.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>

#include "nxrt/support/status.hpp"

namespace nxrt::cli {

// Creates the folder when missing.
Status PrepareStepLogitsFolder(const std::filesystem::path& folder);

Status WriteStepLogits(const std::filesystem::path& folder, int64_t run,
                       std::span<const float> logits);

}  // namespace nxrt::cli
