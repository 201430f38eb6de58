// GridSample, AffineGrid, RoiAlign, Col2Im and CenterCropPad: the ONNX node
// test cases, and properties checked against references computed here: an
// identity grid (built here, and made by AffineGrid) reproduces the input
// in every mode, 4-D and 5-D; RoiAlign of a linear ramp is the ramp at the
// bin centres; Col2Im undoes a non-overlapping im2col done here; padding
// then cropping back with CenterCropPad is the identity.
#include <gtest/gtest.h>

#include <random>

#include "node_case_runner.hpp"
#include "single_node_session.hpp"

namespace nxrt_test {
namespace {

using nxrt::graph::DataType;

TEST(CpuEpImage, NodeCases) {
  ExpectFamilyPasses("image", {"GridSample", "AffineGrid", "RoiAlign", "Col2Im", "CenterCropPad"});
}

std::vector<float> RandomFloats(size_t count, uint32_t seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> uniform(-2.0f, 2.0f);
  std::vector<float> values(count);
  for (float& v : values) v = uniform(generator);
  return values;
}

void ExpectNear(const std::vector<double>& actual, const std::vector<float>& expected,
                double tolerance, const std::string& what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  for (size_t i = 0; i < actual.size(); ++i) {
    EXPECT_NEAR(actual[i], expected[i], tolerance) << what << " at " << i;
  }
}

// The sampling grid that maps every output point onto the same input point:
// [1, extents..., rank] with the innermost axis's coordinate first.
std::vector<float> IdentityGrid(const std::vector<int64_t>& extents, bool align_corners) {
  const size_t rank = extents.size();
  int64_t points = 1;
  for (int64_t e : extents) points *= e;
  std::vector<float> grid;
  for (int64_t p = 0; p < points; ++p) {
    std::vector<float> coordinate(rank);
    int64_t rest = p;
    for (size_t d = rank; d-- > 0;) {
      const auto i = static_cast<double>(rest % extents[d]);
      rest /= extents[d];
      const auto n = static_cast<double>(extents[d]);
      coordinate[rank - 1 - d] =
          static_cast<float>(align_corners ? -1.0 + 2.0 * i / (n - 1) : (2.0 * i + 1.0) / n - 1.0);
    }
    grid.insert(grid.end(), coordinate.begin(), coordinate.end());
  }
  return grid;
}

TEST(CpuEpImage, IdentityGridReproducesTheInputInEveryMode) {
  for (const std::vector<int64_t>& extents :
       {std::vector<int64_t>{4, 5}, std::vector<int64_t>{3, 4, 5}}) {
    std::vector<int64_t> x_dims{2, 3};
    x_dims.insert(x_dims.end(), extents.begin(), extents.end());
    std::vector<int64_t> grid_dims{2};
    grid_dims.insert(grid_dims.end(), extents.begin(), extents.end());
    grid_dims.push_back(static_cast<int64_t>(extents.size()));
    int64_t points = 1;
    for (int64_t e : extents) points *= e;
    const std::vector<float> x = RandomFloats(2 * 3 * points, 1);
    for (bool align : {false, true}) {
      std::vector<float> grid = IdentityGrid(extents, align);
      const std::vector<float> one = grid;
      grid.insert(grid.end(), one.begin(), one.end());
      for (const char* mode : {"linear", "nearest", "cubic"}) {
        if (extents.size() == 3 && std::string(mode) == "cubic") continue;  // 4-D only
        for (const char* padding : {"zeros", "border", "reflection"}) {
          auto y = RunSingleNode(
              "GridSample", 20,
              {Input("x", DataType::kFloat32, x_dims, x),
               Input("grid", DataType::kFloat32, grid_dims, grid)},
              {StringAttribute("mode", mode), StringAttribute("padding_mode", padding),
               IntAttribute("align_corners", align ? 1 : 0)},
              DataType::kFloat32);
          ASSERT_TRUE(y.has_value());
          EXPECT_EQ(y->shape(), x_dims);
          ExpectNear(ValuesAsDouble(*y), x, 1e-5,
                     std::string(mode) + "/" + padding + (align ? "/align" : ""));
        }
      }
    }
  }
}

TEST(CpuEpImage, AffineGridOfTheIdentityIsTheIdentityGrid) {
  const std::vector<float> theta2{1, 0, 0, 0, 1, 0};
  const std::vector<float> theta3{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0};
  for (bool align : {false, true}) {
    auto grid2 =
        RunSingleNode("AffineGrid", 20,
                      {Input("theta", DataType::kFloat32, {1, 2, 3}, theta2),
                       Input("size", DataType::kInt64, {4}, std::vector<int64_t>{1, 1, 4, 7})},
                      {IntAttribute("align_corners", align ? 1 : 0)}, DataType::kFloat32);
    ASSERT_TRUE(grid2.has_value());
    EXPECT_EQ(grid2->shape(), (std::vector<int64_t>{1, 4, 7, 2}));
    ExpectNear(ValuesAsDouble(*grid2), IdentityGrid({4, 7}, align), 1e-6, "2-D");
    auto grid3 =
        RunSingleNode("AffineGrid", 20,
                      {Input("theta", DataType::kFloat32, {1, 3, 4}, theta3),
                       Input("size", DataType::kInt64, {5}, std::vector<int64_t>{1, 2, 3, 4, 5})},
                      {IntAttribute("align_corners", align ? 1 : 0)}, DataType::kFloat32);
    ASSERT_TRUE(grid3.has_value());
    EXPECT_EQ(grid3->shape(), (std::vector<int64_t>{1, 3, 4, 5, 3}));
    ExpectNear(ValuesAsDouble(*grid3), IdentityGrid({3, 4, 5}, align), 1e-6, "3-D");
  }
}

TEST(CpuEpImage, RoiAlignOfARampIsTheRampAtTheBinCentres) {
  // Bilinear interpolation is exact on f(y, x) = 0.5 y - 0.25 x + 1, so each
  // bin's mean over its symmetric sample grid is f at the bin centre.
  const int64_t h = 8, w = 8;
  std::vector<float> x(h * w);
  auto f = [](double y, double x) { return 0.5 * y - 0.25 * x + 1.0; };
  for (int64_t i = 0; i < h; ++i) {
    for (int64_t j = 0; j < w; ++j) {
      x[i * w + j] = static_cast<float>(f(static_cast<double>(i), static_cast<double>(j)));
    }
  }
  const std::vector<float> box{1.0f, 1.5f, 6.0f, 5.0f};  // x1, y1, x2, y2
  const int64_t out_h = 2, out_w = 3;
  auto y = RunSingleNode("RoiAlign", 16,
                         {Input("x", DataType::kFloat32, {1, 1, h, w}, x),
                          Input("rois", DataType::kFloat32, {1, 4}, box),
                          Input("batch", DataType::kInt64, {1}, std::vector<int64_t>{0})},
                         {IntAttribute("output_height", out_h), IntAttribute("output_width", out_w),
                          IntAttribute("sampling_ratio", 2)},
                         DataType::kFloat32);
  ASSERT_TRUE(y.has_value());
  std::vector<float> expected;
  const double bin_h = (box[3] - box[1]) / out_h, bin_w = (box[2] - box[0]) / out_w;
  for (int64_t ph = 0; ph < out_h; ++ph) {
    for (int64_t pw = 0; pw < out_w; ++pw) {
      // half_pixel shifts the box by half a pixel.
      expected.push_back(
          static_cast<float>(f(box[1] - 0.5 + (static_cast<double>(ph) + 0.5) * bin_h,
                               box[0] - 0.5 + (static_cast<double>(pw) + 0.5) * bin_w)));
    }
  }
  ExpectNear(ValuesAsDouble(*y), expected, 1e-5, "RoiAlign");
}

TEST(CpuEpImage, Col2ImUndoesANonOverlappingIm2Col) {
  // [N=2, C=3, 4, 6] cut into 2x3 blocks at stride (2, 3): each pixel lies in
  // exactly one block, so summing the blocks back gives the image.
  const int64_t n = 2, c = 3, h = 4, w = 6, bh = 2, bw = 3;
  const std::vector<float> image = RandomFloats(n * c * h * w, 9);
  const int64_t positions = (h / bh) * (w / bw);
  std::vector<float> columns(n * c * bh * bw * positions);
  for (int64_t b = 0; b < n * c; ++b) {
    for (int64_t k = 0; k < bh * bw; ++k) {
      for (int64_t p = 0; p < positions; ++p) {
        const int64_t i = (p / (w / bw)) * bh + k / bw;
        const int64_t j = (p % (w / bw)) * bw + k % bw;
        columns[(b * bh * bw + k) * positions + p] = image[(b * h + i) * w + j];
      }
    }
  }
  auto y = RunSingleNode("Col2Im", 18,
                         {Input("x", DataType::kFloat32, {n, c * bh * bw, positions}, columns),
                          Input("image", DataType::kInt64, {2}, std::vector<int64_t>{h, w}),
                          Input("block", DataType::kInt64, {2}, std::vector<int64_t>{bh, bw})},
                         {IntsAttribute("strides", {bh, bw})}, DataType::kFloat32);
  ASSERT_TRUE(y.has_value());
  EXPECT_EQ(y->shape(), (std::vector<int64_t>{n, c, h, w}));
  ExpectNear(ValuesAsDouble(*y), image, 0.0, "Col2Im");
}

TEST(CpuEpImage, CenterCropPadBackToTheOriginalShapeIsTheIdentity) {
  const std::vector<float> x = RandomFloats(5 * 6 * 2, 4);
  auto padded = RunSingleNode("CenterCropPad", 18,
                              {Input("x", DataType::kFloat32, {5, 6, 2}, x),
                               Input("shape", DataType::kInt64, {2}, std::vector<int64_t>{8, 9})},
                              {IntsAttribute("axes", {0, 1})}, DataType::kFloat32);
  ASSERT_TRUE(padded.has_value());
  EXPECT_EQ(padded->shape(), (std::vector<int64_t>{8, 9, 2}));
  const std::vector<double> p = ValuesAsDouble(*padded);
  double total = 0, padded_total = 0;
  for (float v : x) total += v;
  for (double v : p) padded_total += v;
  EXPECT_NEAR(padded_total, total, 1e-4);  // padding adds only zeros
  const std::vector<float> padded_values(p.begin(), p.end());
  auto back = RunSingleNode("CenterCropPad", 18,
                            {Input("x", DataType::kFloat32, {8, 9, 2}, padded_values),
                             Input("shape", DataType::kInt64, {3}, std::vector<int64_t>{5, 6, 2})},
                            {}, DataType::kFloat32);
  ASSERT_TRUE(back.has_value());
  ExpectNear(ValuesAsDouble(*back), x, 0.0, "CenterCropPad");
}

}  // namespace
}  // namespace nxrt_test
