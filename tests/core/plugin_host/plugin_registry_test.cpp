#include <cstdlib>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "nxrt_test/plugin_paths.hpp"
#include "plugin_host/plugin_registry.hpp"

namespace {

using nxrt::plugin_host::PluginRegistry;
using ::testing::HasSubstr;

class TempFolder {
 public:
  TempFolder() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "nxrt_registry_XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempFolder() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Sets NXRT_PLUGIN_PATH for one test and restores it after.
class ScopedPluginPath {
 public:
  explicit ScopedPluginPath(const std::string& value) {
    if (const char* old = std::getenv("NXRT_PLUGIN_PATH")) old_ = old;
    setenv("NXRT_PLUGIN_PATH", value.c_str(), 1);
  }
  ~ScopedPluginPath() {
    if (old_) {
      setenv("NXRT_PLUGIN_PATH", old_->c_str(), 1);
    } else {
      unsetenv("NXRT_PLUGIN_PATH");
    }
  }

 private:
  std::optional<std::string> old_;
};

// Makes `folder` the current folder for one test and restores the old one.
class ScopedCurrentFolder {
 public:
  explicit ScopedCurrentFolder(const std::filesystem::path& folder)
      : old_(std::filesystem::current_path()) {
    std::filesystem::current_path(folder);
  }
  ~ScopedCurrentFolder() { std::filesystem::current_path(old_); }

 private:
  std::filesystem::path old_;
};

std::filesystem::path BuiltLibFolder() {
  return std::filesystem::canonical(std::filesystem::path(NXRT_BINARY_DIR) / "lib");
}

TEST(PluginRegistry, LibraryFileNameFollowsTheConvention) {
  EXPECT_EQ(PluginRegistry::LibraryFileName("cpu"), "libep_cpu.so");
}

TEST(PluginRegistry, NxrtLibraryFolderIsTheBuildsLibFolder) {
  EXPECT_EQ(PluginRegistry::NxrtLibraryFolder(), BuiltLibFolder());
}

TEST(PluginRegistry, SearchOrderIsOptionThenEnvironmentThenLibraryFolder) {
  ScopedPluginPath env("/env/one:/env/two");
  PluginRegistry registry({"/option/a"});
  const auto folders = registry.SearchFolders();
  ASSERT_EQ(folders.size(), 4u);
  EXPECT_EQ(folders[0], "/option/a");
  EXPECT_EQ(folders[1], "/env/one");
  EXPECT_EQ(folders[2], "/env/two");
  EXPECT_EQ(folders[3], BuiltLibFolder());
}

TEST(PluginRegistry, LoadsByNameFromTheLibraryFolder) {
  PluginRegistry registry;
  auto plugin = registry.LoadByName("mock");
  ASSERT_TRUE(plugin.ok()) << plugin.status().ToString();
  EXPECT_EQ((*plugin)->name(), "mock");
  EXPECT_EQ(std::filesystem::canonical((*plugin)->path()).parent_path(), BuiltLibFolder());
}

TEST(PluginRegistry, LoadsByNameFromTheEnvironmentPath) {
  ScopedPluginPath env(std::string("/nonexistent:") + NXRT_TEST_PLUGIN_DIR);
  PluginRegistry registry;
  auto plugin = registry.LoadByName("fixture_old_minor");
  ASSERT_TRUE(plugin.ok()) << plugin.status().ToString();
  EXPECT_EQ((*plugin)->name(), "old_minor");
}

TEST(PluginRegistry, EarlierFolderShadowsTheLibraryFolder) {
  TempFolder folder;
  std::filesystem::copy_file(nxrt_test::FixturePlugin("old_minor"),
                             folder.path() / "libep_mock.so");
  PluginRegistry registry({folder.path()});
  auto plugin = registry.LoadByName("mock");
  ASSERT_TRUE(plugin.ok()) << plugin.status().ToString();
  EXPECT_EQ((*plugin)->name(), "old_minor");
}

// A plugin dropped in the current folder is not loaded by name through an
// empty folder, configured or in NXRT_PLUGIN_PATH ("", "a::b", a leading or
// trailing ':'), which a shell's PATH reads as the current folder.
TEST(PluginRegistry, EmptyFolderEntriesNeverSearchTheCurrentFolder) {
  TempFolder here;
  std::filesystem::copy_file(nxrt_test::FixturePlugin("old_minor"),
                             here.path() / "libep_dropped.so");
  ScopedCurrentFolder current(here.path());
  ScopedPluginPath env(":/nonexistent/one::/nonexistent/two:");
  PluginRegistry registry({""});
  for (const auto& folder : registry.SearchFolders()) {
    EXPECT_FALSE(folder.empty());
    EXPECT_NE(std::filesystem::weakly_canonical(folder), std::filesystem::canonical(here.path()));
  }
  auto plugin = registry.LoadByName("dropped");
  ASSERT_FALSE(plugin.ok()) << "loaded " << (*plugin)->path() << " from the current folder";
  EXPECT_EQ(plugin.status().code(), nxrt::StatusCode::kNotFound);
  for (const auto& item : registry.Discover()) {
    EXPECT_NE(item.path.filename(), "libep_dropped.so") << item.path;
  }
}

TEST(PluginRegistry, TheCurrentFolderNamedAsDotIsSearched) {
  TempFolder here;
  std::filesystem::copy_file(nxrt_test::FixturePlugin("old_minor"),
                             here.path() / "libep_dropped.so");
  ScopedCurrentFolder current(here.path());
  ScopedPluginPath env(".");
  PluginRegistry registry;
  auto plugin = registry.LoadByName("dropped");
  ASSERT_TRUE(plugin.ok()) << plugin.status().ToString();
  EXPECT_EQ((*plugin)->name(), "old_minor");
}

TEST(PluginRegistry, NotFoundListsTheFoldersSearched) {
  PluginRegistry registry({"/option/folder"});
  auto plugin = registry.LoadByName("nosuch");
  ASSERT_FALSE(plugin.ok());
  EXPECT_EQ(plugin.status().code(), nxrt::StatusCode::kNotFound);
  EXPECT_THAT(plugin.status().message(), HasSubstr("libep_nosuch.so not found in"));
  EXPECT_THAT(plugin.status().message(), HasSubstr("/option/folder"));
  EXPECT_THAT(plugin.status().message(), HasSubstr(BuiltLibFolder().string()));
}

TEST(PluginRegistry, LoadsEachLibraryOnce) {
  PluginRegistry registry;
  auto by_name = registry.Load("mock");
  auto by_path = registry.Load(nxrt_test::BuiltPlugin("mock").string());
  ASSERT_TRUE(by_name.ok());
  ASSERT_TRUE(by_path.ok());
  EXPECT_EQ(by_name->get(), by_path->get());
}

TEST(PluginRegistry, PathsAreLoadedAsPaths) {
  PluginRegistry registry;
  auto plugin = registry.Load("/nonexistent/libep_x.so");
  ASSERT_FALSE(plugin.ok());
  EXPECT_THAT(plugin.status().message(), HasSubstr("no such file"));
}

TEST(PluginRegistry, DiscoveryListsEveryPluginFileWithItsIdentityOrError) {
  PluginRegistry registry({NXRT_TEST_PLUGIN_DIR});
  const auto found = registry.Discover();
  std::map<std::string, const nxrt::plugin_host::DiscoveredPlugin*> by_file;
  for (const auto& item : found) by_file[item.path.filename().string()] = &item;

  ASSERT_TRUE(by_file.contains("libep_fixture_old_minor.so"));
  ASSERT_NE(by_file["libep_fixture_old_minor.so"]->plugin, nullptr);
  EXPECT_EQ(by_file["libep_fixture_old_minor.so"]->plugin->name(), "old_minor");

  ASSERT_TRUE(by_file.contains("libep_fixture_no_entry.so"));
  EXPECT_EQ(by_file["libep_fixture_no_entry.so"]->plugin, nullptr);
  EXPECT_THAT(by_file["libep_fixture_no_entry.so"]->error.message(), HasSubstr("no entry symbol"));

  ASSERT_TRUE(by_file.contains("libep_mock.so"));
  ASSERT_NE(by_file["libep_mock.so"]->plugin, nullptr);
  EXPECT_EQ(by_file["libep_mock.so"]->plugin->name(), "mock");
}

}  // namespace
