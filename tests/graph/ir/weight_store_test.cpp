// The weight store: owned and string tensors, sizes of the raw layout, and
// external data mapped from files inside a folder only.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <utility>
#include <vector>

#include "nxrt/graph/weight_store.hpp"

namespace nxrt::graph {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

TEST(WeightStoreTest, OwnedTensorsKeepTheirBytes) {
  WeightStore store;
  std::vector<std::byte> bytes = {std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4}};
  WeightRef a = store.AddOwned(DataType::kInt16, {2}, bytes);
  WeightRef b = store.AddStrings({1}, {"hello"});
  // Adding more tensors must not move the first one's bytes.
  for (int i = 0; i < 100; ++i) store.AddOwned(DataType::kUint8, {1}, {std::byte{9}});
  EXPECT_EQ(store.size(), 102u);
  const TensorData& first = store.Get(a);
  EXPECT_EQ(first.dtype, DataType::kInt16);
  EXPECT_EQ(first.dims, std::vector<int64_t>({2}));
  ASSERT_EQ(first.bytes.size(), 4u);
  EXPECT_EQ(std::memcmp(first.bytes.data(), bytes.data(), 4), 0);
  EXPECT_EQ(store.Get(b).dtype, DataType::kString);
  EXPECT_THAT(store.Get(b).strings, ::testing::ElementsAre("hello"));
}

TEST(WeightStoreTest, LargeTensorsStayPutAlignedWhileMoreArrive) {
  // Sizes around the huge-page arena's threshold, chunk and page sizes, so
  // tensors go to both kinds of storage and the arena opens several chunks.
  const std::vector<size_t> sizes = {(16 << 10) - 1, 16 << 10, 100'003,  2 << 20,  (2 << 20) + 8,
                                     5'000'000,      3,        12 << 20, 64 << 10, (40 << 20) + 1};
  WeightStore store;
  std::vector<std::pair<WeightRef, std::vector<std::byte>>> added;
  std::vector<const std::byte*> where;
  for (size_t i = 0; i < sizes.size(); ++i) {
    std::vector<std::byte> bytes(sizes[i]);
    for (size_t j = 0; j < bytes.size(); ++j) bytes[j] = std::byte(static_cast<uint8_t>(j * 7 + i));
    const WeightRef ref = store.AddOwned(DataType::kUint8, {static_cast<int64_t>(sizes[i])}, bytes);
    where.push_back(store.Get(ref).bytes.data());
    added.emplace_back(ref, std::move(bytes));
  }
  for (size_t i = 0; i < added.size(); ++i) {
    const TensorData& data = store.Get(added[i].first);
    EXPECT_EQ(data.bytes.data(), where[i]) << "tensor " << i << " moved";
    ASSERT_EQ(data.bytes.size(), sizes[i]);
    EXPECT_EQ(std::memcmp(data.bytes.data(), added[i].second.data(), sizes[i]), 0) << i;
    if (sizes[i] >= (16 << 10)) {
      // Kernels stream these in place with vector loads.
      EXPECT_EQ(reinterpret_cast<uintptr_t>(data.bytes.data()) % 64, 0u) << i;
    }
  }
}

TEST(WeightStoreTest, ElementCount) {
  std::vector<int64_t> dims = {2, 3, 4};
  EXPECT_EQ(*ElementCount(dims), 24u);
  EXPECT_EQ(*ElementCount(std::vector<int64_t>{}), 1u);
  EXPECT_EQ(*ElementCount(std::vector<int64_t>{5, 0}), 0u);
  EXPECT_FALSE(ElementCount(std::vector<int64_t>{-1}).ok());
  EXPECT_FALSE(ElementCount(std::vector<int64_t>{int64_t{1} << 32, int64_t{1} << 32}).ok());
}

// Counts are bounded by int64, as dims and the plugin ABI carry them: exactly
// INT64_MAX (7 x 1317624576693539401) counts, 2^63 does not though it fits
// 64 unsigned bits, and an empty axis empties a product past any bound.
TEST(WeightStoreTest, ElementCountStopsAtInt64) {
  static_assert(INT64_MAX / 7 * 7 == INT64_MAX);
  EXPECT_EQ(*ElementCount(std::vector<int64_t>{INT64_MAX / 7, 7}),
            static_cast<uint64_t>(INT64_MAX));
  const Result<uint64_t> past = ElementCount(std::vector<int64_t>{int64_t{1} << 62, 2});
  ASSERT_FALSE(past.ok());
  EXPECT_EQ(past.status().message(),
            "element count of [4611686018427387904,2] overflows int64; fix the dims");
  EXPECT_EQ(*ElementCount(std::vector<int64_t>{int64_t{1} << 62, 4, 0}), 0u);
}

TEST(WeightStoreTest, RawByteSize) {
  EXPECT_EQ(*RawByteSize(DataType::kFloat32, 3), 12u);
  EXPECT_EQ(*RawByteSize(DataType::kComplex128, 2), 32u);
  EXPECT_EQ(*RawByteSize(DataType::kInt4, 3), 2u);
  EXPECT_EQ(*RawByteSize(DataType::kUint2, 5), 2u);
  EXPECT_EQ(*RawByteSize(DataType::kBool, 0), 0u);
  EXPECT_FALSE(RawByteSize(DataType::kString, 1).ok());
  EXPECT_FALSE(RawByteSize(DataType::kFloat64, uint64_t{1} << 62).ok());
}

class WeightStoreExternalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ =
        fs::temp_directory_path() / ("nxrt_weight_store_" + std::to_string(std::random_device{}()));
    fs::create_directories(root_ / "model");
    std::ofstream(root_ / "model" / "data.bin", std::ios::binary) << "0123456789";
    std::ofstream(root_ / "outside.bin", std::ios::binary) << "secret";
  }
  void TearDown() override { fs::remove_all(root_); }

  Result<WeightRef> Add(const std::string& location, int64_t offset, int64_t length) {
    return store_.AddExternal(DataType::kUint8, {length < 0 ? 0 : length}, root_ / "model",
                              location, offset, length);
  }

  std::string Text(WeightRef ref) const {
    const TensorData& data = store_.Get(ref);
    return std::string(reinterpret_cast<const char*>(data.bytes.data()), data.bytes.size());
  }

  fs::path root_;
  WeightStore store_;
};

TEST_F(WeightStoreExternalTest, MapsTheRequestedRange) {
  Result<WeightRef> middle = Add("data.bin", 3, 4);
  ASSERT_TRUE(middle.ok()) << middle.status().ToString();
  EXPECT_EQ(Text(*middle), "3456");
  Result<WeightRef> rest = Add("./data.bin", 8, -1);
  ASSERT_TRUE(rest.ok()) << rest.status().ToString();
  EXPECT_EQ(Text(*rest), "89");
  Result<WeightRef> empty_at_end = Add("data.bin", 10, 0);
  ASSERT_TRUE(empty_at_end.ok());
  EXPECT_EQ(Text(*empty_at_end), "");
}

TEST_F(WeightStoreExternalTest, RefusesEscapesMissingFilesAndBadRanges) {
  EXPECT_THAT(Add((root_ / "outside.bin").string(), 0, 1).status().message(),
              HasSubstr("absolute"));
  EXPECT_THAT(Add("../outside.bin", 0, 1).status().message(), HasSubstr(".."));
  fs::create_symlink(root_ / "outside.bin", root_ / "model" / "link.bin");
  EXPECT_THAT(Add("link.bin", 0, 1).status().message(), HasSubstr("outside"));
  EXPECT_EQ(Add("nothing.bin", 0, 1).status().code(), StatusCode::kNotFound);
  EXPECT_THAT(Add("data.bin", 11, 0).status().message(), HasSubstr("beyond the end"));
  EXPECT_THAT(Add("data.bin", 5, 6).status().message(), HasSubstr("past the end"));
  EXPECT_FALSE(Add("data.bin", -1, 1).ok());
  EXPECT_FALSE(Add("data.bin", 0, -2).ok());
  EXPECT_FALSE(Add("", 0, 1).ok());
  EXPECT_EQ(store_.size(), 0u);
}

TEST_F(WeightStoreExternalTest, MappedBytesOutliveAMovedStore) {
  Result<WeightRef> ref = Add("data.bin", 0, 10);
  ASSERT_TRUE(ref.ok());
  WeightStore moved = std::move(store_);
  const TensorData& data = moved.Get(*ref);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(data.bytes.data()), data.bytes.size()),
            "0123456789");
}

}  // namespace
}  // namespace nxrt::graph
