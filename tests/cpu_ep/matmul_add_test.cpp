// MatMul, Add[, Relu or Gelu][, Add] chains that the host fuses into one
// pkg.nxrt MatMulAdd kernel on the CPU EP give the outputs of the same nodes
// run apart (graph rewrites off), for every way C and D reach the product (a
// constant bias row, a whole matrix, any other broadcast), each activation,
// a constant or a computed B, and shape variants of one session that take
// both the single-row (gemv) and the several-row (oneDNN) path. So does a
// Gemm and its Relu fused into com.microsoft FusedGemm, in float and double.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "ir_model_builder.hpp"

namespace nxrt_test {
namespace {

using nxrt::graph::DataType;
using nxrt::graph::ValueId;
using Dims = std::vector<std::variant<int64_t, std::string>>;

constexpr int64_t kK = 24;
constexpr int64_t kN = 20;

struct Chain {
  std::string label{};
  bool constant_b = true;
  std::optional<Dims> c{};   // nullopt: a constant bias row [N]
  bool c_first = false;      // Add(C, product) rather than Add(product, C)
  std::string activation{};  // "", "Relu", "Gelu" or "GeluTanh"
  std::optional<Dims> d{};   // nullopt: no second Add
  size_t fused_nodes = 0;    // the nodes the fusion takes after the MatMul
};

void PrintTo(const Chain& chain, std::ostream* os) {
  *os << chain.label;
}

std::vector<float> Random(size_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<float> values(count);
  for (float& v : values) v = normal(rng);
  return values;
}

nxrt::graph::Graph ChainModel(const Chain& chain) {
  IrModelBuilder model(21, "matmul_add_" + chain.label);
  const ValueId a = model.SymbolicInput("a", {"batch", "rows", kK});
  const ValueId b = chain.constant_b ? model.Floats("b", {kK, kN}, Random(kK * kN, 1))
                                     : model.SymbolicInput("b", {kK, kN});
  const ValueId c =
      chain.c ? model.SymbolicInput("c", *chain.c) : model.Floats("c", {kN}, Random(kN, 2));
  const ValueId product = model.Tensor("MatMul", {a, b}, "product");
  ValueId last = chain.c_first ? model.Tensor("Add", {c, product}, "biased")
                               : model.Tensor("Add", {product, c}, "biased");
  if (chain.activation == "Relu") {
    last = model.Tensor("Relu", {last}, "activated");
  } else if (!chain.activation.empty()) {
    std::vector<nxrt::graph::Attribute> attributes;
    if (chain.activation == "GeluTanh") {
      nxrt::graph::Attribute approximate;
      approximate.name = "approximate";
      approximate.type = nxrt::graph::AttributeType::kString;
      approximate.s = "tanh";
      attributes.push_back(approximate);
    }
    last = model.Tensor("Gelu", {last}, "activated", DataType::kFloat32, attributes);
  }
  if (chain.d) {
    const ValueId d = model.SymbolicInput("d", *chain.d);
    last = model.Tensor("Add", {last, d}, "y");
  }
  model.Output(last);
  return model.Take();
}

int64_t Extent(const std::variant<int64_t, std::string>& d, int64_t batch, int64_t rows) {
  if (std::holds_alternative<int64_t>(d)) return std::get<int64_t>(d);
  return std::get<std::string>(d) == "batch" ? batch : rows;
}

std::vector<float> RunChain(nxrt::Session& session, const Chain& chain, int64_t batch, int64_t rows,
                            uint32_t seed) {
  std::vector<std::vector<float>> buffers;
  std::vector<nxrt::NamedTensor> inputs;
  const auto add = [&](const std::string& name, std::vector<int64_t> dims) {
    size_t count = 1;
    for (int64_t d : dims) count *= static_cast<size_t>(d);
    buffers.push_back(Random(count, seed + static_cast<uint32_t>(buffers.size())));
    inputs.push_back({name, nxrt::Tensor::Borrow(DataType::kFloat32, std::move(dims),
                                                 buffers.back().data(), count * sizeof(float))});
  };
  const auto concrete = [&](const Dims& dims) {
    std::vector<int64_t> out;
    for (const auto& d : dims) out.push_back(Extent(d, batch, rows));
    return out;
  };
  buffers.reserve(4);
  add("a", {batch, rows, kK});
  if (!chain.constant_b) add("b", {kK, kN});
  if (chain.c) add("c", concrete(*chain.c));
  if (chain.d) add("d", concrete(*chain.d));
  auto outputs = session.Run(inputs, {});
  EXPECT_TRUE(outputs.ok()) << outputs.status().ToString();
  if (!outputs.ok()) return {};
  const auto values = (*outputs)[0].values<float>();
  EXPECT_EQ((*outputs)[0].shape(), (std::vector<int64_t>{batch, rows, kN}));
  return {values.begin(), values.end()};
}

class MatMulAddChain : public testing::TestWithParam<Chain> {};

TEST_P(MatMulAddChain, FusedGivesWhatTheNodesGiveApart) {
  const Chain& chain = GetParam();
  auto fused = CpuSessionOf(ChainModel(chain));
  auto apart = CpuSessionOf(ChainModel(chain), false);
  ASSERT_TRUE(fused && apart);
  ASSERT_EQ(fused->graph_rewrites().size(), 1u);
  EXPECT_NE(fused->graph_rewrites()[0].find("fused as pkg.nxrt::MatMulAdd on cpu#1"),
            std::string::npos)
      << fused->graph_rewrites()[0];
  size_t absorbed = 0;
  for (const nxrt::NodePlacement& placement : fused->placements()) {
    if (!placement.fused_into.empty()) ++absorbed;
  }
  EXPECT_EQ(absorbed, chain.fused_nodes);
  EXPECT_TRUE(apart->graph_rewrites().empty());

  // One row (gemv), several rows in one batch and across batches (oneDNN),
  // then one row again, all in the same session.
  const std::pair<int64_t, int64_t> variants[] = {{1, 1}, {2, 3}, {1, 4}, {1, 1}};
  uint32_t seed = 10;
  for (const auto& [batch, rows] : variants) {
    const std::vector<float> expected = RunChain(*apart, chain, batch, rows, seed);
    const std::vector<float> actual = RunChain(*fused, chain, batch, rows, seed);
    ASSERT_EQ(actual.size(), expected.size());
    for (size_t i = 0; i < actual.size(); ++i) {
      EXPECT_NEAR(actual[i], expected[i], 1e-4f * std::max(1.0f, std::abs(expected[i])))
          << "batch " << batch << " rows " << rows << " element " << i;
    }
    seed += 7;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Forms, MatMulAddChain,
    testing::Values(Chain{.label = "BiasRelu", .activation = "Relu", .fused_nodes = 2},
                    Chain{.label = "BiasGelu", .activation = "Gelu", .fused_nodes = 2},
                    Chain{
                        .label = "BiasResidual", .d = Dims{"batch", "rows", kN}, .fused_nodes = 2},
                    Chain{.label = "ComputedBWholeCGeluTanhRowD",
                          .constant_b = false,
                          .c = Dims{"batch", "rows", kN},
                          .activation = "GeluTanh",
                          .d = Dims{kN},
                          .fused_nodes = 3},
                    Chain{.label = "BroadcastCReluBroadcastD",
                          .c = Dims{"rows", 1},
                          .activation = "Relu",
                          .d = Dims{1},
                          .fused_nodes = 3},
                    Chain{.label = "WholeCWholeD",
                          .c = Dims{"batch", "rows", kN},
                          .d = Dims{"batch", "rows", kN},
                          .fused_nodes = 2},
                    Chain{.label = "BiasFirst", .c_first = true, .fused_nodes = 1}),
    [](const testing::TestParamInfo<Chain>& info) { return info.param.label; });

// x [M,K] -> Gemm(transB, alpha, beta, C a row) -> Relu, with B and C as
// inputs of `dtype`.
nxrt::graph::Graph GemmRelu(int64_t m, DataType dtype) {
  IrModelBuilder model(13, "gemm_relu");
  const ValueId x = model.Input("x", std::vector<int64_t>{m, kK}, dtype);
  const ValueId b = model.Input("b", std::vector<int64_t>{kN, kK}, dtype);
  const ValueId c = model.Input("c", std::vector<int64_t>{kN}, dtype);
  nxrt::graph::Attribute trans_b;
  trans_b.name = "transB";
  trans_b.type = nxrt::graph::AttributeType::kInt;
  trans_b.i = 1;
  nxrt::graph::Attribute alpha;
  alpha.name = "alpha";
  alpha.type = nxrt::graph::AttributeType::kFloat;
  alpha.f = 0.5f;
  const ValueId product = model.Tensor("Gemm", {x, b, c}, "product", dtype, {trans_b, alpha});
  model.Output(model.Tensor("Relu", {product}, "y", dtype));
  return model.Take();
}

template <typename T>
std::vector<T> RunGemmRelu(nxrt::Session& session, int64_t m, DataType dtype) {
  std::vector<std::vector<T>> buffers;
  std::vector<nxrt::NamedTensor> inputs;
  const std::pair<const char*, std::vector<int64_t>> shapes[] = {
      {"x", {m, kK}}, {"b", {kN, kK}}, {"c", {kN}}};
  buffers.reserve(3);
  for (const auto& [name, dims] : shapes) {
    const std::vector<float> values = Random(dims.size() == 1 ? dims[0] : dims[0] * dims[1],
                                             static_cast<uint32_t>(buffers.size() + 30));
    buffers.emplace_back(values.begin(), values.end());
    inputs.push_back({name, nxrt::Tensor::Borrow(dtype, dims, buffers.back().data(),
                                                 buffers.back().size() * sizeof(T))});
  }
  auto outputs = session.Run(inputs, {});
  EXPECT_TRUE(outputs.ok()) << outputs.status().ToString();
  if (!outputs.ok()) return {};
  const auto values = (*outputs)[0].values<T>();
  return {values.begin(), values.end()};
}

template <typename T>
void ExpectGemmReluFusesAndMatches(DataType dtype) {
  for (int64_t m : {1, 5}) {
    auto fused = CpuSessionOf(GemmRelu(m, dtype));
    auto apart = CpuSessionOf(GemmRelu(m, dtype), false);
    ASSERT_TRUE(fused && apart);
    EXPECT_EQ(fused->graph_rewrites(),
              (std::vector<std::string>{
                  "Gemm 'product' and Relu 'y' fused as com.microsoft::FusedGemm on cpu#1"}));
    const std::vector<T> expected = RunGemmRelu<T>(*apart, m, dtype);
    const std::vector<T> actual = RunGemmRelu<T>(*fused, m, dtype);
    ASSERT_EQ(actual.size(), expected.size());
    size_t zeros = 0;
    for (size_t i = 0; i < actual.size(); ++i) {
      EXPECT_NEAR(actual[i], expected[i], 1e-5 * std::max(1.0, std::abs(double(expected[i]))))
          << "M " << m << " element " << i;
      if (expected[i] == 0) ++zeros;
    }
    EXPECT_GT(zeros, 0u) << "the inputs should make the Relu clip some elements";
  }
}

TEST(FusedGemm, GemmAndReluRunAsOneKernelInFloatAndDouble) {
  ExpectGemmReluFusesAndMatches<float>(DataType::kFloat32);
  ExpectGemmReluFusesAndMatches<double>(DataType::kFloat64);
}

}  // namespace
}  // namespace nxrt_test
