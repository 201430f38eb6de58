// Pooling, normalisation and softmax ops on the ONNX node test cases;
// max pooling whose windows lie inside the image, SAME-padded windows far
// wider than the image (walked over the image only), LayerNormalization over
// trailing axes with and without a bias,
// GroupNormalization (per-group affine at opset 18, per-channel at 21),
// LpNormalization, BatchNormalization in training mode and float16 Softmax's
// intermediate rounding against references computed here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>

#include "node_case_runner.hpp"
#include "single_node_session.hpp"

namespace nxrt_test {
namespace {

using nxrt::graph::DataType;

std::vector<float> Wave(size_t count, double step) {
  std::vector<float> x(count);
  for (size_t i = 0; i < count; ++i) x[i] = static_cast<float>(std::sin(step * i) * 3 + 0.1 * i);
  return x;
}

// x normalised over `runs` contiguous runs, then value * scale(run, index) +
// bias(run, index).
template <typename Affine>
std::vector<double> NormaliseRuns(const std::vector<float>& x, size_t runs, double epsilon,
                                  Affine affine) {
  const size_t size = x.size() / runs;
  std::vector<double> y(x.size());
  for (size_t r = 0; r < runs; ++r) {
    double mean = 0, var = 0;
    for (size_t i = 0; i < size; ++i) mean += x[r * size + i];
    mean /= size;
    for (size_t i = 0; i < size; ++i) var += (x[r * size + i] - mean) * (x[r * size + i] - mean);
    var /= size;
    for (size_t i = 0; i < size; ++i) {
      y[r * size + i] = affine(r, i, (x[r * size + i] - mean) / std::sqrt(var + epsilon));
    }
  }
  return y;
}

void ExpectClose(const std::vector<double>& actual, const std::vector<double>& expected,
                 const char* what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  for (size_t i = 0; i < actual.size(); ++i) {
    EXPECT_NEAR(actual[i], expected[i], 1e-4) << what << " at " << i;
  }
}

TEST(CpuEpPoolNorm, PoolingNodeCases) {
  ExpectFamilyPasses("pooling", {"MaxPool", "AveragePool", "LpPool", "GlobalMaxPool",
                                 "GlobalAveragePool", "GlobalLpPool"});
}

TEST(CpuEpPoolNorm, NormalizationNodeCases) {
  ExpectFamilyPasses("normalization",
                     {"BatchNormalization", "LayerNormalization", "InstanceNormalization",
                      "GroupNormalization", "MeanVarianceNormalization", "LpNormalization", "LRN"});
}

TEST(CpuEpPoolNorm, SoftmaxNodeCases) {
  ExpectFamilyPasses("softmax", {"Softmax", "LogSoftmax", "Hardmax"});
}

TEST(CpuEpPoolNorm, Float16SoftmaxRoundsEachStepOfItsDefinition) {
  // x = [0, 1] in float16. exp(-1) rounds to 1507 * 2^-12 = 0.367919921875,
  // the sum to 1401 * 2^-10 = 1.3681640625, their quotient to 1101 * 2^-12
  // (0x344D) and 1 / sum to 1497 * 2^-11 (0x39D9); rounding only the final
  // result would give 0x344E. log(sum) rounds to 1284 * 2^-12, so
  // LogSoftmax is -1.3134765625 (0xBD41) and -0.3134765625 (0xB504).
  const std::vector<std::pair<std::string, std::vector<uint16_t>>> cases{
      {"Softmax", {0x344D, 0x39D9}}, {"LogSoftmax", {0xBD41, 0xB504}}};
  for (const auto& [op, expected] : cases) {
    auto y = RunSingleNode(op, 13,
                           {Input("x", DataType::kFloat16, {2}, std::vector<uint16_t>{0, 0x3C00})},
                           {}, DataType::kFloat16);
    ASSERT_TRUE(y.has_value());
    std::vector<uint16_t> v(y->byte_size() / sizeof(uint16_t));
    std::memcpy(v.data(), y->data(), y->byte_size());
    EXPECT_EQ(v, expected) << op;
  }
}

TEST(CpuEpPoolNorm, GroupNormalizationAffinePerGroupThenPerChannel) {
  // X [2, 6, 2, 2] in 3 groups of 2 channels.
  const int64_t n = 2, c = 6, groups = 3, plane = 4;
  const std::vector<float> x = Wave(n * c * plane, 0.7);
  const std::vector<float> group_scale{0.5f, 2.0f, -1.0f}, group_bias{1.0f, 0.0f, -3.0f};
  const std::vector<float> scale{0.5f, 1.5f, 2.0f, -1.0f, 3.0f, 0.25f};
  const std::vector<float> bias{1.0f, -1.0f, 0.0f, 2.0f, -3.0f, 0.5f};
  const double epsilon = 1e-3;
  for (const int64_t opset : {18, 21}) {
    const bool per_channel = opset >= 21;
    const std::vector<float>& s = per_channel ? scale : group_scale;
    const std::vector<float>& b = per_channel ? bias : group_bias;
    const int64_t params = static_cast<int64_t>(s.size());
    auto y = RunSingleNode("GroupNormalization", opset,
                           {Input("x", DataType::kFloat32, {n, c, 2, 2}, x),
                            Input("scale", DataType::kFloat32, {params}, s),
                            Input("bias", DataType::kFloat32, {params}, b)},
                           {IntAttribute("num_groups", groups), FloatAttribute("epsilon", 1e-3f)},
                           DataType::kFloat32);
    ASSERT_TRUE(y.has_value());
    const auto expected =
        NormaliseRuns(x, n * groups, epsilon, [&](size_t run, size_t i, double v) {
          const size_t group = run % groups;
          const size_t at = per_channel ? group * (c / groups) + i / plane : group;
          return v * s[at] + b[at];
        });
    ExpectClose(ValuesAsDouble(*y), expected, per_channel ? "opset 21" : "opset 18");
  }
}

// A kernel far taller than the image, SAME_LOWER padded: each window covers
// every row and columns j-1 and j. Only the taps inside the image are
// visited; oneDNN would walk all 2^40 rows of each window.
TEST(CpuEpPoolNorm, MaxPoolWithAKernelTallerThanTheImageVisitsOnlyTheImage) {
  std::vector<float> x(9);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);  // x[r][c] = 3r + c
  auto y = RunSingleNode("MaxPool", 12, {Input("x", DataType::kFloat32, {1, 1, 3, 3}, x)},
                         {IntsAttribute("kernel_shape", {int64_t{1} << 40, 2}),
                          StringAttribute("auto_pad", "SAME_LOWER")},
                         DataType::kFloat32);
  ASSERT_TRUE(y.has_value());
  EXPECT_EQ(ValuesAsDouble(*y), (std::vector<double>{6, 7, 8, 6, 7, 8, 6, 7, 8}));
}

// MaxPool windows inside the image: tiling and overlapping, strides 1 and 2,
// widths the column pass specialises and one it does not, an image whose
// last columns and rows no window reaches, against the windows' maxima.
TEST(CpuEpPoolNorm, MaxPoolWindowsInsideTheImageMatchTheirMaxima) {
  struct Case {
    int64_t kh, kw, sh, sw, h, w;
  };
  const Case cases[] = {{2, 2, 2, 2, 8, 16}, {2, 2, 2, 2, 9, 11}, {3, 3, 2, 2, 9, 13},
                        {3, 3, 1, 1, 7, 10}, {2, 4, 1, 3, 6, 14}, {1, 2, 1, 2, 5, 8}};
  const int64_t planes = 6;
  for (const Case& c : cases) {
    const std::vector<int64_t> dims{2, planes / 2, c.h, c.w};
    const std::vector<float> x = Wave(static_cast<size_t>(planes * c.h * c.w), 0.91);
    auto y = RunSingleNode(
        "MaxPool", 12, {Input("x", DataType::kFloat32, dims, x)},
        {IntsAttribute("kernel_shape", {c.kh, c.kw}), IntsAttribute("strides", {c.sh, c.sw})},
        DataType::kFloat32);
    ASSERT_TRUE(y.has_value());
    const int64_t out_h = (c.h - c.kh) / c.sh + 1, out_w = (c.w - c.kw) / c.sw + 1;
    std::vector<double> expected;
    for (int64_t p = 0; p < planes; ++p) {
      for (int64_t oh = 0; oh < out_h; ++oh) {
        for (int64_t ow = 0; ow < out_w; ++ow) {
          float m = -INFINITY;
          for (int64_t i = 0; i < c.kh; ++i) {
            for (int64_t j = 0; j < c.kw; ++j) {
              m = std::max(m, x[(p * c.h + oh * c.sh + i) * c.w + ow * c.sw + j]);
            }
          }
          expected.push_back(m);
        }
      }
    }
    const std::string what = std::to_string(c.kh) + "x" + std::to_string(c.kw) + " stride " +
                             std::to_string(c.sh) + "x" + std::to_string(c.sw) + " on " +
                             std::to_string(c.h) + "x" + std::to_string(c.w);
    EXPECT_EQ(ValuesAsDouble(*y), expected) << what;
  }
}

// Padded MaxPool windows that each reach the image (the 3x3 stride-2 stems
// of CNNs, pads on one side or both, ceil mode's last window running past
// the image, images narrower than the inner windows' run) take the maxima
// of their taps inside the image.
TEST(CpuEpPoolNorm, PaddedMaxPoolWindowsMatchTheMaximaOfTheirTapsInside) {
  struct Case {
    int64_t k, s, pad_begin, pad_end, h, w;
    bool ceil;
  };
  const Case cases[] = {{3, 2, 1, 1, 16, 16, false}, {3, 2, 1, 1, 13, 17, false},
                        {3, 2, 1, 0, 9, 12, true},   {2, 2, 0, 1, 7, 9, false},
                        {3, 1, 1, 1, 5, 2, false},   {5, 3, 2, 2, 11, 3, true}};
  const int64_t planes = 4;
  for (const Case& c : cases) {
    const std::vector<int64_t> dims{1, planes, c.h, c.w};
    const std::vector<float> x = Wave(static_cast<size_t>(planes * c.h * c.w), 0.77);
    auto y = RunSingleNode(
        "MaxPool", 12, {Input("x", DataType::kFloat32, dims, x)},
        {IntsAttribute("kernel_shape", {c.k, c.k}), IntsAttribute("strides", {c.s, c.s}),
         IntsAttribute("pads", {c.pad_begin, c.pad_begin, c.pad_end, c.pad_end}),
         IntAttribute("ceil_mode", c.ceil ? 1 : 0)},
        DataType::kFloat32);
    ASSERT_TRUE(y.has_value());
    const auto out_extent = [&](int64_t in) {
      const int64_t span = in + c.pad_begin + c.pad_end - c.k;
      return (c.ceil ? (span + c.s - 1) / c.s : span / c.s) + 1;
    };
    const int64_t out_h = out_extent(c.h), out_w = out_extent(c.w);
    std::vector<double> expected;
    for (int64_t p = 0; p < planes; ++p) {
      for (int64_t oh = 0; oh < out_h; ++oh) {
        for (int64_t ow = 0; ow < out_w; ++ow) {
          float m = -INFINITY;
          for (int64_t i = 0; i < c.k; ++i) {
            for (int64_t j = 0; j < c.k; ++j) {
              const int64_t r = oh * c.s - c.pad_begin + i, q = ow * c.s - c.pad_begin + j;
              if (r >= 0 && r < c.h && q >= 0 && q < c.w)
                m = std::max(m, x[(p * c.h + r) * c.w + q]);
            }
          }
          expected.push_back(m);
        }
      }
    }
    const std::string what = std::to_string(c.k) + "x" + std::to_string(c.k) + " stride " +
                             std::to_string(c.s) + " pads " + std::to_string(c.pad_begin) + "," +
                             std::to_string(c.pad_end) + " on " + std::to_string(c.h) + "x" +
                             std::to_string(c.w) + (c.ceil ? " ceil" : "");
    EXPECT_EQ(ValuesAsDouble(*y), expected) << what;
  }
}

// A SAME-padded window 2^40 columns wide covers each whole row: its mean (of
// the row, or over every padded position with count_include_pad) and its
// maximum, in 2-D and in the general 3-D walk, without walking the window.
TEST(CpuEpPoolNorm, SamePaddedWindowsWiderThanTheImagePoolWholeRows) {
  const int64_t wide = int64_t{1} << 40;
  const std::vector<float> x = Wave(12, 0.7);  // 3 rows of 4
  for (const bool three_d : {false, true}) {
    const std::vector<int64_t> dims =
        three_d ? std::vector<int64_t>{1, 1, 1, 3, 4} : std::vector<int64_t>{1, 1, 3, 4};
    const std::vector<int64_t> kernel =
        three_d ? std::vector<int64_t>{1, 1, wide} : std::vector<int64_t>{1, wide};
    for (const char* op : {"AveragePool", "MaxPool"}) {
      for (const int64_t include_pad : {0, 1}) {
        std::vector<nxrt::graph::Attribute> attributes = {
            IntsAttribute("kernel_shape", kernel), StringAttribute("auto_pad", "SAME_UPPER")};
        if (std::string(op) == "AveragePool") {
          attributes.push_back(IntAttribute("count_include_pad", include_pad));
        }
        auto y = RunSingleNode(op, 19, {Input("x", DataType::kFloat32, dims, x)}, attributes,
                               DataType::kFloat32);
        ASSERT_TRUE(y.has_value()) << op;
        const std::vector<double> v = ValuesAsDouble(*y);
        ASSERT_EQ(v.size(), 12u);
        for (int64_t row = 0; row < 3; ++row) {
          double sum = 0, best = -INFINITY;
          for (int64_t col = 0; col < 4; ++col) {
            sum += x[row * 4 + col];
            best = std::max<double>(best, x[row * 4 + col]);
          }
          const double expected = std::string(op) == "MaxPool" ? best
                                  : include_pad != 0           ? sum / static_cast<double>(wide)
                                                               : sum / 4;
          for (int64_t col = 0; col < 4; ++col) {
            EXPECT_NEAR(v[row * 4 + col], expected, 1e-6 * (1 + std::abs(expected)))
                << op << (three_d ? " 3-D" : " 2-D") << " include_pad " << include_pad << " row "
                << row << " column " << col;
          }
        }
      }
    }
  }
}

TEST(CpuEpPoolNorm, LayerNormalizationOverTrailingAxesWithAndWithoutBias) {
  const std::vector<int64_t> dims{2, 3, 4, 5};
  const std::vector<float> x = Wave(120, 0.37);
  for (const int64_t axis : {1, 2, -1}) {
    const size_t first = axis < 0 ? dims.size() + axis : axis;
    const std::vector<int64_t> row(dims.begin() + first, dims.end());
    size_t columns = 1;
    for (int64_t d : row) columns *= d;
    std::vector<float> scale(columns), bias(columns);
    for (size_t i = 0; i < columns; ++i) {
      scale[i] = 0.5f + 0.01f * static_cast<float>(i);
      bias[i] = 0.25f * static_cast<float>(i % 3) - 0.25f;
    }
    for (const bool with_bias : {true, false}) {
      std::vector<NodeInput> inputs{Input("x", DataType::kFloat32, dims, x),
                                    Input("scale", DataType::kFloat32, row, scale)};
      if (with_bias) inputs.push_back(Input("bias", DataType::kFloat32, row, bias));
      auto y = RunSingleNode("LayerNormalization", 17, inputs,
                             {IntAttribute("axis", axis), FloatAttribute("epsilon", 1e-3f)},
                             DataType::kFloat32);
      ASSERT_TRUE(y.has_value()) << axis;
      const auto expected = NormaliseRuns(
          x, x.size() / columns, 1e-3,
          [&](size_t, size_t i, double v) { return v * scale[i] + (with_bias ? bias[i] : 0.0); });
      ExpectClose(ValuesAsDouble(*y), expected, with_bias ? "with bias" : "without bias");
    }
  }
}

TEST(CpuEpPoolNorm, LpNormalizationDividesByTheNorm) {
  // [3, 4, 2] along axis 1; one vector is all zeros and must stay zeros.
  std::vector<float> x = Wave(24, 1.3);
  for (int k = 0; k < 4; ++k) x[(1 * 4 + k) * 2 + 1] = 0.0f;
  for (const int64_t p : {1, 2}) {
    auto y = RunSingleNode("LpNormalization", 22, {Input("x", DataType::kFloat32, {3, 4, 2}, x)},
                           {IntAttribute("axis", 1), IntAttribute("p", p)}, DataType::kFloat32);
    ASSERT_TRUE(y.has_value());
    std::vector<double> expected(24);
    for (int o = 0; o < 3; ++o) {
      for (int j = 0; j < 2; ++j) {
        double norm = 0;
        for (int k = 0; k < 4; ++k) {
          const double v = x[(o * 4 + k) * 2 + j];
          norm += p == 1 ? std::abs(v) : v * v;
        }
        if (p == 2) norm = std::sqrt(norm);
        for (int k = 0; k < 4; ++k) {
          const int at = (o * 4 + k) * 2 + j;
          expected[at] = norm == 0 ? 0.0 : x[at] / norm;
        }
      }
    }
    ExpectClose(ValuesAsDouble(*y), expected, p == 1 ? "p=1" : "p=2");
  }
}

TEST(CpuEpPoolNorm, BatchNormalizationTrainingUsesTheBatchStatistics) {
  // X [3, 2, 5]: each channel normalised over its 15 elements, ignoring the
  // given mean and variance.
  const std::vector<float> x = Wave(30, 0.9);
  const std::vector<float> scale{1.5f, -0.5f}, bias{0.25f, 2.0f};
  const std::vector<float> mean{100.0f, -100.0f}, var{50.0f, 0.01f};
  auto y = RunSingleNode(
      "BatchNormalization", 15,
      {Input("x", DataType::kFloat32, {3, 2, 5}, x), Input("scale", DataType::kFloat32, {2}, scale),
       Input("bias", DataType::kFloat32, {2}, bias), Input("mean", DataType::kFloat32, {2}, mean),
       Input("var", DataType::kFloat32, {2}, var)},
      {IntAttribute("training_mode", 1)}, DataType::kFloat32);
  ASSERT_TRUE(y.has_value());
  std::vector<float> by_channel;  // channel-major copy: one run per channel
  for (int ch = 0; ch < 2; ++ch) {
    for (int b = 0; b < 3; ++b) {
      for (int i = 0; i < 5; ++i) by_channel.push_back(x[(b * 2 + ch) * 5 + i]);
    }
  }
  const auto normalised = NormaliseRuns(
      by_channel, 2, 1e-5, [&](size_t ch, size_t, double v) { return v * scale[ch] + bias[ch]; });
  std::vector<double> expected(30);
  for (int ch = 0; ch < 2; ++ch) {
    for (int b = 0; b < 3; ++b) {
      for (int i = 0; i < 5; ++i) expected[(b * 2 + ch) * 5 + i] = normalised[ch * 15 + b * 5 + i];
    }
  }
  ExpectClose(ValuesAsDouble(*y), expected, "training");
}

}  // namespace
}  // namespace nxrt_test
