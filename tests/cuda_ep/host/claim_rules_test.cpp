#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "attribute_builders.hpp"
#include "claim_rules.hpp"
#include "nxrt_test/single_node_graph.hpp"
#include "plugin_host/host_api.hpp"

namespace {

using nxrt::graph::Attribute;
using nxrt::graph::DataType;
using nxrt_test::FloatAttribute;
using nxrt_test::IntAttribute;
using nxrt_test::IntsAttribute;
using nxrt_test::MakeSingleNodeGraph;
using nxrt_test::SingleNodeGraph;
using nxrt_test::StringAttribute;
using ::testing::HasSubstr;

nxrt::graph::Value& Input(SingleNodeGraph& g, size_t index) {
  return g.graph->values[g.graph->nodes[g.node.index].inputs[index]->index];
}

// The claim as the plugin makes it, at the node's inferred input infos.
nxrt::sdk::ClaimResult Claim(const SingleNodeGraph& g, int64_t opset = 17) {
  const nxrt::sdk::Host host(nxrt::plugin_host::HostApi(), nullptr);
  const auto view = g.View();
  const std::vector<nxrt_layout> layouts(view->input_infos().size(), NXRT_LAYOUT_CONTIGUOUS);
  return nxrt::cuda::ClaimOnCuda(nxrt::sdk::Node(host, view.get()), opset, view->input_infos(),
                                 layouts);
}

TEST(CudaClaims, FloatArithmeticIsClaimedInEveryComputeType) {
  for (DataType dtype : {DataType::kFloat32, DataType::kFloat16, DataType::kBfloat16}) {
    auto g = MakeSingleNodeGraph("Add", {{2, 3}, {3}}, {2, 3});
    Input(g, 0).dtype = dtype;
    Input(g, 1).dtype = dtype;
    EXPECT_TRUE(Claim(g).claimed) << Claim(g).reason;
  }
}

TEST(CudaClaims, IntegerAddSubMulAreClaimed) {
  for (const char* op : {"Add", "Sub", "Mul"}) {
    for (DataType dtype : {DataType::kInt32, DataType::kInt64}) {
      auto g = MakeSingleNodeGraph(op, {{2, 4}, {}}, {2, 4});
      Input(g, 0).dtype = dtype;
      Input(g, 1).dtype = dtype;
      EXPECT_TRUE(Claim(g).claimed) << op << ": " << Claim(g).reason;
    }
  }
}

TEST(CudaClaims, OtherIntegerArithmeticIsLeftToTheHost) {
  for (const char* op : {"Div", "Pow"}) {
    auto g = MakeSingleNodeGraph(op, {{4}, {4}}, {4});
    Input(g, 0).dtype = DataType::kInt64;
    Input(g, 1).dtype = DataType::kInt64;
    const auto result = Claim(g);
    EXPECT_FALSE(result.claimed) << op;
    EXPECT_THAT(result.reason, HasSubstr("int64"));
  }
  auto unsigned_add = MakeSingleNodeGraph("Add", {{4}, {4}}, {4});
  Input(unsigned_add, 0).dtype = DataType::kUint8;
  Input(unsigned_add, 1).dtype = DataType::kUint8;
  EXPECT_FALSE(Claim(unsigned_add).claimed);
}

TEST(CudaClaims, IntegerReduceSumOverConstantAxes) {
  auto constant =
      MakeSingleNodeGraph("ReduceSum", {{2, 8}, {1}}, {2}, {IntAttribute("keepdims", 0)});
  Input(constant, 0).dtype = DataType::kInt64;
  Input(constant, 1).dtype = DataType::kInt64;
  constant.MakeConstant(1, nxrt::graph::WeightRef{1});
  EXPECT_TRUE(Claim(constant, 23).claimed) << Claim(constant, 23).reason;

  auto computed = MakeSingleNodeGraph("ReduceSum", {{2, 8}, {1}}, {2, 1});
  Input(computed, 0).dtype = DataType::kInt64;
  Input(computed, 1).dtype = DataType::kInt64;
  const auto result = Claim(computed, 13);
  EXPECT_FALSE(result.claimed);
  EXPECT_THAT(result.reason, HasSubstr("constant axes"));

  // Any axes, from the attribute before opset 13, or none (every axis).
  auto attribute = MakeSingleNodeGraph("ReduceSum", {{2, 8}}, {1, 8}, {IntsAttribute("axes", {0})});
  Input(attribute, 0).dtype = DataType::kInt32;
  EXPECT_TRUE(Claim(attribute, 11).claimed) << Claim(attribute, 11).reason;
  auto all = MakeSingleNodeGraph("ReduceSum", {{2, 8}}, {});
  Input(all, 0).dtype = DataType::kInt64;
  EXPECT_TRUE(Claim(all, 13).claimed) << Claim(all, 13).reason;

  auto mean = MakeSingleNodeGraph("ReduceMean", {{2, 8}}, {2, 1}, {IntsAttribute("axes", {-1})});
  Input(mean, 0).dtype = DataType::kInt64;
  const auto mean_result = Claim(mean, 17);
  EXPECT_FALSE(mean_result.claimed);
  EXPECT_THAT(mean_result.reason, HasSubstr("int64"));
}

// Gives the single node `count` outputs in all.
void AddOutputs(SingleNodeGraph& g, size_t count) {
  auto& outputs = g.graph->nodes[g.node.index].outputs;
  while (outputs.size() < count) {
    nxrt::graph::Value out;
    out.name = "out" + std::to_string(outputs.size());
    out.dtype = DataType::kFloat32;
    outputs.push_back(g.graph->AddValue(std::move(out)));
  }
}

TEST(CudaClaims, SplitWithKnownSizes) {
  auto equal = MakeSingleNodeGraph("Split", {{2, 12}}, {2, 4},
                                   {IntAttribute("axis", -1), IntAttribute("num_outputs", 3)});
  AddOutputs(equal, 3);
  EXPECT_TRUE(Claim(equal, 18).claimed) << Claim(equal, 18).reason;
  EXPECT_FALSE(Claim(equal, 1).claimed);

  auto attribute = MakeSingleNodeGraph("Split", {{6, 2}}, {2, 2}, {IntsAttribute("split", {2, 4})});
  AddOutputs(attribute, 2);
  Input(attribute, 0).dtype = DataType::kInt64;
  EXPECT_TRUE(Claim(attribute, 11).claimed) << Claim(attribute, 11).reason;

  auto constant = MakeSingleNodeGraph("Split", {{6, 2}, {2}}, {2, 2});
  AddOutputs(constant, 2);
  Input(constant, 1).dtype = DataType::kInt64;
  constant.MakeConstant(1, nxrt::graph::WeightRef{1});
  EXPECT_TRUE(Claim(constant, 13).claimed) << Claim(constant, 13).reason;

  auto computed = MakeSingleNodeGraph("Split", {{6, 2}, {2}}, {2, 2});
  AddOutputs(computed, 2);
  Input(computed, 1).dtype = DataType::kInt64;
  const auto result = Claim(computed, 13);
  EXPECT_FALSE(result.claimed);
  EXPECT_THAT(result.reason, HasSubstr("constant sizes"));
}

TEST(CudaClaims, ShapeOfAnyFixedSizeTensor) {
  auto g = MakeSingleNodeGraph("Shape", {{"batch", 8}}, {2});
  Input(g, 0).dtype = DataType::kInt64;
  EXPECT_TRUE(Claim(g, 15).claimed) << Claim(g, 15).reason;
  EXPECT_TRUE(Claim(MakeSingleNodeGraph("Shape", {{2, 3, 4}}, {1},
                                        {IntAttribute("start", 1), IntAttribute("end", -1)}),
                    21)
                  .claimed);
  auto strings = MakeSingleNodeGraph("Shape", {{4}}, {1});
  Input(strings, 0).dtype = DataType::kString;
  EXPECT_FALSE(Claim(strings, 15).claimed);
}

TEST(CudaClaims, MixedOperandTypesAreDeclined) {
  auto g = MakeSingleNodeGraph("Pow", {{4}, {4}}, {4});
  Input(g, 1).dtype = DataType::kFloat16;
  const auto result = Claim(g);
  EXPECT_FALSE(result.claimed);
  EXPECT_THAT(result.reason, HasSubstr("differ in type"));
}

TEST(CudaClaims, OpsWithoutAKernelAreDeclinedByName) {
  const auto result = Claim(MakeSingleNodeGraph("LpPool", {{1, 1, 4, 4}}, {1, 1, 2, 2},
                                                {IntsAttribute("kernel_shape", {3, 3})}));
  EXPECT_FALSE(result.claimed);
  EXPECT_THAT(result.reason, HasSubstr("LpPool has no CUDA kernel"));
}

TEST(CudaClaims, OtherDomainsAreDeclined) {
  auto g = MakeSingleNodeGraph("Add", {{4}, {4}}, {4});
  g.graph->nodes[g.node.index].domain = "com.microsoft";
  const auto result = Claim(g);
  EXPECT_FALSE(result.claimed);
  EXPECT_THAT(result.reason, HasSubstr("com.microsoft"));
}

TEST(CudaClaims, MatMulNeedsMatricesAndMatchingBatches) {
  EXPECT_TRUE(
      Claim(MakeSingleNodeGraph("MatMul", {{"batch", 5, 8}, {8, 3}}, {"batch", 5, 3})).claimed);
  EXPECT_TRUE(Claim(MakeSingleNodeGraph("MatMul", {{2, 5, 8}, {2, 8, 3}}, {2, 5, 3})).claimed);
  EXPECT_TRUE(
      Claim(MakeSingleNodeGraph("MatMul", {{"b", 5, 8}, {"b", 8, 3}}, {"b", 5, 3})).claimed);
  const auto vector = Claim(MakeSingleNodeGraph("MatMul", {{8}, {8, 3}}, {3}));
  EXPECT_FALSE(vector.claimed);
  EXPECT_THAT(vector.reason, HasSubstr("rank-1"));
  const auto broadcast = Claim(MakeSingleNodeGraph("MatMul", {{1, 5, 8}, {4, 8, 3}}, {4, 5, 3}));
  EXPECT_FALSE(broadcast.claimed);
  EXPECT_THAT(broadcast.reason, HasSubstr("broadcast"));
}

TEST(CudaClaims, GemmWantsTwoDimensionalOperands) {
  EXPECT_TRUE(Claim(MakeSingleNodeGraph("Gemm", {{4, 8}, {8, 3}, {3}}, {4, 3})).claimed);
  EXPECT_FALSE(Claim(MakeSingleNodeGraph("Gemm", {{2, 4, 8}, {8, 3}}, {2, 4, 3})).claimed);
}

TEST(CudaClaims, SoftmaxOverTheLastAxisOnly) {
  EXPECT_TRUE(Claim(MakeSingleNodeGraph("Softmax", {{2, 3, 4}}, {2, 3, 4}), 13).claimed);
  EXPECT_TRUE(
      Claim(MakeSingleNodeGraph("Softmax", {{2, 3, 4}}, {2, 3, 4}, {IntAttribute("axis", 2)}), 13)
          .claimed);
  const auto middle =
      Claim(MakeSingleNodeGraph("Softmax", {{2, 3, 4}}, {2, 3, 4}, {IntAttribute("axis", 1)}), 13);
  EXPECT_FALSE(middle.claimed);
  EXPECT_THAT(middle.reason, HasSubstr("last axis"));
  // Before opset 13 the default axis is 1: the last axis only for rank 2.
  EXPECT_TRUE(Claim(MakeSingleNodeGraph("Softmax", {{3, 4}}, {3, 4}), 11).claimed);
  EXPECT_FALSE(Claim(MakeSingleNodeGraph("Softmax", {{2, 3, 4}}, {2, 3, 4}), 11).claimed);
}

TEST(CudaClaims, LayerNormalizationWithoutStatisticsOutputs) {
  auto plain = MakeSingleNodeGraph("LayerNormalization", {{2, 8}, {8}, {8}}, {2, 8});
  EXPECT_TRUE(Claim(plain).claimed) << Claim(plain).reason;

  auto with_mean = MakeSingleNodeGraph("LayerNormalization", {{2, 8}, {8}, {8}}, {2, 8});
  nxrt::graph::Value mean;
  mean.name = "mean";
  mean.dtype = DataType::kFloat32;
  const auto id = with_mean.graph->AddValue(std::move(mean));
  with_mean.graph->nodes[with_mean.node.index].outputs.push_back(id);
  const auto result = Claim(with_mean);
  EXPECT_FALSE(result.claimed);
  EXPECT_THAT(result.reason, HasSubstr("output 1"));

  const auto first_axis = Claim(MakeSingleNodeGraph("LayerNormalization", {{2, 8}, {2, 8}}, {2, 8},
                                                    {IntAttribute("axis", 0)}));
  EXPECT_FALSE(first_axis.claimed);
}

TEST(CudaClaims, RmsNormalizationBothSpellings) {
  EXPECT_TRUE(
      Claim(MakeSingleNodeGraph("SimplifiedLayerNormalization", {{2, 8}, {8}}, {2, 8})).claimed);
  EXPECT_TRUE(Claim(MakeSingleNodeGraph("RMSNormalization", {{2, 8}, {8}}, {2, 8}), 23).claimed);
}

TEST(CudaClaims, ReductionsOverTheLastAxisGivenAsAttribute) {
  EXPECT_TRUE(
      Claim(MakeSingleNodeGraph("ReduceMean", {{2, 8}}, {2, 1}, {IntsAttribute("axes", {-1})}), 17)
          .claimed);
  const auto first =
      Claim(MakeSingleNodeGraph("ReduceMean", {{2, 8}}, {1, 8}, {IntsAttribute("axes", {0})}), 17);
  EXPECT_FALSE(first.claimed);
  const auto as_input = Claim(MakeSingleNodeGraph("ReduceSum", {{2, 8}, {1}}, {2, 1}), 13);
  EXPECT_FALSE(as_input.claimed);
  EXPECT_THAT(as_input.reason, HasSubstr("axes as an input"));
}

TEST(CudaClaims, SliceNeedsConstantBounds) {
  auto computed = MakeSingleNodeGraph("Slice", {{8}, {1}, {1}}, {4});
  Input(computed, 1).dtype = DataType::kInt64;
  Input(computed, 2).dtype = DataType::kInt64;
  const auto result = Claim(computed);
  EXPECT_FALSE(result.claimed);
  EXPECT_THAT(result.reason, HasSubstr("constant"));

  auto constant = MakeSingleNodeGraph("Slice", {{8}, {1}, {1}}, {4});
  for (size_t i : {1u, 2u}) {
    Input(constant, i).dtype = DataType::kInt64;
    constant.MakeConstant(i, nxrt::graph::WeightRef{static_cast<uint32_t>(i)});
  }
  EXPECT_TRUE(Claim(constant).claimed) << Claim(constant).reason;
}

TEST(CudaClaims, CastBetweenComputeAndIndexTypes) {
  auto to_half = MakeSingleNodeGraph("Cast", {{4}}, {4}, {IntAttribute("to", NXRT_DTYPE_FLOAT16)});
  EXPECT_TRUE(Claim(to_half).claimed);
  auto to_string = MakeSingleNodeGraph("Cast", {{4}}, {4}, {IntAttribute("to", NXRT_DTYPE_STRING)});
  EXPECT_FALSE(Claim(to_string).claimed);
  auto from_double =
      MakeSingleNodeGraph("Cast", {{4}}, {4}, {IntAttribute("to", NXRT_DTYPE_FLOAT32)});
  Input(from_double, 0).dtype = DataType::kFloat64;
  EXPECT_FALSE(Claim(from_double).claimed);
}

TEST(CudaClaims, GeluApproximationsAreChecked) {
  EXPECT_TRUE(
      Claim(MakeSingleNodeGraph("Gelu", {{4}}, {4}, {StringAttribute("approximate", "tanh")}), 20)
          .claimed);
  const auto odd =
      Claim(MakeSingleNodeGraph("Gelu", {{4}}, {4}, {StringAttribute("approximate", "fast")}), 20);
  EXPECT_FALSE(odd.claimed);
  EXPECT_THAT(odd.reason, HasSubstr("fast"));
}

TEST(CudaClaims, GatherWithIntegerIndicesOfAnyDataType) {
  auto g = MakeSingleNodeGraph("Gather", {{100, 16}, {2, 3}}, {2, 3, 16});
  Input(g, 0).dtype = DataType::kFloat16;
  Input(g, 1).dtype = DataType::kInt64;
  EXPECT_TRUE(Claim(g).claimed) << Claim(g).reason;
  Input(g, 1).dtype = DataType::kFloat32;
  EXPECT_FALSE(Claim(g).claimed);
}

TEST(CudaClaims, StringTensorsNeverMoveToTheDevice) {
  auto g = MakeSingleNodeGraph("Identity", {{4}}, {4});
  Input(g, 0).dtype = DataType::kString;
  const auto result = Claim(g);
  EXPECT_FALSE(result.claimed);
  EXPECT_THAT(result.reason, HasSubstr("string"));
}

// The copy kernels move words of 1, 2, 4 or 8 bytes; complex128 (16) and
// the packed sub-byte types are declined at the claim, not at the launch.
TEST(CudaClaims, ElementsThatAreNotOneDeviceWordStayOnTheHost) {
  for (DataType dtype : {DataType::kComplex128, DataType::kInt4, DataType::kUint4}) {
    auto g = MakeSingleNodeGraph("Transpose", {{2, 4}}, {4, 2});
    Input(g, 0).dtype = dtype;
    const auto result = Claim(g);
    EXPECT_FALSE(result.claimed) << static_cast<int>(dtype);
    EXPECT_THAT(result.reason, HasSubstr("do not move"));
  }
  auto g = MakeSingleNodeGraph("Transpose", {{2, 4}}, {4, 2});
  Input(g, 0).dtype = DataType::kComplex64;
  EXPECT_TRUE(Claim(g).claimed) << Claim(g).reason;
}

// The bundled decoder's attention: 8 heads, 2 KV heads, head size 32, rotary
// caches [1024, 16], a growing past and both present outputs.
SingleNodeGraph DecoderAttention(std::vector<Attribute> extra = {}) {
  std::vector<Attribute> attributes = {
      IntAttribute("num_heads", 8), IntAttribute("kv_num_heads", 2), IntAttribute("do_rotary", 1)};
  attributes.insert(attributes.end(), extra.begin(), extra.end());
  auto g = MakeSingleNodeGraph("GroupQueryAttention",
                               {{1, "s", 256},
                                {1, "s", 64},
                                {1, "s", 64},
                                {1, 2, "p", 32},
                                {1, 2, "p", 32},
                                {1},
                                {},
                                {1024, 16},
                                {1024, 16}},
                               {1, "s", 256}, std::move(attributes));
  g.graph->nodes[g.node.index].domain = "com.microsoft";
  Input(g, 5).dtype = DataType::kInt32;
  Input(g, 6).dtype = DataType::kInt32;
  for (const char* name : {"present_key", "present_value"}) {
    nxrt::graph::Value present;
    present.name = name;
    present.dtype = DataType::kFloat32;
    const auto id = g.graph->AddValue(std::move(present));
    g.graph->nodes[g.node.index].outputs.push_back(id);
  }
  return g;
}

TEST(CudaClaims, DecoderGroupQueryAttentionIsClaimed) {
  const auto g = DecoderAttention();
  EXPECT_TRUE(Claim(g).claimed) << Claim(g).reason;
}

TEST(CudaClaims, GroupQueryAttentionDeclinesWhatItDoesNotImplement) {
  const std::vector<std::pair<Attribute, std::string>> cases = {
      {FloatAttribute("softcap", 30.0f), "softcap"},
      {IntAttribute("local_window_size", 16), "local_window_size"},
      {IntAttribute("smooth_softmax", 1), "smooth_softmax"},
      {IntAttribute("causal", 0), "causal"},
      {StringAttribute("k_quant_type", "PER_TENSOR"), "k_quant_type"},
  };
  for (const auto& [attribute, reason] : cases) {
    const auto result = Claim(DecoderAttention({attribute}));
    EXPECT_FALSE(result.claimed) << reason;
    EXPECT_THAT(result.reason, HasSubstr(reason));
  }
}

TEST(CudaClaims, GroupQueryAttentionInEveryFloatType) {
  for (DataType dtype : {DataType::kFloat16, DataType::kBfloat16}) {
    auto g = DecoderAttention();
    for (size_t i : {0, 1, 2, 3, 4, 7, 8}) Input(g, i).dtype = dtype;
    EXPECT_TRUE(Claim(g).claimed) << Claim(g).reason;
  }
}

TEST(CudaClaims, GroupQueryAttentionNeedsOneFloatType) {
  auto g = DecoderAttention();
  Input(g, 3).dtype = DataType::kFloat16;
  const auto result = Claim(g);
  EXPECT_FALSE(result.claimed);
  EXPECT_THAT(result.reason, HasSubstr("one float type"));
}

TEST(CudaClaims, GroupQueryAttentionNeedsInt32Lengths) {
  auto g = DecoderAttention();
  Input(g, 5).dtype = DataType::kInt64;
  const auto result = Claim(g);
  EXPECT_FALSE(result.claimed);
  EXPECT_THAT(result.reason, HasSubstr("int32"));
}

TEST(CudaClaims, GroupQueryAttentionWithoutPresentOutputsIsDeclined) {
  auto g = DecoderAttention();
  g.graph->nodes[g.node.index].outputs.resize(1);
  const auto result = Claim(g);
  EXPECT_FALSE(result.claimed);
  EXPECT_THAT(result.reason, HasSubstr("present_key"));
}

TEST(CudaClaims, OtherMicrosoftOpsAreDeclinedByName) {
  auto g = MakeSingleNodeGraph("DecoderMaskedMultiHeadAttention", {{1, 4, 32}}, {1, 4, 32});
  g.graph->nodes[g.node.index].domain = "com.microsoft";
  const auto result = Claim(g);
  EXPECT_FALSE(result.claimed);
  EXPECT_THAT(result.reason,
              HasSubstr("com.microsoft DecoderMaskedMultiHeadAttention has no CUDA kernel"));
}

// Drops input `index` of the node, as an omitted optional input.
void Omit(SingleNodeGraph& g, size_t index) {
  g.graph->nodes[g.node.index].inputs[index] = std::nullopt;
}

// RotaryEmbedding-23 on [batch 1, 4 heads, 8 tokens, head 16] with caches
// [32, 8] and int64 position_ids.
SingleNodeGraph Rotary(std::vector<Attribute> attributes = {}) {
  auto g = MakeSingleNodeGraph("RotaryEmbedding", {{1, 4, 8, 16}, {32, 8}, {32, 8}, {1, 8}},
                               {1, 4, 8, 16}, std::move(attributes));
  Input(g, 3).dtype = DataType::kInt64;
  return g;
}

// com.microsoft RotaryEmbedding on [batch 1, 8 tokens, 4 * 16].
SingleNodeGraph MicrosoftRotary(std::vector<Attribute> attributes = {}) {
  auto g = MakeSingleNodeGraph("RotaryEmbedding", {{1, 8, 64}, {1, 8}, {32, 8}, {32, 8}},
                               {1, 8, 64}, std::move(attributes));
  g.graph->nodes[g.node.index].domain = "com.microsoft";
  Input(g, 1).dtype = DataType::kInt64;
  return g;
}

TEST(CudaClaims, RotaryEmbeddingOfBothDomainsIsClaimed) {
  EXPECT_TRUE(Claim(Rotary(), 23).claimed) << Claim(Rotary(), 23).reason;
  auto rank3 = MakeSingleNodeGraph("RotaryEmbedding", {{1, 8, 64}, {1, 8, 8}, {1, 8, 8}},
                                   {1, 8, 64}, {IntAttribute("num_heads", 4)});
  EXPECT_TRUE(Claim(rank3, 23).claimed) << Claim(rank3, 23).reason;
  auto half = Rotary();
  for (size_t i : {0, 1, 2}) Input(half, i).dtype = DataType::kFloat16;
  EXPECT_TRUE(Claim(half, 23).claimed) << Claim(half, 23).reason;
  EXPECT_TRUE(Claim(MicrosoftRotary(), 23).claimed) << Claim(MicrosoftRotary(), 23).reason;
}

TEST(CudaClaims, RotaryEmbeddingDeclinesWhatItDoesNotImplement) {
  const auto declined = [](const SingleNodeGraph& g, int64_t opset, const std::string& reason) {
    const auto result = Claim(g, opset);
    EXPECT_FALSE(result.claimed) << reason;
    EXPECT_THAT(result.reason, HasSubstr(reason));
  };
  declined(Rotary(), 22, "opset 23");
  auto no_heads =
      MakeSingleNodeGraph("RotaryEmbedding", {{1, 8, 64}, {1, 8, 8}, {1, 8, 8}}, {1, 8, 64});
  declined(no_heads, 23, "num_heads");
  auto int32_positions = Rotary();
  Input(int32_positions, 3).dtype = DataType::kInt32;
  declined(int32_positions, 23, "int64");
  auto mixed = Rotary();
  Input(mixed, 1).dtype = DataType::kFloat16;
  declined(mixed, 23, "differ in type");
  auto rank2 = MakeSingleNodeGraph("RotaryEmbedding", {{8, 64}, {8, 32}, {8, 32}}, {8, 64});
  declined(rank2, 23, "rank 3 or 4");
  auto no_positions = MicrosoftRotary();
  Omit(no_positions, 1);
  declined(no_positions, 23, "position_ids");
  declined(MicrosoftRotary({IntAttribute("is_packed_batching", 1)}), 23, "is_packed_batching");
  declined(MicrosoftRotary({FloatAttribute("scale", 0.5f)}), 23, "scale");
}

// Attention-23 on rank-4 Q [1, 8, 4, 32] with 2 KV heads, a float mask, a
// past of 6 rows and both present outputs.
SingleNodeGraph OnnxAttention(std::vector<Attribute> attributes = {}) {
  auto g = MakeSingleNodeGraph(
      "Attention",
      {{1, 8, 4, 32}, {1, 2, 4, 32}, {1, 2, 4, 32}, {1, 1, 4, 10}, {1, 2, 6, 32}, {1, 2, 6, 32}},
      {1, 8, 4, 32}, std::move(attributes));
  for (const char* name : {"present_key", "present_value"}) {
    nxrt::graph::Value present;
    present.name = name;
    present.dtype = DataType::kFloat32;
    const auto id = g.graph->AddValue(std::move(present));
    g.graph->nodes[g.node.index].outputs.push_back(id);
  }
  return g;
}

TEST(CudaClaims, AttentionIsClaimedInItsForms) {
  EXPECT_TRUE(Claim(OnnxAttention(), 23).claimed) << Claim(OnnxAttention(), 23).reason;
  EXPECT_TRUE(Claim(OnnxAttention(), 24).claimed) << Claim(OnnxAttention(), 24).reason;
  auto bool_mask = OnnxAttention({IntAttribute("is_causal", 1), FloatAttribute("softcap", 30)});
  Input(bool_mask, 3).dtype = DataType::kBool;
  EXPECT_TRUE(Claim(bool_mask, 23).claimed) << Claim(bool_mask, 23).reason;
  auto half = OnnxAttention();
  for (size_t i : {0, 1, 2, 3, 4, 5}) Input(half, i).dtype = DataType::kBfloat16;
  EXPECT_TRUE(Claim(half, 23).claimed) << Claim(half, 23).reason;
  auto rank3 =
      MakeSingleNodeGraph("Attention", {{1, 4, 256}, {1, 4, 64}, {1, 4, 64}}, {1, 4, 256},
                          {IntAttribute("q_num_heads", 8), IntAttribute("kv_num_heads", 2)});
  EXPECT_TRUE(Claim(rank3, 23).claimed) << Claim(rank3, 23).reason;
}

TEST(CudaClaims, AttentionDeclinesWhatItDoesNotImplement) {
  const auto declined = [](const SingleNodeGraph& g, int64_t opset, const std::string& reason) {
    const auto result = Claim(g, opset);
    EXPECT_FALSE(result.claimed) << reason;
    EXPECT_THAT(result.reason, HasSubstr(reason));
  };
  declined(OnnxAttention(), 22, "opsets 23 and 24");
  declined(OnnxAttention(), 25, "opsets 23 and 24");
  declined(OnnxAttention({IntAttribute("qk_matmul_output_mode", 4)}), 23, "qk_matmul_output_mode");
  declined(OnnxAttention({IntAttribute("left_window_size", 8)}), 23, "left_window_size");
  auto qk_output = OnnxAttention();
  nxrt::graph::Value qk;
  qk.name = "qk";
  qk.dtype = DataType::kFloat32;
  const auto qk_id = qk_output.graph->AddValue(std::move(qk));
  qk_output.graph->nodes[qk_output.node.index].outputs.push_back(qk_id);
  declined(qk_output, 23, "qk_matmul_output");
  auto int_mask = OnnxAttention();
  Input(int_mask, 3).dtype = DataType::kInt64;
  declined(int_mask, 23, "attn_mask");
  auto lone_past = OnnxAttention();
  Omit(lone_past, 5);
  declined(lone_past, 23, "together");
  auto mixed = OnnxAttention();
  Input(mixed, 4).dtype = DataType::kFloat16;
  declined(mixed, 23, "differ in type");
  auto nonpad = MakeSingleNodeGraph(
      "Attention", {{1, 8, 4, 32}, {1, 2, 4, 32}, {1, 2, 4, 32}, {1}, {1}, {1}, {1}},
      {1, 8, 4, 32});
  for (size_t i : {3, 4, 5}) Omit(nonpad, i);
  Input(nonpad, 6).dtype = DataType::kInt64;
  declined(nonpad, 24, "nonpad_kv_seqlen");
  auto groups = MakeSingleNodeGraph("Attention", {{1, 6, 4, 32}, {1, 4, 4, 32}, {1, 4, 4, 32}},
                                    {1, 6, 4, 32});
  declined(groups, 23, "multiple");
  auto no_heads =
      MakeSingleNodeGraph("Attention", {{1, 4, 256}, {1, 4, 64}, {1, 4, 64}}, {1, 4, 256});
  declined(no_heads, 23, "q_num_heads");
  auto wide = MakeSingleNodeGraph("Attention", {{1, 2, 4, 512}, {1, 2, 4, 512}, {1, 2, 4, 512}},
                                  {1, 2, 4, 512});
  declined(wide, 23, "head size");
}

// A node output after the first, as a model naming it would have.
void AddOutput(SingleNodeGraph& g, const std::string& name) {
  nxrt::graph::Value value;
  value.name = name;
  value.dtype = DataType::kFloat32;
  g.graph->nodes[g.node.index].outputs.push_back(g.graph->AddValue(std::move(value)));
}

SingleNodeGraph ConvGraph(std::vector<nxrt_test::TestDim> x, std::vector<nxrt_test::TestDim> w,
                          std::vector<Attribute> attributes = {}) {
  return MakeSingleNodeGraph("Conv", {std::move(x), std::move(w)}, {}, std::move(attributes));
}

TEST(CudaClaims, ConvIn1dAnd2dFloat32AndFloat16) {
  EXPECT_TRUE(Claim(ConvGraph({1, 3, 8, 8}, {4, 3, 3, 3}), 11).claimed);
  EXPECT_TRUE(Claim(ConvGraph({1, 3, 8}, {4, 3, 3}), 1).claimed);
  auto with_bias =
      MakeSingleNodeGraph("Conv", {{1, 4, 8, 8}, {4, 2, 3, 3}, {4}}, {},
                          {IntAttribute("group", 2), StringAttribute("auto_pad", "SAME_UPPER")});
  EXPECT_TRUE(Claim(with_bias).claimed) << Claim(with_bias).reason;
  auto half = ConvGraph({"n", 3, "h", "w"}, {4, 3, 3, 3});
  for (size_t i = 0; i < 2; ++i) Input(half, i).dtype = DataType::kFloat16;
  EXPECT_TRUE(Claim(half).claimed) << Claim(half).reason;
}

TEST(CudaClaims, ConvDeclinesWhatCudnnDoesNotRunHere) {
  auto bf16 = ConvGraph({1, 3, 8, 8}, {4, 3, 3, 3});
  for (size_t i = 0; i < 2; ++i) Input(bf16, i).dtype = DataType::kBfloat16;
  EXPECT_THAT(Claim(bf16).reason, HasSubstr("bfloat16"));
  auto doubles = ConvGraph({1, 3, 8, 8}, {4, 3, 3, 3});
  for (size_t i = 0; i < 2; ++i) Input(doubles, i).dtype = DataType::kFloat64;
  EXPECT_THAT(Claim(doubles).reason, HasSubstr("float64"));
  EXPECT_THAT(Claim(ConvGraph({1, 3, 4, 4, 4}, {2, 3, 1, 1, 1})).reason,
              HasSubstr("3 spatial axes"));
  EXPECT_THAT(Claim(ConvGraph({1, 3}, {2, 3})).reason, HasSubstr("spatial axes"));
  EXPECT_THAT(Claim(ConvGraph({1, 3, 8, 8}, {4, 3, 3})).reason, HasSubstr("weights of rank 3"));
  auto mixed = ConvGraph({1, 3, 8, 8}, {4, 3, 3, 3});
  Input(mixed, 1).dtype = DataType::kFloat16;
  EXPECT_THAT(Claim(mixed).reason, HasSubstr("differ in type"));
  EXPECT_THAT(
      Claim(ConvGraph({1, 3, 8, 8}, {4, 3, 3, 3}, {StringAttribute("auto_pad", "SAME_MIDDLE")}))
          .reason,
      HasSubstr("auto_pad='SAME_MIDDLE'"));
}

SingleNodeGraph PoolGraph(const std::string& op, std::vector<nxrt_test::TestDim> x,
                          std::vector<Attribute> attributes) {
  return MakeSingleNodeGraph(op, {std::move(x)}, {}, std::move(attributes));
}

TEST(CudaClaims, MaxPoolWithPadsAndCeilModeButNoIndices) {
  const Attribute kernel = IntsAttribute("kernel_shape", {3, 3});
  EXPECT_TRUE(Claim(PoolGraph("MaxPool", {1, 2, 9, 9},
                              {kernel, IntsAttribute("pads", {0, 1, 1, 0}),
                               IntAttribute("ceil_mode", 1), IntsAttribute("strides", {2, 2})}),
                    12)
                  .claimed);
  EXPECT_TRUE(
      Claim(PoolGraph("MaxPool", {1, 2, 9}, {IntsAttribute("kernel_shape", {2})}), 12).claimed);
  auto indices = PoolGraph("MaxPool", {1, 2, 9, 9}, {kernel});
  AddOutput(indices, "indices");
  EXPECT_THAT(Claim(indices, 12).reason, HasSubstr("Indices"));
  EXPECT_THAT(
      Claim(PoolGraph("MaxPool", {1, 2, 9, 9}, {kernel, IntsAttribute("dilations", {2, 2})}), 12)
          .reason,
      HasSubstr("dilations"));
  EXPECT_THAT(Claim(PoolGraph("MaxPool", {1, 2, 9, 9}, {}), 12).reason, HasSubstr("kernel_shape"));
  auto bf16 = PoolGraph("MaxPool", {1, 2, 9, 9}, {kernel});
  Input(bf16, 0).dtype = DataType::kBfloat16;
  EXPECT_THAT(Claim(bf16, 12).reason, HasSubstr("bfloat16"));
}

TEST(CudaClaims, AveragePoolOnlyWhereCudnnCountsAsOnnxDoes) {
  const Attribute kernel = IntsAttribute("kernel_shape", {2, 2});
  const Attribute include = IntAttribute("count_include_pad", 1);
  const Attribute one_sided = IntsAttribute("pads", {0, 0, 1, 1});
  EXPECT_TRUE(Claim(PoolGraph("AveragePool", {1, 2, 5, 5}, {kernel, one_sided, include})).claimed);
  EXPECT_THAT(Claim(PoolGraph("AveragePool", {1, 2, 5, 5}, {kernel, one_sided})).reason,
              HasSubstr("count_include_pad=0"));
  EXPECT_TRUE(
      Claim(PoolGraph("AveragePool", {1, 2, 5, 5}, {kernel, IntsAttribute("pads", {1, 1, 1, 1})}))
          .claimed);
  // 6 wide, window 3: SAME pads one position at each end.
  EXPECT_TRUE(Claim(PoolGraph("AveragePool", {1, 2, 6, 6},
                              {IntsAttribute("kernel_shape", {3, 3}),
                               StringAttribute("auto_pad", "SAME_UPPER")}))
                  .claimed);
  EXPECT_THAT(Claim(PoolGraph("AveragePool", {1, 2, "h", "w"},
                              {kernel, StringAttribute("auto_pad", "SAME_UPPER")}))
                  .reason,
              HasSubstr("may differ"));
  // 5 wide, window 2, stride 2, ceil_mode: the third window starts at the last column.
  const std::vector<Attribute> ceil = {kernel, IntsAttribute("strides", {2, 2}),
                                       IntAttribute("ceil_mode", 1), include};
  EXPECT_THAT(Claim(PoolGraph("AveragePool", {1, 2, 5, 5}, ceil)).reason,
              HasSubstr("past the pads"));
  EXPECT_TRUE(Claim(PoolGraph("AveragePool", {1, 2, 6, 6}, ceil)).claimed);
  EXPECT_THAT(Claim(PoolGraph("AveragePool", {1, 2, "h", "w"}, ceil)).reason,
              HasSubstr("symbolic"));
  EXPECT_TRUE(Claim(PoolGraph("AveragePool", {1, 2, "h", "w"}, {kernel, include})).claimed);
}

TEST(CudaClaims, GlobalPoolsOverAnySpatialRank) {
  for (const char* op : {"GlobalAveragePool", "GlobalMaxPool"}) {
    EXPECT_TRUE(Claim(PoolGraph(op, {1, 8, 4, 4}, {})).claimed);
    EXPECT_TRUE(Claim(PoolGraph(op, {2, 8, 3, 4, 5}, {})).claimed);
    EXPECT_THAT(Claim(PoolGraph(op, {2, 8}, {})).reason, HasSubstr("spatial axes"));
  }
}

SingleNodeGraph BatchNormGraph(std::vector<nxrt_test::TestDim> x,
                               std::vector<Attribute> attributes = {}) {
  return MakeSingleNodeGraph("BatchNormalization", {std::move(x), {4}, {4}, {4}, {4}}, {},
                             std::move(attributes));
}

TEST(CudaClaims, BatchNormalizationAtInferenceOnly) {
  EXPECT_TRUE(Claim(BatchNormGraph({2, 4, 5, 5}), 15).claimed);
  EXPECT_TRUE(Claim(BatchNormGraph({2, 4}), 9).claimed);
  auto half = BatchNormGraph({2, 4, 5, 5});
  Input(half, 0).dtype = DataType::kFloat16;
  EXPECT_TRUE(Claim(half, 15).claimed) << Claim(half, 15).reason;
  for (size_t i = 1; i < 5; ++i) Input(half, i).dtype = DataType::kBfloat16;
  EXPECT_THAT(Claim(half, 15).reason, HasSubstr("X's type or float32"));
  auto mixed = BatchNormGraph({2, 4, 5, 5});
  Input(mixed, 4).dtype = DataType::kFloat16;
  EXPECT_THAT(Claim(mixed, 15).reason, HasSubstr("differ in type"));

  EXPECT_THAT(Claim(BatchNormGraph({2, 4, 5, 5}, {IntAttribute("training_mode", 1)}), 15).reason,
              HasSubstr("training mode"));
  EXPECT_THAT(Claim(BatchNormGraph({2, 4, 5, 5}, {IntAttribute("is_test", 0)}), 6).reason,
              HasSubstr("training mode"));
  EXPECT_TRUE(Claim(BatchNormGraph({2, 4, 5, 5}, {IntAttribute("is_test", 1)}), 6).claimed);
  auto running = BatchNormGraph({2, 4, 5, 5});
  AddOutput(running, "running_mean");
  EXPECT_THAT(Claim(running, 9).reason, HasSubstr("outputs 1 and up"));
  EXPECT_THAT(Claim(BatchNormGraph({2, 4, 5, 5}, {IntAttribute("spatial", 0)}), 7).reason,
              HasSubstr("spatial=0"));
  EXPECT_THAT(Claim(BatchNormGraph({4}), 15).reason, HasSubstr("N and C"));
}

TEST(CudaClaims, ListsTheOpsItHasRulesFor) {
  const auto ops = nxrt::cuda::CudaOpTypes();
  EXPECT_THAT(ops, ::testing::Contains("MatMul"));
  EXPECT_THAT(ops, ::testing::Contains("Softmax"));
  EXPECT_THAT(ops, ::testing::Contains("Conv"));
  EXPECT_THAT(ops, ::testing::Not(::testing::Contains("LSTM")));
}

}  // namespace
