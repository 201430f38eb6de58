#include <cstdint>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "nxrt_test/host_buffers.hpp"
#include "nxrt_test/single_node_graph.hpp"
#include "plugin_host/execution_provider.hpp"
#include "plugin_host/kernel.hpp"
#include "plugin_host/plugin_registry.hpp"

namespace {

using nxrt::plugin_host::ExecutionProvider;
using nxrt::plugin_host::PluginRegistry;
using ::testing::HasSubstr;

std::shared_ptr<ExecutionProvider> MakeCProvider() {
  PluginRegistry registry;
  auto plugin = registry.LoadByName("c_identity");
  EXPECT_TRUE(plugin.ok()) << plugin.status().ToString();
  if (!plugin.ok()) return nullptr;
  EXPECT_EQ((*plugin)->name(), "c_identity");
  EXPECT_EQ((*plugin)->abi_version(), NXRT_EP_ABI_VERSION);
  auto provider = ExecutionProvider::Create(*plugin);
  EXPECT_TRUE(provider.ok()) << provider.status().ToString();
  return provider.ok() ? *provider : nullptr;
}

TEST(CPlugin, IdentityCopiesFloats) {
  auto provider = MakeCProvider();
  ASSERT_NE(provider, nullptr);
  EXPECT_FALSE(provider->has_device_graphs());
  auto graph = nxrt_test::MakeSingleNodeGraph("Identity", {{2, 2}}, {2, 2});
  auto claim = provider->Claim(*graph.View(), 17);
  ASSERT_TRUE(claim.ok());
  EXPECT_TRUE(claim->claimed);
  const std::vector<std::vector<int64_t>> dims = {{2, 2}};
  auto kernel = provider->CreateKernel({}, graph.View(), nxrt_test::ConcreteShapes(dims), 17);
  ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();
  EXPECT_TRUE((*kernel)->capture_safe());
  std::vector<float> x = {1.25f, -2, 3, 4};
  std::vector<nxrt_value> inputs = {nxrt_test::FloatValue(x, dims[0])};
  std::vector<nxrt_value> outputs = {nxrt_test::UnallocatedOutput()};
  nxrt_test::HostBuffers services;
  ASSERT_TRUE((*kernel)->Compute(services, inputs, outputs).ok());
  EXPECT_EQ(services.allocated_outputs.size(), 1u);
  EXPECT_EQ(nxrt_test::FloatsOf(outputs[0]), x);
}

TEST(CPlugin, IdentityCopiesInt8) {
  auto provider = MakeCProvider();
  ASSERT_NE(provider, nullptr);
  auto graph = nxrt_test::MakeSingleNodeGraph("Identity", {{3}}, {3});
  const std::vector<int64_t> dims = {3};
  const nxrt_shape shape{sizeof(nxrt_shape), NXRT_DTYPE_INT8, 1, dims.data()};
  auto kernel = provider->CreateKernel({}, graph.View(), {&shape, 1}, 17);
  ASSERT_TRUE(kernel.ok());
  std::vector<int8_t> x = {-128, 0, 127};
  std::vector<int8_t> out(3, 5);
  nxrt_value in{
      sizeof(nxrt_value),
      NXRT_VALUE_TENSOR,
      {sizeof(nxrt_tensor), NXRT_DTYPE_INT8, NXRT_MEMORY_HOST, 1, dims.data(), x.data(), x.size()},
      0,
      nullptr};
  nxrt_value result = in;
  result.tensor.data = out.data();
  std::vector<nxrt_value> inputs = {in};
  std::vector<nxrt_value> outputs = {result};
  nxrt_test::HostBuffers services;
  ASSERT_TRUE((*kernel)->Compute(services, inputs, outputs).ok());
  EXPECT_EQ(out, x);
}

TEST(CPlugin, AddsFloats) {
  auto provider = MakeCProvider();
  ASSERT_NE(provider, nullptr);
  auto graph = nxrt_test::MakeSingleNodeGraph("Add", {{3}, {3}}, {3});
  const std::vector<std::vector<int64_t>> dims = {{3}, {3}};
  auto kernel = provider->CreateKernel({}, graph.View(), nxrt_test::ConcreteShapes(dims), 17);
  ASSERT_TRUE(kernel.ok());
  std::vector<float> a = {1, 2, 3};
  std::vector<float> b = {0.5f, 0.25f, -3};
  std::vector<float> out(3);
  std::vector<nxrt_value> inputs = {nxrt_test::FloatValue(a, dims[0]),
                                    nxrt_test::FloatValue(b, dims[1])};
  std::vector<nxrt_value> outputs = {nxrt_test::FloatValue(out, dims[0])};
  nxrt_test::HostBuffers services;
  ASSERT_TRUE((*kernel)->Compute(services, inputs, outputs).ok());
  EXPECT_EQ(out, (std::vector<float>{a[0] + b[0], a[1] + b[1], a[2] + b[2]}));
}

TEST(CPlugin, DeclinesOtherOpsWithAReason) {
  auto provider = MakeCProvider();
  ASSERT_NE(provider, nullptr);
  auto graph = nxrt_test::MakeSingleNodeGraph("MatMul", {{2, 2}, {2, 2}}, {2, 2});
  auto claim = provider->Claim(*graph.View(), 17);
  ASSERT_TRUE(claim.ok());
  EXPECT_FALSE(claim->claimed);
  EXPECT_THAT(claim->reason, HasSubstr("Identity and Add only"));
}

TEST(CPlugin, RefusesOptionsNamingTheKey) {
  PluginRegistry registry;
  auto plugin = registry.LoadByName("c_identity");
  ASSERT_TRUE(plugin.ok());
  auto provider = ExecutionProvider::Create(*plugin, {{"threads", "4"}});
  ASSERT_FALSE(provider.ok());
  EXPECT_THAT(provider.status().message(), HasSubstr("'threads'"));
}

}  // namespace
