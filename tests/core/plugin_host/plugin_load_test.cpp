#include <dlfcn.h>

#include <cstdio>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <boost/dll/shared_library.hpp>

#include "nxrt_test/host_buffers.hpp"
#include "nxrt_test/plugin_paths.hpp"
#include "nxrt_test/single_node_graph.hpp"
#include "plugin_host/execution_provider.hpp"
#include "plugin_host/kernel.hpp"
#include "plugin_host/plugin.hpp"

namespace {

using nxrt::StatusCode;
using nxrt::plugin_host::ExecutionProvider;
using nxrt::plugin_host::Plugin;
using ::testing::HasSubstr;

class TempFolder {
 public:
  TempFolder() {
    std::string pattern = (std::filesystem::temp_directory_path() / "nxrt_plugin_XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempFolder() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

TEST(PluginLoad, MissingFileIsRefusedNamingIt) {
  const std::filesystem::path missing = "/nonexistent/folder/libep_nothing.so";
  auto plugin = Plugin::Load(missing);
  ASSERT_FALSE(plugin.ok());
  EXPECT_EQ(plugin.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(plugin.status().message(), HasSubstr(missing.string()));
  EXPECT_THAT(plugin.status().message(), HasSubstr("no such file"));
}

TEST(PluginLoad, TextFileIsRefusedAsNotASharedLibrary) {
  TempFolder folder;
  const auto path = folder.path() / "libep_text.so";
  std::ofstream(path) << "this is not a shared library\n";
  auto plugin = Plugin::Load(path);
  ASSERT_FALSE(plugin.ok());
  EXPECT_THAT(plugin.status().message(), HasSubstr(path.string()));
  EXPECT_THAT(plugin.status().message(), HasSubstr("not a shared library"));
}

TEST(PluginLoad, LibraryForAnotherArchitectureIsRefused) {
  TempFolder folder;
  const auto path = folder.path() / "libep_foreign.so";
  std::filesystem::copy_file(nxrt_test::FixturePlugin("no_entry"), path);
  {
    // ELF e_machine sits at byte 18: mark the copy as built for another CPU.
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(18);
#if defined(__aarch64__)
    const char machine[2] = {62, 0};
#else
    const char machine[2] = {static_cast<char>(183), 0};
#endif
    file.write(machine, 2);
  }
  auto plugin = Plugin::Load(path);
  ASSERT_FALSE(plugin.ok());
  EXPECT_THAT(plugin.status().message(), HasSubstr(path.string()));
  EXPECT_THAT(plugin.status().message(), HasSubstr("another architecture"));
}

TEST(PluginLoad, FolderIsRefused) {
  auto plugin = Plugin::Load(NXRT_TEST_PLUGIN_DIR);
  ASSERT_FALSE(plugin.ok());
  EXPECT_THAT(plugin.status().message(), HasSubstr("is a folder"));
}

TEST(PluginLoad, LibraryWithoutEntrySymbolIsRefused) {
  const auto path = nxrt_test::FixturePlugin("no_entry");
  auto plugin = Plugin::Load(path);
  ASSERT_FALSE(plugin.ok());
  EXPECT_THAT(plugin.status().message(), HasSubstr(path.string()));
  EXPECT_THAT(plugin.status().message(), HasSubstr("no entry symbol 'nxrt_ep_plugin_init'"));
}

TEST(PluginLoad, FailedInitIsRefusedWithThePluginsMessage) {
  const auto path = nxrt_test::FixturePlugin("init_fails");
  auto plugin = Plugin::Load(path);
  ASSERT_FALSE(plugin.ok());
  EXPECT_EQ(plugin.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(plugin.status().message(), HasSubstr(path.string()));
  EXPECT_THAT(plugin.status().message(), HasSubstr("plugin init failed"));
  EXPECT_THAT(plugin.status().message(), HasSubstr("fixture device is not present"));
}

TEST(PluginLoad, FutureMajorIsRefused) {
  const auto path = nxrt_test::FixturePlugin("future_major");
  auto plugin = Plugin::Load(path);
  ASSERT_FALSE(plugin.ok());
  EXPECT_EQ(plugin.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(plugin.status().message(), HasSubstr(path.string()));
  EXPECT_THAT(plugin.status().message(), HasSubstr("ABI major mismatch"));
  EXPECT_THAT(plugin.status().message(), HasSubstr("implements 2.0"));
  const std::string host_version =
      std::to_string(NXRT_EP_ABI_VERSION_MAJOR) + "." + std::to_string(NXRT_EP_ABI_VERSION_MINOR);
  EXPECT_THAT(plugin.status().message(), HasSubstr("speaks " + host_version));
}

TEST(PluginLoad, MockReportsItsIdentityAndTheHostVersion) {
  auto plugin = Plugin::Load(nxrt_test::BuiltPlugin("mock"));
  ASSERT_TRUE(plugin.ok()) << plugin.status().ToString();
  EXPECT_EQ((*plugin)->name(), "mock");
  EXPECT_EQ((*plugin)->vendor(), "nxrt");
  EXPECT_EQ((*plugin)->version(), "1.0");
  EXPECT_EQ((*plugin)->plugin_abi_version(), NXRT_EP_ABI_VERSION);
  EXPECT_EQ((*plugin)->abi_version(), NXRT_EP_ABI_VERSION);
  EXPECT_NE((*plugin)->device_graphs_supported_fn(), nullptr);
  EXPECT_NE((*plugin)->kernel_api().telemetry_arm, nullptr);
}

TEST(PluginLoad, OlderMinorWithShorterTablesWorksWithDefaults) {
  auto plugin = Plugin::Load(nxrt_test::FixturePlugin("old_minor"));
  ASSERT_TRUE(plugin.ok()) << plugin.status().ToString();
  EXPECT_EQ((*plugin)->plugin_abi_version(), NXRT_EP_ABI_MAKE_VERSION(1u, 0u));
  EXPECT_EQ((*plugin)->abi_version(), NXRT_EP_ABI_MAKE_VERSION(1u, 0u));
  // The fixture sets these entries past its struct_size; the host must not see them.
  EXPECT_EQ((*plugin)->device_graphs_supported_fn(), nullptr);
  EXPECT_EQ((*plugin)->kernel_api().telemetry_arm, nullptr);

  auto provider = ExecutionProvider::Create(*plugin);
  ASSERT_TRUE(provider.ok()) << provider.status().ToString();
  // Default for an absent device_graphs_supported: all four graph entries are set.
  EXPECT_TRUE((*provider)->has_device_graphs());

  auto graph = nxrt_test::MakeSingleNodeGraph("Identity", {{4}}, {4});
  const std::vector<std::vector<int64_t>> dims = {{4}};
  auto kernel = (*provider)->CreateKernel({}, graph.View(), nxrt_test::ConcreteShapes(dims), 17);
  ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();
  auto armed = (*kernel)->TelemetryArm(1);
  ASSERT_TRUE(armed.ok()) << armed.status().ToString();
  EXPECT_FALSE(*armed);
  EXPECT_TRUE((*kernel)->capture_safe());

  std::vector<float> input = {1, 2, 3, 4};
  std::vector<float> output(4, 0.0f);
  std::vector<nxrt_value> inputs = {nxrt_test::FloatValue(input, dims[0])};
  std::vector<nxrt_value> outputs = {nxrt_test::FloatValue(output, dims[0])};
  nxrt_test::HostBuffers services;
  ASSERT_TRUE((*kernel)->Compute(services, inputs, outputs).ok());
  EXPECT_EQ(output, input);
}

TEST(PluginLoad, OlderMinorReadsConstantsAtItsOwnStride) {
  auto plugin = Plugin::Load(nxrt_test::FixturePlugin("old_minor"));
  ASSERT_TRUE(plugin.ok()) << plugin.status().ToString();
  auto provider = ExecutionProvider::Create(*plugin);
  ASSERT_TRUE(provider.ok()) << provider.status().ToString();
  auto graph = nxrt_test::MakeSingleNodeGraph("Identity", {{4}}, {4});
  const std::vector<std::vector<int64_t>> dims = {{4}};
  auto kernel = (*provider)->CreateKernel({}, graph.View(), nxrt_test::ConcreteShapes(dims), 17);
  ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();

  const int64_t shape[] = {1};
  const float first = 1.5f, second = -2.5f, third = 8.0f;
  const std::vector<nxrt_constant_input> constants = {
      {sizeof(nxrt_constant_input), 1, NXRT_DTYPE_FLOAT32, 1, shape, &first, sizeof(float), 1},
      {sizeof(nxrt_constant_input), 2, NXRT_DTYPE_FLOAT32, 1, shape, &second, sizeof(float), 1},
      {sizeof(nxrt_constant_input), 4, NXRT_DTYPE_FLOAT32, 1, shape, &third, sizeof(float), 1}};
  ASSERT_TRUE((*kernel)->PrepareConstantInputs(constants).ok());

  boost::dll::shared_library same_library(nxrt_test::FixturePlugin("old_minor").string());
  auto index = same_library.get<size_t(size_t)>("fixture_seen_constant_index");
  auto value = same_library.get<float(size_t)>("fixture_seen_constant_first");
  EXPECT_EQ(index(0), 1u);
  EXPECT_EQ(value(0), first);
  // Past the first element only the 1.0 stride finds the constants.
  EXPECT_EQ(index(1), 2u);
  EXPECT_EQ(value(1), second);
  EXPECT_EQ(index(2), 4u);
  EXPECT_EQ(value(2), third);
}

TEST(PluginLoad, HostTableLongerThanThePluginKnowsIsAccepted) {
  auto plugin = Plugin::Load(nxrt_test::FixturePlugin("old_minor"));
  ASSERT_TRUE(plugin.ok()) << plugin.status().ToString();
  boost::dll::shared_library same_library(nxrt_test::FixturePlugin("old_minor").string());
  auto seen = same_library.get<size_t()>("fixture_seen_host_table_size");
  // The fixture knows only the first seven entries and still worked above.
  EXPECT_EQ(seen(), sizeof(nxrt_host_api));
  EXPECT_GT(seen(), offsetof(nxrt_host_api, log_enabled));
}

}  // namespace
