#include <new>
#include <stdexcept>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "nxrt/ep_sdk.hpp"
#include "nxrt/support/log.hpp"
#include "nxrt_test/single_node_graph.hpp"
#include "plugin_host/host_api.hpp"
#include "plugin_host/host_context.hpp"
#include "plugin_host/plugin_status.hpp"

namespace {

using nxrt::plugin_host::HostApi;
using nxrt::plugin_host::TakeStatus;
using ::testing::HasSubstr;

class ThrowingKernel : public nxrt::sdk::Kernel {
 public:
  void Compute(nxrt::sdk::ComputeContext&, std::span<const nxrt_value>,
               std::span<nxrt_value>) override {
    throw std::runtime_error("kernel blew up");
  }
  void PrepareConstantInputs(std::span<const nxrt_constant_input>) override {
    throw nxrt::sdk::Error(NXRT_STATUS_OUT_OF_MEMORY, "no room for weights");
  }
};

class AllocFailingKernel : public nxrt::sdk::Kernel {
 public:
  void Compute(nxrt::sdk::ComputeContext&, std::span<const nxrt_value>,
               std::span<nxrt_value>) override {
    throw std::bad_alloc();
  }
};

class ThrowingEp : public nxrt::sdk::ExecutionProvider {
 public:
  ThrowingEp(const nxrt::sdk::Host&, const nxrt::sdk::Options& options) {
    if (options.Get("refuse")) throw nxrt::sdk::Error(NXRT_STATUS_INVALID_ARGUMENT, "refused");
  }
  nxrt::sdk::ClaimResult Claim(const nxrt::sdk::Node& node, int64_t,
                               std::span<const nxrt_value_info>,
                               std::span<const nxrt_layout>) override {
    if (node.op_type() == "Relu") return nxrt::sdk::ClaimResult::Declined("no relu today");
    if (node.op_type() == "Add" || node.op_type() == "Mul") {
      return nxrt::sdk::ClaimResult::Claimed();
    }
    throw 42;  // not even an exception class
  }
  std::unique_ptr<nxrt::sdk::Kernel> CreateKernel(const nxrt_artifact_config&,
                                                  const nxrt::sdk::Node& node,
                                                  std::span<const nxrt_shape>, int64_t) override {
    if (node.op_type() == "Mul") return std::make_unique<AllocFailingKernel>();
    return std::make_unique<ThrowingKernel>();
  }
};

// Counts what the SDK hands it; records a call only while `take` holds.
class CountingRecorder : public nxrt::sdk::ComputeRecorder {
 public:
  void Capture(bool on) { set_capturing(on); }
  bool Record(nxrt::sdk::Kernel&, std::span<const nxrt_value>,
              std::span<const nxrt_value>) override {
    ++offered;
    return take;
  }
  void KernelDestroyed(nxrt::sdk::Kernel&) noexcept override { ++destroyed; }

  bool take = true;
  int offered = 0;
  int destroyed = 0;
};

class CountingKernel : public nxrt::sdk::Kernel {
 public:
  explicit CountingKernel(int& computed) : computed_(computed) {}
  void Compute(nxrt::sdk::ComputeContext&, std::span<const nxrt_value>,
               std::span<nxrt_value>) override {
    ++computed_;
  }

 private:
  int& computed_;
};

// An EP that records compute calls through the SDK's recorder hook.
class RecordingEp : public nxrt::sdk::ExecutionProvider {
 public:
  RecordingEp(const nxrt::sdk::Host&, const nxrt::sdk::Options&) {}
  nxrt::sdk::ClaimResult Claim(const nxrt::sdk::Node&, int64_t, std::span<const nxrt_value_info>,
                               std::span<const nxrt_layout>) override {
    return nxrt::sdk::ClaimResult::Claimed();
  }
  std::unique_ptr<nxrt::sdk::Kernel> CreateKernel(const nxrt_artifact_config&,
                                                  const nxrt::sdk::Node&,
                                                  std::span<const nxrt_shape>, int64_t) override {
    return std::make_unique<CountingKernel>(computed);
  }
  std::shared_ptr<nxrt::sdk::ComputeRecorder> CallRecorder() override { return recorder; }

  static inline int computed = 0;
  static inline std::shared_ptr<CountingRecorder> recorder;
};

class SdkBoundary : public ::testing::Test {
 protected:
  void SetUp() override {
    context_.plugin_name = "sdk_test";
    context_.logger = nxrt::GetLogger("sdk_test");
    before_ = nxrt::plugin_host::LiveStatusCount();
  }
  void TearDown() override { EXPECT_EQ(nxrt::plugin_host::LiveStatusCount(), before_); }

  nxrt_ep* MakeEp(const nxrt_options* options = nullptr) {
    nxrt_ep* ep = nullptr;
    EXPECT_EQ(nxrt::sdk::detail::CreateEp<ThrowingEp>(&context_, options, &ep, HostApi()), nullptr);
    return ep;
  }

  // `ep`'s kernel for an `op` node of two inputs.
  nxrt_kernel* MakeKernel(nxrt_ep* ep, const std::string& op) {
    auto graph = nxrt_test::MakeSingleNodeGraph(op, {{2}, {2}}, {2});
    auto node = graph.View();
    nxrt_kernel* kernel = nullptr;
    const nxrt_artifact_config config{sizeof(nxrt_artifact_config), 1, 1, 1};
    EXPECT_EQ(nxrt::sdk::detail::CreateKernel(ep, &config, node.get(), nullptr, 0, 17, &kernel),
              nullptr);
    return kernel;
  }

  nxrt_host_context context_;
  size_t before_ = 0;
  const nxrt_kernel_api kernel_api_ = nxrt::sdk::detail::MakeKernelApi();
};

TEST_F(SdkBoundary, DeclineBecomesUnsupportedWithTheReason) {
  nxrt_ep* ep = MakeEp();
  auto graph = nxrt_test::MakeSingleNodeGraph("Relu", {{2}}, {2});
  auto node = graph.View();
  nxrt::Status status =
      TakeStatus(nxrt::sdk::detail::ClaimNode(ep, node.get(), 17, nullptr, nullptr, 0));
  EXPECT_EQ(status.code(), nxrt::StatusCode::kUnsupported);
  EXPECT_EQ(status.message(), "no relu today");
  nxrt::sdk::detail::DestroyEp(ep);
}

// A kernel that runs out of memory says so, and what to try.
TEST_F(SdkBoundary, BadAllocBecomesOutOfMemorySayingWhatToTry) {
  nxrt_ep* ep = MakeEp();
  nxrt_kernel* kernel = MakeKernel(ep, "Mul");
  ASSERT_NE(kernel, nullptr);
  nxrt::Status computed = TakeStatus(kernel_api_.compute(kernel, nullptr, nullptr, 0, nullptr, 0));
  EXPECT_EQ(computed.code(), nxrt::StatusCode::kOutOfMemory);
  EXPECT_THAT(computed.message(), HasSubstr("out of memory in the plugin"));
  EXPECT_THAT(computed.message(), HasSubstr("smaller inputs"));
  kernel_api_.destroy(kernel);
  nxrt::sdk::detail::DestroyEp(ep);
}

TEST_F(SdkBoundary, NonStandardThrowBecomesInternal) {
  nxrt_ep* ep = MakeEp();
  auto graph = nxrt_test::MakeSingleNodeGraph("Conv", {{2}}, {2});
  auto node = graph.View();
  nxrt::Status status =
      TakeStatus(nxrt::sdk::detail::ClaimNode(ep, node.get(), 17, nullptr, nullptr, 0));
  EXPECT_EQ(status.code(), nxrt::StatusCode::kInternal);
  EXPECT_THAT(status.message(), HasSubstr("unknown exception"));
  nxrt::sdk::detail::DestroyEp(ep);
}

TEST_F(SdkBoundary, ExceptionsInKernelsBecomeStatuses) {
  nxrt_ep* ep = MakeEp();
  nxrt_kernel* kernel = MakeKernel(ep, "Add");
  ASSERT_NE(kernel, nullptr);

  nxrt::Status computed = TakeStatus(kernel_api_.compute(kernel, nullptr, nullptr, 0, nullptr, 0));
  EXPECT_EQ(computed.code(), nxrt::StatusCode::kInternal);
  EXPECT_EQ(computed.message(), "kernel blew up");

  nxrt::Status prepared = TakeStatus(kernel_api_.prepare_constant_inputs(kernel, nullptr, 0));
  EXPECT_EQ(prepared.code(), nxrt::StatusCode::kOutOfMemory);
  EXPECT_EQ(prepared.message(), "no room for weights");

  // Defaults of the base class: nothing shared, not capture-safe, no telemetry.
  EXPECT_EQ(kernel_api_.shareable_constant_state(kernel), nullptr);
  EXPECT_EQ(kernel_api_.capture_safe(kernel), 0);
  nxrt_bool armed = 1;
  EXPECT_EQ(kernel_api_.telemetry_arm(kernel, 3, &armed), nullptr);
  EXPECT_EQ(armed, 0);
  kernel_api_.destroy(kernel);
  nxrt::sdk::detail::DestroyEp(ep);
}

TEST_F(SdkBoundary, ARecordingEpsComputeCallsGoToItsRecorderWhileCapturing) {
  RecordingEp::computed = 0;
  RecordingEp::recorder = std::make_shared<CountingRecorder>();
  CountingRecorder& recorder = *RecordingEp::recorder;
  nxrt_ep* ep = nullptr;
  ASSERT_EQ(nxrt::sdk::detail::CreateEp<RecordingEp>(&context_, nullptr, &ep, HostApi()), nullptr);
  auto graph = nxrt_test::MakeSingleNodeGraph("Add", {{2}, {2}}, {2});
  auto node = graph.View();
  nxrt_kernel* kernel = nullptr;
  const nxrt_artifact_config config{sizeof(nxrt_artifact_config), 1, 1, 1};
  ASSERT_EQ(nxrt::sdk::detail::CreateKernel(ep, &config, node.get(), nullptr, 0, 17, &kernel),
            nullptr);
  auto compute = [&] {
    EXPECT_EQ(kernel_api_.compute(kernel, nullptr, nullptr, 0, nullptr, 0), nullptr);
  };

  compute();  // not capturing: runs, the recorder is not asked
  EXPECT_EQ(RecordingEp::computed, 1);
  EXPECT_EQ(recorder.offered, 0);
  recorder.Capture(true);
  compute();  // recorded instead of run
  EXPECT_EQ(RecordingEp::computed, 1);
  EXPECT_EQ(recorder.offered, 1);
  recorder.take = false;
  compute();  // the recorder declines (another thread's capture): runs now
  EXPECT_EQ(RecordingEp::computed, 2);
  EXPECT_EQ(recorder.offered, 2);
  recorder.Capture(false);

  EXPECT_EQ(recorder.destroyed, 0);
  kernel_api_.destroy(kernel);
  EXPECT_EQ(recorder.destroyed, 1);
  nxrt::sdk::detail::DestroyEp(ep);
  RecordingEp::recorder.reset();
}

TEST_F(SdkBoundary, EpWithoutGraphsAnswersUnsupported) {
  nxrt_ep* ep = MakeEp();
  EXPECT_EQ(nxrt::sdk::detail::DeviceGraphsSupported(ep), 0);
  nxrt::Status begun = TakeStatus(nxrt::sdk::detail::BeginCapture(ep, NXRT_GRAPH_SLOT_PRIMARY));
  EXPECT_EQ(begun.code(), nxrt::StatusCode::kUnsupported);
  nxrt::sdk::detail::DestroyEp(ep);
}

}  // namespace
