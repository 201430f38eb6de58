#include <sys/wait.h>

#include <cstdio>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "nxrt/ep_abi.h"

namespace {

using ::testing::HasSubstr;

struct Output {
  int exit_code = -1;
  std::string text;
};

Output RunNxrt(const std::string& args) {
  const std::string command = std::string(NXRT_BINARY_DIR) + "/bin/nxrt " + args + " 2>&1";
  Output out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) out.text.append(buffer, n);
  const int status = pclose(pipe);
  if (WIFEXITED(status)) out.exit_code = WEXITSTATUS(status);
  return out;
}

TEST(NxrtPluginsCommand, ListsBuiltPluginsWithTheirIdentity) {
  const Output out = RunNxrt("plugins");
  ASSERT_EQ(out.exit_code, 0) << out.text;
  EXPECT_THAT(out.text, HasSubstr("mock"));
  EXPECT_THAT(out.text, HasSubstr("c_identity"));
  EXPECT_THAT(out.text, HasSubstr("libep_mock.so"));
}

TEST(NxrtPluginsCommand, JsonReportsAbiVersionsAndLoadFailures) {
  const Output out = RunNxrt(std::string("plugins --json --plugin-path ") + NXRT_TEST_PLUGIN_DIR);
  ASSERT_EQ(out.exit_code, 0) << out.text;
  const std::string host_abi =
      std::to_string(NXRT_EP_ABI_VERSION_MAJOR) + "." + std::to_string(NXRT_EP_ABI_VERSION_MINOR);
  EXPECT_THAT(out.text, HasSubstr("\"name\":\"mock\",\"vendor\":\"nxrt\",\"version\":\"1.0\","
                                  "\"abi_version\":\"" +
                                  host_abi + "\""));
  EXPECT_THAT(out.text, HasSubstr("\"name\":\"old_minor\""));
  EXPECT_THAT(out.text, HasSubstr("\"abi_version\":\"1.0\""));
  EXPECT_THAT(out.text, HasSubstr("\"loaded\":false,\"error\":"));
  EXPECT_THAT(out.text, HasSubstr("ABI major mismatch"));
}

TEST(NxrtPluginsCommand, UnknownLogLevelIsOneLineError) {
  const Output out = RunNxrt("plugins --log-level loud");
  EXPECT_EQ(out.exit_code, 1);
  EXPECT_THAT(out.text, HasSubstr("nxrt: error: "));
  EXPECT_THAT(out.text, HasSubstr("'loud'"));
}

}  // namespace
