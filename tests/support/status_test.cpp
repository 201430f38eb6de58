#include "nxrt/support/status.hpp"

#include <gtest/gtest.h>

namespace nxrt {
namespace {

Result<int> Half(int x) {
  if (x % 2 != 0) return InvalidArgument("odd input " + std::to_string(x));
  return x / 2;
}

Result<int> Quarter(int x) {
  NXRT_ASSIGN_OR_RETURN(int half, Half(x));
  NXRT_ASSIGN_OR_RETURN(int quarter, Half(half));
  return quarter;
}

TEST(StatusTest, OkByDefault) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.ToString(), "ok");
}

TEST(StatusTest, ErrorCarriesCodeAndMessage) {
  Status s = NotFound("model.onnx: no such file");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.ToString(), "not found: model.onnx: no such file");
  EXPECT_EQ(s.WithContext("loading").message(), "loading: model.onnx: no such file");
}

TEST(StatusTest, ResultPropagatesFirstError) {
  EXPECT_EQ(*Quarter(8), 2);
  Result<int> r = Quarter(6);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "odd input 3");
}

}  // namespace
}  // namespace nxrt
