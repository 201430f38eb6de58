#include "nxrt/graph/capture_pinning.hpp"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "capture_test_graph.hpp"

namespace nxrt::graph {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::TestGraph;

class CapturePinningTest : public ::testing::Test {
 protected:
  TestGraph t;
  SymbolId batch = t.Declared("batch");
  SymbolId max_len = t.Declared("max_len");
  SymbolId past_len = t.Declared("past_len");
  SymbolId total_len = t.Declared("total_len");
};

TEST_F(CapturePinningTest, CapacityGqaPinsItsPastAndPresentSequenceAxes) {
  t.Gqa("gqa", batch, max_len, max_len, true);
  EXPECT_THAT(CollectCapacityPinnedKvSymbols(t.graph), ElementsAre(max_len));
}

TEST_F(CapturePinningTest, CapacityAttentionAndIndexSharePinTheirSequenceAxes) {
  const SymbolId share_len = t.Declared("share_len");
  t.DefaultAttention("attn", batch, max_len, max_len, t.Value("bias", {batch, 1, 1, max_len}));
  t.IndexShare("share", batch, share_len, share_len, t.Value("b2", {batch, 1, 1, share_len}));
  EXPECT_THAT(CollectCapacityPinnedKvSymbols(t.graph), ElementsAre(max_len, share_len));
}

TEST_F(CapturePinningTest, GrowingFormsPinNothing) {
  t.Gqa("concat", batch, past_len, total_len, true);
  t.Gqa("no_seqlens", batch, max_len, max_len, false);
  t.DefaultAttention("maskless", batch, max_len, max_len, std::nullopt);
  t.IndexShare("unbiased", batch, max_len, max_len, std::nullopt);
  EXPECT_THAT(CollectCapacityPinnedKvSymbols(t.graph), IsEmpty());
}

TEST_F(CapturePinningTest, SparseAttentionHasNoPastInputsAndPinsNothing) {
  const ValueId q = t.Value("q", {batch, 1, 512});
  t.Node("CompressedSparseAttention", "pkg.nxrt", "csa", {q},
         {q, t.Value("records", {batch, max_len, 64})});
  EXPECT_THAT(CollectCapacityPinnedKvSymbols(t.graph), IsEmpty());
}

TEST_F(CapturePinningTest, OnlyTheCapacityNodeOfTwoIsPinned) {
  t.Gqa("capacity", batch, max_len, max_len, true);
  t.Gqa("growing", batch, past_len, total_len, true);
  EXPECT_THAT(CollectCapacityPinnedKvSymbols(t.graph), ElementsAre(max_len));
}

TEST_F(CapturePinningTest, FreezeSafeMaskPinsEverySymbolOnTheCone) {
  const SymbolId mask_len = t.Declared("mask_len");
  const SymbolId frontier = t.Declared("frontier");
  const SymbolId elsewhere = t.Declared("elsewhere");
  const ValueId mask = t.Input("attention_mask", {batch, mask_len});
  const ValueId sliced = t.Value("sliced", {batch, frontier});
  const ValueId bias = t.Value("bias", {batch, 1, 1, max_len});
  const ValueId side = t.Value("side", {elsewhere});
  t.Op("Slice", "slice", {mask}, {sliced});
  t.Op("Unsqueeze", "unsqueeze", {sliced}, {bias});
  t.Op("MatMul", "not_a_builder", {mask}, {side});
  t.DefaultAttention("attn", batch, max_len, max_len, bias);
  EXPECT_THAT(CollectFreezeSafeMaskSymbols(t.graph, {}),
              ElementsAre(batch, max_len, mask_len, frontier));
}

TEST_F(CapturePinningTest, AMaskThatFeedsOnlyAGrowingAttentionPinsNothing) {
  const ValueId mask = t.Input("attention_mask", {batch, total_len});
  const ValueId bias = t.Value("bias", {batch, 1, 1, total_len});
  t.Op("Unsqueeze", "unsqueeze", {mask}, {bias});
  t.DefaultAttention("attn", batch, past_len, total_len, bias);
  EXPECT_THAT(CollectFreezeSafeMaskSymbols(t.graph, {}), IsEmpty());
}

TEST_F(CapturePinningTest, BoundMaskNamesAreFollowed) {
  const ValueId mask = t.Input("padding", {batch, max_len});
  const ValueId bias = t.Value("bias", {batch, 1, 1, max_len});
  t.Op("Unsqueeze", "unsqueeze", {mask}, {bias});
  t.DefaultAttention("attn", batch, max_len, max_len, bias);
  EXPECT_THAT(CollectFreezeSafeMaskSymbols(t.graph, {}), IsEmpty());
  const std::vector<std::string> binding = {"padding"};
  EXPECT_THAT(CollectFreezeSafeMaskSymbols(t.graph, binding), ElementsAre(batch, max_len));
}

}  // namespace
}  // namespace nxrt::graph
