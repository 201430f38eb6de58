// Loading an ONNX model into the IR. Every malformed model (unreadable file,
// bad protobuf, a value nobody produces, two producers of one value, a cycle,
// an unknown dtype, impossible dims or data sizes, external data outside the
// model's folder) comes back as one error naming the model, the node and the
// fault; the loader never aborts.
//
// Nodes come out in topological order. Initializers, Constant values and
// tensor attributes land in one weight store shared by the graph and its
// If/Loop/Scan bodies; external data is memory-mapped.
#pragma once

#include <cstddef>
#include <filesystem>
#include <span>
#include <string>

#include "nxrt/graph/ir.hpp"
#include "nxrt/support/status.hpp"

namespace nxrt::graph {

// Loads `model_file`; external data is looked up in the file's folder.
Result<Graph> LoadModelFromFile(const std::filesystem::path& model_file);

// Loads a serialized ModelProto. `display_name` names the model in errors;
// external data is looked up in `external_data_dir`.
Result<Graph> LoadModelFromBytes(std::span<const std::byte> model_bytes,
                                 const std::string& display_name,
                                 const std::filesystem::path& external_data_dir);

}  // namespace nxrt::graph
