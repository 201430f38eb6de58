#include "nxrt/graph/kv_cache_pairs.hpp"

#include <gtest/gtest.h>

#include "capture_test_graph.hpp"

namespace nxrt::graph {
namespace {

using testing::TestGraph;

Attribute IntAttr(const std::string& name, int64_t value) {
  Attribute attribute;
  attribute.name = name;
  attribute.type = AttributeType::kInt;
  attribute.i = value;
  return attribute;
}

Attribute IntsAttr(const std::string& name, std::vector<int64_t> values) {
  Attribute attribute;
  attribute.name = name;
  attribute.type = AttributeType::kInts;
  attribute.ints = std::move(values);
  return attribute;
}

class KvCachePairsTest : public ::testing::Test {
 protected:
  TestGraph t;
  SymbolId batch = t.Declared("batch");
  SymbolId past = t.Declared("past");
  SymbolId total = t.Declared("total");
  SymbolId seq = t.Declared("seq");

  NodeId Concat(const std::string& name, std::vector<std::optional<ValueId>> inputs, ValueId output,
                int64_t axis) {
    const NodeId id = t.Op("Concat", name, std::move(inputs), {output});
    t.graph.node(id).attributes.push_back(IntAttr("axis", axis));
    return id;
  }
};

TEST_F(KvCachePairsTest, ConcatOfPastAndNewRowsPairsWhateverTheNames) {
  const ValueId cache = t.Input("cache.layers.0.keys", {batch, 2, past, 32});
  const ValueId fresh = t.Value("k", {batch, 2, seq, 32});
  const ValueId next = t.Output("anything", {batch, 2, total, 32});
  Concat("concat", {cache, fresh}, next, -2);
  const auto pairs = TraceKvCachePairs(t.graph);
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_EQ(pairs[0].past, cache);
  EXPECT_EQ(pairs[0].present, next);
  EXPECT_EQ(pairs[0].past_axis, 2u);
  EXPECT_EQ(pairs[0].present_axis, 2u);
}

TEST_F(KvCachePairsTest, FollowsTheOneOperandConcatTorchScriptEmits) {
  const ValueId cache = t.Input("past_key_values.0.key", {batch, 2, past, 32});
  const ValueId copy = t.Unshaped("copy");
  const ValueId fresh = t.Value("k", {batch, 2, seq, 32});
  const ValueId next = t.Output("present.0.key", {batch, 2, total, 32});
  Concat("single", {cache}, copy, -2);
  Concat("append", {copy, fresh}, next, -2);
  const auto pairs = TraceKvCachePairs(t.graph);
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_EQ(pairs[0].present, next);
  EXPECT_EQ(pairs[0].past_axis, 2u);
}

TEST_F(KvCachePairsTest, TransposedPastKeepsTheAxisInEachTensorsCoordinates) {
  // A key cached as [batch, heads, head_dim, seq], appended to as [batch, heads, seq, head_dim].
  const ValueId cache = t.Input("k_cache", {batch, 2, 32, past});
  const ValueId turned = t.Unshaped("turned");
  const ValueId fresh = t.Value("k", {batch, 2, seq, 32});
  const ValueId next = t.Output("k_out", {batch, 2, total, 32});
  const NodeId transpose = t.Op("Transpose", "t", {cache}, {turned});
  t.graph.node(transpose).attributes.push_back(IntsAttr("perm", {0, 1, 3, 2}));
  Concat("append", {turned, fresh}, next, 2);
  const auto pairs = TraceKvCachePairs(t.graph);
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_EQ(pairs[0].past_axis, 3u);
  EXPECT_EQ(pairs[0].present_axis, 2u);
}

TEST_F(KvCachePairsTest, LegacyStackedPastPairsThroughGatherUnsqueezeAndStacking) {
  // GPT-2's past_0 [2, batch, heads, past, head_dim]: key and value picked
  // by index, each appended to, unsqueezed and stacked again.
  const ValueId stacked = t.Input("past_0", {2, batch, 4, past, 32});
  const ValueId present = t.Output("present_0", {2, batch, 4, total, 32});
  const ValueId zero_axis = t.Int64s("zero", {0});
  std::vector<std::optional<ValueId>> halves;
  for (const char* part : {"key", "value"}) {
    const std::string name = part;
    const ValueId index = t.Value(name + ".index", {});
    const ValueId picked = t.Unshaped(name + ".picked");
    const ValueId fresh = t.Value(name + ".new", {batch, 4, seq, 32});
    const ValueId grown = t.Unshaped(name + ".grown");
    const ValueId lifted = t.Unshaped(name + ".lifted");
    t.Op("Gather", name + ".gather", {stacked, index}, {picked});
    Concat(name + ".append", {picked, fresh}, grown, -2);
    t.Op("Unsqueeze", name + ".unsqueeze", {grown, zero_axis}, {lifted});
    halves.push_back(lifted);
  }
  Concat("stack", halves, present, 0);
  const auto pairs = TraceKvCachePairs(t.graph);
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_EQ(pairs[0].past, stacked);
  EXPECT_EQ(pairs[0].present, present);
  EXPECT_EQ(pairs[0].past_axis, 3u);
  EXPECT_EQ(pairs[0].present_axis, 3u);
}

TEST_F(KvCachePairsTest, AttentionOpPairsItsPastSlotsWithItsPresents) {
  const auto gqa = t.Gqa("gqa", batch, past, total, true);
  t.graph.value(gqa.past_key).is_graph_input = true;
  t.graph.value(gqa.past_value).is_graph_input = true;
  t.graph.inputs = {gqa.past_key, gqa.past_value};
  const ValueId key_out = t.Output("key_out", {batch, 2, total, 64});
  t.Op("Identity", "id", {gqa.present_key}, {key_out});
  t.graph.outputs.push_back(gqa.present_value);
  const auto pairs = TraceKvCachePairs(t.graph);
  ASSERT_EQ(pairs.size(), 2u);
  EXPECT_EQ(pairs[0].past, gqa.past_key);
  EXPECT_EQ(pairs[0].present, key_out);
  EXPECT_EQ(pairs[1].present, gqa.present_value);
  EXPECT_EQ(pairs[1].past_axis, 2u);
}

TEST_F(KvCachePairsTest, ConcatAlongAnAxisTheNewDataAddedIsNoCache) {
  // A hidden state joined with a learned prefix along an inserted axis, and
  // an input reaching an output with nothing appended, are no KV caches.
  const ValueId hidden = t.Input("hidden", {batch, seq, 64});
  const ValueId lifted = t.Unshaped("lifted");
  const ValueId prefix = t.Value("prefix", {1, batch, seq, 64});
  const ValueId joined = t.Output("joined", {2, batch, seq, 64});
  t.Op("Unsqueeze", "lift", {hidden, t.Int64s("axes", {0})}, {lifted});
  Concat("join", {prefix, lifted}, joined, 0);
  const ValueId state = t.Input("state", {batch, 4, 64});
  const ValueId passed = t.Output("passed", {batch, 4, 64});
  t.Op("Identity", "pass", {state}, {passed});
  EXPECT_TRUE(TraceKvCachePairs(t.graph).empty());
}

TEST_F(KvCachePairsTest, IntegerAndLowRankInputsAreNotTraced) {
  const ValueId ids = t.Input("ids", {batch, seq, 4});
  t.graph.value(ids).dtype = DataType::kInt64;
  const ValueId fresh = t.Value("fresh", {batch, seq, 4});
  t.graph.value(fresh).dtype = DataType::kInt64;
  Concat("append", {ids, fresh}, t.Output("out", {batch, total, 4}), 1);
  EXPECT_TRUE(TraceKvCachePairs(t.graph).empty());
}

}  // namespace
}  // namespace nxrt::graph
