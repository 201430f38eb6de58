// DeformConv: the ONNX node test cases are in the onnx 1.23 set only, so here
// a direct convolution computed in the test whose taps are moved by whole
// pixels (rows by dy, columns by dx; samples outside the image are 0) must
// match DeformConv given those offsets, and half-pixel offsets must average
// the two neighbours; a bias of the wrong length is refused.
#include <gtest/gtest.h>

#include "single_node_session.hpp"
#include "tensor_node_session.hpp"

namespace nxrt_test {
namespace {

using nxrt::graph::DataType;

TEST(CpuEpDeformConv, OffsetsMoveTheTaps) {
  const int64_t c = 2, maps = 3, size = 5, k = 3, out = 5;  // pads 1, stride 1
  std::vector<float> x(c * size * size), w(maps * c * k * k);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 7) % 11) - 5.0f;
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>((i * 5) % 9) / 4.0f - 1.0f;
  for (const auto& [dy, dx] : {std::pair{0.0f, 0.0f}, {0.0f, 1.0f}, {-2.0f, 1.0f}, {0.5f, 0.0f}}) {
    std::vector<float> offset;
    for (int64_t t = 0; t < k * k; ++t) {
      offset.insert(offset.end(), out * out, dy);
      offset.insert(offset.end(), out * out, dx);
    }
    auto y =
        RunSingleNode("DeformConv", 19,
                      {Input("x", DataType::kFloat32, {1, c, size, size}, x),
                       Input("w", DataType::kFloat32, {maps, c, k, k}, w),
                       Input("offset", DataType::kFloat32, {1, 2 * k * k, out, out}, offset)},
                      {IntsAttribute("pads", {1, 1, 1, 1}), IntsAttribute("kernel_shape", {k, k})},
                      DataType::kFloat32);
    ASSERT_TRUE(y.has_value());
    const std::vector<double> v = ValuesAsDouble(*y);
    auto pixel = [&](int64_t ch, double r, int64_t q) {
      // Rows may be half way between two pixels; columns are whole.
      if (r < 0 || r > size - 1 || q < 0 || q > size - 1) return 0.0;
      const auto r0 = static_cast<int64_t>(r);
      const double f = r - static_cast<double>(r0);
      const double top = x[(ch * size + r0) * size + q];
      return f == 0 ? top : (1 - f) * top + f * x[(ch * size + r0 + 1) * size + q];
    };
    for (int64_t m = 0; m < maps; ++m) {
      for (int64_t i = 0; i < out; ++i) {
        for (int64_t j = 0; j < out; ++j) {
          double sum = 0;
          for (int64_t ch = 0; ch < c; ++ch) {
            for (int64_t a = 0; a < k; ++a) {
              for (int64_t b = 0; b < k; ++b) {
                const double r = static_cast<double>(i - 1 + a) + dy;
                const auto q = static_cast<int64_t>(static_cast<double>(j - 1 + b) + dx);
                sum += w[((m * c + ch) * k + a) * k + b] * pixel(ch, r, q);
              }
            }
          }
          EXPECT_NEAR(v[(m * out + i) * out + j], sum, 1e-4)
              << "offset " << dy << "," << dx << " at " << m << "," << i << "," << j;
        }
      }
    }
  }
}

// The bias holds one value per output channel; an empty one was read.
TEST(CpuEpDeformConv, RefusesABiasOfAnotherLengthThanTheOutputChannels) {
  TensorNode node;
  node.op = "DeformConv";
  node.opset = 19;
  // 1x1x3x3 input, 2x1x2x2 weight: 2x2 positions, 4 taps.
  node.inputs = {{"x", Values<float>({1, 1, 3, 3}, std::vector<float>(9, 1.0f))},
                 {"w", Values<float>({2, 1, 2, 2}, std::vector<float>(8, 1.0f))},
                 {"offset", Values<float>({1, 8, 2, 2}, std::vector<float>(32, 0.0f))},
                 {"bias", Values<float>({0}, {})}};
  node.outputs = {DataType::kFloat32};
  ExpectRefused(node, "DeformConv: the bias holds 0 values for 2 output channels");
}

}  // namespace
}  // namespace nxrt_test
