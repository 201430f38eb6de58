#include <gtest/gtest.h>

#include "nxrt_test/plugin_paths.hpp"
#include "plugin_host/plugin.hpp"

namespace {

using nxrt::plugin_host::Plugin;

TEST(VersionNegotiation, VersionMacrosPackMajorAndMinor) {
  const uint32_t v = NXRT_EP_ABI_MAKE_VERSION(3u, 17u);
  EXPECT_EQ(NXRT_EP_ABI_VERSION_MAJOR_OF(v), 3u);
  EXPECT_EQ(NXRT_EP_ABI_VERSION_MINOR_OF(v), 17u);
  EXPECT_EQ(NXRT_EP_ABI_VERSION_MAJOR_OF(NXRT_EP_ABI_VERSION), NXRT_EP_ABI_VERSION_MAJOR);
  EXPECT_EQ(NXRT_EP_ABI_VERSION_MINOR_OF(NXRT_EP_ABI_VERSION), NXRT_EP_ABI_VERSION_MINOR);
}

TEST(VersionNegotiation, SameVersionIsInForceWhenBothAgree) {
  auto plugin = Plugin::Load(nxrt_test::BuiltPlugin("mock"));
  ASSERT_TRUE(plugin.ok());
  EXPECT_EQ((*plugin)->abi_version(), NXRT_EP_ABI_VERSION);
}

TEST(VersionNegotiation, TheSmallerMinorIsInForce) {
  auto plugin = Plugin::Load(nxrt_test::FixturePlugin("old_minor"));
  ASSERT_TRUE(plugin.ok()) << plugin.status().ToString();
  ASSERT_GT(NXRT_EP_ABI_VERSION_MINOR, 0u);
  EXPECT_EQ(NXRT_EP_ABI_VERSION_MINOR_OF((*plugin)->abi_version()), 0u);
  EXPECT_EQ(NXRT_EP_ABI_VERSION_MAJOR_OF((*plugin)->abi_version()), NXRT_EP_ABI_VERSION_MAJOR);
}

TEST(VersionNegotiation, AnotherMajorIsRefused) {
  auto plugin = Plugin::Load(nxrt_test::FixturePlugin("future_major"));
  ASSERT_FALSE(plugin.ok());
  EXPECT_EQ(plugin.status().code(), nxrt::StatusCode::kFailedPrecondition);
}

}  // namespace
