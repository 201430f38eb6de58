#include "nxrt/graph/attention_kv_slots.hpp"

#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "capture_test_graph.hpp"

namespace nxrt::graph {
namespace {

using ::testing::ElementsAre;
using testing::TestGraph;

Node MakeNode(const std::string& domain, const std::string& op_type) {
  Node node;
  node.domain = domain;
  node.op_type = op_type;
  return node;
}

std::vector<size_t> V(std::span<const size_t> slots) {
  return {slots.begin(), slots.end()};
}

TEST(AttentionKvSlots, GroupQueryAttentionPastInputs3And4PresentOutputs1And2) {
  const auto slots = FindKvCacheSlots(MakeNode("com.microsoft", "GroupQueryAttention"));
  ASSERT_TRUE(slots);
  EXPECT_THAT(V(slots->past_inputs), ElementsAre(3, 4));
  EXPECT_THAT(V(slots->present_outputs), ElementsAre(1, 2));
  EXPECT_TRUE(slots->last_axis_outputs.empty());
}

TEST(AttentionKvSlots, DefaultDomainAttentionPastInputs4And5PresentOutputs1And2) {
  const auto slots = FindKvCacheSlots(MakeNode("", "Attention"));
  ASSERT_TRUE(slots);
  EXPECT_THAT(V(slots->past_inputs), ElementsAre(4, 5));
  EXPECT_THAT(V(slots->present_outputs), ElementsAre(1, 2));
  EXPECT_TRUE(slots->last_axis_outputs.empty());
}

TEST(AttentionKvSlots, IndexSharePastInputs3And4PresentOutputs1And2) {
  const auto slots = FindKvCacheSlots(MakeNode("pkg.nxrt", "IndexShare"));
  ASSERT_TRUE(slots);
  EXPECT_THAT(V(slots->past_inputs), ElementsAre(3, 4));
  EXPECT_THAT(V(slots->present_outputs), ElementsAre(1, 2));
  EXPECT_TRUE(slots->last_axis_outputs.empty());
}

TEST(AttentionKvSlots, CompressedSparseAttentionInBothDomains) {
  for (const char* domain : {"pkg.nxrt", "com.microsoft"}) {
    const auto slots = FindKvCacheSlots(MakeNode(domain, "CompressedSparseAttention"));
    ASSERT_TRUE(slots) << domain;
    EXPECT_TRUE(slots->past_inputs.empty()) << domain;
    EXPECT_THAT(V(slots->present_outputs), ElementsAre(1, 3)) << domain;
    EXPECT_THAT(V(slots->last_axis_outputs), ElementsAre(5)) << domain;
  }
}

TEST(AttentionKvSlots, OpsOutsideTheirDomainAreNotRecognised) {
  EXPECT_FALSE(FindKvCacheSlots(MakeNode("", "GroupQueryAttention")));
  EXPECT_FALSE(FindKvCacheSlots(MakeNode("com.microsoft", "Attention")));
  EXPECT_FALSE(FindKvCacheSlots(MakeNode("com.microsoft", "IndexShare")));
  EXPECT_FALSE(FindKvCacheSlots(MakeNode("", "CompressedSparseAttention")));
  EXPECT_FALSE(FindKvCacheSlots(MakeNode("", "MatMul")));
}

TEST(AttentionKvSlots, SequenceAxisIsThePenultimateSymbolicDim) {
  TestGraph t;
  const SymbolId batch = t.Declared("batch");
  const SymbolId seq = t.Declared("seq_kv");
  EXPECT_EQ(SequenceAxisSymbol(TestGraph::MakeShape({batch, 8, seq, 64})), seq);
  EXPECT_EQ(SequenceAxisSymbol(TestGraph::MakeShape({seq, batch})), seq);
  // A static penultimate axis is a fixed recurrent state, not a growing cache.
  EXPECT_FALSE(SequenceAxisSymbol(TestGraph::MakeShape({batch, 8, 16, 64})));
  EXPECT_FALSE(SequenceAxisSymbol(TestGraph::MakeShape({seq})));
  EXPECT_FALSE(SequenceAxisSymbol(TestGraph::MakeShape({})));
}

TEST(AttentionKvSlots, LastAxisSymbol) {
  TestGraph t;
  const SymbolId selections = t.Declared("selections");
  EXPECT_EQ(LastAxisSymbol(TestGraph::MakeShape({1, 4, 1, selections})), selections);
  EXPECT_FALSE(LastAxisSymbol(TestGraph::MakeShape({selections, 4})));
  EXPECT_FALSE(LastAxisSymbol(TestGraph::MakeShape({})));
}

TEST(AttentionKvSlots, SlotShapesOfAbsentOrUnshapedSlotsAreNull) {
  TestGraph t;
  const ValueId shaped = t.Value("x", {2, 3});
  const ValueId unshaped = t.Unshaped("y");
  const NodeId id = t.Op("Add", "add", {shaped, std::nullopt, unshaped}, {shaped});
  const Node& node = t.graph.node(id);
  ASSERT_NE(InputShape(t.graph, node, 0), nullptr);
  EXPECT_EQ(InputShape(t.graph, node, 0)->size(), 2u);
  EXPECT_EQ(InputShape(t.graph, node, 1), nullptr);
  EXPECT_EQ(InputShape(t.graph, node, 2), nullptr);
  EXPECT_EQ(InputShape(t.graph, node, 3), nullptr);
  EXPECT_NE(OutputShape(t.graph, node, 0), nullptr);
  EXPECT_EQ(OutputShape(t.graph, node, 1), nullptr);
}

}  // namespace
}  // namespace nxrt::graph
