#include <climits>
#include <exception>
#include <fstream>
#include <system_error>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "loader/graph_builder.hpp"
#include "loader/subgraph_depth.hpp"
#include "nxrt/graph/loader.hpp"
#include "nxrt/graph/quoted_name.hpp"
#include "nxrt/support/log.hpp"

namespace nxrt::graph {

namespace fs = std::filesystem;
using google::protobuf::io::CodedInputStream;

namespace {

// The model file opened for reading, after the checks that give each
// failure its own message.
Result<std::ifstream> OpenModelFile(const fs::path& file) {
  const std::string shown = Printable(file.string());
  std::error_code ec;
  const fs::file_status status = fs::status(file, ec);
  if (ec || !fs::exists(status)) {
    return NotFound(shown + ": model file does not exist; check the path");
  }
  if (!fs::is_regular_file(status)) {
    return InvalidArgument(shown + ": is not a regular file; pass the model.onnx file");
  }
  const auto size = fs::file_size(file, ec);
  if (ec) return Unavailable(shown + ": cannot read its size (" + ec.message() + ")");
  if (size > static_cast<uintmax_t>(INT_MAX)) {
    return Unsupported(shown + ": is larger than 2 GiB; save its weights as ONNX external data");
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) return Unavailable(shown + ": cannot be opened for reading; check permissions");
  return in;
}

ModelMetadata ReadMetadata(const onnx::ModelProto& model) {
  ModelMetadata metadata;
  metadata.producer_name = model.producer_name();
  metadata.producer_version = model.producer_version();
  metadata.domain = model.domain();
  metadata.model_version = model.model_version();
  metadata.description = model.doc_string();
  metadata.graph_description = model.graph().doc_string();
  for (const auto& property : model.metadata_props()) {
    metadata.custom[property.key()] = property.value();
  }
  return metadata;
}

// Consumes `model`'s initializer bytes as it copies them into the store.
Result<Graph> LoadParsedModel(onnx::ModelProto& model, const std::string& display_name,
                              const fs::path& external_data_dir) {
  if (!model.has_graph()) {
    return InvalidArgument(display_name +
                           ": holds no graph; the file is empty, truncated or not an ONNX model");
  }
  if (model.opset_import_size() == 0) {
    return InvalidArgument(display_name +
                           ": declares no opset_import; the file is truncated or was written "
                           "by a broken exporter");
  }
  std::map<std::string, int64_t> opsets;
  for (const auto& opset : model.opset_import()) {
    opsets[NormalizeDomain(opset.domain())] = opset.version();
  }
  ModelMetadata metadata = ReadMetadata(model);
  ModelLoadContext context;
  context.model_name = display_name;
  context.external_data_dir = external_data_dir;
  context.weights = std::make_shared<WeightStore>();
  context.releasable_graph = model.mutable_graph();
  CollectDimParams(model.graph(), context.dim_params);
  NXRT_ASSIGN_OR_RETURN(Graph graph,
                        BuildGraph(model.graph(), context, nullptr, opsets, display_name));
  graph.metadata = std::move(metadata);
  GetLogger()->debug("{}: loaded {} nodes, {} values, {} weights", display_name, graph.nodes.size(),
                     graph.values.size(), graph.weights->size());
  return graph;
}

// Why `model_bytes`, which protobuf refused, are no model: nesting too deep
// for protobuf, or damage.
Status NotAModel(const std::string& shown, google::protobuf::io::ZeroCopyInputStream& model_bytes) {
  if (SubgraphsNestTooDeep(model_bytes)) {
    return InvalidArgument(shown +
                           ": nests its subgraphs (If, Loop, Scan or function bodies) deeper "
                           "than the " +
                           std::to_string(CodedInputStream::GetDefaultRecursionLimit()) +
                           " messages protobuf reads; flatten the nested control flow");
  }
  return InvalidArgument(shown +
                         ": is not a valid ONNX protobuf (truncated or corrupt); "
                         "re-export or re-download the model");
}

// Parses `model_bytes`; `shown` names the model in errors. Both parsers may
// throw (allocation), so callers hold them inside their exception boundary.
Result<onnx::ModelProto> ParseModel(std::span<const std::byte> model_bytes,
                                    const std::string& shown) {
  if (model_bytes.size() > static_cast<size_t>(INT_MAX)) {
    return Unsupported(shown + ": is larger than 2 GiB; save its weights as ONNX external data");
  }
  onnx::ModelProto model;
  const int size = static_cast<int>(model_bytes.size());
  if (!model.ParseFromArray(model_bytes.data(), size)) {
    google::protobuf::io::ArrayInputStream again(model_bytes.data(), size);
    return NotAModel(shown, again);
  }
  return model;
}

// Parses the model file `in` as it reads it, so the file's bytes are never
// held whole beside the parsed model.
Result<onnx::ModelProto> ParseModel(std::ifstream& in, const std::string& shown) {
  onnx::ModelProto model;
  if (!model.ParseFromIstream(&in)) {
    if (in.bad()) return Unavailable(shown + ": read failed; check the file and the disk");
    in.clear();
    in.seekg(0);
    google::protobuf::io::IstreamInputStream again(&in);
    return NotAModel(shown, again);
  }
  return model;
}

}  // namespace

Result<Graph> LoadModelFromBytes(std::span<const std::byte> model_bytes,
                                 const std::string& display_name,
                                 const fs::path& external_data_dir) {
  // The name goes into one-line messages; the caller may pass any bytes.
  const std::string shown = Printable(display_name);
  try {
    NXRT_ASSIGN_OR_RETURN(onnx::ModelProto model, ParseModel(model_bytes, shown));
    return LoadParsedModel(model, shown, external_data_dir);
  } catch (const std::exception& e) {
    return Internal(shown + ": loading failed: " + e.what());
  }
}

Result<Graph> LoadModelFromFile(const fs::path& model_file) {
  const std::string shown = Printable(model_file.string());
  try {
    NXRT_ASSIGN_OR_RETURN(std::ifstream in, OpenModelFile(model_file));
    NXRT_ASSIGN_OR_RETURN(onnx::ModelProto model, ParseModel(in, shown));
    return LoadParsedModel(model, shown, model_file.parent_path());
  } catch (const std::exception& e) {
    return Internal(shown + ": loading failed: " + e.what());
  }
}

}  // namespace nxrt::graph
