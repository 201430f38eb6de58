#include <memory>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>

#include "nxrt/environment.hpp"
#include "nxrt/support/log.hpp"
#include "nxrt_test/plugin_paths.hpp"
#include "plugin_host/execution_provider.hpp"
#include "plugin_host/plugin.hpp"

namespace {

using nxrt::plugin_host::ExecutionProvider;
using nxrt::plugin_host::Plugin;
using ::testing::HasSubstr;
using ::testing::Not;

// Captures what the logger named `name` writes while alive.
class CapturedLog {
 public:
  explicit CapturedLog(const std::string& name) : logger_(nxrt::GetLogger(name)) {
    sink_ = std::make_shared<spdlog::sinks::ostream_sink_mt>(stream_);
    sink_->set_pattern("[%n] [%l] %v");
    logger_->sinks().push_back(sink_);
  }
  ~CapturedLog() {
    auto& sinks = logger_->sinks();
    std::erase(sinks, sink_);
    nxrt::SetLogLevel("error");
  }
  std::string text() const { return stream_.str(); }

 private:
  std::shared_ptr<spdlog::logger> logger_;
  std::ostringstream stream_;
  std::shared_ptr<spdlog::sinks::ostream_sink_mt> sink_;
};

// The old-minor fixture logs one debug line when an EP is created.
void CreateOldMinorEp() {
  auto plugin = Plugin::Load(nxrt_test::FixturePlugin("old_minor"));
  ASSERT_TRUE(plugin.ok());
  auto provider = ExecutionProvider::Create(*plugin);
  ASSERT_TRUE(provider.ok());
}

TEST(PluginLogSink, PluginLinesLandUnderThePluginsName) {
  CapturedLog log("old_minor");
  auto env = nxrt::Environment::Create({.plugin_folders = {}, .log_level = "debug"});
  ASSERT_TRUE(env.ok());
  CreateOldMinorEp();
  EXPECT_THAT(log.text(), HasSubstr("[old_minor] [debug] old-minor fixture EP created"));
}

TEST(PluginLogSink, LinesBelowTheLevelAreDropped) {
  CapturedLog log("old_minor");
  auto env = nxrt::Environment::Create({.plugin_folders = {}, .log_level = "warn"});
  ASSERT_TRUE(env.ok());
  CreateOldMinorEp();
  EXPECT_THAT(log.text(), Not(HasSubstr("old-minor fixture EP created")));
}

}  // namespace
