// Cast, QuantizeLinear and DequantizeLinear to and from the 8- and 4-bit
// floats and the packed sub-byte integers, QuantizeLinear's float32
// division, and BitCast. The expected codes are worked out by hand from
// each format's layout (sign, exponent bias, mantissa width): largest
// finite values, smallest subnormals, ties that must round to even, NaN
// and infinity with and without `saturate`, and the fnuz formats' single
// zero; packed results are checked byte by byte with odd element counts.
// Also runs the onnx package's node cases of these ops when they have been
// exported (Debian's cases of Cast, CastLike and the quantisation ops run in
// cast_test.cpp and corpus_test.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "../graph/loader/test_case_folders.hpp"
#include "node_case_runner.hpp"
#include "single_node_session.hpp"
#include "tensor_node_session.hpp"

namespace nxrt_test {
namespace {

using nxrt::graph::DataType;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

std::vector<uint8_t> BytesOf(const nxrt::Tensor& t) {
  const auto* p = static_cast<const uint8_t*>(t.data());
  return std::vector<uint8_t>(p, p + t.byte_size());
}

// Cast of float `values` to `to`; the output's raw bytes.
std::vector<uint8_t> CastFloats(const std::vector<float>& values, DataType to, bool saturate,
                                const std::string& round_mode = "up") {
  auto y = RunSingleNode(
      "Cast", 25, {Input("x", DataType::kFloat32, {static_cast<int64_t>(values.size())}, values)},
      {IntAttribute("to", static_cast<int64_t>(to)), IntAttribute("saturate", saturate ? 1 : 0),
       StringAttribute("round_mode", round_mode)},
      to);
  return y ? BytesOf(*y) : std::vector<uint8_t>{};
}

// Cast of raw `bytes` holding `count` elements of `from` to float.
std::vector<float> CastToFloats(const std::vector<uint8_t>& bytes, int64_t count, DataType from) {
  auto y = RunSingleNode("Cast", 25, {Input("x", from, {count}, bytes)},
                         {IntAttribute("to", static_cast<int64_t>(DataType::kFloat32))},
                         DataType::kFloat32);
  if (!y) return {};
  const auto v = y->values<float>();
  return std::vector<float>(v.begin(), v.end());
}

struct Case {
  float value;
  uint8_t saturated;
  uint8_t unsaturated;
};

void ExpectEncodes(DataType to, const std::vector<Case>& cases) {
  std::vector<float> values;
  for (const Case& c : cases) values.push_back(c.value);
  const auto sat = CastFloats(values, to, true);
  const auto unsat = CastFloats(values, to, false);
  ASSERT_EQ(sat.size(), cases.size());
  ASSERT_EQ(unsat.size(), cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    EXPECT_EQ(sat[i], cases[i].saturated) << "saturate, value " << cases[i].value;
    EXPECT_EQ(unsat[i], cases[i].unsaturated) << "no saturate, value " << cases[i].value;
  }
}

TEST(CpuEpLowPrecision, Float8E4M3FNEncodes) {
  // Bias 7, 3 mantissa bits, no infinity, NaN = S.1111.111, max 448 = 0x7E.
  ExpectEncodes(DataType::kFloat8E4M3FN,
                {{1.0f, 0x38, 0x38},
                 {-2.0f, 0xC0, 0xC0},
                 {448.0f, 0x7E, 0x7E},
                 {464.0f, 0x7E, 0x7E},  // tie between 448 (even) and 480
                 {465.0f, 0x7E, 0x7F},  // beyond: saturates or becomes NaN
                 {-1e6f, 0xFE, 0xFF},
                 {kInf, 0x7E, 0x7F},
                 {-kInf, 0xFE, 0xFF},
                 {kNan, 0x7F, 0x7F},
                 {0x1p-9f, 0x01, 0x01},    // smallest subnormal
                 {0x1p-10f, 0x00, 0x00},   // tie with zero: even
                 {0x1.8p-9f, 0x02, 0x02},  // tie between 1 and 2 subnormal steps
                 {1.0625f, 0x38, 0x38},    // tie between 1 and 1.125
                 {1.1875f, 0x3A, 0x3A},    // tie between 1.125 and 1.25
                 {0x1p-6f, 0x08, 0x08},    // smallest normal
                 {-0.0f, 0x80, 0x80}});
}

TEST(CpuEpLowPrecision, Float8E4M3FNUZEncodes) {
  // Bias 8, no infinity, no negative zero, NaN = 0x80, max 240 = 0x7F.
  ExpectEncodes(DataType::kFloat8E4M3FNUZ, {{1.0f, 0x40, 0x40},
                                            {240.0f, 0x7F, 0x7F},
                                            {-240.0f, 0xFF, 0xFF},
                                            {300.0f, 0x7F, 0x80},
                                            {kInf, 0x7F, 0x80},
                                            {-kInf, 0xFF, 0x80},
                                            {kNan, 0x80, 0x80},
                                            {-0.0f, 0x00, 0x00},
                                            {-0x1p-12f, 0x00, 0x00},  // rounds to zero
                                            {0x1p-10f, 0x01, 0x01}});
}

TEST(CpuEpLowPrecision, Float8E5M2Encodes) {
  // Bias 15, 2 mantissa bits, infinity = S.11111.00, max 57344 = 0x7B.
  ExpectEncodes(DataType::kFloat8E5M2, {{1.0f, 0x3C, 0x3C},
                                        {57344.0f, 0x7B, 0x7B},
                                        {61440.0f, 0x7B, 0x7C},  // tie rounds to 65536
                                        {kInf, 0x7B, 0x7C},
                                        {-kInf, 0xFB, 0xFC},
                                        {0x1p-16f, 0x01, 0x01},
                                        {0x1p-17f, 0x00, 0x00},
                                        {1.125f, 0x3C, 0x3C},  // tie between 1 and 1.25
                                        {-0.0f, 0x80, 0x80}});
}

TEST(CpuEpLowPrecision, Float8E5M2FNUZEncodes) {
  // Bias 16, no infinity, no negative zero, NaN = 0x80, max 57344 = 0x7F.
  ExpectEncodes(DataType::kFloat8E5M2FNUZ, {{1.0f, 0x40, 0x40},
                                            {57344.0f, 0x7F, 0x7F},
                                            {1e6f, 0x7F, 0x80},
                                            {-kInf, 0xFF, 0x80},
                                            {0x1p-17f, 0x01, 0x01},
                                            {-0.0f, 0x00, 0x00},
                                            {kNan, 0x80, 0x80}});
}

TEST(CpuEpLowPrecision, Float4E2M1EncodesPacked) {
  // Values 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives; always saturates.
  // Seven elements: the last byte's high nibble stays zero.
  const std::vector<float> x{6.0f, 5.0f, 0.25f, 0.75f, -100.0f, -0.0f, 2.5f};
  // Codes 7, 6 (tie to even 4), 0, 2 (tie to even 1), F, 8, 4 (tie to even 2).
  const std::vector<uint8_t> expected{0x67, 0x20, 0x8F, 0x04};
  EXPECT_EQ(CastFloats(x, DataType::kFloat4E2M1, true), expected);
  EXPECT_EQ(CastFloats(x, DataType::kFloat4E2M1, false), expected);
  const auto back = CastToFloats(expected, 7, DataType::kFloat4E2M1);
  EXPECT_EQ(back, (std::vector<float>{6.0f, 4.0f, 0.0f, 1.0f, -6.0f, -0.0f, 2.0f}));
  EXPECT_TRUE(std::signbit(back.at(5)));
}

TEST(CpuEpLowPrecision, Float8E8M0RoundsByMode) {
  // 2^(code - 127); the sign is dropped; 0xFF is NaN.
  const std::vector<float> x{1.0f, 3.0f, 2.9f, 3.5f, 0x1.8p127f, kNan};
  EXPECT_EQ(CastFloats(x, DataType::kFloat8E8M0, true, "up"),
            (std::vector<uint8_t>{127, 129, 129, 129, 0xFE, 0xFF}));
  EXPECT_EQ(CastFloats(x, DataType::kFloat8E8M0, false, "up"),
            (std::vector<uint8_t>{127, 129, 129, 129, 0xFF, 0xFF}));
  EXPECT_EQ(CastFloats(x, DataType::kFloat8E8M0, true, "down"),
            (std::vector<uint8_t>{127, 128, 128, 128, 254, 0xFF}));
  EXPECT_EQ(CastFloats(x, DataType::kFloat8E8M0, true, "nearest"),
            (std::vector<uint8_t>{127, 129, 128, 129, 0xFE, 0xFF}));
  const auto back = CastToFloats({0, 127, 130, 0xFF}, 4, DataType::kFloat8E8M0);
  ASSERT_EQ(back.size(), 4u);
  EXPECT_EQ(back[0], 0x1p-127f);
  EXPECT_EQ(back[1], 1.0f);
  EXPECT_EQ(back[2], 8.0f);
  EXPECT_TRUE(std::isnan(back[3]));
}

// Every code of a float8 format decodes to a value that encodes back to it
// (NaN codes to NaN), and the decoded values increase with the magnitude.
TEST(CpuEpLowPrecision, Float8CodesRoundTrip) {
  for (DataType t : {DataType::kFloat8E4M3FN, DataType::kFloat8E4M3FNUZ, DataType::kFloat8E5M2,
                     DataType::kFloat8E5M2FNUZ}) {
    std::vector<uint8_t> codes(256);
    for (int i = 0; i < 256; ++i) codes[i] = static_cast<uint8_t>(i);
    const auto values = CastToFloats(codes, 256, t);
    ASSERT_EQ(values.size(), 256u);
    const auto again = CastFloats(values, t, false);
    ASSERT_EQ(again.size(), 256u);
    for (int i = 0; i < 256; ++i) {
      if (std::isnan(values[i])) {
        EXPECT_TRUE(std::isnan(CastToFloats({again[i]}, 1, t).at(0))) << "code " << i;
      } else if (values[i] == 0 && i == 0x80) {
        EXPECT_EQ(again[i],
                  t == DataType::kFloat8E4M3FNUZ || t == DataType::kFloat8E5M2FNUZ ? 0x00 : 0x80);
      } else {
        EXPECT_EQ(again[i], i) << "format " << static_cast<int>(t) << " value " << values[i];
      }
      if (i > 0 && i < 0x7B && !std::isnan(values[i + 1])) {
        EXPECT_LT(values[i], values[i + 1]) << "code " << i;
      }
    }
  }
}

TEST(CpuEpLowPrecision, PackedIntegersRoundTripWithOddCounts) {
  // int4: low nibble first; casts wrap like the wider integers (9 -> -7).
  const std::vector<int8_t> x{1, -1, 7, -8, 9, 0, 3};
  auto y =
      RunSingleNode("Cast", 25, {Input("x", DataType::kInt8, {7}, x)},
                    {IntAttribute("to", static_cast<int64_t>(DataType::kInt4))}, DataType::kInt4);
  ASSERT_TRUE(y.has_value());
  EXPECT_EQ(BytesOf(*y), (std::vector<uint8_t>{0xF1, 0x87, 0x09, 0x03}));
  auto back =
      RunSingleNode("Cast", 25, {Input("x", DataType::kInt4, {7}, BytesOf(*y))},
                    {IntAttribute("to", static_cast<int64_t>(DataType::kInt8))}, DataType::kInt8);
  ASSERT_TRUE(back.has_value());
  const auto v = back->values<int8_t>();
  EXPECT_EQ(std::vector<int8_t>(v.begin(), v.end()), (std::vector<int8_t>{1, -1, 7, -8, -7, 0, 3}));

  // uint2 and int2: four to a byte; five elements take two bytes.
  const std::vector<uint8_t> codes{0x39, 0x01};  // elements 1, 2, 3, 0, 1
  const auto as_uint2 = CastToFloats(codes, 5, DataType::kUint2);
  EXPECT_EQ(as_uint2, (std::vector<float>{1, 2, 3, 0, 1}));
  const auto as_int2 = CastToFloats(codes, 5, DataType::kInt2);
  EXPECT_EQ(as_int2, (std::vector<float>{1, -2, -1, 0, 1}));
  EXPECT_EQ(CastFloats(as_int2, DataType::kInt2, true), codes);
  EXPECT_EQ(CastFloats(as_uint2, DataType::kUint2, true), codes);
}

TEST(CpuEpLowPrecision, BlockedQuantizeToInt4Saturates) {
  // x [2, 5] quantised in blocks of 2 along axis 1: scales [2, 3]. Rounding
  // is to even before the zero point, then clamped to [-8, 7].
  const std::vector<float> x{1, 3, -5, 100, 2.5f, 0, 7, 9, -100, 1.5f};
  const std::vector<float> scale{1, 2, 0.5f, 2, 1, 0.25f};
  const std::vector<uint8_t> zero{0x10, 0xF0, 0x02};  // int4 [2, 3]: 0,1,0,-1,2,0
  auto y = RunSingleNode(
      "QuantizeLinear", 21,
      {Input("x", DataType::kFloat32, {2, 5}, x), Input("scale", DataType::kFloat32, {2, 3}, scale),
       Input("zero", DataType::kInt4, {2, 3}, zero)},
      {IntAttribute("axis", 1), IntAttribute("block_size", 2)}, DataType::kInt4);
  ASSERT_TRUE(y.has_value());
  // Row 0: 1/1+0=1, 3/1+0=3, -5/2+1=-1 (tie to -2), 100/2+1 -> 7, 2.5/0.5+0=5.
  // Row 1: 0/2-1=-1, 7/2-1=3 (3.5 -> 4), 9/1+2 -> 7, -100/1+2 -> -8, 1.5/0.25=6.
  const std::vector<int> q{1, 3, -1, 7, 5, -1, 3, 7, -8, 6};
  std::vector<uint8_t> expected(5, 0);
  for (size_t i = 0; i < q.size(); ++i) {
    expected[i / 2] |= static_cast<uint8_t>((q[i] & 0xF) << (4 * (i % 2)));
  }
  EXPECT_EQ(BytesOf(*y), expected);

  auto d =
      RunSingleNode("DequantizeLinear", 21,
                    {Input("x", DataType::kInt4, {2, 5}, BytesOf(*y)),
                     Input("scale", DataType::kFloat32, {2, 3}, scale),
                     Input("zero", DataType::kInt4, {2, 3}, zero)},
                    {IntAttribute("axis", 1), IntAttribute("block_size", 2)}, DataType::kFloat32);
  ASSERT_TRUE(d.has_value());
  const auto v = d->values<float>();
  const std::vector<int> zeros{0, 0, 1, 1, 0, -1, -1, 2, 2, 0};
  const std::vector<float> scales{1, 1, 2, 2, 0.5f, 2, 2, 1, 1, 0.25f};
  ASSERT_EQ(v.size(), q.size());
  for (size_t i = 0; i < q.size(); ++i) {
    EXPECT_EQ(v[i], static_cast<float>(q[i] - zeros[i]) * scales[i]) << "element " << i;
  }
}

TEST(CpuEpLowPrecision, QuantizeLinearDividesInTheInputsFloatType) {
  // With scale 0.1f, 0.35f / 0.1f is 3.4999998882 exactly but rounds to 3.5
  // in float32, a tie that goes to 4; likewise 0.75f / 0.1f -> 7.5 -> 8 and
  // 0.85f / 0.1f -> 8.5 -> 8, where rounding the exact quotient gives 3, 7, 9.
  auto y = RunSingleNode(
      "QuantizeLinear", 21,
      {Input("x", DataType::kFloat32, {4}, std::vector<float>{0.35f, 0.75f, 0.85f, 0.15f}),
       Input("scale", DataType::kFloat32, {}, std::vector<float>{0.1f}),
       Input("zero", DataType::kUint8, {}, std::vector<uint8_t>{0})},
      {}, DataType::kUint8);
  ASSERT_TRUE(y.has_value());
  EXPECT_EQ(BytesOf(*y), (std::vector<uint8_t>{4, 8, 8, 2}));
}

// The zero point has the scale's shape; an empty one was read at index 0.
TEST(CpuEpLowPrecision, QuantizeRefusesAZeroPointOfAnotherSizeThanTheScale) {
  for (const char* op : {"QuantizeLinear", "DequantizeLinear"}) {
    const bool quantize = std::string(op) == "QuantizeLinear";
    TensorNode node;
    node.op = op;
    node.opset = 21;
    node.inputs = {
        {"x", quantize ? Values<float>({3}, {1.0f, 2.0f, 3.0f}) : Values<uint8_t>({3}, {1, 2, 3})},
        {"scale", Values<float>({}, {0.5f})},
        {"zero", Values<uint8_t>({0}, {})}};
    node.outputs = {quantize ? DataType::kUint8 : DataType::kFloat32};
    ExpectRefused(node, std::string(op) +
                            ": the zero point holds 0 values and the scale 1; give them one shape");
    // An empty scale is neither per-tensor nor one per entry of the axis.
    node.inputs[1].tensor = Values<float>({0}, {});
    node.inputs[2].tensor = Values<uint8_t>({0}, {});
    node.attributes = {IntAttribute("axis", 0)};
    ExpectRefused(node, "scale length differs from the axis");
  }
}

TEST(CpuEpLowPrecision, BitCastKeepsTheBytes) {
  const std::vector<float> x{1.0f, -0.0f, kInf};
  auto y =
      RunSingleNode("BitCast", 26, {Input("x", DataType::kFloat32, {3}, x)},
                    {IntAttribute("to", static_cast<int64_t>(DataType::kInt32))}, DataType::kInt32);
  ASSERT_TRUE(y.has_value());
  const auto v = y->values<int32_t>();
  EXPECT_EQ(std::vector<int32_t>(v.begin(), v.end()),
            (std::vector<int32_t>{0x3F800000, static_cast<int32_t>(0x80000000u), 0x7F800000}));
}

// The onnx package's node cases of these ops (they carry the low-precision
// dtypes that Debian's older test data lacks), when they have been exported.
TEST(CpuEpLowPrecision, OnnxPackageNodeCases) {
  const auto dir = nxrt::graph::testing::OnnxNodeCasesDir();
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << dir << " not found";
  size_t ran = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    const bool ours = name.starts_with("test_cast") || name.starts_with("test_bitcast") ||
                      name.starts_with("test_quantizelinear") ||
                      name.starts_with("test_dequantizelinear");
    if (!ours) continue;
    const CaseResult r = RunNodeCase(entry.path());
    ++ran;
    EXPECT_NE(r.outcome, CaseOutcome::kFailed) << name << ": " << r.detail;
  }
  EXPECT_GT(ran, 0u);
}

}  // namespace
}  // namespace nxrt_test
