// MatMul, Gemm, MatMulInteger, QLinearMatMul, Einsum, Conv, ConvTranspose,
// ConvInteger and QLinearConv on the ONNX node test cases; a single row
// times matrices of every size the CPU EP treats apart; com.microsoft
// FusedConv (Relu), pkg.nxrt ConvPool and float16 Conv,
// MatMulInteger and QLinearMatMul (short and long K, per-column B scale) and
// QLinearConv (per-map W scale, bias) against references computed here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "node_case_runner.hpp"
#include "single_node_session.hpp"
#include "tensor_node_session.hpp"

namespace nxrt_test {
namespace {

TEST(CpuEpLinearAlgebra, MatMulGemmEinsumNodeCases) {
  ExpectFamilyPasses("matmul", {"MatMul", "Gemm", "MatMulInteger", "QLinearMatMul", "Einsum"});
}

// A single row times B as given goes to OpenBLAS or oneDNN by B's size, and
// with two threads B is split into runs of rows whose partial sums add up:
// every choice gives the product.
TEST(CpuEpLinearAlgebra, ASingleRowTimesMatricesOfEverySizeMatchesTheSum) {
  struct Case {
    int64_t k, n;
  };
  for (const Case c : {Case{64, 64}, Case{128, 160}, Case{256, 256}, Case{300, 256}}) {
    for (const char* threads : {"1", "2"}) {
      SCOPED_TRACE(std::to_string(c.k) + "x" + std::to_string(c.n) + ", " + threads + " threads");
      std::vector<float> a(c.k), b(c.k * c.n);
      for (int64_t i = 0; i < c.k; ++i) a[i] = static_cast<float>(std::sin(0.37 * i));
      for (int64_t i = 0; i < c.k * c.n; ++i) b[i] = static_cast<float>(std::cos(0.11 * i + 0.5));
      TensorNode node;
      node.op = "MatMul";
      node.opset = 13;
      node.inputs = {{"a", Values<float>({1, c.k}, a)}, {"b", Values<float>({c.k, c.n}, b)}};
      node.outputs = {nxrt::graph::DataType::kFloat32};
      node.cpu_options = {{"threads", threads}};
      auto outputs = RunTensorNode(node);
      ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
      const auto y = (*outputs)[0].values<float>();
      ASSERT_EQ(y.size(), static_cast<size_t>(c.n));
      for (int64_t j = 0; j < c.n; ++j) {
        double sum = 0;
        for (int64_t i = 0; i < c.k; ++i) sum += double(a[i]) * b[i * c.n + j];
        ASSERT_NEAR(y[j], sum, 1e-4 * (1 + std::abs(sum))) << "output " << j;
      }
    }
  }
}

TEST(CpuEpLinearAlgebra, ConvNodeCases) {
  ExpectFamilyPasses("conv", {"Conv", "ConvTranspose", "ConvInteger", "QLinearConv"});
}

using nxrt::graph::DataType;

// IEEE half bits of a float that is a normal half (exponent and the top 10
// mantissa bits kept), and back.
uint16_t HalfBits(float v) {
  uint32_t f;
  std::memcpy(&f, &v, 4);
  if ((f & 0x7fffffff) == 0) return static_cast<uint16_t>(f >> 16);
  const int exponent = static_cast<int>((f >> 23) & 0xff) - 127 + 15;
  return static_cast<uint16_t>(((f >> 16) & 0x8000) | (exponent << 10) | ((f >> 13) & 0x3ff));
}
double FromHalf(uint16_t h) {
  const int exponent = (h >> 10) & 0x1f;
  const double mantissa = h & 0x3ff;
  const double magnitude = exponent == 0 ? mantissa * std::ldexp(1.0, -24)
                                         : (1 + mantissa / 1024) * std::ldexp(1.0, exponent - 15);
  return (h & 0x8000) ? -magnitude : magnitude;
}

TEST(CpuEpLinearAlgebra, Float16ConvMatchesADirectConvolution) {
  // X [1, 2, 5, 5], W [3, 2, 3, 3], bias, pads 1, stride 2; every value a
  // quarter, so exact in half.
  const int c = 2, m = 3, size = 5, k = 3, out = 3;
  std::vector<float> x(c * size * size), w(m * c * k * k), bias{0.5f, -1.0f, 0.25f};
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(static_cast<int>(i % 9) - 4) / 4;
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(static_cast<int>(i % 7) - 3) / 4;
  auto halves = [](const std::vector<float>& v) {
    std::vector<uint16_t> h;
    for (float f : v) h.push_back(HalfBits(f));
    return h;
  };
  auto y = RunSingleNode("Conv", 11,
                         {Input("x", DataType::kFloat16, {1, c, size, size}, halves(x)),
                          Input("w", DataType::kFloat16, {m, c, k, k}, halves(w)),
                          Input("b", DataType::kFloat16, {m}, halves(bias))},
                         {IntsAttribute("pads", {1, 1, 1, 1}), IntsAttribute("strides", {2, 2})},
                         DataType::kFloat16);
  ASSERT_TRUE(y.has_value());
  ASSERT_EQ(y->dtype(), DataType::kFloat16);
  std::vector<uint16_t> v(y->byte_size() / 2);
  std::memcpy(v.data(), y->data(), y->byte_size());
  ASSERT_EQ(v.size(), static_cast<size_t>(m * out * out));
  for (int o = 0; o < m; ++o) {
    for (int i = 0; i < out; ++i) {
      for (int j = 0; j < out; ++j) {
        double sum = bias[o];
        for (int ch = 0; ch < c; ++ch) {
          for (int a = 0; a < k; ++a) {
            for (int b = 0; b < k; ++b) {
              const int r = i * 2 - 1 + a, q = j * 2 - 1 + b;
              if (r < 0 || r >= size || q < 0 || q >= size) continue;
              sum += x[(ch * size + r) * size + q] * w[((o * c + ch) * k + a) * k + b];
            }
          }
        }
        EXPECT_NEAR(FromHalf(v[(o * out + i) * out + j]), sum, 1e-3 * (1 + std::abs(sum)))
            << o << "," << i << "," << j;
      }
    }
  }
}

// A square image of `c` channels and `size` rows, convolved with `m` maps
// of k x k weights and a bias, pads 1 and stride 1 (so the size is kept):
// the inputs of the fused-convolution tests and their direct result.
struct SquareConvolution {
  int64_t c, m, size, k;
  std::vector<double> x, w, bias;

  SquareConvolution(int64_t channels, int64_t maps, int64_t image, int64_t kernel)
      : c(channels),
        m(maps),
        size(image),
        k(kernel),
        x(c * size * size),
        w(m * c * k * k),
        bias(m) {
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.7 * static_cast<double>(i));
    for (size_t i = 0; i < w.size(); ++i) w[i] = std::cos(1.3 * static_cast<double>(i)) / 3;
    for (size_t i = 0; i < bias.size(); ++i) bias[i] = 0.1 * static_cast<double>(i % 5) - 0.2;
  }

  // [m, size, size], each value as the given float type rounds it.
  template <typename T>
  std::vector<double> Direct() const {
    std::vector<double> y(m * size * size);
    for (int64_t o = 0; o < m; ++o) {
      for (int64_t i = 0; i < size; ++i) {
        for (int64_t j = 0; j < size; ++j) {
          double sum = static_cast<T>(bias[o]);
          for (int64_t ch = 0; ch < c; ++ch) {
            for (int64_t a = 0; a < k; ++a) {
              for (int64_t b = 0; b < k; ++b) {
                const int64_t r = i - 1 + a, q = j - 1 + b;
                if (r < 0 || r >= size || q < 0 || q >= size) continue;
                sum += static_cast<double>(static_cast<T>(x[(ch * size + r) * size + q])) *
                       static_cast<T>(w[((o * c + ch) * k + a) * k + b]);
              }
            }
          }
          y[(o * size + i) * size + j] = sum;
        }
      }
    }
    return y;
  }
};

// com.microsoft FusedConv with activation Relu: the convolution's result
// through max(y, 0), on the oneDNN path with 16-channel blocks and without,
// and on the im2col path of doubles; other activations are declined.
TEST(CpuEpLinearAlgebra, FusedConvAppliesReluToTheConvolution) {
  for (const int64_t m : {int64_t{16}, int64_t{5}}) {
    for (const DataType dtype : {DataType::kFloat32, DataType::kFloat64}) {
      const SquareConvolution conv(3, m, 6, 3);
      auto tensor = [dtype](std::vector<int64_t> dims, const std::vector<double>& v) {
        return dtype == DataType::kFloat64
                   ? Values<double>(std::move(dims), v)
                   : Values<float>(std::move(dims), std::vector<float>(v.begin(), v.end()));
      };
      TensorNode node;
      node.op = "FusedConv";
      node.domain = "com.microsoft";
      node.opset = 1;
      node.inputs = {{"x", tensor({1, conv.c, conv.size, conv.size}, conv.x)},
                     {"w", tensor({m, conv.c, conv.k, conv.k}, conv.w)},
                     {"b", tensor({m}, conv.bias)}};
      node.outputs = {dtype};
      node.attributes = {StringAttribute("activation", "Relu"),
                         IntsAttribute("pads", {1, 1, 1, 1})};
      auto result = RunTensorNode(node);
      ASSERT_TRUE(result.ok()) << result.status().ToString();
      const std::vector<double> y = ValuesAsDouble((*result)[0]);
      const std::vector<double> direct =
          dtype == DataType::kFloat64 ? conv.Direct<double>() : conv.Direct<float>();
      ASSERT_EQ(y.size(), direct.size());
      size_t clipped = 0;
      for (size_t i = 0; i < y.size(); ++i) {
        clipped += direct[i] < 0;
        EXPECT_NEAR(y[i], std::max(direct[i], 0.0), 1e-5)
            << m << " maps, " << nxrt::graph::DataTypeName(dtype) << " at " << i;
      }
      EXPECT_GT(clipped, y.size() / 4);  // the activation had work to do
    }
  }
  // ONNX Runtime's FusedConv has no Swish; nxrt's pkg.nxrt one has.
  TensorNode swish;
  swish.op = "FusedConv";
  swish.domain = "com.microsoft";
  swish.opset = 1;
  swish.inputs = {{"x", Values<float>({1, 1, 2, 2}, {1, 2, 3, 4})},
                  {"w", Values<float>({1, 1, 1, 1}, {1})}};
  swish.outputs = {DataType::kFloat32};
  swish.attributes = {StringAttribute("activation", "Swish")};
  auto declined = RunTensorNode(swish);
  ASSERT_FALSE(declined.ok());
  EXPECT_NE(declined.status().message().find("activation 'Swish' is none this EP fuses"),
            std::string::npos)
      << declined.status().message();
  // A Z input (a sum added into the result) is declined with what to do.
  TensorNode with_sum = swish;
  with_sum.attributes = {StringAttribute("activation", "Relu")};
  with_sum.inputs.push_back({"b", Values<float>({1}, {0})});
  with_sum.inputs.push_back({"z", Values<float>({1, 1, 2, 2}, {1, 1, 1, 1})});
  auto sum_declined = RunTensorNode(with_sum);
  ASSERT_FALSE(sum_declined.ok());
  EXPECT_NE(sum_declined.status().message().find("add Z with an Add node after it"),
            std::string::npos)
      << sum_declined.status().message();
}

// 3x3 stride-1 convolutions with 16 or more channels in and out, which the
// float path computes by Winograd's minimal filtering: Conv, FusedConv and
// ConvPool against the direct sum, on extents that are no multiple of the
// transform's tile (so edge tiles are cut) and with a batch of two.
TEST(CpuEpLinearAlgebra, WideThreeByThreeConvolutionsMatchTheDirectSum) {
  struct Case {
    int64_t channels, maps, size;
  };
  for (const Case shape : {Case{16, 32, 11}, Case{32, 16, 9}, Case{48, 64, 14}}) {
    const SquareConvolution conv(shape.channels, shape.maps, shape.size, 3);
    const std::vector<double> direct = conv.Direct<float>();
    const int64_t plane = conv.m * conv.size * conv.size;
    // Two images: the second is the first negated, so its direct result is
    // 2 * bias - the first's.
    std::vector<float> x(conv.x.begin(), conv.x.end());
    for (double v : conv.x) x.push_back(static_cast<float>(-v));
    const std::vector<float> w(conv.w.begin(), conv.w.end());
    const std::vector<float> bias(conv.bias.begin(), conv.bias.end());
    auto expected = [&](int64_t image, int64_t i) {
      const double first = direct[i];
      return image == 0 ? first : 2.0 * static_cast<float>(conv.bias[i / (plane / conv.m)]) - first;
    };
    for (const std::string op : {"Conv", "FusedConv"}) {
      TensorNode node;
      node.op = op;
      node.domain = op == "Conv" ? "" : "com.microsoft";
      node.opset = op == "Conv" ? 11 : 1;
      node.inputs = {{"x", Values<float>({2, conv.c, conv.size, conv.size}, x)},
                     {"w", Values<float>({conv.m, conv.c, 3, 3}, w)},
                     {"b", Values<float>({conv.m}, bias)}};
      node.outputs = {DataType::kFloat32};
      node.attributes = {IntsAttribute("pads", {1, 1, 1, 1})};
      if (op == "FusedConv") node.attributes.push_back(StringAttribute("activation", "Relu"));
      auto result = RunTensorNode(node);
      ASSERT_TRUE(result.ok()) << op << ": " << result.status().ToString();
      const std::vector<double> y = ValuesAsDouble((*result)[0]);
      ASSERT_EQ(y.size(), static_cast<size_t>(2 * plane));
      for (int64_t image = 0; image < 2; ++image) {
        for (int64_t i = 0; i < plane; ++i) {
          const double want = op == "Conv" ? expected(image, i) : std::max(expected(image, i), 0.0);
          EXPECT_NEAR(y[image * plane + i], want, 2e-5 * (1 + std::abs(want)))
              << op << " " << conv.c << " to " << conv.m << " channels, image " << image << " at "
              << i;
        }
      }
    }
  }
}

// pkg.nxrt ConvPool: the convolution (bias, pads), its Relu when asked, and
// a max pool over the result ("pool_" attributes: 2x2 stride 2, and 3x3
// stride 2 with pads and ceil mode), against a direct reference; maps that
// are no multiple of 16 are declined.
TEST(CpuEpLinearAlgebra, ConvPoolPoolsTheConvolutionItComputes) {
  struct PoolCase {
    int64_t kernel, stride, pad;
    bool ceil;
  };
  for (const int64_t m : {int64_t{16}, int64_t{32}}) {
    for (const bool relu : {true, false}) {
      for (const PoolCase pool : {PoolCase{2, 2, 0, false}, PoolCase{3, 2, 1, true}}) {
        const SquareConvolution conv(3, m, 9, 3);
        const auto floats = [](const std::vector<double>& v) {
          return std::vector<float>(v.begin(), v.end());
        };
        TensorNode node;
        node.op = "ConvPool";
        node.domain = "pkg.nxrt";
        node.opset = 1;
        node.inputs = {{"x", Values<float>({1, conv.c, conv.size, conv.size}, floats(conv.x))},
                       {"w", Values<float>({m, conv.c, conv.k, conv.k}, floats(conv.w))},
                       {"b", Values<float>({m}, floats(conv.bias))}};
        node.outputs = {DataType::kFloat32};
        node.attributes = {IntsAttribute("pads", {1, 1, 1, 1}),
                           IntsAttribute("pool_kernel_shape", {pool.kernel, pool.kernel}),
                           IntsAttribute("pool_strides", {pool.stride, pool.stride}),
                           IntsAttribute("pool_pads", {pool.pad, pool.pad, pool.pad, pool.pad}),
                           IntAttribute("pool_ceil_mode", pool.ceil ? 1 : 0)};
        if (relu) node.attributes.push_back(StringAttribute("activation", "Relu"));
        auto result = RunTensorNode(node);
        ASSERT_TRUE(result.ok()) << result.status().ToString();
        const std::vector<double> y = ValuesAsDouble((*result)[0]);

        const std::vector<double> direct = conv.Direct<float>();
        const int64_t size = conv.size;
        const int64_t span = size + 2 * pool.pad - pool.kernel;
        const int64_t out =
            (pool.ceil ? (span + pool.stride - 1) / pool.stride : span / pool.stride) + 1;
        ASSERT_EQ(y.size(), static_cast<size_t>(m * out * out));
        for (int64_t o = 0; o < m; ++o) {
          for (int64_t i = 0; i < out; ++i) {
            for (int64_t j = 0; j < out; ++j) {
              double best = -INFINITY;
              for (int64_t a = 0; a < pool.kernel; ++a) {
                for (int64_t b = 0; b < pool.kernel; ++b) {
                  const int64_t r = i * pool.stride - pool.pad + a;
                  const int64_t q = j * pool.stride - pool.pad + b;
                  if (r < 0 || r >= size || q < 0 || q >= size) continue;
                  const double v = direct[(o * size + r) * size + q];
                  best = std::max(best, relu ? std::max(v, 0.0) : v);
                }
              }
              EXPECT_NEAR(y[(o * out + i) * out + j], best, 1e-5)
                  << m << " maps, relu " << relu << ", pool " << pool.kernel << " at " << o << ","
                  << i << "," << j;
            }
          }
        }
      }
    }
  }
  TensorNode five_maps;
  five_maps.op = "ConvPool";
  five_maps.domain = "pkg.nxrt";
  five_maps.opset = 1;
  five_maps.inputs = {{"x", Values<float>({1, 1, 4, 4}, std::vector<float>(16, 1.0f))},
                      {"w", Values<float>({5, 1, 1, 1}, std::vector<float>(5, 1.0f))}};
  five_maps.outputs = {DataType::kFloat32};
  five_maps.attributes = {IntsAttribute("pool_kernel_shape", {2, 2})};
  auto declined = RunTensorNode(five_maps);
  ASSERT_FALSE(declined.ok());
  EXPECT_NE(declined.status().message().find("a multiple of 16 maps"), std::string::npos)
      << declined.status().message();
}

TEST(CpuEpLinearAlgebra, MatMulIntegerIsExactForShortAndLongK) {
  // int8 A [3, K] x uint8 B [K, 2] with a per-column B zero point, at the
  // extremes of the 8-bit ranges; K = 7 takes the float product, K = 300
  // the double one.
  for (const int64_t k : {7, 300}) {
    const int64_t m = 3, n = 2;
    std::vector<int8_t> a(m * k);
    std::vector<uint8_t> b(k * n);
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<int8_t>(i % 7 ? -128 : 127);
    for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<uint8_t>(i % 5 ? 255 : 0);
    const int8_t a_zero = 127;
    const std::vector<uint8_t> b_zero{0, 1};
    auto y = RunSingleNode(
        "MatMulInteger", 10,
        {Input("a", DataType::kInt8, {m, k}, a), Input("b", DataType::kUint8, {k, n}, b),
         Input("a_zero", DataType::kInt8, {}, std::vector<int8_t>{a_zero}),
         Input("b_zero", DataType::kUint8, {n}, b_zero)},
        {}, DataType::kInt32);
    ASSERT_TRUE(y.has_value());
    const auto v = y->values<int32_t>();
    ASSERT_EQ(v.size(), static_cast<size_t>(m * n));
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        int64_t sum = 0;
        for (int64_t p = 0; p < k; ++p) {
          sum += (int64_t{a[i * k + p]} - a_zero) * (int64_t{b[p * n + j]} - b_zero[j]);
        }
        EXPECT_EQ(v[i * n + j], sum) << "K " << k << " at " << i << "," << j;
      }
    }
  }
}

TEST(CpuEpLinearAlgebra, QLinearMatMulRequantisesTheExactProduct) {
  // uint8 A [2, 3, K] x B [K, 4] with B scaled per column; K = 5 runs in
  // float, K = 300 (past the K up to which float is exact for any 8-bit
  // operands) in double.
  for (const int64_t k : {5, 300}) {
    const int64_t m = 3, n = 4;
    std::vector<uint8_t> a(2 * m * k), b(k * n);
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<uint8_t>((i * 37 + 11) % 256);
    for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<uint8_t>((i * 101 + 7) % 256);
    const float a_scale = 0.02f, y_scale = 0.5f * static_cast<float>(k);
    const std::vector<float> b_scale{0.01f, 0.03f, 0.005f, 0.02f};
    const uint8_t a_zero = 120, b_zero = 3, y_zero = 128;
    auto y = RunSingleNode("QLinearMatMul", 10,
                           {Input("a", DataType::kUint8, {2, m, k}, a),
                            Input("a_scale", DataType::kFloat32, {}, std::vector<float>{a_scale}),
                            Input("a_zero", DataType::kUint8, {}, std::vector<uint8_t>{a_zero}),
                            Input("b", DataType::kUint8, {k, n}, b),
                            Input("b_scale", DataType::kFloat32, {n}, b_scale),
                            Input("b_zero", DataType::kUint8, {}, std::vector<uint8_t>{b_zero}),
                            Input("y_scale", DataType::kFloat32, {}, std::vector<float>{y_scale}),
                            Input("y_zero", DataType::kUint8, {}, std::vector<uint8_t>{y_zero})},
                           {}, DataType::kUint8);
    ASSERT_TRUE(y.has_value());
    const auto v = y->values<uint8_t>();
    ASSERT_EQ(v.size(), static_cast<size_t>(2 * m * n));
    for (int64_t i = 0; i < 2 * m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        int64_t sum = 0;
        for (int64_t p = 0; p < k; ++p) {
          sum += (int64_t{a[i * k + p]} - a_zero) * (int64_t{b[p * n + j]} - b_zero);
        }
        const float multiplier = a_scale * b_scale[j] / y_scale;
        const double q = std::nearbyint(static_cast<double>(sum) * multiplier) + y_zero;
        EXPECT_EQ(v[i * n + j], static_cast<uint8_t>(std::clamp(q, 0.0, 255.0)))
            << "K " << k << " at " << i << "," << j;
      }
    }
  }
}

TEST(CpuEpLinearAlgebra, QLinearConvRequantisesPerMap) {
  // int8 X [1, 2, 4, 4], W [2, 2, 2, 2] (stride 1, no pads), bias, per-map
  // W scale.
  const int c = 2, maps = 2, size = 4, k = 2, out = 3;
  std::vector<int8_t> x(c * size * size), w(maps * c * k * k);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int8_t>((i * 29) % 200 - 100);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<int8_t>((i * 53) % 120 - 60);
  const std::vector<int32_t> bias{500, -1200};
  const std::vector<float> w_scale{0.01f, 0.004f};
  const float x_scale = 0.05f, y_scale = 0.2f;
  const int8_t x_zero = 3, w_zero = 0, y_zero = -5;
  auto y = RunSingleNode("QLinearConv", 10,
                         {Input("x", DataType::kInt8, {1, c, size, size}, x),
                          Input("x_scale", DataType::kFloat32, {}, std::vector<float>{x_scale}),
                          Input("x_zero", DataType::kInt8, {}, std::vector<int8_t>{x_zero}),
                          Input("w", DataType::kInt8, {maps, c, k, k}, w),
                          Input("w_scale", DataType::kFloat32, {maps}, w_scale),
                          Input("w_zero", DataType::kInt8, {}, std::vector<int8_t>{w_zero}),
                          Input("y_scale", DataType::kFloat32, {}, std::vector<float>{y_scale}),
                          Input("y_zero", DataType::kInt8, {}, std::vector<int8_t>{y_zero}),
                          Input("bias", DataType::kInt32, {maps}, bias)},
                         {}, DataType::kInt8);
  ASSERT_TRUE(y.has_value());
  const auto v = y->values<int8_t>();
  ASSERT_EQ(v.size(), static_cast<size_t>(maps * out * out));
  for (int o = 0; o < maps; ++o) {
    for (int i = 0; i < out; ++i) {
      for (int j = 0; j < out; ++j) {
        int64_t sum = bias[o];
        for (int ch = 0; ch < c; ++ch) {
          for (int a = 0; a < k; ++a) {
            for (int b = 0; b < k; ++b) {
              sum += (x[(ch * size + i + a) * size + j + b] - x_zero) *
                     (w[((o * c + ch) * k + a) * k + b] - w_zero);
            }
          }
        }
        const float multiplier = x_scale * w_scale[o] / y_scale;
        const double q = std::nearbyint(static_cast<double>(sum) * multiplier) + y_zero;
        EXPECT_EQ(v[(o * out + i) * out + j], static_cast<int8_t>(std::clamp(q, -128.0, 127.0)))
            << o << "," << i << "," << j;
      }
    }
  }
}

// Zero points come one per tensor (or one per column of B); an empty one was
// read at index 0.
TEST(CpuEpLinearAlgebra, IntegerProductsRefuseZeroPointsOfTheWrongSize) {
  TensorNode integer;
  integer.op = "MatMulInteger";
  integer.opset = 10;
  integer.inputs = {{"a", Values<uint8_t>({1, 2}, {1, 2})},
                    {"b", Values<uint8_t>({2, 2}, {1, 2, 3, 4})},
                    {"a_zero", Values<uint8_t>({}, {0})},
                    {"b_zero", Values<uint8_t>({0}, {})}};
  integer.outputs = {DataType::kInt32};
  ExpectRefused(integer,
                "MatMulInteger 'node': b_zero_point holds 0 values; give one, or one per "
                "column of B (2)");

  TensorNode linear;
  linear.op = "QLinearMatMul";
  linear.opset = 10;
  linear.inputs = {
      {"a", Values<uint8_t>({1, 2}, {1, 2})}, {"a_scale", Values<float>({}, {1.0f})},
      {"a_zero", Values<uint8_t>({}, {0})},   {"b", Values<uint8_t>({2, 2}, {1, 2, 3, 4})},
      {"b_scale", Values<float>({}, {1.0f})}, {"b_zero", Values<uint8_t>({}, {0})},
      {"y_scale", Values<float>({}, {1.0f})}, {"y_zero", Values<uint8_t>({0}, {})}};
  linear.outputs = {DataType::kUint8};
  ExpectRefused(linear, "QLinearMatMul 'node': y_zero_point must hold one value");
}

// A convolution's zero points are one per tensor (w's also one per output
// map), its scales and y_zero_point one value; two w zero points for four
// maps were read as four.
TEST(CpuEpLinearAlgebra, IntegerConvolutionsRefuseZeroPointsAndScalesOfTheWrongSize) {
  const std::vector<uint8_t> x(9, 3), w(16, 2);
  TensorNode integer;
  integer.op = "ConvInteger";
  integer.opset = 10;
  integer.inputs = {{"x", Values<uint8_t>({1, 1, 3, 3}, x)},
                    {"w", Values<uint8_t>({4, 1, 2, 2}, w)},
                    {"x_zero", Values<uint8_t>({}, {1})},
                    {"w_zero", Values<uint8_t>({2}, {1, 1})}};
  integer.outputs = {DataType::kInt32};
  ExpectRefused(integer,
                "ConvInteger 'node': w_zero_point holds 2 values; give one, or one per map (4)");

  TensorNode linear;
  linear.op = "QLinearConv";
  linear.opset = 10;
  linear.inputs = {{"x", Values<uint8_t>({1, 1, 3, 3}, x)}, {"x_scale", Values<float>({}, {1.0f})},
                   {"x_zero", Values<uint8_t>({}, {0})},    {"w", Values<uint8_t>({4, 1, 2, 2}, w)},
                   {"w_scale", Values<float>({}, {1.0f})},  {"w_zero", Values<uint8_t>({}, {0})},
                   {"y_scale", Values<float>({0}, {})},     {"y_zero", Values<uint8_t>({}, {0})}};
  linear.outputs = {DataType::kUint8};
  ExpectRefused(linear,
                "QLinearConv 'node': input 6 (a scale or zero point per tensor) has 0 elements; "
                "it needs 1");
}

}  // namespace
}  // namespace nxrt_test
