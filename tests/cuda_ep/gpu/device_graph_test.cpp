// The CUDA EP's memory entries and CUDA graph capture, replay and reset on a
// real device; skipped visibly on machines without one.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "gpu_test_support.hpp"
#include "no_compute_services.hpp"
#include "plugin_host/kernel.hpp"

namespace {

using nxrt_test::NoServices;

class CudaDevice : public nxrt_test::CudaTest {
 protected:
  static constexpr int64_t kCount = 1000;

  void SetUp() override {
    CudaTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    for (void*& buffer : buffers_) {
      auto data = cuda_->Alloc(kCount * sizeof(float), 256);
      ASSERT_TRUE(data.ok()) << data.status().ToString();
      buffer = *data;
    }
  }
  void TearDown() override {
    if (!cuda_) return;
    for (void* buffer : buffers_) cuda_->Free(buffer);
  }

  void Upload(size_t buffer, float first) {
    std::vector<float> values(kCount);
    for (int64_t i = 0; i < kCount; ++i) values[i] = first + static_cast<float>(i);
    ASSERT_TRUE(cuda_->CopyToDevice(buffers_[buffer], values.data(), kCount * sizeof(float)).ok());
  }
  std::vector<float> Download(size_t buffer) {
    std::vector<float> values(kCount);
    EXPECT_TRUE(cuda_->CopyToHost(values.data(), buffers_[buffer], kCount * sizeof(float)).ok());
    return values;
  }

  // An Add kernel over `count` floats.
  std::unique_ptr<nxrt::plugin_host::Kernel> AddKernel(int64_t count = kCount) {
    graph_ = nxrt_test::MakeSingleNodeGraph("Add", {{count}, {count}}, {count});
    const std::vector<std::vector<int64_t>> dims = {{count}, {count}};
    auto kernel = cuda_->CreateKernel({}, graph_.View(), nxrt_test::ConcreteShapes(dims), 17);
    EXPECT_TRUE(kernel.ok()) << kernel.status().ToString();
    return kernel.ok() ? std::move(*kernel) : nullptr;
  }

  // Runs an Add kernel over `count` floats from `buffers` 0 and 1 into 2.
  nxrt::Status Compute(nxrt::plugin_host::Kernel& kernel, void* const* buffers,
                       const int64_t* count) {
    auto tensor = [&](void* data) {
      nxrt_value v{};
      v.struct_size = sizeof(v);
      v.kind = NXRT_VALUE_TENSOR;
      v.tensor = {sizeof(nxrt_tensor),
                  NXRT_DTYPE_FLOAT32,
                  NXRT_MEMORY_DEVICE,
                  1,
                  count,
                  data,
                  static_cast<size_t>(*count) * sizeof(float)};
      return v;
    };
    std::vector<nxrt_value> inputs = {tensor(buffers[0]), tensor(buffers[1])};
    std::vector<nxrt_value> outputs = {tensor(buffers[2])};
    NoServices services;
    return kernel.Compute(services, inputs, outputs);
  }
  nxrt::Status Compute(nxrt::plugin_host::Kernel& kernel) {
    return Compute(kernel, buffers_, &count_);
  }

  nxrt_test::SingleNodeGraph graph_;
  void* buffers_[3] = {};
  int64_t count_ = kCount;
};

TEST_F(CudaDevice, CopiesRoundTrip) {
  Upload(0, 0.5f);
  const auto values = Download(0);
  EXPECT_EQ(values[0], 0.5f);
  EXPECT_EQ(values[kCount - 1], 0.5f + static_cast<float>(kCount - 1));
  EXPECT_TRUE(cuda_->Synchronize().ok());
}

TEST_F(CudaDevice, CopiesInReuseTheirSourceAtOnceAndWrapTheStagingRing) {
  // 48 copies of 0.75 to 1.25 MiB from one host buffer, rewritten as soon
  // as each copy returns, pass through the 16 MiB staging ring about three
  // times (a copy that does not fit before the ring's end starts over at its
  // beginning, past older copies still waiting); one copy of 20 MiB does not
  // fit it at all. Every device buffer must hold what was copied.
  // Large Adds keep the stream busy, so the copies queue behind them and the
  // ring comes round while its first regions still wait to be read.
  constexpr int64_t kBusy = int64_t{64} << 20;
  void* busy[3] = {};
  for (void*& buffer : busy) {
    auto data = cuda_->Alloc(kBusy * sizeof(float), 256);
    ASSERT_TRUE(data.ok()) << data.status().ToString();
    buffer = *data;
  }
  auto add = AddKernel(kBusy);
  ASSERT_TRUE(add);
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(Compute(*add, busy, &kBusy).ok());
  // Floats per copy: 1, 0.75 and 1.25 MiB in turn, then 20 MiB.
  const size_t cycle[] = {256 * 1024, 192 * 1024, 320 * 1024};
  std::vector<size_t> sizes;
  for (size_t n = 0; n < 48; ++n) sizes.push_back(cycle[n % 3]);
  sizes.push_back(5 * 1024 * 1024);
  std::vector<void*> device;
  std::vector<float> source;
  for (size_t n = 0; n < sizes.size(); ++n) {
    auto data = cuda_->Alloc(sizes[n] * sizeof(float), 256);
    ASSERT_TRUE(data.ok()) << data.status().ToString();
    device.push_back(*data);
    // Distinct first and other values, nonzero so -0 cannot pass for 0.
    const float value = static_cast<float>(n + 1);
    source.assign(sizes[n], value);
    source.front() = -value;
    ASSERT_TRUE(cuda_->CopyToDevice(device[n], source.data(), sizes[n] * sizeof(float)).ok());
  }
  for (size_t n = 0; n < sizes.size(); ++n) {
    std::vector<float> back(sizes[n]);
    ASSERT_TRUE(cuda_->CopyToHost(back.data(), device[n], sizes[n] * sizeof(float)).ok());
    const float value = static_cast<float>(n + 1);
    EXPECT_EQ(back.front(), -value) << "copy " << n;
    EXPECT_EQ(back.back(), value) << "copy " << n;
    EXPECT_EQ(std::count(back.begin(), back.end(), value),
              static_cast<std::ptrdiff_t>(sizes[n] - 1))
        << "copy " << n;
    cuda_->Free(device[n]);
  }
  for (void* buffer : busy) cuda_->Free(buffer);
}

TEST_F(CudaDevice, OddAlignmentIsRefused) {
  auto data = cuda_->Alloc(64, 4096);
  EXPECT_FALSE(data.ok());
}

TEST_F(CudaDevice, CapturedGraphReplaysOnNewInputsAndRecapturesAfterReset) {
  ASSERT_TRUE(cuda_->has_device_graphs());
  auto kernel = AddKernel();
  ASSERT_NE(kernel, nullptr);
  EXPECT_TRUE(kernel->capture_safe());
  Upload(0, 1.0f);
  Upload(1, 100.0f);

  ASSERT_TRUE(cuda_->BeginCapture(NXRT_GRAPH_SLOT_PRIMARY).ok());
  ASSERT_TRUE(Compute(*kernel).ok());
  auto token = cuda_->EndCapture(NXRT_GRAPH_SLOT_PRIMARY);
  ASSERT_TRUE(token.ok()) << token.status().ToString();

  // A capture records without running: replay is what computes.
  Upload(0, 5.0f);
  ASSERT_TRUE(cuda_->Replay(*token).ok());
  auto sums = Download(2);
  EXPECT_EQ(sums[0], 105.0f);
  EXPECT_EQ(sums[10], 125.0f);

  ASSERT_TRUE(cuda_->Reset(*token).ok());
  EXPECT_FALSE(cuda_->Replay(*token).ok());

  // Same topology again in the same slot: the spare executable is updated.
  ASSERT_TRUE(cuda_->BeginCapture(NXRT_GRAPH_SLOT_PRIMARY).ok());
  ASSERT_TRUE(Compute(*kernel).ok());
  auto again = cuda_->EndCapture(NXRT_GRAPH_SLOT_PRIMARY);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_NE(*again, *token);
  Upload(1, -5.0f);
  ASSERT_TRUE(cuda_->Replay(*again).ok());
  sums = Download(2);
  EXPECT_EQ(sums[0], 0.0f);
  EXPECT_TRUE(cuda_->Reset(*again).ok());
}

TEST_F(CudaDevice, PrimaryAndVerifySlotsHoldSeparateGraphs) {
  auto kernel = AddKernel();
  ASSERT_NE(kernel, nullptr);
  Upload(0, 0.0f);
  Upload(1, 0.0f);
  ASSERT_TRUE(cuda_->BeginCapture(NXRT_GRAPH_SLOT_PRIMARY).ok());
  ASSERT_TRUE(Compute(*kernel).ok());
  auto primary = cuda_->EndCapture(NXRT_GRAPH_SLOT_PRIMARY);
  ASSERT_TRUE(primary.ok());
  ASSERT_TRUE(cuda_->BeginCapture(NXRT_GRAPH_SLOT_VERIFY).ok());
  ASSERT_TRUE(Compute(*kernel).ok());
  auto verify = cuda_->EndCapture(NXRT_GRAPH_SLOT_VERIFY);
  ASSERT_TRUE(verify.ok());
  EXPECT_NE(*primary, *verify);
  EXPECT_EQ(cuda_->live_graph_count(), 2u);
  ASSERT_TRUE(cuda_->Reset(*primary).ok());
  Upload(0, 2.0f);
  ASSERT_TRUE(cuda_->Replay(*verify).ok());
  EXPECT_EQ(Download(2)[0], 2.0f);
  ASSERT_TRUE(cuda_->Reset(*verify).ok());
}

TEST_F(CudaDevice, EndingASlotThatIsNotCapturingIsRefused) {
  auto kernel = AddKernel();
  ASSERT_NE(kernel, nullptr);
  EXPECT_FALSE(cuda_->EndCapture(NXRT_GRAPH_SLOT_VERIFY).ok());
  ASSERT_TRUE(cuda_->BeginCapture(NXRT_GRAPH_SLOT_PRIMARY).ok());
  EXPECT_FALSE(cuda_->BeginCapture(NXRT_GRAPH_SLOT_VERIFY).ok());
  ASSERT_TRUE(Compute(*kernel).ok());
  auto token = cuda_->EndCapture(NXRT_GRAPH_SLOT_PRIMARY);
  ASSERT_TRUE(token.ok());
  EXPECT_TRUE(cuda_->Reset(*token).ok());
}

}  // namespace
