// What every CUDA kernel test suite shares: fixtures that create the CUDA EP
// (and the CPU EP to compare against) and skip visibly where no device is
// present, and the input dims in the form MakeSingleNodeGraph takes.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "attribute_builders.hpp"
#include "device_node_runner.hpp"

namespace nxrt_test {

// The dims of each of `inputs`, one list per node input.
inline std::vector<std::vector<TestDim>> InputDims(const std::vector<HostTensor>& inputs) {
  std::vector<std::vector<TestDim>> dims;
  for (const HostTensor& t : inputs) dims.emplace_back(t.dims.begin(), t.dims.end());
  return dims;
}

// Creates the CUDA EP before each test. A machine without a device skips the
// test, naming why; any other failure to create the EP fails it.
class CudaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    cuda_ = CudaProvider(&why);
    if (!cuda_) {
      if (const size_t at = why.find("no CUDA device"); at != std::string::npos) {
        GTEST_SKIP() << why.substr(at);
      }
      FAIL() << "the CUDA EP could not be created: " << why;
    }
  }

  std::shared_ptr<nxrt::plugin_host::ExecutionProvider> cuda_;
};

// Also creates the CPU EP, the reference the CUDA kernels are compared with.
class CudaVsCpuTest : public CudaTest {
 protected:
  void SetUp() override {
    CudaTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    cpu_ = CpuProvider();
    ASSERT_NE(cpu_, nullptr);
  }

  std::shared_ptr<nxrt::plugin_host::ExecutionProvider> cpu_;
};

}  // namespace nxrt_test
