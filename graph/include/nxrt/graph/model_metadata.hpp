// What a model file says about itself: ModelProto's producer, domain,
// version and descriptions, and its metadata_props, where exporters keep
// labels, tokenizer settings and the like for the application.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace nxrt::graph {

struct ModelMetadata {
  std::string producer_name;
  std::string producer_version;
  std::string domain;
  int64_t model_version = 0;
  std::string description;        // ModelProto.doc_string
  std::string graph_description;  // the main graph's doc_string
  // metadata_props by key; a key the model repeats keeps its last value, as
  // in ONNX Runtime.
  std::map<std::string, std::string> custom;
};

}  // namespace nxrt::graph
