#include <dlfcn.h>

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "mock_call_log.hpp"
#include "nxrt_test/host_buffers.hpp"
#include "nxrt_test/single_node_graph.hpp"
#include "plugin_host/execution_provider.hpp"
#include "plugin_host/kernel.hpp"
#include "plugin_host/plugin_registry.hpp"

namespace {

using nxrt::plugin_host::ExecutionProvider;
using nxrt::plugin_host::Kernel;
using nxrt::plugin_host::PluginRegistry;
using ::testing::ElementsAre;

// Whether the dynamic loader still has `path` mapped, without loading it.
bool IsLoaded(const std::filesystem::path& path) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) return false;
  dlclose(handle);
  return true;
}

struct MockKernelOnly {
  nxrt_test::SingleNodeGraph graph = nxrt_test::MakeSingleNodeGraph("Add", {{2}, {2}}, {2});
  std::vector<std::vector<int64_t>> dims = {{2}, {2}};
  std::unique_ptr<Kernel> kernel;
};

// Loads the mock through a registry, makes an EP and one kernel, and drops
// the registry and the EP, leaving only the kernel.
MockKernelOnly KernelOutlivingItsProviderAndRegistry(nxrt::plugin_host::ProviderOptions options) {
  MockKernelOnly result;
  auto registry = std::make_unique<PluginRegistry>();
  auto plugin = registry->LoadByName("mock");
  EXPECT_TRUE(plugin.ok());
  auto provider = ExecutionProvider::Create(*plugin, std::move(options));
  EXPECT_TRUE(provider.ok());
  auto kernel = (*provider)->CreateKernel({}, result.graph.View(),
                                          nxrt_test::ConcreteShapes(result.dims), 17);
  EXPECT_TRUE(kernel.ok());
  result.kernel = std::move(kernel).value();
  return result;
}

TEST(UnloadOrder, KernelKeepsTheLibraryLoadedUntilItDies) {
  const auto path = nxrt_test::BuiltPlugin("mock");
  ASSERT_FALSE(IsLoaded(path)) << "another handle holds the mock; the test would prove nothing";
  auto held = KernelOutlivingItsProviderAndRegistry({});
  ASSERT_NE(held.kernel, nullptr);
  EXPECT_TRUE(IsLoaded(path));

  // The kernel still runs: its EP and library are alive through it.
  std::vector<float> a = {1, 2};
  std::vector<float> b = {3, 4};
  std::vector<float> out(2);
  std::vector<nxrt_value> inputs = {nxrt_test::FloatValue(a, held.dims[0]),
                                    nxrt_test::FloatValue(b, held.dims[1])};
  std::vector<nxrt_value> outputs = {nxrt_test::FloatValue(out, held.dims[0])};
  nxrt_test::HostBuffers services;
  ASSERT_TRUE(held.kernel->Compute(services, inputs, outputs).ok());
  EXPECT_EQ(out, (std::vector<float>{4, 6}));

  held.kernel.reset();
  EXPECT_FALSE(IsLoaded(path));
}

TEST(UnloadOrder, SharedConstantStateKeepsTheLibraryLoaded) {
  const auto path = nxrt_test::BuiltPlugin("mock");
  ASSERT_FALSE(IsLoaded(path));
  auto held = KernelOutlivingItsProviderAndRegistry({{"share", "1"}});
  ASSERT_TRUE(held.kernel->PrepareConstantInputs({}).ok());
  auto state = held.kernel->ShareableConstantState();
  ASSERT_TRUE(state);
  held.kernel.reset();
  EXPECT_TRUE(IsLoaded(path));
  state = {};
  EXPECT_FALSE(IsLoaded(path));
}

TEST(UnloadOrder, KernelsAreDestroyedBeforeTheirProvider) {
  nxrt_test::MockCallLog log("unload");
  auto held = KernelOutlivingItsProviderAndRegistry({{"log", "unload"}});
  EXPECT_EQ(log.Live("ep"), 1);
  EXPECT_EQ(log.Live("kernel"), 1);
  held.kernel.reset();
  EXPECT_EQ(log.Live("ep"), 0);
  EXPECT_EQ(log.Live("kernel"), 0);
  EXPECT_THAT(log.Entries(), ElementsAre("create_ep", "create_kernel Add k1 [2] [2]",
                                         "destroy_kernel k1", "destroy_ep"));
}

TEST(UnloadOrder, GraphsLeftLiveAreResetBeforeTheProviderIsDestroyed) {
  nxrt_test::MockCallLog log("leftover");
  PluginRegistry registry;
  auto plugin = registry.LoadByName("mock");
  ASSERT_TRUE(plugin.ok());
  auto provider = ExecutionProvider::Create(*plugin, {{"log", "leftover"}});
  ASSERT_TRUE(provider.ok());
  ASSERT_TRUE((*provider)->BeginCapture(NXRT_GRAPH_SLOT_PRIMARY).ok());
  auto token = (*provider)->EndCapture(NXRT_GRAPH_SLOT_PRIMARY);
  ASSERT_TRUE(token.ok());
  EXPECT_EQ(log.Live("graph"), 1);
  provider->reset();
  EXPECT_EQ(log.Live("graph"), 0);
  const std::string t = "t" + std::to_string(*token);
  EXPECT_THAT(log.Entries(),
              ElementsAre("create_ep", "begin_capture primary",
                          "end_capture primary " + t + " calls=0", "reset " + t, "destroy_ep"));
}

TEST(UnloadOrder, ReplayOfAKernelDestroyedBeforeResetIsRefusedByTheMock) {
  PluginRegistry registry;
  auto plugin = registry.LoadByName("mock");
  ASSERT_TRUE(plugin.ok());
  auto provider = ExecutionProvider::Create(*plugin);
  ASSERT_TRUE(provider.ok());
  auto graph = nxrt_test::MakeSingleNodeGraph("Relu", {{2}}, {2});
  const std::vector<std::vector<int64_t>> dims = {{2}};
  auto kernel = (*provider)->CreateKernel({}, graph.View(), nxrt_test::ConcreteShapes(dims), 17);
  ASSERT_TRUE(kernel.ok());
  std::vector<float> x = {1, -1};
  std::vector<float> out(2);
  std::vector<nxrt_value> inputs = {nxrt_test::FloatValue(x, dims[0])};
  std::vector<nxrt_value> outputs = {nxrt_test::FloatValue(out, dims[0])};
  nxrt_test::HostBuffers services;
  ASSERT_TRUE((*provider)->BeginCapture(NXRT_GRAPH_SLOT_PRIMARY).ok());
  ASSERT_TRUE((*kernel)->Compute(services, inputs, outputs).ok());
  auto token = (*provider)->EndCapture(NXRT_GRAPH_SLOT_PRIMARY);
  ASSERT_TRUE(token.ok());
  kernel->reset();
  auto replay = (*provider)->Replay(*token);
  ASSERT_FALSE(replay.ok());
  EXPECT_THAT(replay.message(), ::testing::HasSubstr("destroyed before the graph was reset"));
}

}  // namespace
