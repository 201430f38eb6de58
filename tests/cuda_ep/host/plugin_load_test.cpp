#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cuda_plugin_path.hpp"
#include "plugin_host/execution_provider.hpp"
#include "plugin_host/plugin.hpp"
#include "plugin_host/plugin_registry.hpp"

namespace {

using nxrt::StatusCode;
using nxrt::plugin_host::ExecutionProvider;
using nxrt::plugin_host::Plugin;
using nxrt::plugin_host::PluginRegistry;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

std::shared_ptr<Plugin> LoadCuda() {
  auto plugin = Plugin::Load(nxrt_test::BuiltPluginPath("cuda"));
  EXPECT_TRUE(plugin.ok()) << plugin.status().ToString();
  return plugin.ok() ? *plugin : nullptr;
}

TEST(CudaPluginLoad, ReportsIdentityAndAbiWithoutTouchingTheDevice) {
  auto plugin = LoadCuda();
  ASSERT_NE(plugin, nullptr);
  EXPECT_EQ(plugin->name(), "cuda");
  EXPECT_EQ(plugin->vendor(), "nxrt");
  EXPECT_EQ(plugin->version(), "0.1.0");
  EXPECT_EQ(plugin->plugin_abi_version(), NXRT_EP_ABI_VERSION);
  EXPECT_EQ(plugin->abi_version(), NXRT_EP_ABI_VERSION);
}

TEST(CudaPluginLoad, OffersDeviceMemoryAndDeviceGraphEntries) {
  auto plugin = LoadCuda();
  ASSERT_NE(plugin, nullptr);
  EXPECT_NE(plugin->alloc_fn(), nullptr);
  EXPECT_NE(plugin->free_fn(), nullptr);
  EXPECT_NE(plugin->copy_to_device_fn(), nullptr);
  EXPECT_NE(plugin->copy_to_host_fn(), nullptr);
  EXPECT_NE(plugin->synchronize_fn(), nullptr);
  EXPECT_NE(plugin->begin_capture_fn(), nullptr);
  EXPECT_NE(plugin->end_capture_fn(), nullptr);
  EXPECT_NE(plugin->replay_fn(), nullptr);
  EXPECT_NE(plugin->reset_fn(), nullptr);
  EXPECT_NE(plugin->device_graphs_supported_fn(), nullptr);
}

TEST(CudaPluginLoad, LoadsByTheShortName) {
  PluginRegistry registry({nxrt_test::BuiltPluginPath("cuda").parent_path()});
  auto plugin = registry.LoadByName("cuda");
  ASSERT_TRUE(plugin.ok()) << plugin.status().ToString();
  EXPECT_EQ((*plugin)->name(), "cuda");
}

TEST(CudaPluginCreate, WithoutADeviceDeclinesAsUnavailable) {
  auto plugin = LoadCuda();
  ASSERT_NE(plugin, nullptr);
  auto provider = ExecutionProvider::Create(plugin);
  if (provider.ok()) {
    GTEST_SKIP() << "a CUDA device is present; the decline without one cannot be seen here";
  }
  EXPECT_EQ(provider.status().code(), StatusCode::kUnavailable) << provider.status().ToString();
  EXPECT_THAT(provider.status().message(), HasSubstr("no CUDA device: "));
}

TEST(CudaPluginCreate, ADeviceIdBeyondThosePresentIsUnavailable) {
  auto plugin = LoadCuda();
  ASSERT_NE(plugin, nullptr);
  auto provider = ExecutionProvider::Create(plugin, {{"device_id", "4096"}});
  ASSERT_FALSE(provider.ok());
  EXPECT_EQ(provider.status().code(), StatusCode::kUnavailable) << provider.status().ToString();
  EXPECT_THAT(provider.status().message(), HasSubstr("no CUDA device: "));
}

TEST(CudaPluginCreate, UnknownOptionIsRefusedBeforeAnyDeviceCheck) {
  auto plugin = LoadCuda();
  ASSERT_NE(plugin, nullptr);
  auto provider = ExecutionProvider::Create(plugin, {{"fast_math", "1"}});
  ASSERT_FALSE(provider.ok());
  EXPECT_EQ(provider.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(provider.status().message(), HasSubstr("'fast_math'"));
}

TEST(CudaPluginCreate, MalformedDeviceIdIsRefused) {
  auto plugin = LoadCuda();
  ASSERT_NE(plugin, nullptr);
  auto provider = ExecutionProvider::Create(plugin, {{"device_id", "first"}});
  ASSERT_FALSE(provider.ok());
  EXPECT_EQ(provider.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(provider.status().message(), HasSubstr("'device_id'"));
  EXPECT_THAT(provider.status().message(), Not(StartsWith("no CUDA device")));
}

}  // namespace
