#include "nxrt/graph/decoder_signature.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "../capture/capture_test_graph.hpp"

namespace nxrt::graph {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::TestGraph;

// A one-layer decoder in the Optimum form, with input names of the caller's
// choosing: token ids through an embedding table, a mask and position ids
// that reach the attention through ops the roles do not depend on, and one
// key cache appended to along axis 2.
class DecoderSignatureTest : public ::testing::Test {
 protected:
  TestGraph t;
  SymbolId batch = t.Declared("batch");
  SymbolId seq = t.Declared("seq");
  SymbolId past = t.Declared("past");
  SymbolId total = t.Declared("total");

  ValueId IntInput(const std::string& name, std::initializer_list<testing::D> dims) {
    const ValueId id = t.Input(name, dims);
    t.graph.value(id).dtype = DataType::kInt64;
    return id;
  }

  void Embedding(ValueId ids) {
    const ValueId table = t.Int64s(t.graph.value(ids).name + ".table", {0, 0, 0, 0});
    Value& weights = t.graph.value(table);
    weights.dtype = DataType::kFloat32;
    weights.shape = TestGraph::MakeShape({2, 2});
    t.Op("Gather", "embed", {table, ids}, {t.Value("hidden", {batch, seq, 2})});
  }

  void KeyCache(const std::string& past_name, const std::string& present_name) {
    const ValueId cache = t.Input(past_name, {batch, 2, past, 32});
    const ValueId next = t.Output(present_name, {batch, 2, total, 32});
    const NodeId concat =
        t.Op("Concat", "append", {cache, t.Value("k", {batch, 2, seq, 32})}, {next});
    Attribute axis;
    axis.name = "axis";
    axis.i = -2;
    t.graph.node(concat).attributes.push_back(axis);
  }
};

TEST_F(DecoderSignatureTest, OptimumNamesTakeTheirRoles) {
  Embedding(IntInput("input_ids", {batch, seq}));
  IntInput("attention_mask", {batch, total});
  IntInput("position_ids", {batch, seq});
  KeyCache("past_key_values.0.key", "present.0.key");
  t.Output("logits", {batch, seq, 1000});
  const DecoderSignature signature = DescribeDecoder(t.graph);
  EXPECT_TRUE(signature.drivable()) << ::testing::PrintToString(signature.problems);
  EXPECT_EQ(signature.input_ids, "input_ids");
  EXPECT_EQ(signature.attention_mask, "attention_mask");
  EXPECT_EQ(signature.position_ids, "position_ids");
  EXPECT_EQ(signature.cache_position, "");
  EXPECT_EQ(signature.logits, "logits");
  ASSERT_EQ(signature.kv.size(), 1u);
  EXPECT_EQ(signature.kv[0].past, "past_key_values.0.key");
  EXPECT_EQ(signature.kv[0].present, "present.0.key");
  EXPECT_EQ(signature.kv[0].past_axis, 2u);
}

TEST_F(DecoderSignatureTest, UnnamedRolesComeFromTheGraph) {
  // Token ids found by the embedding they index; the mask spans the total
  // length, the positions match the ids; the only other rank-3 output is
  // the logits.
  IntInput("b", {batch, total});
  IntInput("c", {batch, seq});
  Embedding(IntInput("a", {batch, seq}));
  KeyCache("x", "y");
  t.Output("z", {batch, seq, 1000});
  const DecoderSignature signature = DescribeDecoder(t.graph);
  EXPECT_TRUE(signature.drivable()) << ::testing::PrintToString(signature.problems);
  EXPECT_EQ(signature.input_ids, "a");
  EXPECT_EQ(signature.attention_mask, "b");
  EXPECT_EQ(signature.position_ids, "c");
  EXPECT_EQ(signature.logits, "z");
}

TEST_F(DecoderSignatureTest, GenAiFormWithoutPositionsAndWithCachePosition) {
  Embedding(IntInput("input_ids", {batch, seq}));
  IntInput("attention_mask", {batch, total});
  IntInput("cache_position", {seq});
  KeyCache("past_key_values.layers.0.keys", "cache.layers.0.keys");
  t.Output("logits", {batch, seq, 1000});
  const DecoderSignature signature = DescribeDecoder(t.graph);
  EXPECT_TRUE(signature.drivable()) << ::testing::PrintToString(signature.problems);
  EXPECT_EQ(signature.position_ids, "");
  EXPECT_EQ(signature.cache_position, "cache_position");
  EXPECT_EQ(signature.kv[0].present, "cache.layers.0.keys");
}

TEST_F(DecoderSignatureTest, PastPassedStraightToItsPresentPairsByName) {
  // A cache bound at fixed capacity: the runtime writes the new rows in place.
  Embedding(IntInput("input_ids", {batch, seq}));
  IntInput("attention_mask", {batch, 256});
  const ValueId past_value = t.Input("past_key_values.0.value", {batch, 2, 256, 32});
  t.Op("Identity", "keep", {past_value}, {t.Output("present.0.value", {batch, 2, 256, 32})});
  KeyCache("past_key_values.0.key", "present.0.key");
  t.Output("logits", {batch, seq, 1000});
  const DecoderSignature signature = DescribeDecoder(t.graph);
  EXPECT_TRUE(signature.drivable()) << ::testing::PrintToString(signature.problems);
  ASSERT_EQ(signature.kv.size(), 2u);
  EXPECT_EQ(signature.kv[0].past, "past_key_values.0.value");  // graph-input order
  EXPECT_EQ(signature.kv[0].present, "present.0.value");
  EXPECT_EQ(signature.kv[0].past_axis, 2u);
  EXPECT_FALSE(signature.kv[0].traced);
  EXPECT_EQ(signature.kv[1].present, "present.0.key");
  EXPECT_TRUE(signature.kv[1].traced);
}

TEST_F(DecoderSignatureTest, EachInputItCannotPlaceIsNamed) {
  Embedding(IntInput("input_ids", {batch, seq}));
  IntInput("attention_mask", {batch, total});
  t.Input("encoder_hidden_states", {batch, seq, 64});
  KeyCache("past_key_values.0.key", "present.0.key");
  t.Output("logits", {batch, seq, 1000});
  const DecoderSignature signature = DescribeDecoder(t.graph);
  EXPECT_FALSE(signature.drivable());
  EXPECT_THAT(signature.problems,
              ElementsAre(HasSubstr("input 'encoder_hidden_states' is none of")));
}

TEST_F(DecoderSignatureTest, AModelWithoutCacheOrLogitsSaysSo) {
  Embedding(IntInput("input_ids", {batch, seq}));
  t.Output("pooled", {batch, 64});
  const DecoderSignature signature = DescribeDecoder(t.graph);
  EXPECT_THAT(signature.problems,
              ElementsAre(HasSubstr("no graph output extends a graph input"),
                          HasSubstr("no float output of rank 3 carries the logits")));
}

}  // namespace
}  // namespace nxrt::graph
