// The sampling ops, checked by what their draws must satisfy: bounds, the
// moments of 20,000 draws (each within five standard errors), certain
// outcomes at probability 0 and 1, the class a dominant logit takes, the
// output's shape and dtype; and by how they are seeded: a node's own seed or
// the EP's `seed` gives the same draws in every session, and each run of a
// session draws afresh.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "tensor_node_session.hpp"

namespace nxrt_test {
namespace {

using nxrt::graph::DataType;

constexpr int64_t kDraws = 20000;

std::vector<double> AsDoubles(const nxrt::Tensor& t) {
  std::vector<double> values;
  if (t.dtype() == DataType::kFloat32) {
    for (float v : t.values<float>()) values.push_back(v);
  } else if (t.dtype() == DataType::kFloat64) {
    for (double v : t.values<double>()) values.push_back(v);
  } else if (t.dtype() == DataType::kInt64) {
    for (int64_t v : t.values<int64_t>()) values.push_back(static_cast<double>(v));
  } else if (t.dtype() == DataType::kInt32) {
    for (int32_t v : t.values<int32_t>()) values.push_back(v);
  } else if (t.dtype() == DataType::kBool) {
    for (bool v : t.values<bool>()) values.push_back(v ? 1.0 : 0.0);
  } else {
    ADD_FAILURE() << "no reader for this dtype";
  }
  return values;
}

double Mean(const std::vector<double>& v) {
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

double Variance(const std::vector<double>& v) {
  const double mean = Mean(v);
  double sum = 0;
  for (double x : v) sum += (x - mean) * (x - mean);
  return sum / static_cast<double>(v.size() - 1);
}

nxrt::Tensor RunOne(TensorNode node) {
  auto outputs = RunTensorNode(std::move(node));
  EXPECT_TRUE(outputs.ok()) << outputs.status().ToString();
  return outputs.ok() ? std::move((*outputs)[0]) : nxrt::Tensor();
}

TEST(CpuEpRandom, UniformDrawsFillTheRangeEvenly) {
  const nxrt::Tensor y =
      RunOne({.op = "RandomUniform",
              .opset = 22,
              .outputs = {DataType::kFloat64},
              .attributes = {IntsAttribute("shape", {100, kDraws / 100}), IntAttribute("dtype", 11),
                             FloatAttribute("low", -2.0f), FloatAttribute("high", 6.0f)}});
  ASSERT_EQ(y.shape(), (std::vector<int64_t>{100, kDraws / 100}));
  ASSERT_EQ(y.dtype(), DataType::kFloat64);
  const std::vector<double> v = AsDoubles(y);
  for (double x : v) ASSERT_TRUE(x >= -2.0 && x < 6.0) << x;
  // Uniform on [-2, 6): mean 2, variance 64 / 12.
  const double standard_error = std::sqrt(64.0 / 12.0 / kDraws);
  EXPECT_NEAR(Mean(v), 2.0, 5 * standard_error);
  EXPECT_NEAR(Variance(v), 64.0 / 12.0, 0.05 * 64.0 / 12.0);
}

TEST(CpuEpRandom, NormalDrawsHaveTheMeanAndScale) {
  const nxrt::Tensor y =
      RunOne({.op = "RandomNormal",
              .opset = 22,
              .outputs = {DataType::kFloat32},
              .attributes = {IntsAttribute("shape", {kDraws}), FloatAttribute("mean", 3.0f),
                             FloatAttribute("scale", 0.5f)}});
  ASSERT_EQ(y.dtype(), DataType::kFloat32);
  const std::vector<double> v = AsDoubles(y);
  EXPECT_NEAR(Mean(v), 3.0, 5 * 0.5 / std::sqrt(double(kDraws)));
  EXPECT_NEAR(std::sqrt(Variance(v)), 0.5, 0.025);
}

TEST(CpuEpRandom, LikeFormsTakeTheInputsShapeAndTheirOwnDtype) {
  const nxrt::Tensor like = Values<float>({2, 3}, {0, 0, 0, 0, 0, 0});
  const nxrt::Tensor same = RunOne({.op = "RandomUniformLike",
                                    .opset = 22,
                                    .inputs = {{"x", like}},
                                    .outputs = {DataType::kFloat32}});
  EXPECT_EQ(same.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(same.dtype(), DataType::kFloat32);
  const nxrt::Tensor wide = RunOne({.op = "RandomNormalLike",
                                    .opset = 22,
                                    .inputs = {{"x", like}},
                                    .outputs = {DataType::kFloat64},
                                    .attributes = {IntAttribute("dtype", 11)}});
  EXPECT_EQ(wide.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(wide.dtype(), DataType::kFloat64);
}

TEST(CpuEpRandom, BernoulliFollowsEachProbability) {
  std::vector<float> p(kDraws);
  for (int64_t i = 0; i < kDraws; ++i) p[i] = i % 4 == 0 ? 0.0f : i % 4 == 1 ? 1.0f : 0.3f;
  const nxrt::Tensor y = RunOne({.op = "Bernoulli",
                                 .opset = 15,
                                 .inputs = {{"p", Values<float>({kDraws}, p)}},
                                 .outputs = {DataType::kBool},
                                 .attributes = {IntAttribute("dtype", 9)}});
  ASSERT_EQ(y.dtype(), DataType::kBool);
  const std::vector<double> v = AsDoubles(y);
  std::vector<double> at_03;
  for (int64_t i = 0; i < kDraws; ++i) {
    if (i % 4 >= 2) {
      at_03.push_back(v[i]);
    } else {
      ASSERT_EQ(v[i], i % 4 == 0 ? 0.0 : 1.0) << i;
    }
  }
  EXPECT_NEAR(Mean(at_03), 0.3, 5 * std::sqrt(0.3 * 0.7 / static_cast<double>(at_03.size())));
}

TEST(CpuEpRandom, MultinomialDrawsClassesByTheirSoftmax) {
  // Row 0: class 2 dominates; row 1: classes 0 and 1 equally likely, 3 never.
  const float never = -1e30f;
  const nxrt::Tensor y =
      RunOne({.op = "Multinomial",
              .opset = 7,
              .inputs = {{"logits", Values<float>({2, 4}, {0, 0, 60, 0, 1, 1, never, never})}},
              .outputs = {DataType::kInt64},
              .attributes = {IntAttribute("sample_size", kDraws / 2), IntAttribute("dtype", 7)}});
  ASSERT_EQ(y.shape(), (std::vector<int64_t>{2, kDraws / 2}));
  const std::vector<double> v = AsDoubles(y);
  std::vector<double> second_row(v.begin() + kDraws / 2, v.end());
  for (int64_t i = 0; i < kDraws / 2; ++i) ASSERT_EQ(v[i], 2.0) << i;
  for (double c : second_row) ASSERT_TRUE(c == 0.0 || c == 1.0) << c;
  EXPECT_NEAR(Mean(second_row), 0.5, 5 * std::sqrt(0.25 / (kDraws / 2)));
}

TensorNode SeedlessUniform(std::vector<std::pair<std::string, std::string>> cpu_options = {}) {
  return {.op = "RandomUniform",
          .opset = 22,
          .outputs = {DataType::kFloat32},
          .attributes = {IntsAttribute("shape", {64})},
          .cpu_options = std::move(cpu_options)};
}

TEST(CpuEpRandom, ANodesSeedOrTheEpsSeedRepeatsTheDrawsAcrossSessions) {
  TensorNode own_seed = SeedlessUniform();
  own_seed.attributes.push_back(FloatAttribute("seed", 7.0f));
  EXPECT_EQ(AsDoubles(RunOne(own_seed)), AsDoubles(RunOne(own_seed)));

  const auto ep_seeded = [](const char* seed) { return SeedlessUniform({{"seed", seed}}); };
  EXPECT_EQ(AsDoubles(RunOne(ep_seeded("11"))), AsDoubles(RunOne(ep_seeded("11"))));
  EXPECT_NE(AsDoubles(RunOne(ep_seeded("11"))), AsDoubles(RunOne(ep_seeded("12"))));
  // Without either, every session draws its own.
  EXPECT_NE(AsDoubles(RunOne(SeedlessUniform())), AsDoubles(RunOne(SeedlessUniform())));
}

TEST(CpuEpRandom, EachRunDrawsAfresh) {
  auto made = MakeTensorNodeSession(SeedlessUniform({{"seed", "3"}}));
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  auto first = made->session->Run(made->inputs);
  auto second = made->session->Run(made->inputs);
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_NE(AsDoubles((*first)[0]), AsDoubles((*second)[0]));
}

TEST(CpuEpRandom, DeclinesAnEmptyRangeAndDrawsTheMeanAtScaleZero) {
  auto reversed =
      RunTensorNode({.op = "RandomUniform",
                     .opset = 22,
                     .outputs = {DataType::kFloat32},
                     .attributes = {IntsAttribute("shape", {4}), FloatAttribute("low", 2.0f),
                                    FloatAttribute("high", 1.0f)}});
  ASSERT_FALSE(reversed.ok());
  EXPECT_NE(reversed.status().message().find("give low <= high"), std::string::npos)
      << reversed.status().ToString();
  const nxrt::Tensor mean =
      RunOne({.op = "RandomNormal",
              .opset = 22,
              .outputs = {DataType::kFloat32},
              .attributes = {IntsAttribute("shape", {4}), FloatAttribute("mean", 1.5f),
                             FloatAttribute("scale", 0.0f)}});
  EXPECT_EQ(AsDoubles(mean), (std::vector<double>{1.5, 1.5, 1.5, 1.5}));
}

TEST(CpuEpRandom, ANegativeSeedIsASeedToo) {
  TensorNode seeded = SeedlessUniform();
  seeded.attributes.push_back(FloatAttribute("seed", -3.5f));
  EXPECT_EQ(AsDoubles(RunOne(seeded)), AsDoubles(RunOne(seeded)));
}

TEST(CpuEpRandom, RefusesABadSeedOption) {
  auto made = MakeTensorNodeSession(SeedlessUniform({{"seed", "-1"}}));
  ASSERT_FALSE(made.ok());
  EXPECT_NE(made.status().message().find("seed=-1"), std::string::npos) << made.status().ToString();
}

}  // namespace
}  // namespace nxrt_test
