// A float convolution along one axis (1-D, or 2-D over a single row or
// column) runs on one kernel for every length: the session makes it once,
// and each new length gives what a direct convolution gives, pads, strides,
// dilations, SAME padding and a fused activation included, as does a length
// that repeats until the kernel plans oneDNN's convolution for it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "attribute_builders.hpp"
#include "cpu_environment.hpp"
#include "ir_model_builder.hpp"
#include "nxrt/session.hpp"
#include "wave.hpp"

namespace nxrt_test {
namespace {

using nxrt::graph::DataType;

constexpr int64_t kChannels = 12;
constexpr int64_t kMaps = 20;

// The window along the one axis that moves; the other axis of a 2-D
// convolution has extent 1 in the image and the kernel.
struct Window {
  int64_t kernel = 3;
  int64_t stride = 1;
  int64_t dilation = 1;
  int64_t pad_begin = 0;
  int64_t pad_end = 0;
  std::string auto_pad;  // empty: the pads above
};

Window Padded(int64_t kernel, int64_t stride, int64_t dilation, int64_t pad_begin,
              int64_t pad_end) {
  return {kernel, stride, dilation, pad_begin, pad_end, ""};
}

// x [N, 12, L] (rank 3), [N, 12, 1, L] (`along_width`) or [N, 12, L, 1]
// -> Conv (20 maps, bias) -> Relu when `relu`.
struct Model {
  int rank = 3;
  bool along_width = true;
  Window window;
  bool relu = false;

  std::vector<int64_t> KernelDims() const {
    if (rank == 3) return {window.kernel};
    return along_width ? std::vector<int64_t>{1, window.kernel}
                       : std::vector<int64_t>{window.kernel, 1};
  }
  std::vector<int64_t> InputDims(int64_t batch, int64_t length) const {
    if (rank == 3) return {batch, kChannels, length};
    return along_width ? std::vector<int64_t>{batch, kChannels, 1, length}
                       : std::vector<int64_t>{batch, kChannels, length, 1};
  }
  std::vector<int64_t> Pads() const {
    if (rank == 3) return {window.pad_begin, window.pad_end};
    return along_width ? std::vector<int64_t>{0, window.pad_begin, 0, window.pad_end}
                       : std::vector<int64_t>{window.pad_begin, 0, window.pad_end, 0};
  }
  std::vector<int64_t> AlongAxis(int64_t value) const {
    if (rank == 3) return {value};
    return along_width ? std::vector<int64_t>{1, value} : std::vector<int64_t>{value, 1};
  }

  nxrt::graph::Graph Build() const {
    IrModelBuilder b(13, "unrolled");
    std::vector<std::variant<int64_t, std::string>> x_dims = {"n", kChannels, "l"};
    if (rank == 4) {
      x_dims = along_width ? decltype(x_dims){"n", kChannels, 1, "l"}
                           : decltype(x_dims){"n", kChannels, "l", 1};
    }
    const auto x = b.SymbolicInput("x", x_dims);
    std::vector<int64_t> w_dims = {kMaps, kChannels};
    for (int64_t k : KernelDims()) w_dims.push_back(k);
    const auto w = b.Floats("w", w_dims, Wave(kMaps * kChannels * window.kernel, 0.77, 0.3));
    const auto bias = b.Floats("b", {kMaps}, Wave(kMaps, 1.3, 0.5));
    std::vector<nxrt::graph::Attribute> attributes = {
        IntsAttribute("strides", AlongAxis(window.stride)),
        IntsAttribute("dilations", AlongAxis(window.dilation))};
    if (window.auto_pad.empty()) {
      attributes.push_back(IntsAttribute("pads", Pads()));
    } else {
      attributes.push_back(StringAttribute("auto_pad", window.auto_pad));
    }
    const auto y = b.Tensor("Conv", {x, w, bias}, "conv", DataType::kFloat32, attributes);
    b.Output(relu ? b.Tensor("Relu", {y}, "y") : y);
    return b.Take();
  }

  // The output length and begin pad at `length`, as ONNX defines them.
  std::pair<int64_t, int64_t> Resolve(int64_t length) const {
    const int64_t extent = (window.kernel - 1) * window.dilation + 1;
    if (window.auto_pad.empty()) {
      return {(length + window.pad_begin + window.pad_end - extent) / window.stride + 1,
              window.pad_begin};
    }
    const int64_t out = (length + window.stride - 1) / window.stride;
    const int64_t total = std::max<int64_t>(0, (out - 1) * window.stride + extent - length);
    return {out, window.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2};
  }
};

std::unique_ptr<nxrt::Session> SessionOf(const Model& model) {
  nxrt::SessionOptions options;
  options.providers = {{"cpu", {{"threads", "1"}}}};
  auto session = nxrt::Session::Create(CpuEnvironment(), model.Build(), options);
  EXPECT_TRUE(session.ok()) << session.status().ToString();
  return session.ok() ? std::move(session).value() : nullptr;
}

void ExpectValues(nxrt::Session& session, const Model& model, int64_t batch, int64_t length) {
  const std::vector<int64_t> dims = model.InputDims(batch, length);
  std::vector<float> x = Wave(batch * kChannels * length, 0.41, 1.0);
  const nxrt::NamedTensor inputs[] = {
      {"x", nxrt::Tensor::Borrow(DataType::kFloat32, dims, x.data(), x.size() * sizeof(float))}};
  auto outputs = session.Run(inputs, {});
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  const auto [out, pad_begin] = model.Resolve(length);
  std::vector<int64_t> out_dims = model.InputDims(batch, out);
  out_dims[1] = kMaps;
  ASSERT_EQ((*outputs)[0].shape(), out_dims) << "length " << length;
  const auto y = (*outputs)[0].values<float>();
  const Window& g = model.window;
  const std::vector<float> w = Wave(kMaps * kChannels * g.kernel, 0.77, 0.3);
  const std::vector<float> bias = Wave(kMaps, 1.3, 0.5);
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t m = 0; m < kMaps; ++m) {
      for (int64_t o = 0; o < out; ++o) {
        double sum = bias[m];
        for (int64_t c = 0; c < kChannels; ++c) {
          for (int64_t k = 0; k < g.kernel; ++k) {
            const int64_t at = o * g.stride + k * g.dilation - pad_begin;
            if (at < 0 || at >= length) continue;
            sum += static_cast<double>(w[(m * kChannels + c) * g.kernel + k]) *
                   x[(n * kChannels + c) * length + at];
          }
        }
        if (model.relu && sum < 0) sum = 0;
        ASSERT_NEAR(y[(n * kMaps + m) * out + o], sum, 1e-5 * (1 + std::abs(sum)))
            << "length " << length << ", image " << n << ", map " << m << ", position " << o;
      }
    }
  }
}

// Runs `model` at each (batch, length) in one session, expecting one kernel,
// made once and serving them all.
void ExpectOneKernelServesEveryLength(const Model& model,
                                      const std::vector<std::pair<int64_t, int64_t>>& runs) {
  auto session = SessionOf(model);
  ASSERT_NE(session, nullptr);
  for (const auto& [batch, length] : runs) {
    ExpectValues(*session, model, batch, length);
    if (testing::Test::HasFatalFailure()) return;
  }
  const nxrt::KernelCacheStats stats = session->kernel_cache_stats();
  EXPECT_EQ(stats.entries, stats.shape_general_entries);
  EXPECT_EQ(stats.misses, stats.entries);
}

TEST(UnrolledConv, AOneDimensionalConvServesEveryLength) {
  Model model;
  model.window = Padded(5, 2, 2, 3, 1);
  ExpectOneKernelServesEveryLength(model, {{1, 40}, {2, 17}, {1, 9}, {1, 40}, {3, 64}});
}

TEST(UnrolledConv, SamePaddingIsResolvedAgainAtEachLength) {
  for (const char* auto_pad : {"SAME_UPPER", "SAME_LOWER"}) {
    SCOPED_TRACE(auto_pad);
    Model model;
    model.window = {4, 3, 1, 0, 0, auto_pad};
    ExpectOneKernelServesEveryLength(model, {{1, 31}, {1, 32}, {2, 7}, {1, 1}});
  }
}

TEST(UnrolledConv, AConvOverOneRowWithItsReluServesEveryWidth) {
  Model model;
  model.rank = 4;
  model.relu = true;
  model.window = Padded(3, 1, 1, 1, 1);
  ExpectOneKernelServesEveryLength(model, {{1, 52}, {1, 13}, {2, 100}, {1, 2}});
}

TEST(UnrolledConv, AConvDownOneColumnServesEveryHeight) {
  Model model;
  model.rank = 4;
  model.along_width = false;
  model.window = Padded(5, 1, 1, 2, 2);
  ExpectOneKernelServesEveryLength(model, {{1, 64}, {1, 21}, {2, 5}});
}

TEST(UnrolledConv, ALengthThatRepeatsGivesTheSameValuesOnceSpecialised) {
  Model model;
  model.rank = 4;
  model.relu = true;
  model.window = Padded(3, 2, 1, 1, 1);
  ExpectOneKernelServesEveryLength(
      model, {{2, 40}, {2, 40}, {2, 40}, {2, 40}, {1, 23}, {2, 40}, {1, 23}, {1, 23}, {1, 23}});
}

}  // namespace
}  // namespace nxrt_test
