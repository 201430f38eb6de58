#include "inference/onnx_schema_fallback.hpp"

#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>

namespace nxrt::graph::inference {
namespace {

constexpr std::string_view kSymbolPrefix = "__nxrt_symbol_";

void FillTensorType(DataType dtype, const std::optional<Shape>& shape,
                    onnx::TypeProto_Tensor* tensor) {
  tensor->set_elem_type(static_cast<int32_t>(dtype));
  if (!shape) return;
  onnx::TensorShapeProto* proto = tensor->mutable_shape();
  for (Dim d : *shape) {
    auto* dim = proto->add_dim();
    if (d.is_static())
      dim->set_dim_value(d.extent());
    else
      dim->set_dim_param(std::string(kSymbolPrefix) + std::to_string(d.symbol().index));
  }
}

void FillType(const Value& v, onnx::TypeProto* type) {
  switch (v.kind) {
    case ValueKind::kSequence:
      FillTensorType(v.dtype, v.shape,
                     type->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type());
      break;
    case ValueKind::kOptionalTensor:
      FillTensorType(v.dtype, v.shape,
                     type->mutable_optional_type()->mutable_elem_type()->mutable_tensor_type());
      break;
    case ValueKind::kOptionalSequence:
      FillTensorType(v.dtype, v.shape,
                     type->mutable_optional_type()
                         ->mutable_elem_type()
                         ->mutable_sequence_type()
                         ->mutable_elem_type()
                         ->mutable_tensor_type());
      break;
    default:
      FillTensorType(v.dtype, v.shape, type->mutable_tensor_type());
      break;
  }
}

void FillValueType(const ValueType& type, onnx::TypeProto* proto) {
  Value v;
  v.kind = type.kind;
  v.dtype = type.dtype;
  v.shape = type.shape;
  FillType(v, proto);
}

void FillTensorProto(const TensorData& data, onnx::TensorProto* proto) {
  proto->set_data_type(static_cast<int32_t>(data.dtype));
  for (int64_t d : data.dims) proto->add_dims(d);
  if (data.dtype == DataType::kString) {
    for (const std::string& s : data.strings) proto->add_string_data(s);
  } else {
    proto->set_raw_data(reinterpret_cast<const char*>(data.bytes.data()), data.bytes.size());
  }
}

class BodyInferenceRefused : public onnx::GraphInferencer {
 public:
  std::vector<const onnx::TypeProto*> doInferencing(
      const std::vector<const onnx::TypeProto*>&,
      const std::vector<const onnx::TensorProto*>&) override {
    throw std::runtime_error("subgraph inference is done by nxrt's own control-flow rules");
  }
};

class IrInferenceContext : public onnx::InferenceContext {
 public:
  IrInferenceContext(NodeContext& ctx, KnownValues& known) : ctx_(ctx), known_(known) {
    const Node& node = ctx.node();
    for (const Attribute& a : node.attributes) attributes_.emplace(a.name, ToProto(a));
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      auto& type = input_types_.emplace_back();
      auto& data = input_data_.emplace_back();
      auto& symbolic = input_symbolic_.emplace_back();
      const Value* v = ctx.input(i);
      if (v == nullptr) continue;
      type = std::make_unique<onnx::TypeProto>();
      FillType(*v, type.get());
      if (v->is_constant()) {
        data = std::make_unique<onnx::TensorProto>();
        FillTensorProto(ctx.graph().weights->Get(*v->initializer), data.get());
      } else if (const Elements* e = known_.Get(*node.inputs[i])) {
        data = KnownTensor(*v, *e);
        symbolic = KnownShape(*e);
      }
    }
    output_types_.resize(node.outputs.size());
  }

  const onnx::AttributeProto* getAttribute(const std::string& name) const override {
    auto it = attributes_.find(name);
    return it == attributes_.end() ? nullptr : &it->second;
  }
  size_t getNumInputs() const override { return input_types_.size(); }
  const onnx::TypeProto* getInputType(size_t i) const override {
    return i < input_types_.size() ? input_types_[i].get() : nullptr;
  }
  const onnx::TensorProto* getInputData(size_t i) const override {
    return i < input_data_.size() ? input_data_[i].get() : nullptr;
  }
  size_t getNumOutputs() const override { return output_types_.size(); }
  onnx::TypeProto* getOutputType(size_t i) override { return &output_types_.at(i); }
  onnx::GraphInferencer* getGraphAttributeInferencer(const std::string&) override {
    return &refuse_bodies_;
  }
  const onnx::SparseTensorProto* getInputSparseData(size_t) const override { return nullptr; }
  const onnx::TensorShapeProto* getSymbolicInput(size_t i) const override {
    return i < input_symbolic_.size() ? input_symbolic_[i].get() : nullptr;
  }

  const onnx::TypeProto& output_type(size_t i) const { return output_types_.at(i); }

 private:
  onnx::AttributeProto ToProto(const Attribute& a) const {
    onnx::AttributeProto p;
    p.set_name(a.name);
    switch (a.type) {
      case AttributeType::kFloat:
        p.set_type(onnx::AttributeProto::FLOAT), p.set_f(a.f);
        break;
      case AttributeType::kInt:
        p.set_type(onnx::AttributeProto::INT), p.set_i(a.i);
        break;
      case AttributeType::kString:
        p.set_type(onnx::AttributeProto::STRING), p.set_s(a.s);
        break;
      case AttributeType::kFloats:
        p.set_type(onnx::AttributeProto::FLOATS);
        for (float f : a.floats) p.add_floats(f);
        break;
      case AttributeType::kInts:
        p.set_type(onnx::AttributeProto::INTS);
        for (int64_t i : a.ints) p.add_ints(i);
        break;
      case AttributeType::kStrings:
        p.set_type(onnx::AttributeProto::STRINGS);
        for (const std::string& s : a.strings) p.add_strings(s);
        break;
      case AttributeType::kTensor:
        p.set_type(onnx::AttributeProto::TENSOR);
        if (a.tensor) FillTensorProto(ctx_.graph().weights->Get(*a.tensor), p.mutable_t());
        break;
      case AttributeType::kGraph:
        p.set_type(onnx::AttributeProto::GRAPH);
        p.mutable_g();
        break;
      case AttributeType::kTensors:
        p.set_type(onnx::AttributeProto::TENSORS);
        for (WeightRef t : a.tensors)
          FillTensorProto(ctx_.graph().weights->Get(t), p.add_tensors());
        break;
      case AttributeType::kGraphs:
        p.set_type(onnx::AttributeProto::GRAPHS);
        break;
      case AttributeType::kTypeProto:
        p.set_type(onnx::AttributeProto::TYPE_PROTO);
        if (a.type_proto) FillValueType(*a.type_proto, p.mutable_tp());
        break;
      case AttributeType::kTypeProtos:
        p.set_type(onnx::AttributeProto::TYPE_PROTOS);
        for (const ValueType& t : a.type_protos) FillValueType(t, p.add_type_protos());
        break;
    }
    return p;
  }

  std::unique_ptr<onnx::TensorProto> KnownTensor(const Value& v, const Elements& e) const {
    if (!v.shape || (v.dtype != DataType::kInt64 && v.dtype != DataType::kInt32)) return nullptr;
    auto t = std::make_unique<onnx::TensorProto>();
    t->set_data_type(static_cast<int32_t>(v.dtype));
    for (Dim d : *v.shape) {
      if (!d.is_static()) return nullptr;
      t->add_dims(d.extent());
    }
    for (const auto& d : e) {
      if (!d || !d->is_static()) return nullptr;
      if (v.dtype == DataType::kInt64)
        t->add_int64_data(d->extent());
      else
        t->add_int32_data(static_cast<int32_t>(d->extent()));
    }
    return t;
  }

  static std::unique_ptr<onnx::TensorShapeProto> KnownShape(const Elements& e) {
    auto s = std::make_unique<onnx::TensorShapeProto>();
    for (const auto& d : e) {
      auto* dim = s->add_dim();
      if (!d) continue;
      if (d->is_static())
        dim->set_dim_value(d->extent());
      else
        dim->set_dim_param(std::string(kSymbolPrefix) + std::to_string(d->symbol().index));
    }
    return s;
  }

  NodeContext& ctx_;
  KnownValues& known_;
  std::unordered_map<std::string, onnx::AttributeProto> attributes_;
  std::vector<std::unique_ptr<onnx::TypeProto>> input_types_;
  std::vector<std::unique_ptr<onnx::TensorProto>> input_data_;
  std::vector<std::unique_ptr<onnx::TensorShapeProto>> input_symbolic_;
  std::vector<onnx::TypeProto> output_types_;
  BodyInferenceRefused refuse_bodies_;
};

Dim DimFromProto(NodeContext& ctx, const onnx::TensorShapeProto_Dimension& dim) {
  if (dim.has_dim_value() && dim.dim_value() >= 0) return Dim::Static(dim.dim_value());
  if (dim.has_dim_param() && dim.dim_param().starts_with(kSymbolPrefix)) {
    const std::string digits = dim.dim_param().substr(kSymbolPrefix.size());
    const unsigned long index = std::stoul(digits);
    if (index < ctx.graph().symbols.size())
      return Dim::Symbolic(SymbolId{static_cast<uint32_t>(index)});
  }
  return ctx.symbols().Mint(ctx.node().op_type);
}

// The element type onnx infers replaces the declared one (InferNode refuses
// a contradiction); a declared type stands where onnx infers none.
void ApplyTensorType(NodeContext& ctx, size_t i, const onnx::TypeProto_Tensor& tensor) {
  Value* out = ctx.output(i);
  const DataType inferred = DataTypeFromOnnx(tensor.elem_type()).value_or(DataType::kUndefined);
  if (inferred != DataType::kUndefined) out->dtype = inferred;
  if (out->shape || !tensor.has_shape()) return;
  Shape shape;
  for (const auto& dim : tensor.shape().dim()) shape.push_back(DimFromProto(ctx, dim));
  out->shape = std::move(shape);
}

void ApplyOutputType(NodeContext& ctx, size_t i, const onnx::TypeProto& type) {
  Value* out = ctx.output(i);
  if (out == nullptr) return;
  if (type.has_tensor_type()) {
    ApplyTensorType(ctx, i, type.tensor_type());
  } else if (type.has_sequence_type() && type.sequence_type().elem_type().has_tensor_type()) {
    out->kind = ValueKind::kSequence;
    ApplyTensorType(ctx, i, type.sequence_type().elem_type().tensor_type());
  } else if (type.has_optional_type()) {
    const onnx::TypeProto& elem = type.optional_type().elem_type();
    if (elem.has_tensor_type()) {
      out->kind = ValueKind::kOptionalTensor;
      ApplyTensorType(ctx, i, elem.tensor_type());
    } else if (elem.has_sequence_type() && elem.sequence_type().elem_type().has_tensor_type()) {
      out->kind = ValueKind::kOptionalSequence;
      ApplyTensorType(ctx, i, elem.sequence_type().elem_type().tensor_type());
    }
  }
}

// An input onnx's inference may read as a shape (ConstantOfShape's, Expand's)
// gives the output one dim per element when its values are unknown; a vector
// longer than the shapes nxrt tracks would have it build millions of dims.
std::optional<size_t> OverlongShapeInput(const NodeContext& ctx) {
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const Shape* shape = ctx.input_shape(i);
    if (shape == nullptr || shape->size() != 1 || !(*shape)[0].is_static()) continue;
    if (ctx.input_dtype(i) != DataType::kInt64) continue;
    if (static_cast<uint64_t>((*shape)[0].extent()) > ctx.options().max_tracked_elements) return i;
  }
  return std::nullopt;
}

// Whether the node has the inputs and outputs the schema's inference reads,
// or why libonnx is skipped. The schema may be older than the node's opset
// (libonnx knows the opsets of its release), so a mismatch leaves the shapes
// unknown rather than failing the model.
Status CheckArity(const NodeContext& ctx, const onnx::OpSchema& schema) {
  const auto range = [](int lo, int hi) {
    return lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi);
  };
  const std::string skipped = "; libonnx inference skipped";
  const std::string which =
      "libonnx's schema (since opset " + std::to_string(schema.SinceVersion()) + ")";
  const auto inputs = static_cast<int>(ctx.num_inputs());
  const auto outputs = static_cast<int>(ctx.num_outputs());
  if (inputs < schema.min_input() || inputs > schema.max_input()) {
    return ctx.Unknown("has " + std::to_string(inputs) + " inputs where " + which + " takes " +
                       range(schema.min_input(), schema.max_input()) + skipped);
  }
  if (outputs < schema.min_output() || outputs > schema.max_output()) {
    return ctx.Unknown("has " + std::to_string(outputs) + " outputs where " + which + " makes " +
                       range(schema.min_output(), schema.max_output()) + skipped);
  }
  const std::vector<onnx::OpSchema::FormalParameter>& formal = schema.inputs();
  for (size_t i = 0; i < ctx.num_inputs() && i < formal.size(); ++i) {
    if (formal[i].GetOption() == onnx::OpSchema::Single && !ctx.has_input(i)) {
      return ctx.Unknown("input " + std::to_string(i) + " ('" + formal[i].GetName() +
                         "') is absent where " + which + " requires it" + skipped);
    }
  }
  return Status::Ok();
}

}  // namespace

Status InferWithOnnxSchema(NodeContext& ctx, KnownValues& known) {
  const Node& node = ctx.node();
  if (std::optional<size_t> input = OverlongShapeInput(ctx)) {
    return ctx.Unknown("input " + std::to_string(*input) + " is a vector of " +
                       std::to_string((*ctx.input_shape(*input))[0].extent()) +
                       " int64s, longer than any shape nxrt tracks; libonnx inference skipped");
  }
  const onnx::OpSchema* schema = nullptr;
  try {
    schema =
        onnx::OpSchemaRegistry::Schema(node.op_type, static_cast<int>(ctx.opset()), node.domain);
  } catch (const std::exception& e) {
    return ctx.Unknown(std::string("libonnx schema lookup failed: ") + e.what());
  }
  if (schema == nullptr || !schema->has_type_and_shape_inference_function()) {
    return ctx.Unknown("no rule and no libonnx schema inference for this op and opset");
  }
  // libonnx's inference functions read the inputs and outputs the schema
  // requires without checking they are there.
  if (Status arity = CheckArity(ctx, *schema); !arity.ok()) return arity;
  try {
    IrInferenceContext onnx_ctx(ctx, known);
    schema->GetTypeAndShapeInferenceFunction()(onnx_ctx);
    for (size_t i = 0; i < ctx.num_outputs(); ++i) {
      ApplyOutputType(ctx, i, onnx_ctx.output_type(i));
    }
  } catch (const std::exception& e) {
    return ctx.Unknown(std::string("libonnx inference failed: ") + e.what());
  }
  return Status::Ok();
}

}  // namespace nxrt::graph::inference
