// Exporters spell an unknown extent and an unknown rank in ways the ONNX
// text leaves loose; the loader reads them as ONNX Runtime does, so their
// models load.
#include <gtest/gtest.h>

#include "onnx_model_builder.hpp"

namespace nxrt::graph {
namespace {

using testing::AddNode;
using testing::Load;
using testing::NewModel;

// y = Relu(x), with x's dims written by `spell`.
template <typename Spell>
onnx::ModelProto ReluModel(int dims, Spell&& spell) {
  onnx::ModelProto model = NewModel();
  auto* x = model.mutable_graph()->add_input();
  x->set_name("x");
  auto* tensor = x->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(onnx::TensorProto::FLOAT);
  auto* shape = tensor->mutable_shape();
  for (int i = 0; i < dims; ++i) spell(i, shape->add_dim());
  AddNode(model, "Relu", "relu", {"x"}, {"y"});
  model.mutable_graph()->add_output()->set_name("y");
  return model;
}

const Shape& InputShape(const Graph& graph) {
  const std::optional<Shape>& shape = graph.value(graph.inputs[0]).shape;
  EXPECT_TRUE(shape.has_value());
  static const Shape kNone;
  return shape ? *shape : kNone;
}

TEST(ExporterDimSpellings, ANegativeDimValueIsAnUnknownDim) {
  // paddle2onnx writes a dynamic batch as dim_value -1.
  Result<Graph> graph = Load(ReluModel(
      2, [](int i, onnx::TensorShapeProto::Dimension* d) { d->set_dim_value(i == 0 ? -1 : 3); }));
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  const Shape& shape = InputShape(*graph);
  ASSERT_EQ(shape.size(), 2u);
  EXPECT_FALSE(shape[0].is_static());
  ASSERT_TRUE(shape[1].is_static());
  EXPECT_EQ(shape[1].extent(), 3);
}

TEST(ExporterDimSpellings, EachQuestionMarkIsADimOfItsOwn) {
  // Two '?' dims are not one symbol: an image of 48x192 must not be refused
  // for having unequal sides.
  Result<Graph> graph =
      Load(ReluModel(3, [](int, onnx::TensorShapeProto::Dimension* d) { d->set_dim_param("?"); }));
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  const Shape& shape = InputShape(*graph);
  ASSERT_EQ(shape.size(), 3u);
  for (const Dim& dim : shape) ASSERT_FALSE(dim.is_static());
  EXPECT_NE(shape[0].symbol().index, shape[1].symbol().index);
  EXPECT_NE(shape[1].symbol().index, shape[2].symbol().index);
}

TEST(ExporterDimSpellings, NamesOfAnySpellingAreSymbolsAndTheSameNameIsOneSymbol) {
  const char* names[] = {"p2o.DynamicDimension.0", "unk__214", "batch size",
                         "p2o.DynamicDimension.0"};
  Result<Graph> graph = Load(ReluModel(
      4, [&](int i, onnx::TensorShapeProto::Dimension* d) { d->set_dim_param(names[i]); }));
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  const Shape& shape = InputShape(*graph);
  ASSERT_EQ(shape.size(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(graph->symbol(shape[i].symbol()).name, names[i]);
  EXPECT_EQ(shape[0].symbol().index, shape[3].symbol().index);
  EXPECT_NE(shape[0].symbol().index, shape[1].symbol().index);
}

TEST(ExporterDimSpellings, AnInputWithNoShapeHasAnOpenRank) {
  onnx::ModelProto model = ReluModel(0, [](int, onnx::TensorShapeProto::Dimension*) {});
  model.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  Result<Graph> graph = Load(model);
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  EXPECT_FALSE(graph->value(graph->inputs[0]).shape.has_value());
}

}  // namespace
}  // namespace nxrt::graph
