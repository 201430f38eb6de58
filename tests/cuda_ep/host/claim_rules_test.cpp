#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "claim_rules.hpp"
#include "nxrt_test/single_node_graph.hpp"
#include "plugin_host/host_api.hpp"

namespace {

using nxrt::graph::Attribute;
using nxrt::graph::AttributeType;
using nxrt::graph::DataType;
using nxrt_test::MakeSingleNodeGraph;
using nxrt_test::SingleNodeGraph;
using ::testing::HasSubstr;

Attribute IntAttribute(const std::string& name, int64_t value) {
  Attribute a;
  a.name = name;
  a.type = AttributeType::kInt;
  a.i = value;
  return a;
}

Attribute IntsAttribute(const std::string& name, std::vector<int64_t> values) {
  Attribute a;
  a.name = name;
  a.type = AttributeType::kInts;
  a.ints = std::move(values);
  return a;
}

Attribute StringAttribute(const std::string& name, const std::string& value) {
  Attribute a;
  a.name = name;
  a.type = AttributeType::kString;
  a.s = value;
  return a;
}

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

TEST(CudaClaims, IntegerArithmeticIsLeftToTheHost) {
  auto g = MakeSingleNodeGraph("Mul", {{4}, {4}}, {4});
  Input(g, 0).dtype = DataType::kInt64;
  Input(g, 1).dtype = DataType::kInt64;
  const auto result = Claim(g);
  EXPECT_FALSE(result.claimed);
  EXPECT_THAT(result.reason, HasSubstr("int64"));
}

TEST(CudaClaims, MixedOperandTypesAreDeclined) {
  auto g = MakeSingleNodeGraph("Pow", {{4}, {4}}, {4});
  Input(g, 1).dtype = DataType::kFloat16;
  const auto result = Claim(g);
  EXPECT_FALSE(result.claimed);
  EXPECT_THAT(result.reason, HasSubstr("differ in type"));
}

TEST(CudaClaims, OpsWithoutAKernelAreDeclinedByName) {
  const auto result =
      Claim(MakeSingleNodeGraph("Conv", {{1, 1, 4, 4}, {1, 1, 3, 3}}, {1, 1, 2, 2}));
  EXPECT_FALSE(result.claimed);
  EXPECT_THAT(result.reason, HasSubstr("Conv has no CUDA kernel"));
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
    Input(constant, i).initializer = nxrt::graph::WeightRef{static_cast<uint32_t>(i)};
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

Attribute FloatAttribute(const std::string& name, float value) {
  Attribute a;
  a.name = name;
  a.type = AttributeType::kFloat;
  a.f = value;
  return a;
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

TEST(CudaClaims, GroupQueryAttentionIsFloat32Only) {
  auto g = DecoderAttention();
  for (size_t i : {0, 1, 2, 3, 4, 7, 8}) Input(g, i).dtype = DataType::kFloat16;
  const auto result = Claim(g);
  EXPECT_FALSE(result.claimed);
  EXPECT_THAT(result.reason, HasSubstr("float32 only"));
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
  auto g = MakeSingleNodeGraph("RotaryEmbedding", {{1, 4, 32}}, {1, 4, 32});
  g.graph->nodes[g.node.index].domain = "com.microsoft";
  const auto result = Claim(g);
  EXPECT_FALSE(result.claimed);
  EXPECT_THAT(result.reason, HasSubstr("com.microsoft RotaryEmbedding has no CUDA kernel"));
}

TEST(CudaClaims, ListsTheOpsItHasRulesFor) {
  const auto ops = nxrt::cuda::CudaOpTypes();
  EXPECT_THAT(ops, ::testing::Contains("MatMul"));
  EXPECT_THAT(ops, ::testing::Contains("Softmax"));
  EXPECT_THAT(ops, ::testing::Not(::testing::Contains("Conv")));
}

}  // namespace
