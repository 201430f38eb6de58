// Grouped, depthwise and pointwise (1x1) float Convs and ConvTransposes, the shapes of mobile
// vision models (MobileNet, EfficientNet, PP-OCR), give the direct
// convolution's values and run on one of oneDNN's optimised kernels: the plan
// never settles for the reference kernel, which the EP would log.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>

#include <cmath>
#include <sstream>

#include "attribute_builders.hpp"
#include "nxrt/support/log.hpp"
#include "single_node_session.hpp"
#include "tensor_node_session.hpp"

namespace nxrt_test {
namespace {

using nxrt::graph::DataType;
using ::testing::HasSubstr;
using ::testing::Not;

// What the CPU EP's logger writes while alive, at debug level and up.
class CpuEpLog {
 public:
  CpuEpLog() : logger_(nxrt::GetLogger("cpu")) {
    sink_ = std::make_shared<spdlog::sinks::ostream_sink_mt>(stream_);
    logger_->sinks().push_back(sink_);
    nxrt::SetLogLevel("debug");
  }
  ~CpuEpLog() {
    std::erase(logger_->sinks(), sink_);
    nxrt::SetLogLevel("warn");
  }
  std::string text() const { return stream_.str(); }

 private:
  std::shared_ptr<spdlog::logger> logger_;
  std::ostringstream stream_;
  std::shared_ptr<spdlog::sinks::ostream_sink_mt> sink_;
};

struct GroupedConv {
  int64_t channels, maps, group, height, width, kernel, stride, pad, batch = 1;
};

// Y of a 2-D grouped convolution with a bias, in double.
std::vector<double> Direct(const GroupedConv& c, const std::vector<float>& x,
                           const std::vector<float>& w, const std::vector<float>& b, int64_t out_h,
                           int64_t out_w) {
  const int64_t per_group_in = c.channels / c.group, per_group_out = c.maps / c.group;
  std::vector<double> y(c.batch * c.maps * out_h * out_w);
  for (int64_t n = 0; n < c.batch; ++n) {
    for (int64_t o = 0; o < c.maps; ++o) {
      const int64_t g = o / per_group_out;
      for (int64_t i = 0; i < out_h; ++i) {
        for (int64_t j = 0; j < out_w; ++j) {
          double sum = b[o];
          for (int64_t ch = 0; ch < per_group_in; ++ch) {
            for (int64_t a = 0; a < c.kernel; ++a) {
              for (int64_t q = 0; q < c.kernel; ++q) {
                const int64_t r = i * c.stride - c.pad + a, s = j * c.stride - c.pad + q;
                if (r < 0 || r >= c.height || s < 0 || s >= c.width) continue;
                const int64_t plane = n * c.channels + g * per_group_in + ch;
                sum += static_cast<double>(x[(plane * c.height + r) * c.width + s]) *
                       w[((o * per_group_in + ch) * c.kernel + a) * c.kernel + q];
              }
            }
          }
          y[((n * c.maps + o) * out_h + i) * out_w + j] = sum;
        }
      }
    }
  }
  return y;
}

TEST(CpuEpConvLayouts, GroupedConvsComputeOnOptimisedKernels) {
  const GroupedConv shapes[] = {
      {240, 240, 240, 12, 80, 5, 1, 2},  // PP-OCRv4 recogniser's depthwise 5x5
      {64, 64, 64, 12, 80, 3, 2, 1},     // a strided depthwise 3x3
      {24, 24, 3, 20, 20, 3, 1, 1},      // groups of 8 channels
      {16, 32, 16, 9, 13, 3, 1, 1},      // a depth multiplier of 2
      {48, 80, 1, 6, 40, 1, 1, 0},       // pointwise: one matmul over NCHW
      {24, 8, 1, 5, 7, 1, 1, 0, 3},      // pointwise over a batch of three
      {24, 8, 1, 9, 9, 1, 2, 0},         // strided 1x1: a convolution again
  };
  CpuEpLog log;
  for (const GroupedConv& c : shapes) {
    const int64_t out_h = (c.height + 2 * c.pad - c.kernel) / c.stride + 1;
    const int64_t out_w = (c.width + 2 * c.pad - c.kernel) / c.stride + 1;
    std::vector<float> x(c.batch * c.channels * c.height * c.width);
    std::vector<float> w(c.maps * (c.channels / c.group) * c.kernel * c.kernel), b(c.maps);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(std::sin(0.37 * i));
    for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(std::cos(0.91 * i) / 4);
    for (size_t i = 0; i < b.size(); ++i) b[i] = 0.05f * static_cast<float>(i % 7);
    auto y = RunSingleNode(
        "Conv", 11,
        {Input("x", DataType::kFloat32, {c.batch, c.channels, c.height, c.width}, x),
         Input("w", DataType::kFloat32, {c.maps, c.channels / c.group, c.kernel, c.kernel}, w),
         Input("b", DataType::kFloat32, {c.maps}, b)},
        {IntsAttribute("pads", {c.pad, c.pad, c.pad, c.pad}),
         IntsAttribute("strides", {c.stride, c.stride}), IntAttribute("group", c.group)},
        DataType::kFloat32);
    ASSERT_TRUE(y.has_value()) << c.channels << " channels, group " << c.group;
    const std::vector<double> expected = Direct(c, x, w, b, out_h, out_w);
    const std::vector<double> got = ValuesAsDouble(*y);
    ASSERT_EQ(got.size(), expected.size());
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_NEAR(got[i], expected[i], 1e-4 * (1 + std::abs(expected[i])))
          << c.channels << " channels, group " << c.group << ", element " << i;
    }
  }
  EXPECT_THAT(log.text(), Not(HasSubstr("reference kernel")));
}

// ConvTranspose on oneDNN's deconvolution: every output position gathers
// x[c, i] * w[c, m, k] from the inputs whose strided, dilated window covers
// it, across groups, pads and output_padding.
TEST(CpuEpConvLayouts, TransposedConvsGiveTheScatteredProducts) {
  struct Case {
    int64_t channels, maps_per_group, group, height, width, kernel, stride, pad, dilation,
        output_padding;
  };
  const Case cases[] = {
      {24, 24, 1, 10, 14, 2, 2, 0, 1, 0},  // PP-OCRv4 detector's 2x upsampling
      {8, 3, 2, 5, 6, 3, 2, 1, 1, 1},      // groups, pads and output_padding
      {4, 5, 1, 4, 4, 3, 1, 1, 2, 0},      // dilated
  };
  for (const Case& c : cases) {
    const int64_t maps = c.maps_per_group * c.group, per_group = c.channels / c.group;
    const int64_t extent = (c.kernel - 1) * c.dilation + 1;
    const int64_t out_h = (c.height - 1) * c.stride - 2 * c.pad + extent + c.output_padding;
    const int64_t out_w = (c.width - 1) * c.stride - 2 * c.pad + extent + c.output_padding;
    std::vector<float> x(c.channels * c.height * c.width);
    std::vector<float> w(c.channels * c.maps_per_group * c.kernel * c.kernel), b(maps);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(std::sin(0.53 * i));
    for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(std::cos(0.71 * i) / 3);
    for (size_t i = 0; i < b.size(); ++i) b[i] = 0.1f * static_cast<float>(i % 3);
    std::vector<double> expected(maps * out_h * out_w);
    for (int64_t m = 0; m < maps; ++m) {
      for (int64_t k = 0; k < out_h * out_w; ++k) expected[m * out_h * out_w + k] = b[m];
    }
    for (int64_t ch = 0; ch < c.channels; ++ch) {
      const int64_t g = ch / per_group;
      for (int64_t i = 0; i < c.height; ++i) {
        for (int64_t j = 0; j < c.width; ++j) {
          for (int64_t mo = 0; mo < c.maps_per_group; ++mo) {
            for (int64_t a = 0; a < c.kernel; ++a) {
              for (int64_t q = 0; q < c.kernel; ++q) {
                const int64_t r = i * c.stride - c.pad + a * c.dilation;
                const int64_t t = j * c.stride - c.pad + q * c.dilation;
                if (r < 0 || r >= out_h || t < 0 || t >= out_w) continue;
                const int64_t m = g * c.maps_per_group + mo;
                expected[(m * out_h + r) * out_w + t] +=
                    static_cast<double>(x[(ch * c.height + i) * c.width + j]) *
                    w[((ch * c.maps_per_group + mo) * c.kernel + a) * c.kernel + q];
              }
            }
          }
        }
      }
    }
    auto y = RunSingleNode(
        "ConvTranspose", 11,
        {Input("x", DataType::kFloat32, {1, c.channels, c.height, c.width}, x),
         Input("w", DataType::kFloat32, {c.channels, c.maps_per_group, c.kernel, c.kernel}, w),
         Input("b", DataType::kFloat32, {maps}, b)},
        {IntsAttribute("pads", {c.pad, c.pad, c.pad, c.pad}),
         IntsAttribute("strides", {c.stride, c.stride}),
         IntsAttribute("dilations", {c.dilation, c.dilation}),
         IntsAttribute("output_padding", {c.output_padding, c.output_padding}),
         IntAttribute("group", c.group)},
        DataType::kFloat32);
    ASSERT_TRUE(y.has_value()) << c.channels << " channels, group " << c.group;
    ASSERT_EQ(y->shape(), (std::vector<int64_t>{1, maps, out_h, out_w}));
    const std::vector<double> got = ValuesAsDouble(*y);
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_NEAR(got[i], expected[i], 1e-4 * (1 + std::abs(expected[i])))
          << c.channels << " channels, group " << c.group << ", element " << i;
    }
  }
}

}  // namespace
}  // namespace nxrt_test
