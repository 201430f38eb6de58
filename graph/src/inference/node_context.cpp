#include "inference/node_context.hpp"

#include <algorithm>

#include "nxrt/support/checked_math.hpp"

namespace nxrt::graph::inference {
namespace {

int64_t NewestOpset(const std::string& domain) {
  if (domain.empty()) return 23;
  return 1;
}

}  // namespace

NodeContext::NodeContext(Graph& graph, NodeId id, SymbolInterner& symbols, KnownValues& known,
                         const ShapeInferenceOptions& options)
    : graph_(graph),
      id_(id),
      symbols_(symbols),
      known_(known),
      options_(options),
      opset_(graph.OpsetFor(graph.node(id).domain).value_or(NewestOpset(graph.node(id).domain))) {
  // Inference starts from nothing; declared shapes only fill what it misses.
  for (size_t i = 0; i < num_outputs(); ++i) {
    Value* v = output(i);
    declared_.push_back(v != nullptr ? v->shape : std::nullopt);
    declared_dtypes_.push_back(v != nullptr ? v->dtype : DataType::kUndefined);
    if (v != nullptr) v->shape.reset();
  }
}

const Shape* NodeContext::declared_output_shape(size_t i) const {
  return i < declared_.size() && declared_[i] ? &*declared_[i] : nullptr;
}

bool NodeContext::RestoreDeclaredShapes() {
  bool missing = false;
  for (size_t i = 0; i < num_outputs(); ++i) {
    Value* v = output(i);
    if (v == nullptr || v->shape) continue;
    if (declared_[i])
      v->shape = declared_[i];
    else
      missing = true;
  }
  return missing;
}

Status NodeContext::CheckDeclaredDtypes() const {
  for (size_t i = 0; i < num_outputs(); ++i) {
    const Value* v = has_output(i) ? &graph_.value(*node().outputs[i]) : nullptr;
    const DataType declared = declared_dtypes_[i];
    if (v == nullptr || declared == DataType::kUndefined || v->dtype == declared) continue;
    return InvalidArgument(Describe() + ": output '" + v->name + "' is declared " +
                           std::string(DataTypeName(declared)) + " but the op gives " +
                           std::string(DataTypeName(v->dtype)) + "; declare the type the op gives");
  }
  return Status::Ok();
}

Status NodeContext::CheckOutputElementCounts() const {
  for (size_t i = 0; i < num_outputs(); ++i) {
    const Value* v = has_output(i) ? &graph_.value(*node().outputs[i]) : nullptr;
    if (v == nullptr || !v->shape) continue;
    // A symbolic extent may be 0 at run time, and so may hold any product.
    const Shape& shape = *v->shape;
    if (!std::all_of(shape.begin(), shape.end(), [](const Dim& d) { return d.is_static(); })) {
      continue;
    }
    const bool empty =
        std::any_of(shape.begin(), shape.end(), [](const Dim& d) { return d.extent() == 0; });
    std::optional<int64_t> count = 1;
    for (const Dim& d : shape) count = count ? CheckedMul(*count, d.extent()) : count;
    if (!empty && !count) {
      return InvalidArgument(Describe() + ": output '" + v->name + "' would have shape " +
                             ShapeText(shape) +
                             ", whose element count overflows int64; fix the shape the node is "
                             "given");
    }
  }
  return Status::Ok();
}

const Value* NodeContext::input(size_t i) const {
  return has_input(i) ? &graph_.value(*node().inputs[i]) : nullptr;
}

const Shape* NodeContext::input_shape(size_t i) const {
  const Value* v = input(i);
  return v != nullptr && v->shape ? &*v->shape : nullptr;
}

DataType NodeContext::input_dtype(size_t i) const {
  const Value* v = input(i);
  return v != nullptr ? v->dtype : DataType::kUndefined;
}

const Elements* NodeContext::input_elements(size_t i) const {
  return has_input(i) ? known_.Get(*node().inputs[i]) : nullptr;
}

const TensorData* NodeContext::input_constant(size_t i) const {
  const Value* v = input(i);
  if (v == nullptr) return nullptr;
  if (v->is_constant()) return &graph_.weights->Get(*v->initializer);
  if (!v->producer.valid()) return nullptr;
  const Node& producer = graph_.node(v->producer);
  if (producer.op_type != "Constant" || !producer.is_default_domain()) return nullptr;
  const Attribute* value = producer.FindAttribute("value");
  return value != nullptr && value->tensor ? &graph_.weights->Get(*value->tensor) : nullptr;
}

std::optional<std::vector<int64_t>> NodeContext::input_ints(size_t i) const {
  const Elements* e = input_elements(i);
  if (e == nullptr) return std::nullopt;
  std::vector<int64_t> out;
  out.reserve(e->size());
  for (const auto& d : *e) {
    if (!d || !d->is_static()) return std::nullopt;
    out.push_back(d->extent());
  }
  return out;
}

std::optional<std::vector<Dim>> NodeContext::input_dims_or_mint(size_t i, const char* hint) {
  if (!has_input(i)) return std::nullopt;
  ValueId id = *node().inputs[i];
  if (known_.Get(id) == nullptr) {
    const Shape* shape = input_shape(i);
    if (shape == nullptr || shape->size() > 1) return std::nullopt;
    if (shape->size() == 1 && !(*shape)[0].is_static()) return std::nullopt;
    size_t count = shape->empty() ? 1 : static_cast<size_t>((*shape)[0].extent());
    if (count > known_.max_elements()) return std::nullopt;
    known_.Set(id, Elements(count));
  }
  Elements* e = known_.GetMutable(id);
  if (e == nullptr) return std::nullopt;
  std::vector<Dim> out;
  for (auto& d : *e) {
    if (!d) d = symbols_.Mint(hint);
    out.push_back(*d);
  }
  return out;
}

void NodeContext::SetOutput(size_t i, DataType dtype, Shape shape) {
  Value* v = output(i);
  if (v == nullptr) return;
  if (dtype != DataType::kUndefined) v->dtype = dtype;
  v->shape = std::move(shape);
}

void NodeContext::SetOutputDtype(size_t i, DataType dtype) {
  Value* v = output(i);
  if (v != nullptr && dtype != DataType::kUndefined) v->dtype = dtype;
}

void NodeContext::SetOutputElements(size_t i, Elements elements) {
  if (has_output(i)) known_.Set(*node().outputs[i], std::move(elements));
}

Value* NodeContext::output(size_t i) {
  return has_output(i) ? &graph_.value(*node().outputs[i]) : nullptr;
}

int64_t NodeContext::Int(const char* name, int64_t fallback) const {
  const Attribute* a = attr(name);
  return a != nullptr ? a->i : fallback;
}

std::string NodeContext::String(const char* name, const std::string& fallback) const {
  const Attribute* a = attr(name);
  return a != nullptr ? a->s : fallback;
}

std::optional<std::vector<int64_t>> NodeContext::Ints(const char* name) const {
  const Attribute* a = attr(name);
  if (a == nullptr) return std::nullopt;
  return a->ints;
}

Result<Dim> NodeContext::Broadcast(Dim a, Dim b) {
  auto d = symbols_.BroadcastDim(a, b);
  if (!d.ok()) return ModelError(d.status().message());
  return d;
}

Result<Shape> NodeContext::BroadcastShapes(const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank, Dim::Static(1));
  for (size_t k = 0; k < rank; ++k) {
    Dim da = k < rank - a.size() ? Dim::Static(1) : a[k - (rank - a.size())];
    Dim db = k < rank - b.size() ? Dim::Static(1) : b[k - (rank - b.size())];
    auto d = symbols_.BroadcastDim(da, db);
    if (!d.ok()) {
      return ModelError("shapes " + ShapeText(a) + " and " + ShapeText(b) + " do not broadcast (" +
                        d.status().message() + "); fix the model's input shapes");
    }
    out[k] = *d;
  }
  return out;
}

Status NodeContext::ModelError(const std::string& what) const {
  return InvalidArgument(graph_.Describe(id_) + ": " + what);
}

Status NodeContext::Unknown(const std::string& why) const {
  return Unsupported(graph_.Describe(id_) + ": " + why);
}

std::optional<int64_t> NodeContext::Axis(int64_t axis, size_t rank) const {
  const int64_t r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r) return std::nullopt;
  return axis < 0 ? axis + r : axis;
}

}  // namespace nxrt::graph::inference
