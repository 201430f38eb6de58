#include <functional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "mock_call_log.hpp"
#include "nxrt_test/host_buffers.hpp"
#include "nxrt_test/single_node_graph.hpp"
#include "plugin_host/execution_provider.hpp"
#include "plugin_host/kernel.hpp"
#include "plugin_host/plugin.hpp"

namespace {

using nxrt::Status;
using nxrt::plugin_host::ExecutionProvider;
using nxrt::plugin_host::Kernel;
using nxrt::plugin_host::Plugin;
using ::testing::Contains;
using ::testing::HasSubstr;

// Everything a fault test needs: a mock told to fail `point` on call 2, one
// Add kernel over three-element buffers, and its call log.
class FaultFixture {
 public:
  explicit FaultFixture(const std::string& point) : log_id_("fault_" + point), log_(log_id_) {
    auto plugin = Plugin::Load(nxrt_test::BuiltPlugin("mock"));
    EXPECT_TRUE(plugin.ok());
    auto provider = ExecutionProvider::Create(
        *plugin, {{"log", log_id_}, {"share", "1"}, {"fail_" + point, "2"}});
    EXPECT_TRUE(provider.ok()) << provider.status().ToString();
    provider_ = *provider;
    node_ = graph_.View();
  }

  ExecutionProvider& provider() { return *provider_; }
  const nxrt::plugin_host::NodeView& node() const { return *node_; }
  const nxrt_test::MockCallLog& log() const { return log_; }

  nxrt::Result<std::unique_ptr<Kernel>> NewKernel() {
    return provider_->CreateKernel({}, node_, nxrt_test::ConcreteShapes(dims_), 17);
  }

  Status Compute(Kernel& kernel) {
    std::vector<nxrt_value> inputs = {nxrt_test::FloatValue(a_, dims_[0]),
                                      nxrt_test::FloatValue(b_, dims_[1])};
    std::vector<nxrt_value> outputs = {nxrt_test::FloatValue(out_, dims_[0])};
    return kernel.Compute(services_, inputs, outputs);
  }

 private:
  std::string log_id_;
  nxrt_test::MockCallLog log_;
  nxrt_test::SingleNodeGraph graph_ = nxrt_test::MakeSingleNodeGraph("Add", {{3}, {3}}, {3});
  std::shared_ptr<const nxrt::plugin_host::NodeView> node_;
  std::shared_ptr<ExecutionProvider> provider_;
  std::vector<std::vector<int64_t>> dims_ = {{3}, {3}};
  std::vector<float> a_ = {1, 2, 3};
  std::vector<float> b_ = {4, 5, 6};
  std::vector<float> out_ = std::vector<float>(3);
  nxrt_test::HostBuffers services_;
};

// Calls `step` three times: only the second must fail, with the mock's
// message naming the point and the call.
void ExpectOnlySecondCallFails(const std::string& point, const std::function<Status()>& step,
                               const nxrt_test::MockCallLog& log) {
  EXPECT_TRUE(step().ok()) << point << " call 1";
  Status second = step();
  ASSERT_FALSE(second.ok()) << point << " call 2";
  EXPECT_EQ(second.code(), nxrt::StatusCode::kInternal);
  EXPECT_THAT(second.message(), HasSubstr("injected failure in " + point + " (call 2)"));
  EXPECT_TRUE(step().ok()) << point << " call 3";
  EXPECT_THAT(log.Entries(), Contains("fault " + point + " 2"));
}

TEST(MockFaultInjection, Claim) {
  FaultFixture f("claim");
  ExpectOnlySecondCallFails(
      "claim", [&] { return f.provider().Claim(f.node(), 17).status(); }, f.log());
}

TEST(MockFaultInjection, ClaimFailureIsNotADecline) {
  FaultFixture f("claim");
  ASSERT_TRUE(f.provider().Claim(f.node(), 17).ok());
  auto failed = f.provider().Claim(f.node(), 17);
  ASSERT_FALSE(failed.ok());
  EXPECT_THAT(failed.status().message(), HasSubstr("claim failed on EP 'mock'"));
  EXPECT_THAT(failed.status().message(), HasSubstr("Add"));
}

TEST(MockFaultInjection, CreateKernel) {
  FaultFixture f("create_kernel");
  std::vector<std::unique_ptr<Kernel>> kernels;
  ExpectOnlySecondCallFails(
      "create_kernel",
      [&] {
        auto kernel = f.NewKernel();
        if (kernel.ok()) kernels.push_back(std::move(kernel).value());
        return kernel.status();
      },
      f.log());
  EXPECT_EQ(kernels.size(), 2u);
}

TEST(MockFaultInjection, Prepare) {
  FaultFixture f("prepare");
  auto kernel = f.NewKernel();
  ASSERT_TRUE(kernel.ok());
  ExpectOnlySecondCallFails(
      "prepare", [&] { return (*kernel)->PrepareConstantInputs({}); }, f.log());
}

TEST(MockFaultInjection, Adopt) {
  FaultFixture f("adopt");
  auto owner = f.NewKernel();
  auto adopter = f.NewKernel();
  ASSERT_TRUE(owner.ok() && adopter.ok());
  ASSERT_TRUE((*owner)->PrepareConstantInputs({}).ok());
  auto state = (*owner)->ShareableConstantState();
  ASSERT_TRUE(state);
  ExpectOnlySecondCallFails(
      "adopt", [&] { return (*adopter)->AdoptShareableConstantState(state).status(); }, f.log());
}

TEST(MockFaultInjection, Compute) {
  FaultFixture f("compute");
  auto kernel = f.NewKernel();
  ASSERT_TRUE(kernel.ok());
  ExpectOnlySecondCallFails(
      "compute", [&] { return f.Compute(**kernel); }, f.log());
}

TEST(MockFaultInjection, ComputeFailureNamesNodeAndProvider) {
  FaultFixture f("compute");
  auto kernel = f.NewKernel();
  ASSERT_TRUE(kernel.ok());
  ASSERT_TRUE(f.Compute(**kernel).ok());
  Status failed = f.Compute(**kernel);
  EXPECT_THAT(failed.message(), HasSubstr("test.onnx: node 'Add_node' (Add) on EP 'mock'"));
}

TEST(MockFaultInjection, BeginCapture) {
  FaultFixture f("begin_capture");
  ExpectOnlySecondCallFails(
      "begin_capture",
      [&] {
        Status begun = f.provider().BeginCapture(NXRT_GRAPH_SLOT_PRIMARY);
        if (!begun.ok()) return begun;
        auto token = f.provider().EndCapture(NXRT_GRAPH_SLOT_PRIMARY);
        if (!token.ok()) return token.status();
        return f.provider().Reset(*token);
      },
      f.log());
}

TEST(MockFaultInjection, EndCapture) {
  FaultFixture f("end_capture");
  ExpectOnlySecondCallFails(
      "end_capture",
      [&] {
        Status begun = f.provider().BeginCapture(NXRT_GRAPH_SLOT_VERIFY);
        if (!begun.ok()) return begun;
        auto token = f.provider().EndCapture(NXRT_GRAPH_SLOT_VERIFY);
        if (!token.ok()) {
          // The capture stays open after the failed end; close it for the next round.
          auto retry = f.provider().EndCapture(NXRT_GRAPH_SLOT_VERIFY);
          if (retry.ok()) (void)f.provider().Reset(*retry);
          return token.status();
        }
        return f.provider().Reset(*token);
      },
      f.log());
}

TEST(MockFaultInjection, Replay) {
  FaultFixture f("replay");
  auto kernel = f.NewKernel();
  ASSERT_TRUE(kernel.ok());
  ASSERT_TRUE(f.provider().BeginCapture(NXRT_GRAPH_SLOT_PRIMARY).ok());
  ASSERT_TRUE(f.Compute(**kernel).ok());
  auto token = f.provider().EndCapture(NXRT_GRAPH_SLOT_PRIMARY);
  ASSERT_TRUE(token.ok());
  ExpectOnlySecondCallFails(
      "replay", [&] { return f.provider().Replay(*token); }, f.log());
  EXPECT_TRUE(f.provider().Reset(*token).ok());
}

TEST(MockFaultInjection, Reset) {
  FaultFixture f("reset");
  ExpectOnlySecondCallFails(
      "reset",
      [&] {
        Status begun = f.provider().BeginCapture(NXRT_GRAPH_SLOT_PRIMARY);
        if (!begun.ok()) return begun;
        auto token = f.provider().EndCapture(NXRT_GRAPH_SLOT_PRIMARY);
        if (!token.ok()) return token.status();
        return f.provider().Reset(*token);
      },
      f.log());
}

TEST(MockFaultInjection, BadFaultOptionIsRefused) {
  auto plugin = Plugin::Load(nxrt_test::BuiltPlugin("mock"));
  ASSERT_TRUE(plugin.ok());
  auto provider = ExecutionProvider::Create(*plugin, {{"fail_compute", "zero"}});
  ASSERT_FALSE(provider.ok());
  EXPECT_THAT(provider.status().message(), HasSubstr("fail_compute='zero'"));
}

}  // namespace
