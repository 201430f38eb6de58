// DFT, STFT, the windows and MelWeightMatrix: the ONNX node test cases, and
// transforms checked against references computed here: a direct O(n^2)
// sum for prime, composite and zero-padded lengths, inverse(forward(x)) ==
// x, the real-input round trip through the one-sided transforms, and STFT
// frames against the direct sum of the windowed frame; and the generators
// asking for their output before they compute it.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <numbers>
#include <random>

#include "node_case_runner.hpp"
#include "single_node_session.hpp"
#include "tensor_node_session.hpp"

namespace nxrt_test {
namespace {

using nxrt::graph::DataType;
using Complex = std::complex<double>;

TEST(CpuEpSignal, NodeCases) {
  ExpectFamilyPasses("signal", {"DFT", "STFT", "HannWindow", "HammingWindow", "BlackmanWindow",
                                "MelWeightMatrix"});
}

std::vector<double> RandomValues(size_t count, uint32_t seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<double> values(count);
  for (double& v : values) v = uniform(generator);
  return values;
}

// sum_n x[n] e^(-+2 pi i k n / length) over the first min(n, length) samples.
std::vector<Complex> DirectDft(const std::vector<Complex>& x, int64_t length, bool inverse) {
  std::vector<Complex> y(length);
  const double sign = inverse ? 1.0 : -1.0;
  for (int64_t k = 0; k < length; ++k) {
    for (int64_t n = 0; n < std::min<int64_t>(length, static_cast<int64_t>(x.size())); ++n) {
      const double angle = sign * 2.0 * std::numbers::pi * static_cast<double>(k * n % length) /
                           static_cast<double>(length);
      y[k] += x[n] * std::polar(1.0, angle);
    }
    if (inverse) y[k] /= static_cast<double>(length);
  }
  return y;
}

void ExpectNear(const std::vector<double>& actual, const std::vector<double>& expected,
                double tolerance) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    EXPECT_NEAR(actual[i], expected[i], tolerance) << "at " << i;
  }
}

TEST(CpuEpSignal, DftOfPrimeLengthOnAMiddleAxisMatchesTheDirectSum) {
  // [2, 13, 3, 2] complex float, transformed along axis 1 (opset 17 attribute).
  const int64_t outer = 2, n = 13, inner = 3;
  const std::vector<double> raw = RandomValues(outer * n * inner * 2, 7);
  const std::vector<float> x(raw.begin(), raw.end());
  auto y = RunSingleNode("DFT", 17, {Input("x", DataType::kFloat32, {outer, n, inner, 2}, x)},
                         {IntAttribute("axis", 1)}, DataType::kFloat32);
  ASSERT_TRUE(y.has_value());
  EXPECT_EQ(y->shape(), (std::vector<int64_t>{outer, n, inner, 2}));
  std::vector<double> expected(raw.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      std::vector<Complex> line(n);
      for (int64_t k = 0; k < n; ++k) {
        const int64_t at = ((o * n + k) * inner + i) * 2;
        line[k] = {x[at], x[at + 1]};
      }
      const std::vector<Complex> spectrum = DirectDft(line, n, false);
      for (int64_t k = 0; k < n; ++k) {
        const int64_t at = ((o * n + k) * inner + i) * 2;
        expected[at] = spectrum[k].real();
        expected[at + 1] = spectrum[k].imag();
      }
    }
  }
  ExpectNear(ValuesAsDouble(*y), expected, 1e-4);
}

TEST(CpuEpSignal, DftOfZeroPaddedRealDoubleSignalMatchesTheDirectSum) {
  // Opset 20: the axis (-2) and dft_length (larger than the signal) are inputs.
  const int64_t n = 11, length = 17;
  const std::vector<double> x = RandomValues(n, 11);
  auto y = RunSingleNode("DFT", 20,
                         {Input("x", DataType::kFloat64, {1, n, 1}, x),
                          Input("length", DataType::kInt64, {}, std::vector<int64_t>{length}),
                          Input("axis", DataType::kInt64, {}, std::vector<int64_t>{-2})},
                         {}, DataType::kFloat64);
  ASSERT_TRUE(y.has_value());
  EXPECT_EQ(y->shape(), (std::vector<int64_t>{1, length, 2}));
  const std::vector<Complex> spectrum =
      DirectDft(std::vector<Complex>(x.begin(), x.end()), length, false);
  std::vector<double> expected;
  for (const Complex& c : spectrum) {
    expected.push_back(c.real());
    expected.push_back(c.imag());
  }
  ExpectNear(ValuesAsDouble(*y), expected, 1e-10);
}

TEST(CpuEpSignal, InverseOfForwardDftIsTheSignal) {
  for (int64_t n : {1, 2, 30, 64, 97}) {
    const std::vector<double> x = RandomValues(n * 2, static_cast<uint32_t>(n));
    auto forward = RunSingleNode("DFT", 20, {Input("x", DataType::kFloat64, {1, n, 2}, x)}, {},
                                 DataType::kFloat64);
    ASSERT_TRUE(forward.has_value());
    const std::vector<double> spectrum = ValuesAsDouble(*forward);
    auto back = RunSingleNode("DFT", 20, {Input("x", DataType::kFloat64, {1, n, 2}, spectrum)},
                              {IntAttribute("inverse", 1)}, DataType::kFloat64);
    ASSERT_TRUE(back.has_value());
    ExpectNear(ValuesAsDouble(*back), x, 1e-10);
  }
}

TEST(CpuEpSignal, OneSidedRoundTripRecoversARealSignalOfOddLength) {
  const int64_t n = 9;
  const std::vector<double> x = RandomValues(n, 3);
  auto half = RunSingleNode("DFT", 20, {Input("x", DataType::kFloat64, {1, n, 1}, x)},
                            {IntAttribute("onesided", 1)}, DataType::kFloat64);
  ASSERT_TRUE(half.has_value());
  EXPECT_EQ(half->shape(), (std::vector<int64_t>{1, n / 2 + 1, 2}));
  auto back =
      RunSingleNode("DFT", 20,
                    {Input("x", DataType::kFloat64, {1, n / 2 + 1, 2}, ValuesAsDouble(*half)),
                     Input("length", DataType::kInt64, {}, std::vector<int64_t>{n})},
                    {IntAttribute("inverse", 1), IntAttribute("onesided", 1)}, DataType::kFloat64);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->shape(), (std::vector<int64_t>{1, n, 1}));
  ExpectNear(ValuesAsDouble(*back), x, 1e-10);
}

TEST(CpuEpSignal, StftFramesAreDirectTransformsOfWindowedFrames) {
  const int64_t length = 40, frame = 7, step = 3;
  const std::vector<double> signal = RandomValues(length, 5);
  std::vector<double> window(frame);
  for (int64_t i = 0; i < frame; ++i) window[i] = 0.3 + 0.1 * static_cast<double>(i);
  auto y = RunSingleNode("STFT", 17,
                         {Input("signal", DataType::kFloat64, {1, length, 1}, signal),
                          Input("step", DataType::kInt64, {}, std::vector<int64_t>{step}),
                          Input("window", DataType::kFloat64, {frame}, window)},
                         {}, DataType::kFloat64);
  ASSERT_TRUE(y.has_value());
  const int64_t frames = (length - frame) / step + 1;
  const int64_t bins = frame / 2 + 1;
  EXPECT_EQ(y->shape(), (std::vector<int64_t>{1, frames, bins, 2}));
  std::vector<double> expected;
  for (int64_t f = 0; f < frames; ++f) {
    std::vector<Complex> windowed(frame);
    for (int64_t i = 0; i < frame; ++i) windowed[i] = signal[f * step + i] * window[i];
    const std::vector<Complex> spectrum = DirectDft(windowed, frame, false);
    for (int64_t k = 0; k < bins; ++k) {
      expected.push_back(spectrum[k].real());
      expected.push_back(spectrum[k].imag());
    }
  }
  ExpectNear(ValuesAsDouble(*y), expected, 1e-10);
}

TEST(CpuEpSignal, PeriodicWindowIsTheSymmetricWindowOneLongerWithoutItsLastSample) {
  for (const char* op : {"HannWindow", "HammingWindow", "BlackmanWindow"}) {
    const int64_t n = 12;
    auto periodic = RunSingleNode(op, 17, {Input("n", DataType::kInt64, {}, std::vector{n})},
                                  {IntAttribute("output_datatype", 11)}, DataType::kFloat64);
    auto symmetric = RunSingleNode(
        op, 17, {Input("n", DataType::kInt32, {}, std::vector<int32_t>{n + 1})},
        {IntAttribute("periodic", 0), IntAttribute("output_datatype", 11)}, DataType::kFloat64);
    ASSERT_TRUE(periodic.has_value() && symmetric.has_value()) << op;
    std::vector<double> expected = ValuesAsDouble(*symmetric);
    EXPECT_NEAR(expected.front(), expected.back(), 1e-12) << op;
    expected.pop_back();
    ExpectNear(ValuesAsDouble(*periodic), expected, 1e-12);
  }
}

// The generators ask the host for their output before computing it, so the
// session's memory limit refuses a window of 2^31 - 1 samples, or a mel
// matrix of 2^19 x 2^20, at once. Under a 6 GiB address space the double
// copy of the output they used to compute first fails instead, with another
// message.
TEST(CpuEpSignal, GeneratorsAskForTheirOutputBeforeComputingIt) {
#if !defined(__SANITIZE_ADDRESS__)
  rlimit before{};
  ASSERT_EQ(getrlimit(RLIMIT_AS, &before), 0);
  rlimit capped = before;
  capped.rlim_cur = std::min<rlim_t>(before.rlim_cur, rlim_t{6} << 30);
  ASSERT_EQ(setrlimit(RLIMIT_AS, &capped), 0);
#endif
  const int64_t huge = (int64_t{1} << 31) - 1;
  for (const char* op : {"HannWindow", "HammingWindow", "BlackmanWindow"}) {
    TensorNode window{.op = op, .opset = 17, .outputs = {DataType::kFloat32}};
    window.inputs = {{"size", Values<int64_t>({}, {huge})}};
    window.memory_limit_bytes = size_t{1} << 30;
    ExpectRefused(window, "memory limit of 1024.0 MiB");
  }
  TensorNode mel{.op = "MelWeightMatrix", .opset = 17, .outputs = {DataType::kFloat32}};
  mel.inputs = {{"num_mel_bins", Values<int64_t>({}, {int64_t{1} << 20})},
                {"dft_length", Values<int64_t>({}, {int64_t{1} << 20})},
                {"sample_rate", Values<int64_t>({}, {16000})},
                {"lower_edge_hertz", Values<float>({}, {0.0f})},
                {"upper_edge_hertz", Values<float>({}, {8000.0f})}};
  mel.memory_limit_bytes = size_t{1} << 30;
  ExpectRefused(mel, "memory limit of 1024.0 MiB");
#if !defined(__SANITIZE_ADDRESS__)
  ASSERT_EQ(setrlimit(RLIMIT_AS, &before), 0);
#endif
}

}  // namespace
}  // namespace nxrt_test
