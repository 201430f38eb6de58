// Shape, data movement, indexing and generator ops on the ONNX node test
// cases; CumProd (exclusive, reverse), TensorScatter (circular), Resize
// (antialias, axes, keep_aspect_ratio_policy), SpaceToDepth's two modes and
// 16-bit float Range against references computed here; GatherElements and
// ScatterElements refusing indices that would address outside the data; Slice
// refusing starts, ends, axes and steps of different lengths; Pad refusing
// to copy from empty axes or to crop past an axis; Transpose refusing a perm
// that is no permutation.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "node_case_runner.hpp"
#include "single_node_session.hpp"
#include "tensor_node_session.hpp"

namespace nxrt_test {
namespace {

using nxrt::graph::DataType;

TEST(CpuEpDataMovement, ShapeNodeCases) {
  ExpectFamilyPasses("shape",
                     {"Identity", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Shape", "Size"});
}

TEST(CpuEpDataMovement, MovementNodeCases) {
  ExpectFamilyPasses("movement", {"Transpose", "Concat", "Split", "Slice", "Expand", "Tile", "Pad",
                                  "DepthToSpace", "SpaceToDepth"});
}

TEST(CpuEpDataMovement, IndexingNodeCases) {
  ExpectFamilyPasses("indexing",
                     {"Gather", "GatherElements", "GatherND", "ScatterElements", "Scatter",
                      "ScatterND", "Compress", "NonZero", "OneHot", "TopK", "CumSum", "Trilu"});
}

TEST(CpuEpDataMovement, GeneratorNodeCases) {
  ExpectFamilyPasses("generators", {"Constant", "ConstantOfShape", "Range", "EyeLike"});
}

TEST(CpuEpDataMovement, SpaceToDepthOrdersChannelsByMode) {
  // x [1, 2, 4, 4], blocksize 2: output channel (row, column, channel) in
  // DCR, (channel, row, column) in CRD.
  const int64_t c = 2, h = 4, w = 4, b = 2;
  std::vector<float> x(c * h * w);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
  for (const std::string mode : {"DCR", "CRD"}) {
    auto y = RunSingleNode("SpaceToDepth", 13, {Input("x", DataType::kFloat32, {1, c, h, w}, x)},
                           {IntAttribute("blocksize", b), StringAttribute("mode", mode)},
                           DataType::kFloat32);
    ASSERT_TRUE(y.has_value());
    const std::vector<double> v = ValuesAsDouble(*y);
    ASSERT_EQ(v.size(), x.size());
    for (int64_t ch = 0; ch < c; ++ch) {
      for (int64_t bh = 0; bh < b; ++bh) {
        for (int64_t bw = 0; bw < b; ++bw) {
          const int64_t out_c = mode == "CRD" ? (ch * b + bh) * b + bw : (bh * b + bw) * c + ch;
          for (int64_t i = 0; i < h / b; ++i) {
            for (int64_t j = 0; j < w / b; ++j) {
              EXPECT_EQ(v[(out_c * (h / b) + i) * (w / b) + j],
                        x[(ch * h + i * b + bh) * w + j * b + bw])
                  << mode << " channel " << out_c;
            }
          }
        }
      }
    }
  }
}

TEST(CpuEpDataMovement, RangeOfSixteenBitFloats) {
  // 1, 2.5, 4: start 1, limit 5, delta 1.5, all exact in both formats.
  const std::vector<std::pair<DataType, std::vector<uint16_t>>> cases{
      {DataType::kFloat16, {0x3C00, 0x4500, 0x3E00, 0x3C00, 0x4100, 0x4400}},
      {DataType::kBfloat16, {0x3F80, 0x40A0, 0x3FC0, 0x3F80, 0x4020, 0x4080}}};
  for (const auto& [dtype, bits] : cases) {
    auto y = RunSingleNode("Range", 27,  // the opset that gave Range 16-bit floats
                           {Input("start", dtype, {}, std::vector<uint16_t>{bits[0]}),
                            Input("limit", dtype, {}, std::vector<uint16_t>{bits[1]}),
                            Input("delta", dtype, {}, std::vector<uint16_t>{bits[2]})},
                           {}, dtype);
    ASSERT_TRUE(y.has_value());
    std::vector<uint16_t> v(y->byte_size() / sizeof(uint16_t));
    std::memcpy(v.data(), y->data(), y->byte_size());
    EXPECT_EQ(v, std::vector<uint16_t>(bits.begin() + 3, bits.end()));
  }
}

TEST(CpuEpDataMovement, CumProdMatchesARunningProduct) {
  // [2, 3, 2] along axis 1, every combination of exclusive and reverse.
  std::vector<int32_t> x(12);
  for (int i = 0; i < 12; ++i) x[i] = (i % 5) - 2;
  for (int exclusive = 0; exclusive < 2; ++exclusive) {
    for (int reverse = 0; reverse < 2; ++reverse) {
      auto y =
          RunSingleNode("CumProd", 26,
                        {Input("x", DataType::kInt32, {2, 3, 2}, x),
                         Input("axis", DataType::kInt64, {}, std::vector<int64_t>{-2})},
                        {IntAttribute("exclusive", exclusive), IntAttribute("reverse", reverse)},
                        DataType::kInt32);
      ASSERT_TRUE(y.has_value());
      std::vector<int32_t> expected(12);
      for (int o = 0; o < 2; ++o) {
        for (int j = 0; j < 2; ++j) {
          for (int k = 0; k < 3; ++k) {
            int32_t product = 1;
            for (int m = 0; m < 3; ++m) {
              const bool counted =
                  reverse ? (exclusive ? m > k : m >= k) : (exclusive ? m < k : m <= k);
              if (counted) product *= x[(o * 3 + m) * 2 + j];
            }
            expected[(o * 3 + k) * 2 + j] = product;
          }
        }
      }
      const auto v = y->values<int32_t>();
      EXPECT_EQ(std::vector<int32_t>(v.begin(), v.end()), expected)
          << "exclusive " << exclusive << " reverse " << reverse;
    }
  }
}

TEST(CpuEpDataMovement, TensorScatterWritesEachSampleAtItsIndex) {
  // Cache [2, 2, 5, 3] (batch, heads, max_seq, dim), update [2, 2, 3, 3],
  // write indices 1 and 4: linear overflows the second sample, circular wraps.
  const int64_t b = 2, h = 2, s = 5, u = 3, d = 3;
  std::vector<float> past(b * h * s * d), update(b * h * u * d);
  for (size_t i = 0; i < past.size(); ++i) past[i] = -static_cast<float>(i);
  for (size_t i = 0; i < update.size(); ++i) update[i] = 1000.0f + static_cast<float>(i);
  const std::vector<int64_t> write{1, 4};
  auto y = RunSingleNode("TensorScatter", 24,
                         {Input("past", DataType::kFloat32, {b, h, s, d}, past),
                          Input("update", DataType::kFloat32, {b, h, u, d}, update),
                          Input("write_indices", DataType::kInt64, {b}, write)},
                         {StringAttribute("mode", "circular")}, DataType::kFloat32);
  ASSERT_TRUE(y.has_value());
  std::vector<double> expected(past.begin(), past.end());
  for (int64_t n = 0; n < b; ++n) {
    for (int64_t k = 0; k < h; ++k) {
      for (int64_t t = 0; t < u; ++t) {
        for (int64_t e = 0; e < d; ++e) {
          const int64_t at = (write[n] + t) % s;
          expected[((n * h + k) * s + at) * d + e] = update[((n * h + k) * u + t) * d + e];
        }
      }
    }
  }
  EXPECT_EQ(ValuesAsDouble(*y), expected);
}

// Indices of another rank than the data, wider than it off the indexed axis,
// or updates of another shape than the indices are refused with what to fix;
// read as given they would address outside the tensors.
TEST(CpuEpDataMovement, ElementIndexingRefusesIndicesOutsideTheData) {
  struct Case {
    const char* op;
    std::vector<int64_t> index_dims;
    std::vector<int64_t> update_dims;  // ScatterElements only
    const char* fault;
  };
  const Case cases[] = {
      {"GatherElements", {2, 2, 1}, {}, "indices have rank 3 and data rank 2"},
      {"GatherElements", {2, 4}, {}, "indices extend 4 along axis 1, past the data's 3"},
      {"ScatterElements", {1, 5}, {1, 5}, "indices extend 5 along axis 1, past the data's 3"},
      {"ScatterElements", {2, 3}, {2, 2}, "updates must have the indices' shape"},
  };
  const auto count = [](const std::vector<int64_t>& dims) {
    size_t n = 1;
    for (int64_t d : dims) n *= static_cast<size_t>(d);
    return n;
  };
  for (const Case& c : cases) {
    TensorNode node;
    node.op = c.op;
    node.opset = 18;
    node.inputs = {
        {"data", Values<float>({2, 3}, {1, 2, 3, 4, 5, 6})},
        {"indices", Values<int64_t>(c.index_dims, std::vector<int64_t>(count(c.index_dims), 0))}};
    if (!c.update_dims.empty()) {
      node.inputs.push_back(
          {"updates", Values<float>(c.update_dims, std::vector<float>(count(c.update_dims)))});
    }
    node.outputs = {DataType::kFloat32};
    node.attributes = {IntAttribute("axis", 0)};
    ExpectRefused(node, c.fault);
  }
}

// Slice's starts, ends, axes and steps name one entry per sliced axis;
// lists of other lengths are refused rather than read past.
TEST(CpuEpDataMovement, SliceRefusesListsOfDifferentLengths) {
  TensorNode node;
  node.op = "Slice";
  node.opset = 13;
  node.inputs = {{"data", Values<float>({2, 3}, {1, 2, 3, 4, 5, 6})},
                 {"starts", Values<int64_t>({2}, {0, 0})},
                 {"ends", Values<int64_t>({2}, {1, 2})},
                 {"axes", Values<int64_t>({1}, {1})}};
  node.outputs = {DataType::kFloat32};
  ExpectRefused(node, "not 2, 2, 1 and 0");
}

// Edge, reflect and wrap padding copy from the padded axis, so an empty one
// is refused rather than read (wrap divided by its zero extent); pads that
// crop more than an axis holds are refused too, and so is a mode ONNX does
// not define.
TEST(CpuEpDataMovement, PadRefusesWhatItCannotCopyFrom) {
  struct Case {
    const char* mode;
    std::vector<int64_t> dims;
    std::vector<int64_t> pads;
    const char* fault;
  };
  const Case cases[] = {
      {"reflect", {2, 0}, {0, 1, 0, 1}, "axis 1 is empty"},
      {"edge", {2, 0}, {0, 1, 0, 0}, "axis 1 is empty"},
      {"wrap", {0, 3}, {1, 0, 0, 0}, "axis 0 is empty"},
      {"constant", {2, 3}, {0, -2, 0, -2}, "crop more than its 3 elements"},
      {"mirror", {2, 3}, {0, 1, 0, 1}, "use constant, reflect, edge or wrap"},
  };
  for (const Case& c : cases) {
    size_t count = 1;
    for (int64_t d : c.dims) count *= static_cast<size_t>(d);
    TensorNode node;
    node.op = "Pad";
    node.opset = 19;
    node.inputs = {{"data", Values<float>(c.dims, std::vector<float>(count, 1.0f))},
                   {"pads", Values<int64_t>({4}, c.pads)}};
    node.outputs = {DataType::kFloat32};
    node.attributes = {StringAttribute("mode", c.mode)};
    ExpectRefused(node, c.fault);
  }
}

// A perm naming an axis twice is no permutation: refused, not read past.
TEST(CpuEpDataMovement, TransposeRefusesAPermNamingAnAxisTwice) {
  TensorNode node;
  node.op = "Transpose";
  node.opset = 13;
  node.inputs = {{"data", Values<float>({2, 3, 4}, std::vector<float>(24, 1.0f))}};
  node.outputs = {DataType::kFloat32};
  node.attributes = {IntsAttribute("perm", {0, 0, 1})};
  ExpectRefused(node, "names axis 0 twice");
}

// A scalar has no axis 0: ops that walk an axis refuse one rather than read
// the dim it lacks.
TEST(CpuEpDataMovement, AScalarHasNoAxisToWalk) {
  TensorNode cumsum;
  cumsum.op = "CumSum";
  cumsum.opset = 14;
  cumsum.inputs = {{"x", Values<int32_t>({}, {5})}, {"axis", Values<int32_t>({}, {0})}};
  cumsum.outputs = {DataType::kInt32};
  ExpectRefused(cumsum, "axis 0 out of range for rank 0");

  TensorNode slice;
  slice.op = "Slice";
  slice.opset = 13;
  // Scalar starts and ends, which leave the graph's Slice rule undecided.
  slice.inputs = {{"data", Values<int32_t>({}, {5})},
                  {"starts", Values<int64_t>({}, {0})},
                  {"ends", Values<int64_t>({}, {1})}};
  slice.outputs = {DataType::kInt32};
  ExpectRefused(slice, "axis 0 out of range for rank 0");
}

// Range's bounds and step are single values; an empty one was read anyway.
TEST(CpuEpDataMovement, RangeRefusesBoundsThatAreNotSingleValues) {
  TensorNode node;
  node.op = "Range";
  node.opset = 11;
  node.inputs = {{"start", Values<int64_t>({}, {0})},
                 {"limit", Values<int64_t>({0}, {})},
                 {"delta", Values<int64_t>({}, {1})}};
  node.outputs = {DataType::kInt64};
  ExpectRefused(node, "input 1 holds 0");
}

// OneHot's values are the pair [off, on]; a single value was read past its
// end for every "on" element.
TEST(CpuEpDataMovement, OneHotRefusesValuesThatAreNotAPairAndANegativeDepth) {
  TensorNode node;
  node.op = "OneHot";
  node.opset = 11;
  node.inputs = {{"indices", Values<int64_t>({3}, {0, 1, 2})},
                 {"depth", Values<int64_t>({}, {3})},
                 {"values", Values<float>({1}, {3.0f})}};
  node.outputs = {DataType::kFloat32};
  ExpectRefused(node, "values holds 1 elements; it must be the pair [off_value, on_value]");
  node.inputs[1].tensor = Values<int64_t>({}, {-3});
  node.inputs[2].tensor = Values<float>({2}, {0.0f, 1.0f});
  ExpectRefused(node, "depth is -3; it must not be negative");
}

// An empty axis has nothing to sample; nearest-neighbour read element 0 of
// it for each of the output's. Scales must be positive and finite.
TEST(CpuEpDataMovement, ResizeRefusesAnEmptyAxisToFillAndScalesThatAreNotPositive) {
  TensorNode node;
  node.op = "Resize";
  node.opset = 19;
  node.inputs = {{"x", Values<float>({1, 1, 0, 4}, {})},
                 {"", {}},
                 {"", {}},
                 {"sizes", Values<int64_t>({4}, {1, 1, 8, 8})}};
  node.outputs = {DataType::kFloat32};
  node.attributes = {StringAttribute("mode", "nearest")};
  ExpectRefused(node,
                "axis 2 of the input is empty, so there is nothing to resample into 8 values");
  node.attributes.push_back(StringAttribute("keep_aspect_ratio_policy", "not_larger"));
  ExpectRefused(node, "axis 2 of the input is empty, so it gives no aspect ratio to keep");
  node.attributes.pop_back();
  node.inputs[0].tensor = Values<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  node.inputs[2] = {"scales", Values<float>({4}, {1.0f, 1.0f, -2.0f, 2.0f})};
  node.inputs.pop_back();
  ExpectRefused(node, "scales must be positive and finite");
}

// Split's parts must add up to the axis; an empty input was read for six.
TEST(CpuEpDataMovement, SplitRefusesPartsThatDoNotAddUpToTheAxis) {
  TensorNode node;
  node.op = "Split";
  node.opset = 13;
  node.inputs = {{"x", Values<float>({0}, {})}, {"split", Values<int64_t>({2}, {2, 4})}};
  node.outputs = {DataType::kFloat32, DataType::kFloat32};
  ExpectRefused(node, "Split: parts of 6 elements in all for axis 0 of [0]");
  node.inputs = {{"x", Values<float>({2}, {1.0f, 2.0f})}, {"split", Values<int64_t>({2}, {3, -1})}};
  ExpectRefused(node, "Split: a part of -1 elements");
}

// TensorScatter reads one write index per sample; none were read anyway.
TEST(CpuEpDataMovement, TensorScatterRefusesWriteIndicesOtherThanOnePerSample) {
  TensorNode node;
  node.op = "TensorScatter";
  node.opset = 24;
  const std::vector<float> past(2 * 4 * 5, 0.0f), update(2 * 2 * 5, 1.0f);
  node.inputs = {{"past", Values<float>({2, 4, 5}, past)},
                 {"update", Values<float>({2, 2, 5}, update)},
                 {"write_indices", Values<int64_t>({0}, {})}};
  node.outputs = {DataType::kFloat32};
  node.attributes = {StringAttribute("mode", "circular")};
  ExpectRefused(node, "TensorScatter: 0 write indices for a batch of 2");
}

// ScatterND's updates are shaped by the indices and the data; fewer were
// read past their end.
TEST(CpuEpDataMovement, ScatterNdRefusesUpdatesOfAnotherShape) {
  TensorNode node;
  node.op = "ScatterND";
  node.opset = 18;
  node.inputs = {{"data", Values<float>({2, 2}, {1, 2, 3, 4})},
                 {"indices", Values<int64_t>({2, 2}, {0, 0, 1, 1})},
                 {"updates", Values<float>({0}, {})}};
  node.outputs = {DataType::kFloat32};
  ExpectRefused(node,
                "ScatterND: updates are [0]; data [2,2] with indices [2,2] takes updates of [2]");
}

// NonMaxSuppression's scores score the boxes: [B, C, N] for boxes [B, N, 4].
TEST(CpuEpDataMovement, NonMaxSuppressionRefusesScoresForOtherBoxes) {
  TensorNode node;
  node.op = "NonMaxSuppression";
  node.opset = 11;
  node.inputs = {{"boxes", Values<float>({1, 2, 4}, {0, 0, 1, 1, 0, 0, 2, 2})},
                 {"scores", Values<float>({1, 1, 6}, {1, 2, 3, 4, 5, 6})},
                 {"max_output_boxes_per_class", Values<int64_t>({1}, {2})}};
  node.outputs = {DataType::kInt64};
  ExpectRefused(node, "boxes must be [B, N, 4] and scores [B, C, N]; got [1,2,4] and [1,1,6]");
}

// Rows of no elements gather into rows of no elements, the indices still
// checked; the copy of nothing passed a null pointer to memcpy (UBSan).
TEST(CpuEpDataMovement, GatherOfEmptyRowsGivesEmptyRows) {
  TensorNode node;
  node.op = "Gather";
  node.opset = 13;
  node.inputs = {{"data", Values<float>({3, 0}, {})}, {"indices", Values<int64_t>({2}, {2, 0})}};
  node.outputs = {DataType::kFloat32};
  auto y = RunTensorNode(node);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ((*y)[0].shape(), (std::vector<int64_t>{2, 0}));
  node.inputs[1].tensor = Values<int64_t>({1}, {3});
  ExpectRefused(node, "Gather: index 3 out of range [-3, 3)");
}

TEST(CpuEpDataMovement, ResizeNodeCases) {
  ExpectFamilyPasses("resize", {"Resize", "Upsample"});
}

TEST(CpuEpDataMovement, ResizeAntialiasAveragesOverTheWidenedTriangle) {
  // x[i] = i^2 along the last axis of [2, 16], resized to 4 there (axes {1}):
  // each output is the triangle-weighted mean of the samples within 1 / scale
  // of its half_pixel source, edge samples repeated.
  std::vector<float> x(32);
  for (int r = 0; r < 2; ++r) {
    for (int i = 0; i < 16; ++i) x[r * 16 + i] = static_cast<float>(i * i) + 100.0f * r;
  }
  auto y = RunSingleNode(
      "Resize", 18,
      {Input("x", DataType::kFloat32, {2, 16}, x), AbsentInput(), AbsentInput(),
       Input("sizes", DataType::kInt64, {1}, std::vector<int64_t>{4})},
      {StringAttribute("mode", "linear"), IntAttribute("antialias", 1), IntsAttribute("axes", {1})},
      DataType::kFloat32);
  ASSERT_TRUE(y.has_value());
  EXPECT_EQ(y->shape(), (std::vector<int64_t>{2, 4}));
  std::vector<double> expected;
  const double scale = 0.25;
  for (int r = 0; r < 2; ++r) {
    for (int o = 0; o < 4; ++o) {
      const double s = (o + 0.5) / scale - 0.5;
      double sum = 0, total = 0;
      for (int j = -8; j < 24; ++j) {
        const double w = std::max(0.0, 1.0 - std::abs(j - s) * scale);
        sum += w * x[r * 16 + std::clamp(j, 0, 15)];
        total += w;
      }
      expected.push_back(sum / total);
    }
  }
  const std::vector<double> v = ValuesAsDouble(*y);
  ASSERT_EQ(v.size(), expected.size());
  for (size_t i = 0; i < v.size(); ++i) EXPECT_NEAR(v[i], expected[i], 1e-3) << i;
}

TEST(CpuEpDataMovement, ResizeKeepsTheAspectRatio) {
  // [1, 1, 4, 6] asked for 3 x 3 on axes {2, 3}: not_larger takes the smaller
  // ratio (1/2, giving 2 x 3), not_smaller the larger (3/4, giving 3 x 5
  // after rounding 4.5 up).
  std::vector<float> x(24);
  for (int i = 0; i < 24; ++i) x[i] = static_cast<float>(i);
  for (const char* policy : {"not_larger", "not_smaller"}) {
    const bool larger = policy[4] == 's';
    auto y = RunSingleNode(
        "Resize", 18,
        {Input("x", DataType::kFloat32, {1, 1, 4, 6}, x), AbsentInput(), AbsentInput(),
         Input("sizes", DataType::kInt64, {2}, std::vector<int64_t>{3, 3})},
        {StringAttribute("mode", "nearest"), IntsAttribute("axes", {2, 3}),
         StringAttribute("keep_aspect_ratio_policy", policy)},
        DataType::kFloat32);
    ASSERT_TRUE(y.has_value());
    const int64_t h = larger ? 3 : 2, w = larger ? 5 : 3;
    EXPECT_EQ(y->shape(), (std::vector<int64_t>{1, 1, h, w})) << policy;
    const double scale = larger ? 0.75 : 0.5;
    std::vector<double> expected;
    auto nearest = [&](int64_t o, int64_t in) {
      // half_pixel, round_prefer_floor.
      const double s = (o + 0.5) / scale - 0.5;
      const double f = std::floor(s);
      const auto i = static_cast<int64_t>(s - f == 0.5 ? f : std::round(s));
      return std::clamp<int64_t>(i, 0, in - 1);
    };
    for (int64_t i = 0; i < h; ++i) {
      for (int64_t j = 0; j < w; ++j) expected.push_back(x[nearest(i, 4) * 6 + nearest(j, 6)]);
    }
    EXPECT_EQ(ValuesAsDouble(*y), expected) << policy;
  }
}

// Nearest resampling gathers elements of any type exactly: a 2x asymmetric
// floor upscale of an image's planes (PP-OCR's detector neck) repeats each
// element in a 2x2 block, and a downscale over the channel axis picks planes.
TEST(CpuEpDataMovement, NearestResizeGathersElementsOfEveryType) {
  const std::vector<int64_t> values{-7, 3, (1LL << 60) + 1, 9, 0, -2, 5, 8, 11, -1,
                                    4,  6};  // [1,2,2,3]
  const auto expected_upscale = [](const auto& x) {
    std::vector<std::decay_t<decltype(x[0])>> y;
    for (int64_t c = 0; c < 2; ++c) {
      for (int64_t i = 0; i < 4; ++i) {
        for (int64_t j = 0; j < 6; ++j) y.push_back(x[(c * 2 + i / 2) * 3 + j / 2]);
      }
    }
    return y;
  };
  const std::vector<nxrt::graph::Attribute> asymmetric_floor{
      StringAttribute("mode", "nearest"),
      StringAttribute("coordinate_transformation_mode", "asymmetric"),
      StringAttribute("nearest_mode", "floor")};
  {
    auto y =
        RunSingleNode("Resize", 13,
                      {Input("x", DataType::kInt64, {1, 2, 2, 3}, values), AbsentInput(),
                       Input("scales", DataType::kFloat32, {4}, std::vector<float>{1, 1, 2, 2})},
                      asymmetric_floor, DataType::kInt64);
    ASSERT_TRUE(y.has_value());
    EXPECT_EQ(y->shape(), (std::vector<int64_t>{1, 2, 4, 6}));
    std::vector<int64_t> got(y->element_count());
    std::memcpy(got.data(), y->data(), got.size() * sizeof(int64_t));
    // 2^60 + 1 survives: no pass through double.
    EXPECT_EQ(got, expected_upscale(values));
  }
  std::vector<uint8_t> bytes;
  for (int64_t v : values) bytes.push_back(static_cast<uint8_t>(v & 0xFF));
  auto y =
      RunSingleNode("Resize", 13,
                    {Input("x", DataType::kUint8, {1, 2, 2, 3}, bytes), AbsentInput(),
                     Input("scales", DataType::kFloat32, {4}, std::vector<float>{1, 0.5f, 2, 2})},
                    asymmetric_floor, DataType::kUint8);
  ASSERT_TRUE(y.has_value());
  EXPECT_EQ(y->shape(), (std::vector<int64_t>{1, 1, 4, 6}));
  std::vector<uint8_t> first_plane = expected_upscale(bytes);
  first_plane.resize(24);
  const std::span<const uint8_t> got = y->values<uint8_t>();
  EXPECT_EQ(std::vector<uint8_t>(got.begin(), got.end()), first_plane);
}

// Transposes that are 2-D transposes once unit axes are dropped and
// contiguous ones merged ([1, 37, 19, 1] swapping its middle axes, as
// tf2onnx writes them), one of a batch of planes whose sides are no
// multiple of the copy's tiles, and one that keeps the last axis in place.
TEST(CpuEpDataMovement, TransposesGiveEveryElementItsPlace) {
  struct Case {
    std::vector<int64_t> dims, perm;
  };
  const Case cases[] = {{{1, 37, 19, 1}, {0, 2, 1, 3}},
                        {{3, 20, 17}, {0, 2, 1}},
                        {{4, 5, 6}, {1, 0, 2}},
                        {{2, 3, 4, 5}, {3, 1, 0, 2}}};
  for (const Case& c : cases) {
    int64_t count = 1;
    for (int64_t d : c.dims) count *= d;
    std::vector<float> x(count);
    for (int64_t i = 0; i < count; ++i) x[i] = static_cast<float>(i);
    auto y = RunSingleNode("Transpose", 13, {Input("x", DataType::kFloat32, c.dims, x)},
                           {IntsAttribute("perm", c.perm)}, DataType::kFloat32);
    ASSERT_TRUE(y.has_value());
    const size_t rank = c.dims.size();
    std::vector<int64_t> out_dims(rank), in_strides(rank, 1);
    for (size_t a = rank - 1; a-- > 0;) in_strides[a] = in_strides[a + 1] * c.dims[a + 1];
    for (size_t a = 0; a < rank; ++a) out_dims[a] = c.dims[c.perm[a]];
    ASSERT_EQ(y->shape(), out_dims);
    std::vector<double> expected;
    std::vector<int64_t> index(rank, 0);
    for (int64_t i = 0; i < count; ++i) {
      int64_t source = 0;
      for (size_t a = 0; a < rank; ++a) source += index[a] * in_strides[c.perm[a]];
      expected.push_back(x[source]);
      for (size_t a = rank; a-- > 0;) {
        if (++index[a] < out_dims[a]) break;
        index[a] = 0;
      }
    }
    EXPECT_EQ(ValuesAsDouble(*y), expected) << c.dims.size() << "-D, first dim " << c.dims[0];
  }
}

}  // namespace
}  // namespace nxrt_test
