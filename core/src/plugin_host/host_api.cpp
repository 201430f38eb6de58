#include "plugin_host/host_api.hpp"

#include <exception>
#include <string>

#include "nxrt/support/log.hpp"
#include "plugin_host/compute_context.hpp"
#include "plugin_host/host_context.hpp"
#include "plugin_host/node_view.hpp"
#include "plugin_host/plugin_options.hpp"
#include "plugin_host/plugin_status.hpp"

namespace nxrt::plugin_host {
namespace {

using nxrt::graph::Attribute;
using nxrt::graph::AttributeType;

spdlog::level::level_enum SpdlogLevel(nxrt_log_level level) {
  switch (level) {
    case NXRT_LOG_TRACE:
      return spdlog::level::trace;
    case NXRT_LOG_DEBUG:
      return spdlog::level::debug;
    case NXRT_LOG_INFO:
      return spdlog::level::info;
    case NXRT_LOG_WARN:
      return spdlog::level::warn;
    case NXRT_LOG_ERROR:
      return spdlog::level::err;
  }
  return spdlog::level::err;
}

void Log(nxrt_host_context* host, nxrt_log_level level, const char* message) {
  if (host == nullptr || !host->logger) return;
  host->logger->log(SpdlogLevel(level), "{}", message ? message : "");
}

nxrt_bool LogEnabled(nxrt_host_context* host, nxrt_log_level level) {
  return host != nullptr && host->logger && host->logger->should_log(SpdlogLevel(level));
}

size_t OptionCount(const nxrt_options* options) {
  return options ? options->views.size() : 0;
}

const nxrt_option* OptionAt(const nxrt_options* options, size_t index) {
  if (options == nullptr || index >= options->views.size()) return nullptr;
  return &options->views[index];
}

const char* OptionGet(const nxrt_options* options, const char* key) {
  return options ? options->Find(key) : nullptr;
}

const char* NodeOpType(const nxrt_node* node) {
  return node->node().op_type.c_str();
}
const char* NodeDomain(const nxrt_node* node) {
  return node->node().domain.c_str();
}
const char* NodeName(const nxrt_node* node) {
  return node->node().name.c_str();
}
size_t NodeInputCount(const nxrt_node* node) {
  return node->node().inputs.size();
}
size_t NodeOutputCount(const nxrt_node* node) {
  return node->node().outputs.size();
}
const char* NodeInputName(const nxrt_node* node, size_t index) {
  return node->input_name(index);
}
const char* NodeOutputName(const nxrt_node* node, size_t index) {
  return node->output_name(index);
}

nxrt_status* CopyInfo(const nxrt_node* node, std::span<const nxrt_value_info> infos, size_t index,
                      nxrt_value_info* out, const char* which) {
  if (out == nullptr || index >= infos.size()) {
    return MakeStatus(NXRT_STATUS_INVALID_ARGUMENT,
                      node->Describe() + ": " + which + " index " + std::to_string(index) +
                          " is out of range (the node has " + std::to_string(infos.size()) + ")");
  }
  *out = infos[index];
  return nullptr;
}

nxrt_status* NodeInputInfo(const nxrt_node* node, size_t index, nxrt_value_info* out) {
  return CopyInfo(node, node->input_infos(), index, out, "input");
}
nxrt_status* NodeOutputInfo(const nxrt_node* node, size_t index, nxrt_value_info* out) {
  return CopyInfo(node, node->output_infos(), index, out, "output");
}
nxrt_bool NodeInputIsConstant(const nxrt_node* node, size_t index) {
  return node->input_is_constant(index);
}

nxrt_attr_type AbiAttrType(AttributeType type) {
  switch (type) {
    case AttributeType::kFloat:
      return NXRT_ATTR_FLOAT;
    case AttributeType::kInt:
      return NXRT_ATTR_INT;
    case AttributeType::kString:
      return NXRT_ATTR_STRING;
    case AttributeType::kTensor:
      return NXRT_ATTR_TENSOR;
    case AttributeType::kGraph:
      return NXRT_ATTR_GRAPH;
    case AttributeType::kFloats:
      return NXRT_ATTR_FLOATS;
    case AttributeType::kInts:
      return NXRT_ATTR_INTS;
    case AttributeType::kStrings:
      return NXRT_ATTR_STRINGS;
    case AttributeType::kTensors:
      return NXRT_ATTR_TENSORS;
    case AttributeType::kGraphs:
      return NXRT_ATTR_GRAPHS;
    case AttributeType::kTypeProto:
      return NXRT_ATTR_TYPE_PROTO;
    case AttributeType::kTypeProtos:
      return NXRT_ATTR_TYPE_PROTOS;
  }
  return NXRT_ATTR_UNDEFINED;
}

nxrt_attr_type NodeAttrType(const nxrt_node* node, const char* name) {
  const Attribute* a = node->attribute(name);
  return a ? AbiAttrType(a->type) : NXRT_ATTR_UNDEFINED;
}

// The attribute `name` of type `type`, or the NOT_FOUND / INVALID_ARGUMENT
// status the getters answer.
const Attribute* FindTyped(const nxrt_node* node, const char* name, AttributeType type,
                           nxrt_status** error) {
  const Attribute* a = node->attribute(name);
  if (a == nullptr) {
    *error = MakeStatus(NXRT_STATUS_NOT_FOUND,
                        node->Describe() + ": no attribute '" + (name ? name : "") + "'");
    return nullptr;
  }
  if (a->type != type) {
    *error = MakeStatus(NXRT_STATUS_INVALID_ARGUMENT,
                        node->Describe() + ": attribute '" + a->name + "' has another type");
    return nullptr;
  }
  *error = nullptr;
  return a;
}

nxrt_status* NodeAttrInt(const nxrt_node* node, const char* name, int64_t* out) {
  nxrt_status* error;
  const Attribute* a = FindTyped(node, name, AttributeType::kInt, &error);
  if (a) *out = a->i;
  return error;
}

nxrt_status* NodeAttrFloat(const nxrt_node* node, const char* name, float* out) {
  nxrt_status* error;
  const Attribute* a = FindTyped(node, name, AttributeType::kFloat, &error);
  if (a) *out = a->f;
  return error;
}

nxrt_status* NodeAttrString(const nxrt_node* node, const char* name, nxrt_string_view* out) {
  nxrt_status* error;
  const Attribute* a = FindTyped(node, name, AttributeType::kString, &error);
  if (a) *out = {a->s.data(), a->s.size()};
  return error;
}

nxrt_status* NodeAttrInts(const nxrt_node* node, const char* name, const int64_t** values,
                          size_t* count) {
  nxrt_status* error;
  const Attribute* a = FindTyped(node, name, AttributeType::kInts, &error);
  if (a) {
    *values = a->ints.data();
    *count = a->ints.size();
  }
  return error;
}

nxrt_status* NodeAttrFloats(const nxrt_node* node, const char* name, const float** values,
                            size_t* count) {
  nxrt_status* error;
  const Attribute* a = FindTyped(node, name, AttributeType::kFloats, &error);
  if (a) {
    *values = a->floats.data();
    *count = a->floats.size();
  }
  return error;
}

nxrt_status* NodeAttrStringsCount(const nxrt_node* node, const char* name, size_t* count) {
  nxrt_status* error;
  const Attribute* a = FindTyped(node, name, AttributeType::kStrings, &error);
  if (a) *count = a->strings.size();
  return error;
}

nxrt_status* NodeAttrStringsAt(const nxrt_node* node, const char* name, size_t index,
                               nxrt_string_view* out) {
  nxrt_status* error;
  const Attribute* a = FindTyped(node, name, AttributeType::kStrings, &error);
  if (a == nullptr) return error;
  if (index >= a->strings.size()) {
    return MakeStatus(NXRT_STATUS_INVALID_ARGUMENT,
                      node->Describe() + ": attribute '" + a->name + "' has " +
                          std::to_string(a->strings.size()) + " strings, asked for index " +
                          std::to_string(index));
  }
  *out = {a->strings[index].data(), a->strings[index].size()};
  return nullptr;
}

nxrt_status* NodeAttrTensor(const nxrt_node* node, const char* name, nxrt_tensor* out) {
  nxrt_status* error;
  const Attribute* a = FindTyped(node, name, AttributeType::kTensor, &error);
  if (a == nullptr) return error;
  if (!a->tensor || !node->graph().weights) {
    return MakeStatus(NXRT_STATUS_INTERNAL,
                      node->Describe() + ": tensor attribute '" + a->name + "' has no data");
  }
  const nxrt::graph::TensorData& data = node->graph().weights->Get(*a->tensor);
  out->struct_size = sizeof(nxrt_tensor);
  out->dtype = static_cast<nxrt_dtype>(data.dtype);
  out->memory = NXRT_MEMORY_HOST;
  out->rank = data.dims.size();
  out->dims = data.dims.empty() ? nullptr : data.dims.data();
  if (data.dtype == nxrt::graph::DataType::kString) {
    auto strings = node->tensor_attribute_strings(*a);
    out->data = const_cast<nxrt_string_view*>(strings.data());
    out->byte_size = strings.size_bytes();
  } else {
    out->data = const_cast<std::byte*>(data.bytes.data());
    out->byte_size = data.bytes.size();
  }
  return nullptr;
}

nxrt_status* NodeAttrGraph(const nxrt_node* node, const char* name, size_t* input_count,
                           size_t* output_count) {
  nxrt_status* error;
  const Attribute* a = FindTyped(node, name, AttributeType::kGraph, &error);
  if (a == nullptr) return error;
  if (!a->graph) {
    return MakeStatus(NXRT_STATUS_INTERNAL,
                      node->Describe() + ": graph attribute '" + a->name + "' has no body");
  }
  *input_count = a->graph->inputs.size();
  *output_count = a->graph->outputs.size();
  return nullptr;
}

// Runs a ComputeServices call, turning a stray exception into a status so
// nothing unwinds into plugin frames.
template <typename Fn>
nxrt_status* Forward(nxrt_compute_context* ctx, Fn&& fn) {
  if (ctx == nullptr || ctx->services == nullptr) {
    return MakeStatus(NXRT_STATUS_FAILED_PRECONDITION,
                      "compute-time host service called without a compute context (inside a "
                      "capture replay, or outside compute); allocate outputs before capturing");
  }
  try {
    return MakeStatus(fn(*ctx->services));
  } catch (const std::exception& e) {
    return MakeStatus(NXRT_STATUS_INTERNAL,
                      std::string("host compute service failed: ") + e.what());
  }
}

std::span<const int64_t> DimSpan(const int64_t* dims, size_t rank) {
  return rank == 0 ? std::span<const int64_t>() : std::span<const int64_t>(dims, rank);
}

nxrt_status* AllocateOutput(nxrt_compute_context* ctx, size_t index, nxrt_dtype dtype, size_t rank,
                            const int64_t* dims, nxrt_tensor* out) {
  return Forward(ctx, [&](ComputeServices& s) {
    return s.AllocateOutput(index, dtype, DimSpan(dims, rank), out);
  });
}

nxrt_status* AllocateSequenceOutput(nxrt_compute_context* ctx, size_t index, size_t length) {
  return Forward(ctx, [&](ComputeServices& s) { return s.AllocateSequenceOutput(index, length); });
}

nxrt_status* AllocateSequenceElement(nxrt_compute_context* ctx, size_t index, size_t element,
                                     nxrt_dtype dtype, size_t rank, const int64_t* dims,
                                     nxrt_tensor* out) {
  return Forward(ctx, [&](ComputeServices& s) {
    return s.AllocateSequenceElement(index, element, dtype, DimSpan(dims, rank), out);
  });
}

nxrt_status* SetOutputNone(nxrt_compute_context* ctx, size_t index) {
  return Forward(ctx, [&](ComputeServices& s) { return s.SetOutputNone(index); });
}

nxrt_status* SetStringElement(nxrt_compute_context* ctx, size_t index, size_t element,
                              const char* data, size_t size) {
  return Forward(ctx, [&](ComputeServices& s) {
    return s.SetStringElement(index, element, std::string_view(data ? data : "", data ? size : 0));
  });
}

nxrt_status* RunSubgraph(nxrt_compute_context* ctx, const char* attr_name, const nxrt_value* inputs,
                         size_t input_count, nxrt_value* outputs, size_t output_count) {
  return Forward(ctx, [&](ComputeServices& s) {
    return s.RunSubgraph(attr_name ? attr_name : "",
                         std::span<const nxrt_value>(inputs, inputs ? input_count : 0),
                         std::span<nxrt_value>(outputs, outputs ? output_count : 0));
  });
}

const nxrt_host_api kHostApi = {
    sizeof(nxrt_host_api),
    NXRT_EP_ABI_VERSION,
    StatusCreate,
    StatusRelease,
    StatusCodeOf,
    StatusMessageOf,
    Log,
    LogEnabled,
    OptionCount,
    OptionAt,
    OptionGet,
    NodeOpType,
    NodeDomain,
    NodeName,
    NodeInputCount,
    NodeInputName,
    NodeOutputCount,
    NodeOutputName,
    NodeInputInfo,
    NodeOutputInfo,
    NodeInputIsConstant,
    NodeAttrType,
    NodeAttrInt,
    NodeAttrFloat,
    NodeAttrString,
    NodeAttrInts,
    NodeAttrFloats,
    NodeAttrStringsCount,
    NodeAttrStringsAt,
    NodeAttrTensor,
    NodeAttrGraph,
    AllocateOutput,
    AllocateSequenceOutput,
    AllocateSequenceElement,
    SetOutputNone,
    SetStringElement,
    RunSubgraph,
};

}  // namespace

const nxrt_host_api* HostApi() {
  return &kHostApi;
}

}  // namespace nxrt::plugin_host
