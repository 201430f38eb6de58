#include <cstdint>
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

using nxrt::plugin_host::ExecutionProvider;
using nxrt::plugin_host::Kernel;
using nxrt::plugin_host::Plugin;
using nxrt::plugin_host::ProviderOptions;
using nxrt_test::FloatValue;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::shared_ptr<ExecutionProvider> MakeMock(ProviderOptions options) {
  auto plugin = Plugin::Load(nxrt_test::BuiltPlugin("mock"));
  EXPECT_TRUE(plugin.ok()) << plugin.status().ToString();
  auto provider = ExecutionProvider::Create(*plugin, std::move(options));
  EXPECT_TRUE(provider.ok()) << provider.status().ToString();
  return provider.ok() ? *provider : nullptr;
}

std::unique_ptr<Kernel> MakeKernel(ExecutionProvider& provider, const std::string& op,
                                   const std::vector<std::vector<int64_t>>& dims,
                                   const std::vector<int64_t>& out_dims) {
  std::vector<std::vector<nxrt_test::TestDim>> inputs;
  for (const auto& d : dims) inputs.emplace_back(d.begin(), d.end());
  auto graph = nxrt_test::MakeSingleNodeGraph(
      op, inputs, std::vector<nxrt_test::TestDim>(out_dims.begin(), out_dims.end()));
  // The kernel keeps the node view alive; the graph must outlive it too.
  static std::vector<std::shared_ptr<nxrt::graph::Graph>> graphs;
  graphs.push_back(graph.graph);
  auto kernel = provider.CreateKernel({1, 1}, graph.View(), nxrt_test::ConcreteShapes(dims), 17);
  EXPECT_TRUE(kernel.ok()) << kernel.status().ToString();
  return kernel.ok() ? std::move(kernel).value() : nullptr;
}

TEST(MockProvider, ClaimsAndDeclinesAsConfigured) {
  nxrt_test::MockCallLog log("claims");
  auto provider =
      MakeMock({{"log", "claims"}, {"claim", "Add,Relu"}, {"decline", "Conv:no conv here"}});
  ASSERT_NE(provider, nullptr);
  auto add = nxrt_test::MakeSingleNodeGraph("Add", {{2, "seq"}, {2, "seq"}}, {2, "seq"});
  auto conv = nxrt_test::MakeSingleNodeGraph("Conv", {{1, 3, 8, 8}}, {1, 3, 8, 8});
  auto mul = nxrt_test::MakeSingleNodeGraph("Mul", {{2}, {2}}, {2});

  auto add_claim = provider->Claim(*add.View(), 17);
  ASSERT_TRUE(add_claim.ok());
  EXPECT_TRUE(add_claim->claimed);

  auto conv_claim = provider->Claim(*conv.View(), 17);
  ASSERT_TRUE(conv_claim.ok());
  EXPECT_FALSE(conv_claim->claimed);
  EXPECT_EQ(conv_claim->reason, "no conv here");

  auto mul_claim = provider->Claim(*mul.View(), 17);
  ASSERT_TRUE(mul_claim.ok());
  EXPECT_FALSE(mul_claim->claimed);
  EXPECT_THAT(mul_claim->reason, HasSubstr("Mul"));

  EXPECT_THAT(log.Entries(), ElementsAre("create_ep", "claim Add claimed", "claim Conv declined",
                                         "claim Mul declined"));
}

TEST(MockProvider, UnknownOptionIsRefusedNamingTheKey) {
  auto plugin = Plugin::Load(nxrt_test::BuiltPlugin("mock"));
  ASSERT_TRUE(plugin.ok());
  auto provider = ExecutionProvider::Create(*plugin, {{"bogus_key", "1"}});
  ASSERT_FALSE(provider.ok());
  EXPECT_EQ(provider.status().code(), nxrt::StatusCode::kInvalidArgument);
  EXPECT_THAT(provider.status().message(), HasSubstr("bogus_key"));
  EXPECT_THAT(provider.status().message(), HasSubstr("create_ep failed"));
}

TEST(MockProvider, ProviderIdsAreUniqueAndNonzero) {
  auto a = MakeMock({});
  auto b = MakeMock({});
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_NE(a->id(), 0u);
  EXPECT_NE(a->id(), b->id());
}

TEST(MockProvider, AddBroadcastsLikeNumpy) {
  auto provider = MakeMock({});
  ASSERT_NE(provider, nullptr);
  auto kernel = MakeKernel(*provider, "Add", {{2, 3}, {3}}, {2, 3});
  ASSERT_NE(kernel, nullptr);
  std::vector<float> a = {1, 2, 3, 4, 5, 6};
  std::vector<float> b = {10, 20, 30};
  const std::vector<int64_t> a_dims = {2, 3};
  const std::vector<int64_t> b_dims = {3};
  std::vector<nxrt_value> inputs = {FloatValue(a, a_dims), FloatValue(b, b_dims)};
  std::vector<nxrt_value> outputs = {nxrt_test::UnallocatedOutput()};
  nxrt_test::HostBuffers services;
  ASSERT_TRUE(kernel->Compute(services, inputs, outputs).ok());
  EXPECT_THAT(services.allocated_outputs, ElementsAre(0u));
  ASSERT_EQ(outputs[0].tensor.rank, 2u);
  EXPECT_EQ(outputs[0].tensor.dims[0], 2);
  EXPECT_EQ(outputs[0].tensor.dims[1], 3);
  std::vector<float> expected;
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) expected.push_back(a[i * 3 + j] + b[j]);
  }
  EXPECT_EQ(nxrt_test::FloatsOf(outputs[0]), expected);
}

TEST(MockProvider, BinaryOpsBroadcastBothWays) {
  auto provider = MakeMock({});
  ASSERT_NE(provider, nullptr);
  // [3,1] op [1,2] -> [3,2]
  std::vector<float> a = {1, 2, 4};
  std::vector<float> b = {8, -2};
  const std::vector<int64_t> a_dims = {3, 1};
  const std::vector<int64_t> b_dims = {1, 2};
  struct Case {
    std::string op;
    float (*fn)(float, float);
  };
  const std::vector<Case> cases = {
      {"Sub", [](float x, float y) { return x - y; }},
      {"Mul", [](float x, float y) { return x * y; }},
      {"Div", [](float x, float y) { return x / y; }},
  };
  for (const Case& c : cases) {
    auto kernel = MakeKernel(*provider, c.op, {a_dims, b_dims}, {3, 2});
    ASSERT_NE(kernel, nullptr);
    std::vector<nxrt_value> inputs = {FloatValue(a, a_dims), FloatValue(b, b_dims)};
    std::vector<float> out(6, -1.0f);
    const std::vector<int64_t> out_dims = {3, 2};
    std::vector<nxrt_value> outputs = {FloatValue(out, out_dims)};
    nxrt_test::HostBuffers services;
    ASSERT_TRUE(kernel->Compute(services, inputs, outputs).ok()) << c.op;
    std::vector<float> expected;
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 2; ++j) expected.push_back(c.fn(a[i], b[j]));
    }
    EXPECT_EQ(out, expected) << c.op;
  }
}

TEST(MockProvider, UnaryOpsAndIdentity) {
  auto provider = MakeMock({});
  ASSERT_NE(provider, nullptr);
  std::vector<float> x = {-1.5f, 0.0f, 2.0f};
  const std::vector<int64_t> dims = {3};
  for (const std::string op : {"Neg", "Relu", "Identity"}) {
    auto kernel = MakeKernel(*provider, op, {dims}, dims);
    ASSERT_NE(kernel, nullptr);
    std::vector<nxrt_value> inputs = {FloatValue(x, dims)};
    std::vector<nxrt_value> outputs = {nxrt_test::UnallocatedOutput()};
    nxrt_test::HostBuffers services;
    ASSERT_TRUE(kernel->Compute(services, inputs, outputs).ok()) << op;
    std::vector<float> expected;
    for (float v : x) expected.push_back(op == "Neg" ? -v : op == "Relu" ? (v > 0 ? v : 0) : v);
    EXPECT_EQ(nxrt_test::FloatsOf(outputs[0]), expected) << op;
  }
}

TEST(MockProvider, IdentityCopiesAnyDtype) {
  auto provider = MakeMock({});
  ASSERT_NE(provider, nullptr);
  const std::vector<int64_t> dims = {2, 2};
  auto kernel = MakeKernel(*provider, "Identity", {dims}, dims);
  ASSERT_NE(kernel, nullptr);
  std::vector<int64_t> data = {1, -2, INT64_MAX, INT64_MIN};
  std::vector<int64_t> out(4, 0);
  nxrt_value in{sizeof(nxrt_value),
                NXRT_VALUE_TENSOR,
                {sizeof(nxrt_tensor), NXRT_DTYPE_INT64, NXRT_MEMORY_HOST, 2, dims.data(),
                 data.data(), data.size() * 8},
                0,
                nullptr};
  nxrt_value result = in;
  result.tensor.data = out.data();
  std::vector<nxrt_value> inputs = {in};
  std::vector<nxrt_value> outputs = {result};
  nxrt_test::HostBuffers services;
  ASSERT_TRUE(kernel->Compute(services, inputs, outputs).ok());
  EXPECT_EQ(out, data);
}

TEST(MockProvider, OtherClaimedOpsWriteZeros) {
  auto provider = MakeMock({});
  ASSERT_NE(provider, nullptr);
  const std::vector<int64_t> dims = {4};
  auto kernel = MakeKernel(*provider, "Softmax", {dims}, dims);
  ASSERT_NE(kernel, nullptr);
  std::vector<float> x = {1, 2, 3, 4};
  std::vector<float> out(4, 7.0f);
  std::vector<nxrt_value> inputs = {FloatValue(x, dims)};
  std::vector<nxrt_value> outputs = {FloatValue(out, dims)};
  nxrt_test::HostBuffers services;
  ASSERT_TRUE(kernel->Compute(services, inputs, outputs).ok());
  EXPECT_EQ(out, std::vector<float>(4, 0.0f));
}

TEST(MockProvider, DeviceGraphRecordsThenReplaysWithoutDispatch) {
  nxrt_test::MockCallLog log("graphs");
  auto provider = MakeMock({{"log", "graphs"}});
  ASSERT_NE(provider, nullptr);
  ASSERT_TRUE(provider->has_device_graphs());
  const std::vector<int64_t> dims = {3};
  auto kernel = MakeKernel(*provider, "Add", {dims, dims}, dims);
  ASSERT_NE(kernel, nullptr);
  EXPECT_TRUE(kernel->capture_safe());

  std::vector<float> a = {1, 2, 3};
  std::vector<float> b = {10, 20, 30};
  std::vector<float> out(3, -1.0f);
  std::vector<nxrt_value> inputs = {FloatValue(a, dims), FloatValue(b, dims)};
  std::vector<nxrt_value> outputs = {FloatValue(out, dims)};
  nxrt_test::HostBuffers services;

  ASSERT_TRUE(provider->BeginCapture(NXRT_GRAPH_SLOT_PRIMARY).ok());
  ASSERT_TRUE(kernel->Compute(services, inputs, outputs).ok());
  EXPECT_EQ(out, std::vector<float>(3, -1.0f)) << "a captured call is recorded, not run";
  auto token = provider->EndCapture(NXRT_GRAPH_SLOT_PRIMARY);
  ASSERT_TRUE(token.ok()) << token.status().ToString();
  EXPECT_NE(*token, 0u);
  EXPECT_EQ(provider->live_graph_count(), 1u);
  EXPECT_EQ(log.Live("graph"), 1);

  // Replay reads the recorded buffers as they are now.
  a = {100, 200, 300};
  ASSERT_TRUE(provider->Replay(*token).ok());
  EXPECT_EQ(out, (std::vector<float>{110, 220, 330}));

  ASSERT_TRUE(provider->Reset(*token).ok());
  EXPECT_EQ(provider->live_graph_count(), 0u);
  EXPECT_EQ(log.Live("graph"), 0);
  auto replay_after_reset = provider->Replay(*token);
  EXPECT_FALSE(replay_after_reset.ok());

  const std::string t = "t" + std::to_string(*token);
  EXPECT_THAT(
      log.Entries(),
      ElementsAre("create_ep", "create_kernel Add k1 [3] [3]", "begin_capture primary", "record k1",
                  "end_capture primary " + t + " calls=1", "replay " + t, "reset " + t));
}

TEST(MockProvider, DeviceGraphsCanBeTurnedOff) {
  auto provider = MakeMock({{"device_graphs", "0"}});
  ASSERT_NE(provider, nullptr);
  EXPECT_FALSE(provider->has_device_graphs());
  auto begun = provider->BeginCapture(NXRT_GRAPH_SLOT_PRIMARY);
  EXPECT_EQ(begun.code(), nxrt::StatusCode::kUnsupported);
}

TEST(MockProvider, CaptureSafetyFollowsTheOption) {
  auto provider = MakeMock({{"capture_safe", "0"}});
  ASSERT_NE(provider, nullptr);
  auto kernel = MakeKernel(*provider, "Relu", {{2}}, {2});
  ASSERT_NE(kernel, nullptr);
  EXPECT_FALSE(kernel->capture_safe());
}

TEST(MockProvider, MemoryDefaultsToAlignedHostMemoryAndMemcpy) {
  auto provider = MakeMock({});
  ASSERT_NE(provider, nullptr);
  EXPECT_FALSE(provider->has_custom_memory());
  auto buffer = provider->Alloc(100, 256);
  ASSERT_TRUE(buffer.ok());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(*buffer) % 256, 0u);
  const std::string text = "device bytes";
  ASSERT_TRUE(provider->CopyToDevice(*buffer, text.data(), text.size() + 1).ok());
  std::string back(text.size(), '\0');
  ASSERT_TRUE(provider->CopyToHost(back.data(), *buffer, text.size()).ok());
  EXPECT_EQ(back, text);
  EXPECT_TRUE(provider->Synchronize().ok());
  provider->Free(*buffer);
  EXPECT_FALSE(provider->Alloc(8, 3).ok()) << "an alignment must be a power of two";
}

TEST(MockProvider, SiblingVariantAdoptsSharedConstants) {
  nxrt_test::MockCallLog log("share");
  auto provider = MakeMock({{"log", "share"}, {"share", "1"}});
  ASSERT_NE(provider, nullptr);
  auto first = MakeKernel(*provider, "Add", {{2}, {2}}, {2});
  auto second = MakeKernel(*provider, "Add", {{4}, {2}}, {4});
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);

  const std::vector<float> weights = {0.5f, 1.5f};
  const std::vector<int64_t> dims = {2};
  const nxrt_constant_input constant{
      sizeof(nxrt_constant_input), 1, NXRT_DTYPE_FLOAT32, 1, dims.data(), weights.data(),
      sizeof(float) * 2,
      /*bytes_persist=*/0};
  first->SetConstantInputs(std::vector<bool>{false, true});
  ASSERT_TRUE(first->PrepareConstantInputs({&constant, 1}).ok());
  auto state = first->ShareableConstantState();
  ASSERT_TRUE(state);
  EXPECT_EQ(log.Live("shared_state"), 1);
  auto adopted = second->AdoptShareableConstantState(state);
  ASSERT_TRUE(adopted.ok());
  EXPECT_TRUE(*adopted);

  first.reset();
  state = {};
  EXPECT_EQ(log.Live("shared_state"), 1) << "the adopting kernel keeps the state";
  second.reset();
  EXPECT_EQ(log.Live("shared_state"), 0);
  EXPECT_THAT(
      log.Entries(),
      ElementsAre("create_ep", "create_kernel Add k1 [2] [2]", "create_kernel Add k2 [4] [2]",
                  "set_constant_inputs k1 01", "prepare k1 1", "share k1 some", "adopt k2 adopted",
                  "destroy_kernel k1", "destroy_kernel k2"));
}

TEST(MockProvider, WithoutSharingNothingIsShared) {
  auto provider = MakeMock({});
  ASSERT_NE(provider, nullptr);
  auto kernel = MakeKernel(*provider, "Add", {{2}, {2}}, {2});
  ASSERT_NE(kernel, nullptr);
  ASSERT_TRUE(kernel->PrepareConstantInputs({}).ok());
  EXPECT_FALSE(kernel->ShareableConstantState());
}

TEST(MockProvider, TelemetryReportsTheConfiguredValues) {
  auto provider = MakeMock({{"telemetry", "uploaded_bytes:64,page_ins:3,physical_bytes:9"}});
  ASSERT_NE(provider, nullptr);
  auto kernel = MakeKernel(*provider, "Relu", {{2}}, {2});
  ASSERT_NE(kernel, nullptr);
  auto armed = kernel->TelemetryArm(5);
  ASSERT_TRUE(armed.ok());
  EXPECT_TRUE(*armed);
  auto snapshot = kernel->TelemetrySnapshot();
  ASSERT_TRUE(snapshot.ok());
  ASSERT_TRUE(snapshot->has_value());
  EXPECT_EQ((*snapshot)->uploaded_bytes, 64u);
  EXPECT_EQ((*snapshot)->page_ins, 3u);
  EXPECT_TRUE((*snapshot)->has_physical_bytes);
  EXPECT_EQ((*snapshot)->physical_bytes, 9u);
  EXPECT_EQ((*snapshot)->committed_bytes, 0u);
  EXPECT_TRUE(kernel->TelemetryReset().ok());
  EXPECT_TRUE(kernel->TelemetryDisarm().ok());
}

TEST(MockProvider, WithoutTelemetryNothingIsArmedOrObserved) {
  auto provider = MakeMock({});
  ASSERT_NE(provider, nullptr);
  auto kernel = MakeKernel(*provider, "Relu", {{2}}, {2});
  ASSERT_NE(kernel, nullptr);
  auto armed = kernel->TelemetryArm(5);
  ASSERT_TRUE(armed.ok());
  EXPECT_FALSE(*armed);
  auto snapshot = kernel->TelemetrySnapshot();
  ASSERT_TRUE(snapshot.ok());
  EXPECT_FALSE(snapshot->has_value());
}

}  // namespace
