// Model bytes through everything a session does before it meets a plugin:
// the loader, the load-time rewrites, symbolic shape inference, decoder
// discovery and the capture plan with its report. Any input must come back
// as a value or a one-line error; a crash, a sanitizer report, a leak or a
// hang is a finding.
#include <cstddef>
#include <cstdint>
#include <span>

#include "nxrt/graph/capture_classifier.hpp"
#include "nxrt/graph/capture_explain.hpp"
#include "nxrt/graph/decoder_signature.hpp"
#include "nxrt/graph/graph_rewrites.hpp"
#include "nxrt/graph/loader.hpp"
#include "nxrt/graph/shape_inference.hpp"

namespace {

// External data may only come from a folder that holds nothing.
constexpr const char* kNoExternalData = "/nonexistent/nxrt-fuzz";

void ClassifyBothWays(const nxrt::graph::Graph& graph,
                      const nxrt::graph::DecoderSignature& decoder) {
  for (nxrt::graph::CaptureMode mode :
       {nxrt::graph::CaptureMode::kFailSafe, nxrt::graph::CaptureMode::kDenylist}) {
    nxrt::graph::CaptureOptions options;
    options.mode = mode;
    options.decoder = &decoder;
    nxrt::graph::CapturePlan plan = nxrt::graph::ClassifyCapture(graph, options);
    nxrt::graph::FormatCaptureReport(nxrt::graph::ExplainCapture(graph, plan));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto bytes = std::as_bytes(std::span(data, size));
  nxrt::Result<nxrt::graph::Graph> loaded =
      nxrt::graph::LoadModelFromBytes(bytes, "fuzzed.onnx", kNoExternalData);
  if (!loaded.ok()) return 0;
  nxrt::graph::Graph graph = std::move(loaded).value();
  nxrt::graph::ConstantNodesToInitializers(graph);
  nxrt::graph::FoldBatchNormalizationIntoConv(graph);
  if (!nxrt::graph::InferShapes(graph).ok()) return 0;
  nxrt::graph::DecoderSignature decoder = nxrt::graph::DescribeDecoder(graph);
  nxrt::graph::FormatDecoderRoles(decoder);
  ClassifyBothWays(graph, decoder);
  return 0;
}
