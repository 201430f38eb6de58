#include <gtest/gtest.h>

#include "cuda_options.hpp"

namespace {

using nxrt::cuda::CudaOptions;
using nxrt::cuda::ParseCudaOptions;
using Pairs = std::vector<std::pair<std::string, std::string>>;

nxrt_status_code RefusalCode(const Pairs& options) {
  try {
    ParseCudaOptions(options);
  } catch (const nxrt::sdk::Error& error) {
    return error.code();
  }
  return NXRT_STATUS_OK;
}

TEST(CudaOptions, DefaultsToDeviceZeroWithGraphs) {
  const CudaOptions options = ParseCudaOptions(Pairs{});
  EXPECT_EQ(options.device_id, 0);
  EXPECT_TRUE(options.device_graphs);
  EXPECT_GT(options.memory_release_threshold, 0u);
}

TEST(CudaOptions, ReadsEveryKnownKey) {
  const CudaOptions options = ParseCudaOptions(
      Pairs{{"device_id", "3"}, {"memory_release_threshold", "1048576"}, {"device_graphs", "off"}});
  EXPECT_EQ(options.device_id, 3);
  EXPECT_EQ(options.memory_release_threshold, 1048576u);
  EXPECT_FALSE(options.device_graphs);
}

TEST(CudaOptions, UnknownKeyIsRefusedByName) {
  try {
    ParseCudaOptions(Pairs{{"stream_count", "2"}});
    FAIL() << "an unknown key was accepted";
  } catch (const nxrt::sdk::Error& error) {
    EXPECT_EQ(error.code(), NXRT_STATUS_INVALID_ARGUMENT);
    EXPECT_NE(std::string(error.what()).find("'stream_count'"), std::string::npos) << error.what();
  }
}

TEST(CudaOptions, BadValuesAreRefused) {
  EXPECT_EQ(RefusalCode({{"device_id", "-1"}}), NXRT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(RefusalCode({{"device_id", ""}}), NXRT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(RefusalCode({{"device_id", "1x"}}), NXRT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(RefusalCode({{"device_id", "99999999999"}}), NXRT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(RefusalCode({{"memory_release_threshold", "lots"}}), NXRT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(RefusalCode({{"device_graphs", "maybe"}}), NXRT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(RefusalCode({{"device_graphs", "1"}}), NXRT_STATUS_OK);
}

}  // namespace
