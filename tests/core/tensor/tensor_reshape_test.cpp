// Tensor::Reshape, which the session uses for every output it hands back:
// storage reused at the same size, borrowed host memory kept at the same
// size (so an output lands in the caller's buffer), and a tensor that cannot have the memory
// it asks for reported as out of memory and left as it was.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "nxrt/tensor.hpp"

namespace {

using nxrt::DataType;

TEST(TensorReshape, KeepsItsStorageAtTheSameByteSize) {
  auto tensor = nxrt::Tensor::FromValues<float>({2, 3}, std::vector<float>{1, 2, 3, 4, 5, 6});
  ASSERT_TRUE(tensor.ok()) << tensor.status().ToString();
  const void* storage = tensor->data();
  ASSERT_TRUE(tensor->Reshape(DataType::kInt32, std::vector<int64_t>{3, 2}).ok());
  EXPECT_EQ(tensor->data(), storage);
  EXPECT_EQ(tensor->dtype(), DataType::kInt32);
  EXPECT_EQ(tensor->shape(), (std::vector<int64_t>{3, 2}));
}

TEST(TensorReshape, BorrowedHostMemoryOfTheSameByteSizeStaysBorrowed) {
  std::vector<float> buffer(6, 0.0f);
  nxrt::Tensor tensor =
      nxrt::Tensor::Borrow(DataType::kFloat32, {6}, buffer.data(), buffer.size() * sizeof(float));
  ASSERT_TRUE(tensor.Reshape(DataType::kFloat32, std::vector<int64_t>{2, 3}).ok());
  EXPECT_FALSE(tensor.owns_data());
  EXPECT_EQ(tensor.data(), buffer.data());
  EXPECT_EQ(tensor.shape(), (std::vector<int64_t>{2, 3}));
}

TEST(TensorReshape, BorrowedMemoryOfAnotherSizeIsLeftForStorageOfItsOwn) {
  std::vector<float> buffer(6, 0.0f);
  nxrt::Tensor tensor =
      nxrt::Tensor::Borrow(DataType::kFloat32, {6}, buffer.data(), buffer.size() * sizeof(float));
  ASSERT_TRUE(tensor.Reshape(DataType::kFloat32, std::vector<int64_t>{4}).ok());
  EXPECT_TRUE(tensor.owns_data());
  EXPECT_NE(tensor.data(), buffer.data());
  EXPECT_EQ(tensor.byte_size(), 4 * sizeof(float));
}

// 2^40 floats (4 TiB): more than any test machine holds, within 64 bits.
TEST(TensorReshape, MemoryItCannotHaveIsAnErrorAndTheTensorStaysAsItWas) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer's operator new aborts where it would throw std::bad_alloc";
#endif
  auto tensor = nxrt::Tensor::FromValues<float>({2}, std::vector<float>{1.5f, -2.0f});
  ASSERT_TRUE(tensor.ok()) << tensor.status().ToString();
  for (const DataType dtype : {DataType::kFloat32, DataType::kString}) {
    const nxrt::Status status = tensor->Reshape(dtype, std::vector<int64_t>{int64_t{1} << 40});
    ASSERT_FALSE(status.ok()) << "allocated 2^40 elements";
    EXPECT_EQ(status.code(), nxrt::StatusCode::kOutOfMemory) << status.ToString();
    EXPECT_NE(status.message().find("cannot allocate host memory for 1099511627776"),
              std::string::npos)
        << status.message();
    EXPECT_EQ(tensor->shape(), (std::vector<int64_t>{2}));
    ASSERT_EQ(tensor->values<float>().size(), 2u);
    EXPECT_EQ(tensor->values<float>()[1], -2.0f);
  }
}

}  // namespace
