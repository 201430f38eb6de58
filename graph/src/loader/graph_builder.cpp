#include "loader/graph_builder.hpp"

#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "loader/node_arity.hpp"
#include "loader/node_attributes.hpp"
#include "loader/sparse_tensor.hpp"
#include "loader/tensor_proto_data.hpp"
#include "loader/topological_order.hpp"
#include "nxrt/graph/quoted_name.hpp"

namespace nxrt::graph {

std::string NormalizeDomain(const std::string& domain) {
  return domain == "ai.onnx" ? std::string() : domain;
}

namespace {

void CollectTypeDimParams(const onnx::TypeProto& type, std::unordered_set<std::string>& names) {
  const onnx::TensorShapeProto* shape = nullptr;
  switch (type.value_case()) {
    case onnx::TypeProto::kTensorType:
      if (type.tensor_type().has_shape()) shape = &type.tensor_type().shape();
      break;
    case onnx::TypeProto::kSparseTensorType:
      if (type.sparse_tensor_type().has_shape()) shape = &type.sparse_tensor_type().shape();
      break;
    case onnx::TypeProto::kSequenceType:
      CollectTypeDimParams(type.sequence_type().elem_type(), names);
      break;
    case onnx::TypeProto::kOptionalType:
      CollectTypeDimParams(type.optional_type().elem_type(), names);
      break;
    case onnx::TypeProto::kMapType:
      CollectTypeDimParams(type.map_type().value_type(), names);
      break;
    default:
      break;
  }
  if (shape == nullptr) return;
  for (const auto& dim : shape->dim()) {
    if (dim.has_dim_param()) names.insert(dim.dim_param());
  }
}

}  // namespace

void CollectDimParams(const onnx::GraphProto& proto, std::unordered_set<std::string>& names) {
  for (const auto& v : proto.input()) CollectTypeDimParams(v.type(), names);
  for (const auto& v : proto.output()) CollectTypeDimParams(v.type(), names);
  for (const auto& v : proto.value_info()) CollectTypeDimParams(v.type(), names);
  for (const auto& node : proto.node()) {
    for (const auto& a : node.attribute()) {
      if (a.has_g()) CollectDimParams(a.g(), names);
      for (const auto& body : a.graphs()) CollectDimParams(body, names);
      if (a.has_tp()) CollectTypeDimParams(a.tp(), names);
      for (const auto& tp : a.type_protos()) CollectTypeDimParams(tp, names);
    }
  }
}

namespace {

// The attribute's type, deduced from its fields when an old exporter left
// the type unset.
onnx::AttributeProto::AttributeType EffectiveType(const onnx::AttributeProto& a) {
  if (a.type() != onnx::AttributeProto::UNDEFINED) return a.type();
  if (a.has_f()) return onnx::AttributeProto::FLOAT;
  if (a.has_i()) return onnx::AttributeProto::INT;
  if (a.has_s()) return onnx::AttributeProto::STRING;
  if (a.has_t()) return onnx::AttributeProto::TENSOR;
  if (a.has_g()) return onnx::AttributeProto::GRAPH;
  if (a.has_sparse_tensor()) return onnx::AttributeProto::SPARSE_TENSOR;
  if (a.has_tp()) return onnx::AttributeProto::TYPE_PROTO;
  if (a.floats_size() > 0) return onnx::AttributeProto::FLOATS;
  if (a.ints_size() > 0) return onnx::AttributeProto::INTS;
  if (a.strings_size() > 0) return onnx::AttributeProto::STRINGS;
  if (a.tensors_size() > 0) return onnx::AttributeProto::TENSORS;
  if (a.graphs_size() > 0) return onnx::AttributeProto::GRAPHS;
  if (a.sparse_tensors_size() > 0) return onnx::AttributeProto::SPARSE_TENSORS;
  if (a.type_protos_size() > 0) return onnx::AttributeProto::TYPE_PROTOS;
  return onnx::AttributeProto::UNDEFINED;
}

class GraphBuilder {
 public:
  GraphBuilder(const onnx::GraphProto& proto, ModelLoadContext& context,
               const EnclosingScope* enclosing, std::string location)
      : proto_(proto), context_(context), enclosing_(enclosing), location_(std::move(location)) {}

  Result<Graph> Build(const std::map<std::string, int64_t>& opset_imports) {
    graph_.name = proto_.name();
    graph_.model_path = context_.model_name;
    graph_.weights = context_.weights;
    graph_.opset_imports = opset_imports;
    for (const auto& info : proto_.value_info()) {
      if (info.has_type()) declared_types_[info.name()] = &info.type();
    }
    for (const auto& info : proto_.output()) {
      if (info.has_type()) declared_types_[info.name()] = &info.type();
    }
    NXRT_RETURN_IF_ERROR(AddInputs());
    NXRT_RETURN_IF_ERROR(AddInitializers());
    NXRT_RETURN_IF_ERROR(AddNodeOutputs());
    NXRT_RETURN_IF_ERROR(AddNodesInOrder());
    NXRT_RETURN_IF_ERROR(AddOutputs());
    return std::move(graph_);
  }

 private:
  Status Fail(const std::string& what, const Status& cause) const {
    return Status(cause.code(), location_ + ": " + what + ": " + cause.message());
  }
  Status Fail(const std::string& what, const std::string& fault) const {
    return InvalidArgument(location_ + ": " + what + ": " + fault);
  }

  static std::string NodeLabel(const onnx::NodeProto& node, size_t index) {
    std::string label =
        "node " + (node.name().empty() ? "#" + std::to_string(index) : Quoted(node.name()));
    label += " (";
    const std::string domain = NormalizeDomain(node.domain());
    if (!domain.empty()) label += Printable(domain) + "::";
    return label + Printable(node.op_type()) + ")";
  }

  SymbolId FreshSymbol() {
    std::string name;
    do {
      name = "unnamed_dim_" + std::to_string(context_.fresh_symbols++);
    } while (context_.dim_params.contains(name));
    return graph_.AddSymbol(Symbol{name, SymbolOrigin::kDeclared, {}});
  }

  Result<Shape> ConvertShape(const onnx::TensorShapeProto& proto) {
    Shape shape;
    shape.reserve(static_cast<size_t>(proto.dim_size()));
    for (const auto& dim : proto.dim()) {
      // Exporters spell "unknown" as a negative dim_value (paddle2onnx's -1)
      // or as the dim_param "?"; ONNX Runtime reads both as a dim of its
      // own, tied to no other.
      if (dim.has_dim_value() && dim.dim_value() >= 0) {
        shape.push_back(Dim::Static(dim.dim_value()));
      } else if (dim.has_dim_param() && !IsAnonymousDimParam(dim.dim_param())) {
        shape.push_back(Dim::Symbolic(graph_.DeclareSymbol(dim.dim_param())));
      } else {
        shape.push_back(Dim::Symbolic(FreshSymbol()));
      }
    }
    return shape;
  }

  static bool IsAnonymousDimParam(const std::string& name) { return name.empty() || name == "?"; }

  Result<DataType> ConvertElemType(int32_t elem_type) {
    std::optional<DataType> dtype = DataTypeFromOnnx(elem_type);
    if (!dtype) {
      return Unsupported("unknown element type " + std::to_string(elem_type) +
                         "; re-export the model with a standard ONNX element type");
    }
    return *dtype;
  }

  Result<ValueType> ConvertType(const onnx::TypeProto& proto) {
    ValueType type;
    switch (proto.value_case()) {
      case onnx::TypeProto::kTensorType: {
        type.kind = ValueKind::kTensor;
        NXRT_ASSIGN_OR_RETURN(type.dtype, ConvertElemType(proto.tensor_type().elem_type()));
        if (proto.tensor_type().has_shape()) {
          NXRT_ASSIGN_OR_RETURN(type.shape, ConvertShape(proto.tensor_type().shape()));
        }
        return type;
      }
      case onnx::TypeProto::kSparseTensorType: {
        NXRT_ASSIGN_OR_RETURN(type.dtype, ConvertElemType(proto.sparse_tensor_type().elem_type()));
        if (proto.sparse_tensor_type().has_shape()) {
          NXRT_ASSIGN_OR_RETURN(type.shape, ConvertShape(proto.sparse_tensor_type().shape()));
        }
        return type;
      }
      case onnx::TypeProto::kSequenceType: {
        NXRT_ASSIGN_OR_RETURN(ValueType element, ConvertType(proto.sequence_type().elem_type()));
        type.kind = ValueKind::kSequence;
        if (element.kind == ValueKind::kTensor) {
          type.dtype = element.dtype;
          type.shape = std::move(element.shape);
        }
        return type;
      }
      case onnx::TypeProto::kOptionalType: {
        NXRT_ASSIGN_OR_RETURN(ValueType element, ConvertType(proto.optional_type().elem_type()));
        if (element.kind == ValueKind::kTensor) type.kind = ValueKind::kOptionalTensor;
        if (element.kind == ValueKind::kSequence) type.kind = ValueKind::kOptionalSequence;
        if (type.kind != ValueKind::kUnknown) {
          type.dtype = element.dtype;
          type.shape = std::move(element.shape);
        }
        return type;
      }
      default:
        return type;
    }
  }

  Result<ValueId> NewValue(const std::string& name) {
    Value value;
    value.name = name;
    value.kind = ValueKind::kUnknown;
    auto declared = declared_types_.find(name);
    if (declared != declared_types_.end()) {
      Result<ValueType> type = ConvertType(*declared->second);
      if (!type.ok()) return Fail("value " + Quoted(name), type.status());
      value.kind = type->kind;
      value.dtype = type->dtype;
      value.shape = std::move(type->shape);
    }
    return graph_.AddValue(std::move(value));
  }

  Status AddInputs() {
    for (const auto& input : proto_.input()) {
      if (input.name().empty()) return Fail("graph input", "has an empty name; name every input");
      if (graph_.FindValue(input.name())) {
        return Fail("graph input " + Quoted(input.name()), "is declared twice");
      }
      Value value;
      value.name = input.name();
      value.is_graph_input = true;
      value.kind = ValueKind::kUnknown;
      if (input.has_type()) {
        Result<ValueType> type = ConvertType(input.type());
        if (!type.ok()) return Fail("graph input " + Quoted(input.name()), type.status());
        value.kind = type->kind;
        value.dtype = type->dtype;
        value.shape = std::move(type->shape);
      }
      graph_.inputs.push_back(graph_.AddValue(std::move(value)));
    }
    return Status::Ok();
  }

  // Puts `tensor`'s data in the weight store; `what` names it in errors.
  Result<WeightRef> StoreTensor(const onnx::TensorProto& tensor, const std::string& what) {
    Result<DataType> dtype = TensorProtoDataType(tensor);
    if (!dtype.ok()) return Fail(what, dtype.status());
    Result<TensorExtent> extent = TensorProtoExtent(tensor);
    if (!extent.ok()) return Fail(what, extent.status());
    WeightStore& store = *context_.weights;
    if (*dtype == DataType::kString) {
      if (HasExternalData(tensor)) return Fail(what, "string tensors cannot use external data");
      Result<std::vector<std::string>> strings = TensorProtoStrings(tensor, extent->element_count);
      if (!strings.ok()) return Fail(what, strings.status());
      return store.AddStrings(std::move(extent->dims), std::move(strings).value());
    }
    if (HasExternalData(tensor)) {
      Result<ExternalDataLocation> where = TensorProtoExternalData(tensor);
      if (!where.ok()) return Fail(what, where.status());
      Result<WeightRef> ref = store.AddExternal(*dtype, extent->dims, context_.external_data_dir,
                                                where->location, where->offset, where->length);
      if (!ref.ok()) return Fail(what, ref.status());
      Status size = CheckRawSize(*dtype, extent->element_count, store.Get(*ref).bytes.size());
      if (!size.ok()) return Fail(what, size);
      return ref;
    }
    Result<std::vector<std::byte>> bytes =
        TensorProtoRawBytes(tensor, *dtype, extent->element_count);
    if (!bytes.ok()) return Fail(what, bytes.status());
    return store.AddOwned(*dtype, std::move(extent->dims), std::move(bytes).value());
  }

  Status CheckAgainstDeclaredInput(const Value& input, const TensorData& data,
                                   const std::string& what) {
    const auto dims_text = [](const std::vector<std::string>& dims) {
      std::string text = "[";
      for (size_t i = 0; i < dims.size(); ++i) text += (i ? "," : "") + dims[i];
      return text + "]";
    };
    if (input.dtype != DataType::kUndefined && input.dtype != data.dtype) {
      return Fail(what, "holds " + std::string(DataTypeName(data.dtype)) +
                            " but the graph input of that name is declared " +
                            std::string(DataTypeName(input.dtype)) +
                            "; make the declaration and the initializer agree");
    }
    if (!input.shape) return Status::Ok();
    bool agree = input.shape->size() == data.dims.size();
    std::vector<std::string> declared;
    for (size_t i = 0; i < input.shape->size(); ++i) {
      const Dim& dim = (*input.shape)[i];
      declared.push_back(dim.is_static() ? std::to_string(dim.extent())
                                         : graph_.symbol(dim.symbol()).name);
      agree = agree && (!dim.is_static() || dim.extent() == data.dims[i]);
    }
    if (agree) return Status::Ok();
    std::vector<std::string> held;
    for (int64_t d : data.dims) held.push_back(std::to_string(d));
    return Fail(what, "has dims " + dims_text(held) +
                          " but the graph input of that name is declared " + dims_text(declared) +
                          "; make the declaration and the initializer agree");
  }

  Status AddInitializer(const onnx::TensorProto& tensor, const std::string& what) {
    if (tensor.name().empty()) return Fail(what, "has an empty name; name every initializer");
    NXRT_ASSIGN_OR_RETURN(WeightRef ref, StoreTensor(tensor, what));
    const TensorData& data = context_.weights->Get(ref);
    Shape shape;
    for (int64_t d : data.dims) shape.push_back(Dim::Static(d));
    std::optional<ValueId> existing = graph_.FindValue(tensor.name());
    if (!existing) {
      Value value;
      value.name = tensor.name();
      value.dtype = data.dtype;
      value.shape = std::move(shape);
      value.initializer = ref;
      graph_.AddValue(std::move(value));
      return Status::Ok();
    }
    Value& value = graph_.value(*existing);
    if (value.initializer) return Fail(what, "is given twice; keep one initializer per name");
    // Also a graph input: a caller may feed a replacement, so the declared
    // type stands, must admit the initializer, and takes from it only what
    // it leaves out.
    NXRT_RETURN_IF_ERROR(CheckAgainstDeclaredInput(value, data, what));
    value.initializer = ref;
    if (value.kind == ValueKind::kUnknown) value.kind = ValueKind::kTensor;
    if (value.dtype == DataType::kUndefined) value.dtype = data.dtype;
    if (!value.shape) value.shape = std::move(shape);
    std::erase(graph_.inputs, *existing);
    return Status::Ok();
  }

  Status AddInitializers() {
    const bool release = context_.releasable_graph == &proto_;
    for (int i = 0; i < proto_.initializer_size(); ++i) {
      const onnx::TensorProto& tensor = proto_.initializer(i);
      NXRT_RETURN_IF_ERROR(AddInitializer(tensor, "initializer " + Quoted(tensor.name())));
      if (release) {
        // Swapped out rather than cleared, which would keep the capacity.
        onnx::TensorProto spent;
        spent.Swap(context_.releasable_graph->mutable_initializer(i));
      }
    }
    for (const auto& sparse : proto_.sparse_initializer()) {
      const std::string what = "sparse initializer " + Quoted(sparse.values().name());
      Result<onnx::TensorProto> dense = DensifySparseTensor(sparse);
      if (!dense.ok()) return Fail(what, dense.status());
      NXRT_RETURN_IF_ERROR(AddInitializer(*dense, what));
    }
    return Status::Ok();
  }

  Status AddNodeOutputs() {
    for (int i = 0; i < proto_.node_size(); ++i) {
      const onnx::NodeProto& node = proto_.node(i);
      const auto index = static_cast<size_t>(i);
      for (const std::string& output : node.output()) {
        if (output.empty()) continue;
        auto other = producer_index_.find(output);
        if (other != producer_index_.end()) {
          return Fail(NodeLabel(node, index),
                      "output " + Quoted(output) + " is also produced by " +
                          NodeLabel(proto_.node(static_cast<int>(other->second)), other->second) +
                          "; every value needs exactly one producer");
        }
        if (graph_.FindValue(output)) {
          return Fail(NodeLabel(node, index),
                      "output " + Quoted(output) +
                          " overwrites a graph input or initializer of the same name; rename it");
        }
        producer_index_.emplace(output, index);
        NXRT_RETURN_IF_ERROR(NewValue(output).status());
      }
    }
    return Status::Ok();
  }

  // The value `name` as this graph sees it: its own, or an enclosing graph's
  // made visible through an outer-scope value.
  std::optional<ValueId> Resolve(const std::string& name) {
    if (std::optional<ValueId> local = graph_.FindValue(name)) return local;
    for (const EnclosingScope* scope = enclosing_; scope != nullptr; scope = scope->parent) {
      std::optional<ValueId> outer = scope->graph->FindValue(name);
      if (!outer) continue;
      const Value& source = scope->graph->value(*outer);
      Value value;
      value.name = name;
      value.kind = source.kind;
      value.dtype = source.dtype;
      // An enclosing constant is the body's too (the same stored bytes).
      value.is_outer_scope = !source.is_constant();
      if (source.is_constant()) value.initializer = source.initializer;
      if (source.shape) {
        Shape shape;
        for (const Dim& d : *source.shape) {
          shape.push_back(d.is_static() ? d
                                        : Dim::Symbolic(graph_.DeclareSymbol(
                                              scope->graph->symbol(d.symbol()).name)));
        }
        value.shape = std::move(shape);
      }
      return graph_.AddValue(std::move(value));
    }
    return std::nullopt;
  }

  Result<Graph> BuildBody(const onnx::GraphProto& body, const std::string& where) {
    EnclosingScope scope{&graph_, enclosing_};
    return BuildGraph(body, context_, &scope, graph_.opset_imports, location_ + ": " + where);
  }

  Result<ValueType> ConvertTypeAttribute(const onnx::TypeProto& proto, const std::string& what) {
    Result<ValueType> type = ConvertType(proto);
    if (!type.ok()) return Fail(what, type.status());
    return type;
  }

  Result<WeightRef> StoreSparse(const onnx::SparseTensorProto& sparse, const std::string& what) {
    Result<onnx::TensorProto> dense = DensifySparseTensor(sparse);
    if (!dense.ok()) return Fail(what, dense.status());
    return StoreTensor(*dense, what);
  }

  // Converts one attribute; the names its bodies read from enclosing graphs
  // go to `outer_names`.
  Result<Attribute> ConvertAttribute(const onnx::AttributeProto& proto, const std::string& node,
                                     std::vector<std::string>& outer_names) {
    const std::string what = node + ": attribute " + Quoted(proto.name());
    Attribute a;
    a.name = proto.name();
    auto add_body = [&](const onnx::GraphProto& body) -> Result<std::shared_ptr<Graph>> {
      NXRT_ASSIGN_OR_RETURN(Graph sub, BuildBody(body, what));
      for (const Value& v : sub.values) {
        if (v.is_outer_scope) outer_names.push_back(v.name);
      }
      return std::make_shared<Graph>(std::move(sub));
    };
    switch (EffectiveType(proto)) {
      case onnx::AttributeProto::FLOAT:
        a.type = AttributeType::kFloat;
        a.f = proto.f();
        break;
      case onnx::AttributeProto::INT:
        a.type = AttributeType::kInt;
        a.i = proto.i();
        break;
      case onnx::AttributeProto::STRING:
        a.type = AttributeType::kString;
        a.s = proto.s();
        break;
      case onnx::AttributeProto::FLOATS:
        a.type = AttributeType::kFloats;
        a.floats.assign(proto.floats().begin(), proto.floats().end());
        break;
      case onnx::AttributeProto::INTS:
        a.type = AttributeType::kInts;
        a.ints.assign(proto.ints().begin(), proto.ints().end());
        break;
      case onnx::AttributeProto::STRINGS:
        a.type = AttributeType::kStrings;
        a.strings.assign(proto.strings().begin(), proto.strings().end());
        break;
      case onnx::AttributeProto::TENSOR: {
        a.type = AttributeType::kTensor;
        NXRT_ASSIGN_OR_RETURN(a.tensor, StoreTensor(proto.t(), what));
        break;
      }
      case onnx::AttributeProto::SPARSE_TENSOR: {
        a.type = AttributeType::kTensor;
        NXRT_ASSIGN_OR_RETURN(a.tensor, StoreSparse(proto.sparse_tensor(), what));
        break;
      }
      case onnx::AttributeProto::TENSORS:
        a.type = AttributeType::kTensors;
        for (const auto& t : proto.tensors()) {
          NXRT_ASSIGN_OR_RETURN(WeightRef ref, StoreTensor(t, what));
          a.tensors.push_back(ref);
        }
        break;
      case onnx::AttributeProto::SPARSE_TENSORS:
        a.type = AttributeType::kTensors;
        for (const auto& t : proto.sparse_tensors()) {
          NXRT_ASSIGN_OR_RETURN(WeightRef ref, StoreSparse(t, what));
          a.tensors.push_back(ref);
        }
        break;
      case onnx::AttributeProto::GRAPH: {
        a.type = AttributeType::kGraph;
        NXRT_ASSIGN_OR_RETURN(a.graph, add_body(proto.g()));
        break;
      }
      case onnx::AttributeProto::GRAPHS:
        a.type = AttributeType::kGraphs;
        for (const auto& body : proto.graphs()) {
          NXRT_ASSIGN_OR_RETURN(std::shared_ptr<Graph> sub, add_body(body));
          a.graphs.push_back(std::move(sub));
        }
        break;
      case onnx::AttributeProto::TYPE_PROTO: {
        a.type = AttributeType::kTypeProto;
        NXRT_ASSIGN_OR_RETURN(a.type_proto, ConvertTypeAttribute(proto.tp(), what));
        break;
      }
      case onnx::AttributeProto::TYPE_PROTOS:
        a.type = AttributeType::kTypeProtos;
        for (const auto& tp : proto.type_protos()) {
          NXRT_ASSIGN_OR_RETURN(ValueType type, ConvertTypeAttribute(tp, what));
          a.type_protos.push_back(std::move(type));
        }
        break;
      default:
        return Fail(what, "has no value or an unknown type " + std::to_string(proto.type()) +
                              "; give it a value of a standard ONNX attribute type");
    }
    return a;
  }

  Status AddNodesInOrder() {
    const auto count = static_cast<size_t>(proto_.node_size());
    std::vector<Node> nodes(count);
    std::vector<std::vector<size_t>> depends_on(count);
    auto depend = [&](size_t node, const std::string& name) {
      auto producer = producer_index_.find(name);
      if (producer != producer_index_.end()) depends_on[node].push_back(producer->second);
    };
    for (size_t index = 0; index < count; ++index) {
      const onnx::NodeProto& proto = proto_.node(static_cast<int>(index));
      const std::string label = NodeLabel(proto, index);
      if (proto.op_type().empty()) return Fail(label, "has no op_type");
      Node& node = nodes[index];
      node.op_type = proto.op_type();
      node.domain = NormalizeDomain(proto.domain());
      if (auto opset = graph_.opset_imports.find(node.domain);
          opset != graph_.opset_imports.end()) {
        if (Status arity = CheckNodeArity(proto, node.domain, opset->second); !arity.ok()) {
          return Fail(label, arity);
        }
        if (Status attributes = CheckNodeAttributes(proto, node.domain, opset->second);
            !attributes.ok()) {
          return Fail(label, attributes);
        }
      }
      node.name = proto.name();
      std::vector<std::string> outer_names;
      for (const auto& attribute : proto.attribute()) {
        NXRT_ASSIGN_OR_RETURN(Attribute a, ConvertAttribute(attribute, label, outer_names));
        node.attributes.push_back(std::move(a));
      }
      for (const std::string& input : proto.input()) {
        if (input.empty()) {
          node.inputs.push_back(std::nullopt);
          continue;
        }
        std::optional<ValueId> id = Resolve(input);
        if (!id) {
          return Fail(label, "input " + Quoted(input) +
                                 " is produced by no node, graph input or initializer; "
                                 "add its producer or fix the name");
        }
        node.inputs.push_back(id);
        depend(index, input);
      }
      for (const std::string& output : proto.output()) {
        node.outputs.push_back(output.empty() ? std::nullopt : graph_.FindValue(output));
      }
      // A body reading a value of this graph runs after that value's producer.
      for (const std::string& name : outer_names) {
        if (!Resolve(name)) {
          return Fail(label, "a body reads " + Quoted(name) + ", which no enclosing graph has");
        }
        depend(index, name);
      }
    }
    auto order = TopologicalOrder(depends_on);
    if (const auto* cycle = std::get_if<CycleMember>(&order)) {
      return Fail(NodeLabel(proto_.node(static_cast<int>(cycle->node)), cycle->node),
                  "lies on a dependency cycle; a node cannot depend on its own output");
    }
    for (size_t index : std::get<std::vector<size_t>>(order)) {
      graph_.AddNode(std::move(nodes[index]));
    }
    return Status::Ok();
  }

  Status AddOutputs() {
    for (const auto& output : proto_.output()) {
      if (output.name().empty()) return Fail("graph output", "has an empty name");
      std::optional<ValueId> id = Resolve(output.name());
      if (!id) {
        return Fail("graph output " + Quoted(output.name()),
                    "is never produced by a node, graph input or initializer; "
                    "add its producer or remove the output");
      }
      graph_.outputs.push_back(*id);
    }
    return Status::Ok();
  }

  const onnx::GraphProto& proto_;
  ModelLoadContext& context_;
  const EnclosingScope* enclosing_;
  std::string location_;
  Graph graph_;
  std::unordered_map<std::string, const onnx::TypeProto*> declared_types_;
  std::unordered_map<std::string, size_t> producer_index_;
};

}  // namespace

Result<Graph> BuildGraph(const onnx::GraphProto& proto, ModelLoadContext& context,
                         const EnclosingScope* enclosing,
                         const std::map<std::string, int64_t>& opset_imports,
                         const std::string& location) {
  GraphBuilder builder(proto, context, enclosing, location);
  return builder.Build(opset_imports);
}

}  // namespace nxrt::graph
