// ConvTranspose whose windows tile the output (ops/patch_conv_transpose.hpp):
// one and two spatial axes, kernels of 2x2, 3x2 and 1x4, groups, batches,
// with and without bias, against the definition summed in double. A case
// whose windows overlap runs beside them, on the other path.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "single_node_session.hpp"
#include "wave.hpp"

namespace nxrt_test {
namespace {

using nxrt::graph::DataType;

struct Case {
  int64_t batch, channels, maps, group;
  std::vector<int64_t> in, kernel, strides;  // two axes; a one-axis case's first is 1
  bool bias;
  bool one_axis = false;
};

// y[n, m, o] = bias[m] + sum over c of the group, kernel offsets k with
// o = i * stride + k, of x[n, c, i] · w[c, m of the group, k]; two spatial
// axes (one given as height 1).
std::vector<double> Reference(const Case& t, const std::vector<float>& x,
                              const std::vector<float>& w, const std::vector<float>& b,
                              const std::vector<int64_t>& out) {
  const int64_t h = t.in[0], wd = t.in[1], kh = t.kernel[0], kw = t.kernel[1];
  const int64_t sh = t.strides[0], sw = t.strides[1], oh = out[0], ow = out[1];
  const int64_t cg = t.channels / t.group, mg = t.maps / t.group;
  std::vector<double> y(t.batch * t.maps * oh * ow, 0.0);
  for (int64_t n = 0; n < t.batch; ++n) {
    for (int64_t m = 0; m < t.maps; ++m) {
      const int64_t g = m / mg;
      double* plane = y.data() + (n * t.maps + m) * oh * ow;
      for (int64_t i = 0; i < oh * ow; ++i) plane[i] = t.bias ? b[m] : 0.0;
      for (int64_t c = g * cg; c < (g + 1) * cg; ++c) {
        for (int64_t i = 0; i < h; ++i) {
          for (int64_t j = 0; j < wd; ++j) {
            for (int64_t a = 0; a < kh; ++a) {
              for (int64_t e = 0; e < kw; ++e) {
                const double xv = x[((n * t.channels + c) * h + i) * wd + j];
                const double wv = w[((c * mg + m % mg) * kh + a) * kw + e];
                plane[(i * sh + a) * ow + j * sw + e] += xv * wv;
              }
            }
          }
        }
      }
    }
  }
  return y;
}

TEST(CpuEpConvTranspose, PatchesThatTileTheOutputMatchTheDefinition) {
  const std::vector<Case> cases = {
      {1, 24, 1, 1, {1, 37}, {1, 2}, {1, 2}, true},   // one axis, NCW
      {1, 24, 1, 1, {12, 20}, {2, 2}, {2, 2}, true},  // a segmentation head's last map
      {2, 8, 6, 1, {5, 7}, {3, 2}, {3, 2}, false},    // batch, unequal kernel axes
      {1, 8, 6, 2, {4, 9}, {2, 2}, {2, 2}, true},     // groups
      {1, 4, 3, 1, {3, 5}, {1, 4}, {1, 4}, true},     // a kernel of four columns
      {1, 6, 4, 1, {5, 6}, {2, 2}, {1, 1}, true},     // overlapping windows
  };
  for (const Case& t : cases) {
    const std::vector<int64_t> out = {(t.in[0] - 1) * t.strides[0] + t.kernel[0],
                                      (t.in[1] - 1) * t.strides[1] + t.kernel[1]};
    const std::vector<float> x = Wave(t.batch * t.channels * t.in[0] * t.in[1], 0.37, 1.0);
    const std::vector<float> w =
        Wave(t.channels * (t.maps / t.group) * t.kernel[0] * t.kernel[1], 0.77, 0.3);
    const std::vector<float> b = Wave(t.maps, 1.3, 0.5);
    std::vector<int64_t> x_dims = {t.batch, t.channels}, w_dims = {t.channels, t.maps / t.group};
    std::vector<int64_t> kernel = t.kernel, strides = t.strides;
    if (t.one_axis) {
      x_dims.push_back(t.in[1]);
      w_dims.push_back(t.kernel[1]);
      kernel = {t.kernel[1]};
      strides = {t.strides[1]};
    } else {
      x_dims.insert(x_dims.end(), t.in.begin(), t.in.end());
      w_dims.insert(w_dims.end(), t.kernel.begin(), t.kernel.end());
    }
    std::vector<NodeInput> inputs = {Input("x", DataType::kFloat32, x_dims, x),
                                     Input("w", DataType::kFloat32, w_dims, w)};
    if (t.bias) inputs.push_back(Input("b", DataType::kFloat32, {t.maps}, b));
    auto y = RunSingleNode("ConvTranspose", 11, inputs,
                           {IntsAttribute("kernel_shape", kernel),
                            IntsAttribute("strides", strides), IntAttribute("group", t.group)},
                           DataType::kFloat32);
    ASSERT_TRUE(y.has_value());
    const std::vector<double> got = ValuesAsDouble(*y);
    const std::vector<double> want = Reference(t, x, w, b, out);
    ASSERT_EQ(got.size(), want.size()) << "case of " << t.channels << " channels";
    for (size_t i = 0; i < want.size(); ++i) {
      ASSERT_NEAR(got[i], want[i], 1e-4 * (1.0 + std::abs(want[i])))
          << "element " << i << " of the case of " << t.channels << " channels, " << t.maps
          << " maps";
    }
  }
}

}  // namespace
}  // namespace nxrt_test
