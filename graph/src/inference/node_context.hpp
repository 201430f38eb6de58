// What a shape rule sees of one node: its inputs' dtypes, shapes and known
// element values, its attributes, the symbol chokepoints, and setters for its
// outputs. Rules report a provable model inconsistency with ModelError (fatal)
// and anything they cannot work out with Unknown (the output stays unknown).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "inference/known_values.hpp"
#include "inference/symbol_interner.hpp"
#include "nxrt/graph/ir.hpp"
#include "nxrt/graph/shape_inference.hpp"
#include "nxrt/support/status.hpp"

namespace nxrt::graph::inference {

class NodeContext {
 public:
  NodeContext(Graph& graph, NodeId id, SymbolInterner& symbols, KnownValues& known,
              const ShapeInferenceOptions& options);

  const Node& node() const { return graph_.node(id_); }
  Graph& graph() { return graph_; }
  SymbolInterner& symbols() { return symbols_; }
  const ShapeInferenceOptions& options() const { return options_; }
  // Opset of the node's domain; the newest known when the model imports none.
  int64_t opset() const { return opset_; }

  // ---- inputs ------------------------------------------------------------
  size_t num_inputs() const { return node().inputs.size(); }
  bool has_input(size_t i) const { return i < num_inputs() && node().inputs[i].has_value(); }
  const Value* input(size_t i) const;
  const Shape* input_shape(size_t i) const;  // nullptr: absent or rank unknown
  DataType input_dtype(size_t i) const;
  const Elements* input_elements(size_t i) const;
  // The input's elements when every one is static.
  std::optional<std::vector<int64_t>> input_ints(size_t i) const;
  // The input's tensor when it is a constant: a non-overridable initializer
  // or the output of a Constant node.
  const TensorData* input_constant(size_t i) const;
  // The input's elements, minting a symbol for (and remembering) each unknown
  // one; nullopt when the input's element count is not static.
  std::optional<std::vector<Dim>> input_dims_or_mint(size_t i, const char* hint);

  // ---- outputs -----------------------------------------------------------
  size_t num_outputs() const { return node().outputs.size(); }
  bool has_output(size_t i) const { return i < num_outputs() && node().outputs[i].has_value(); }
  void SetOutput(size_t i, DataType dtype, Shape shape);
  void SetOutputDtype(size_t i, DataType dtype);
  void SetOutputElements(size_t i, Elements elements);
  Value* output(size_t i);
  // The output's shape as the model declared it before inference, if any.
  const Shape* declared_output_shape(size_t i) const;
  // Gives outputs that stayed unknown their declared shapes back; returns
  // whether some present output still has no shape.
  bool RestoreDeclaredShapes();
  // Refuses an output whose declared element type is not the one inference
  // gave it: kernels write what the op gives into buffers sized by the type
  // the graph holds, and ONNX Runtime refuses such a model too.
  Status CheckDeclaredDtypes() const;
  // Refuses an output of static shape whose element count overflows int64:
  // no buffer holds it, and every size worked out from it would wrap.
  Status CheckOutputElementCounts() const;

  // ---- attributes --------------------------------------------------------
  const Attribute* attr(const char* name) const { return node().FindAttribute(name); }
  int64_t Int(const char* name, int64_t fallback) const;
  std::string String(const char* name, const std::string& fallback) const;
  std::optional<std::vector<int64_t>> Ints(const char* name) const;

  // ---- symbols -----------------------------------------------------------
  Result<Dim> Broadcast(Dim a, Dim b);
  Result<Shape> BroadcastShapes(const Shape& a, const Shape& b);

  // ---- outcomes ----------------------------------------------------------
  Status ModelError(const std::string& what) const;
  Status Unknown(const std::string& why) const;
  std::string Describe() const { return graph_.Describe(id_); }
  std::string ShapeText(const Shape& shape) const { return symbols_.ShapeText(shape); }

  // Normalises a possibly negative axis against `rank`.
  std::optional<int64_t> Axis(int64_t axis, size_t rank) const;

 private:
  Graph& graph_;
  NodeId id_;
  SymbolInterner& symbols_;
  KnownValues& known_;
  const ShapeInferenceOptions& options_;
  int64_t opset_;
  std::vector<std::optional<Shape>> declared_;
  std::vector<DataType> declared_dtypes_;  // kUndefined where none was declared
};

}  // namespace nxrt::graph::inference
