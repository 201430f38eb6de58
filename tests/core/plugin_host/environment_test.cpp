#include <map>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "nxrt/environment.hpp"
#include "nxrt/support/log.hpp"
#include "plugin_host/plugin_registry.hpp"

namespace {

using nxrt::Environment;
using ::testing::HasSubstr;

TEST(Environment, RefusesAnUnknownLogLevel) {
  auto env = Environment::Create({.plugin_folders = {}, .log_level = "loud"});
  ASSERT_FALSE(env.ok());
  EXPECT_THAT(env.status().message(), HasSubstr("'loud'"));
}

TEST(Environment, ConfiguredFoldersAreSearchedFirst) {
  auto env = Environment::Create({.plugin_folders = {NXRT_TEST_PLUGIN_DIR}, .log_level = ""});
  ASSERT_TRUE(env.ok());
  const auto folders = (*env)->PluginSearchFolders();
  ASSERT_FALSE(folders.empty());
  EXPECT_EQ(folders.front(), NXRT_TEST_PLUGIN_DIR);
  EXPECT_EQ(folders.back(), nxrt::plugin_host::PluginRegistry::NxrtLibraryFolder());
}

TEST(Environment, DiscoveryReportsIdentityOrTheReason) {
  auto env = Environment::Create({.plugin_folders = {NXRT_TEST_PLUGIN_DIR}, .log_level = ""});
  ASSERT_TRUE(env.ok());
  std::map<std::string, nxrt::PluginInfo> by_file;
  for (auto& info : (*env)->DiscoverPlugins()) by_file[info.path.filename().string()] = info;

  ASSERT_TRUE(by_file.contains("libep_mock.so"));
  const auto& mock = by_file["libep_mock.so"];
  EXPECT_TRUE(mock.loaded);
  EXPECT_EQ(mock.name, "mock");
  EXPECT_EQ(mock.vendor, "nxrt");
  EXPECT_EQ(mock.version, "1.0");
  EXPECT_EQ(mock.abi_version, NXRT_EP_ABI_VERSION);

  ASSERT_TRUE(by_file.contains("libep_fixture_future_major.so"));
  const auto& future = by_file["libep_fixture_future_major.so"];
  EXPECT_FALSE(future.loaded);
  EXPECT_THAT(future.error, HasSubstr("ABI major mismatch"));
}

TEST(Environment, RegistryLoadsThroughTheSameSearchList) {
  auto env = Environment::Create({.plugin_folders = {NXRT_TEST_PLUGIN_DIR}, .log_level = ""});
  ASSERT_TRUE(env.ok());
  auto plugin = (*env)->registry().LoadByName("fixture_old_minor");
  ASSERT_TRUE(plugin.ok()) << plugin.status().ToString();
}

}  // namespace
