// A model loaded for a command: its Session on the chosen providers, plus
// what the Session does not say about its inputs and outputs: whether each
// is a tensor, a sequence or an optional, which decides how a .pb file for
// it is decoded (an optional tensor and a one-tensor sequence share bytes).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <vector>

#include "nxrt/environment.hpp"
#include "nxrt/graph/ir.hpp"
#include "nxrt/session.hpp"
#include "nxrt/session_options.hpp"
#include "nxrt/support/status.hpp"

namespace nxrt::cli {

struct ModelSession {
  std::unique_ptr<Session> session;
  uint64_t streamed_weight_bytes = 0;          // common/streamed_weights.hpp
  std::vector<graph::ValueKind> input_kinds;   // by position in session->inputs()
  std::vector<graph::ValueKind> output_kinds;  // by position in session->outputs()
};

// Fails with a one-line error naming the model when the file is missing, the
// model is malformed, or no provider claims a node.
Result<ModelSession> LoadModelSession(std::shared_ptr<Environment> environment,
                                      const std::filesystem::path& model_file,
                                      SessionOptions options);

}  // namespace nxrt::cli
