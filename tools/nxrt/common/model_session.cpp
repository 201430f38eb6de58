#include "common/model_session.hpp"

#include "common/streamed_weights.hpp"
#include "nxrt/graph/loader.hpp"

namespace nxrt::cli {

Result<ModelSession> LoadModelSession(std::shared_ptr<Environment> environment,
                                      const std::filesystem::path& model_file,
                                      SessionOptions options) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(model_file, error)) {
    return NotFound("model '" + model_file.string() +
                    "' not found; pass the path of an .onnx model file");
  }
  NXRT_ASSIGN_OR_RETURN(graph::Graph graph, graph::LoadModelFromFile(model_file));
  ModelSession loaded;
  for (graph::ValueId id : graph.inputs) loaded.input_kinds.push_back(graph.value(id).kind);
  for (graph::ValueId id : graph.outputs) loaded.output_kinds.push_back(graph.value(id).kind);
  loaded.streamed_weight_bytes = StreamedWeightBytes(graph);
  NXRT_ASSIGN_OR_RETURN(loaded.session, Session::Create(std::move(environment), std::move(graph),
                                                        std::move(options)));
  return loaded;
}

}  // namespace nxrt::cli
