// Where the loader tests find ONNX backend test cases: Debian's
// libonnx-testdata, and the node cases exported from the onnx package in
// .venv (NXRT_ONNX_NODE_CASES, else the build's, else the source tree's
// build/onnx-node-cases, the export script's default).
#pragma once

#include <cstdlib>
#include <filesystem>

namespace nxrt::graph::testing {

inline const std::filesystem::path kDebianTestData = "/usr/share/libonnx-testdata/data";

inline std::filesystem::path OnnxNodeCasesDir() {
  if (const char* env = std::getenv("NXRT_ONNX_NODE_CASES")) return env;
  const std::filesystem::path in_build = std::filesystem::path(NXRT_BINARY_DIR) / "onnx-node-cases";
  if (std::filesystem::exists(in_build)) return in_build;
  return std::filesystem::path(NXRT_SOURCE_DIR) / "build" / "onnx-node-cases";
}

}  // namespace nxrt::graph::testing
