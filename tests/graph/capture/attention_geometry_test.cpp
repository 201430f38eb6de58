#include "nxrt/graph/attention_geometry.hpp"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "capture_test_graph.hpp"

namespace nxrt::graph {
namespace {

using testing::TestGraph;
using ::testing::UnorderedElementsAre;

class AttentionGeometry : public ::testing::Test {
 protected:
  TestGraph t;
  SymbolId batch = t.Declared("batch");
  SymbolId max_len = t.Declared("max_len");
  SymbolId past_len = t.Declared("past_len");
  SymbolId total_len = t.Declared("total_len");
  const Node& N(NodeId id) { return t.graph.node(id); }
};

TEST_F(AttentionGeometry, GqaSharingItsBufferInPlaceWithSeqlensKReadsAtCapacity) {
  const auto gqa = t.Gqa("gqa", batch, max_len, max_len, /*with_seqlens_k=*/true);
  EXPECT_TRUE(ReadsInputAtCapacity(t.graph, N(gqa.node), 3));
  EXPECT_TRUE(ReadsInputAtCapacity(t.graph, N(gqa.node), 4));
  EXPECT_TRUE(IsCapacityFormAttention(t.graph, N(gqa.node)));
  // Inputs that are not past KV never count.
  EXPECT_FALSE(ReadsInputAtCapacity(t.graph, N(gqa.node), 0));
  EXPECT_FALSE(ReadsInputAtCapacity(t.graph, N(gqa.node), 5));
}

TEST_F(AttentionGeometry, GqaWithStaticEqualBuffersReadsAtCapacity) {
  const auto gqa = t.Gqa("gqa", batch, 4096, 4096, true);
  EXPECT_TRUE(IsCapacityFormAttention(t.graph, N(gqa.node)));
}

TEST_F(AttentionGeometry, GqaThatConcatenatesIsNotCapacityForm) {
  const auto gqa = t.Gqa("gqa", batch, past_len, total_len, true);
  EXPECT_FALSE(ReadsInputAtCapacity(t.graph, N(gqa.node), 3));
  EXPECT_FALSE(IsCapacityFormAttention(t.graph, N(gqa.node)));
}

TEST_F(AttentionGeometry, GqaWithoutSeqlensKIsNotCapacityForm) {
  const auto gqa = t.Gqa("gqa", batch, max_len, max_len, /*with_seqlens_k=*/false);
  EXPECT_FALSE(ReadsInputAtCapacity(t.graph, N(gqa.node), 3));
  EXPECT_FALSE(IsCapacityFormAttention(t.graph, N(gqa.node)));
}

TEST_F(AttentionGeometry, GqaWithOneConcatenatingPastIsNotCapacityForm) {
  const auto gqa = t.Gqa("gqa", batch, max_len, max_len, true);
  t.graph.value(gqa.present_value).shape = TestGraph::MakeShape({batch, 2, total_len, 64});
  EXPECT_TRUE(ReadsInputAtCapacity(t.graph, N(gqa.node), 3));
  EXPECT_FALSE(ReadsInputAtCapacity(t.graph, N(gqa.node), 4));
  EXPECT_FALSE(IsCapacityFormAttention(t.graph, N(gqa.node)));
}

TEST_F(AttentionGeometry, GqaWithUnshapedPastIsNotCapacityForm) {
  const auto gqa = t.Gqa("gqa", batch, max_len, max_len, true);
  t.graph.value(gqa.past_key).shape.reset();
  EXPECT_FALSE(ReadsInputAtCapacity(t.graph, N(gqa.node), 3));
}

TEST_F(AttentionGeometry, AttentionWhoseMaskSpansThePastBufferReadsAtCapacity) {
  const ValueId mask = t.Value("bias", {batch, 1, 1, max_len});
  const auto attn = t.DefaultAttention("attn", batch, max_len, max_len, mask);
  EXPECT_TRUE(ReadsInputAtCapacity(t.graph, N(attn.node), 4));
  EXPECT_TRUE(ReadsInputAtCapacity(t.graph, N(attn.node), 5));
  EXPECT_TRUE(IsCapacityFormAttention(t.graph, N(attn.node)));
  EXPECT_TRUE(IsCapacityFormMaskInput(t.graph, N(attn.node), 3));
  EXPECT_FALSE(IsCapacityFormMaskInput(t.graph, N(attn.node), 4));
}

TEST_F(AttentionGeometry, AttentionWithoutMaskIsNotCapacityForm) {
  const auto attn = t.DefaultAttention("attn", batch, max_len, max_len, std::nullopt);
  EXPECT_FALSE(ReadsInputAtCapacity(t.graph, N(attn.node), 4));
  EXPECT_FALSE(IsCapacityFormAttention(t.graph, N(attn.node)));
}

TEST_F(AttentionGeometry, AttentionWhoseMaskCoversPastPlusNewIsNotCapacityForm) {
  const ValueId mask = t.Value("bias", {batch, 1, 1, total_len});
  const auto attn = t.DefaultAttention("attn", batch, past_len, total_len, mask);
  EXPECT_FALSE(IsCapacityFormAttention(t.graph, N(attn.node)));
  EXPECT_FALSE(IsCapacityFormMaskInput(t.graph, N(attn.node), 3));
}

TEST_F(AttentionGeometry, IndexShareWithBiasAndInPlaceBufferReadsAtCapacity) {
  const ValueId bias = t.Value("bias", {batch, 1, 1, max_len});
  const auto share = t.IndexShare("share", batch, max_len, max_len, bias);
  EXPECT_TRUE(IsCapacityFormAttention(t.graph, N(share.node)));
  EXPECT_TRUE(IsCapacityFormMaskInput(t.graph, N(share.node), 5));
  EXPECT_FALSE(IsCapacityFormMaskInput(t.graph, N(share.node), 3));
}

TEST_F(AttentionGeometry, IndexShareWithoutBiasOrConcatenatingIsNotCapacityForm) {
  const ValueId bias = t.Value("bias", {batch, 1, 1, total_len});
  const auto unbiased = t.IndexShare("unbiased", batch, max_len, max_len, std::nullopt);
  const auto growing = t.IndexShare("growing", batch, past_len, total_len, bias);
  EXPECT_FALSE(IsCapacityFormAttention(t.graph, N(unbiased.node)));
  EXPECT_FALSE(IsCapacityFormAttention(t.graph, N(growing.node)));
}

TEST_F(AttentionGeometry, CompressedSparseAttentionHasNoCapacityForm) {
  const ValueId records = t.Value("records", {batch, max_len, 64});
  const NodeId csa = t.Node("CompressedSparseAttention", "pkg.nxrt", "csa", {records, records},
                            {records, records, records, records});
  EXPECT_FALSE(IsCapacityFormAttention(t.graph, N(csa)));
  EXPECT_FALSE(ReadsInputAtCapacity(t.graph, N(csa), 0));
}

TEST_F(AttentionGeometry, AdditiveMaskBuilderOps) {
  for (const char* op :
       {"Cast", "CumSum", "Slice", "Where", "Sub", "Mul", "Add", "Less", "LessOrEqual", "Greater",
        "Equal", "Not", "And", "Unsqueeze", "Expand", "Reshape"}) {
    Node node;
    node.op_type = op;
    EXPECT_TRUE(IsAdditiveMaskBuilderOp(node)) << op;
    node.domain = "com.microsoft";
    EXPECT_FALSE(IsAdditiveMaskBuilderOp(node)) << op << " outside the default domain";
  }
  for (const char* op : {"Range", "NonZero", "MatMul", "Attention", "Softmax", "Concat"}) {
    Node node;
    node.op_type = op;
    EXPECT_FALSE(IsAdditiveMaskBuilderOp(node)) << op;
  }
}

TEST_F(AttentionGeometry, AttentionMaskNames) {
  EXPECT_TRUE(IsAttentionMaskName("attention_mask"));
  EXPECT_TRUE(IsAttentionMaskName("Attention_Mask"));
  EXPECT_TRUE(IsAttentionMaskName("decoder.attention_mask.0"));
  EXPECT_TRUE(IsAttentionMaskName("attn_mask"));
  EXPECT_FALSE(IsAttentionMaskName("input_ids"));
  EXPECT_FALSE(IsAttentionMaskName("mask"));
}

TEST_F(AttentionGeometry, MaskInputByNameOrByBinding) {
  const ValueId named = t.Input("attention_mask", {batch, max_len});
  const ValueId bound = t.Input("padding", {batch, max_len});
  const std::vector<std::string> binding = {"padding"};
  EXPECT_TRUE(IsAttentionMaskInput(t.graph, named, {}));
  EXPECT_FALSE(IsAttentionMaskInput(t.graph, bound, {}));
  EXPECT_TRUE(IsAttentionMaskInput(t.graph, bound, binding));
}

// attention_mask -> Cast -> Sub -> Mul -> Unsqueeze -> bias -> capacity Attention.
class MaskCone : public AttentionGeometry {
 protected:
  ValueId mask = t.Input("attention_mask", {batch, max_len});
  ValueId as_float = t.Value("mask_f", {batch, max_len});
  ValueId inverted = t.Value("inverted", {batch, max_len});
  ValueId scaled = t.Value("scaled", {batch, max_len});
  ValueId bias = t.Value("bias", {batch, 1, 1, max_len});
  ValueId one = t.Value("one", {});
  ValueId axes = t.Value("axes", {2});
  void Build() {
    t.Op("Cast", "cast", {mask}, {as_float});
    t.Op("Sub", "sub", {one, as_float}, {inverted});
    t.Op("Mul", "mul", {inverted, one}, {scaled});
    t.Op("Unsqueeze", "unsqueeze", {scaled, axes}, {bias});
  }
};

TEST_F(MaskCone, ReachesTheCapacityAttentionThroughBuilders) {
  Build();
  const auto attn = t.DefaultAttention("attn", batch, max_len, max_len, bias);
  t.Op("Add", "after", {t.graph.node(attn.node).outputs[0], one},
       {t.Value("after_out", {batch, 8, 1, 64})});
  const ValueConsumers consumers(t.graph);
  const AdditiveMaskCone cone = WalkAdditiveMaskCone(t.graph, consumers, mask);
  EXPECT_TRUE(cone.reaches_capacity_mask_input);
  // The walk stops at the attention: nothing past it is in the cone.
  EXPECT_THAT(cone.values, UnorderedElementsAre(mask, as_float, inverted, scaled, bias));
  EXPECT_TRUE(FeedsAdditiveCausalBuilder(t.graph, consumers, mask, {}));
}

TEST_F(MaskCone, DoesNotCountAGrowingFormAttention) {
  Build();
  t.DefaultAttention("attn", batch, past_len, total_len, bias);
  const ValueConsumers consumers(t.graph);
  EXPECT_FALSE(WalkAdditiveMaskCone(t.graph, consumers, mask).reaches_capacity_mask_input);
  EXPECT_FALSE(FeedsAdditiveCausalBuilder(t.graph, consumers, mask, {}));
}

TEST_F(MaskCone, DoesNotWalkThroughOpsThatAreNotBuilders) {
  t.Op("MatMul", "matmul", {mask, one}, {bias});
  t.DefaultAttention("attn", batch, max_len, max_len, bias);
  const ValueConsumers consumers(t.graph);
  const AdditiveMaskCone cone = WalkAdditiveMaskCone(t.graph, consumers, mask);
  EXPECT_FALSE(cone.reaches_capacity_mask_input);
  EXPECT_THAT(cone.values, UnorderedElementsAre(mask));
}

TEST_F(MaskCone, AMaskFedStraightToTheAttentionFeedsNoBuilder) {
  const ValueId direct = t.Input("attention_mask_4d", {batch, 1, 1, max_len});
  t.DefaultAttention("attn", batch, max_len, max_len, direct);
  const ValueConsumers consumers(t.graph);
  EXPECT_FALSE(FeedsAdditiveCausalBuilder(t.graph, consumers, direct, {}));
}

TEST_F(MaskCone, AnInputNotNamedOrBoundAsAMaskDoesNotFeed) {
  const ValueId ids = t.Input("position_bias", {batch, max_len});
  t.Op("Cast", "cast", {ids}, {bias});
  t.DefaultAttention("attn", batch, max_len, max_len, bias);
  const ValueConsumers consumers(t.graph);
  EXPECT_TRUE(WalkAdditiveMaskCone(t.graph, consumers, ids).reaches_capacity_mask_input);
  EXPECT_FALSE(FeedsAdditiveCausalBuilder(t.graph, consumers, ids, {}));
  const std::vector<std::string> binding = {"position_bias"};
  EXPECT_TRUE(FeedsAdditiveCausalBuilder(t.graph, consumers, ids, binding));
}

}  // namespace
}  // namespace nxrt::graph
