#include "cpu_environment.hpp"

#include <gtest/gtest.h>

namespace nxrt_test {

std::shared_ptr<nxrt::Environment> CpuEnvironment() {
  static std::shared_ptr<nxrt::Environment> environment = [] {
    nxrt::EnvironmentOptions options;
    options.plugin_folders = {NXRT_BINARY_DIR "/lib"};
    auto created = nxrt::Environment::Create(options);
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    return created.ok() ? std::move(created).value() : nullptr;
  }();
  return environment;
}

}  // namespace nxrt_test
