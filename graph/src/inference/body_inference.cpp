#include "inference/body_inference.hpp"

#include <string>
#include <unordered_map>

#include "nxrt/graph/shape_inference.hpp"
#include "nxrt/support/log.hpp"

namespace nxrt::graph::inference {
namespace {

Shape ImportShape(const Graph& from, const Shape& shape, Graph& to) {
  Shape out;
  for (Dim d : shape) {
    out.push_back(d.is_static() ? d
                                : Dim::Symbolic(to.DeclareSymbol(from.symbol(d.symbol()).name)));
  }
  return out;
}

// Gives the body's outer-scope references the shapes they have here.
void ImportOuterScope(NodeContext& ctx, Graph& body) {
  for (Value& v : body.values) {
    if (!v.is_outer_scope) continue;
    auto outer = ctx.graph().FindValue(v.name);
    if (!outer) continue;
    const Value& source = ctx.graph().value(*outer);
    v.dtype = source.dtype;
    v.kind = source.kind;
    if (source.shape) v.shape = ImportShape(ctx.graph(), *source.shape, body);
  }
}

}  // namespace

Graph* Body(NodeContext& ctx, const char* name) {
  const Attribute* a = ctx.attr(name);
  return a != nullptr && a->graph ? a->graph.get() : nullptr;
}

std::optional<Shape> ExportShape(NodeContext& ctx, const Graph& body, const Value& value) {
  if (!value.shape) return std::nullopt;
  std::unordered_map<std::string, SymbolId> by_name;
  for (uint32_t i = 0; i < ctx.graph().symbols.size(); ++i) {
    by_name.emplace(ctx.graph().symbols[i].name, SymbolId{i});
  }
  Shape out;
  for (Dim d : *value.shape) {
    if (d.is_static()) {
      out.push_back(d);
      continue;
    }
    // Only the body's declared symbols came in by name from here.
    const Symbol& symbol = body.symbol(d.symbol());
    auto it = symbol.origin == SymbolOrigin::kDeclared ? by_name.find(symbol.name) : by_name.end();
    out.push_back(it != by_name.end() ? Dim::Symbolic(it->second) : ctx.symbols().Mint("body"));
  }
  return out;
}

Status InferBody(NodeContext& ctx, Graph& body) {
  ImportOuterScope(ctx, body);
  Status status = InferShapes(body, ctx.options());
  if (!status.ok()) {
    GetLogger()->debug("{}: body inference failed: {}", ctx.Describe(), status.message());
  }
  return status;
}

void SetInput(NodeContext& ctx, Graph& body, size_t index, DataType dtype,
              std::optional<Shape> shape, ValueKind kind) {
  if (index >= body.inputs.size()) return;
  Value& v = body.value(body.inputs[index]);
  if (v.dtype == DataType::kUndefined) v.dtype = dtype;
  if (v.kind == ValueKind::kUnknown) v.kind = kind;
  if (!v.shape && shape) v.shape = ImportShape(ctx.graph(), *shape, body);
}

}  // namespace nxrt::graph::inference
