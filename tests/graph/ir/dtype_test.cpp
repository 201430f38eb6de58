// Element types: ONNX numbering, names and widths, including the types
// newer ONNX versions added (float8e8m0, the 2-bit integers).
#include <gtest/gtest.h>

#include "nxrt/graph/dtype.hpp"

namespace nxrt::graph {
namespace {

TEST(DataTypeTest, OnnxNumbersMapByValue) {
  EXPECT_EQ(DataTypeFromOnnx(1), DataType::kFloat32);
  EXPECT_EQ(DataTypeFromOnnx(16), DataType::kBfloat16);
  EXPECT_EQ(DataTypeFromOnnx(24), DataType::kFloat8E8M0);
  EXPECT_EQ(DataTypeFromOnnx(25), DataType::kUint2);
  EXPECT_EQ(DataTypeFromOnnx(26), DataType::kInt2);
  EXPECT_FALSE(DataTypeFromOnnx(27).has_value());
  EXPECT_FALSE(DataTypeFromOnnx(-1).has_value());
}

TEST(DataTypeTest, NamesAndWidths) {
  EXPECT_EQ(DataTypeName(DataType::kFloat8E8M0), "float8e8m0");
  EXPECT_EQ(DataTypeName(DataType::kUint2), "uint2");
  EXPECT_EQ(DataTypeName(DataType::kInt2), "int2");
  EXPECT_EQ(DataTypeBits(DataType::kFloat8E8M0), 8u);
  EXPECT_EQ(DataTypeBits(DataType::kInt2), 2u);
  EXPECT_EQ(DataTypeBits(DataType::kUint2), 2u);
  EXPECT_EQ(DataTypeBits(DataType::kInt4), 4u);
  EXPECT_EQ(DataTypeBits(DataType::kComplex128), 128u);
  EXPECT_EQ(DataTypeBits(DataType::kString), 0u);
}

}  // namespace
}  // namespace nxrt::graph
