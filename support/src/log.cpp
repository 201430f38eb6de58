#include "nxrt/support/log.hpp"

#include <cstdlib>
#include <mutex>
#include <optional>

#include <spdlog/sinks/stdout_color_sinks.h>

namespace nxrt {
namespace {

struct LogState {
  std::mutex mutex;
  spdlog::level::level_enum level = spdlog::level::warn;
  spdlog::sink_ptr sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
};

std::optional<spdlog::level::level_enum> ParseLevel(const std::string& text) {
  if (text == "trace") return spdlog::level::trace;
  if (text == "debug") return spdlog::level::debug;
  if (text == "info") return spdlog::level::info;
  if (text == "warn" || text == "warning") return spdlog::level::warn;
  if (text == "error") return spdlog::level::err;
  if (text == "off") return spdlog::level::off;
  return std::nullopt;
}

LogState& State() {
  static LogState* state = [] {
    auto* s = new LogState();
    if (const char* env = std::getenv("NXRT_LOG_LEVEL")) {
      if (auto level = ParseLevel(env)) s->level = *level;
    }
    return s;
  }();
  return *state;
}

}  // namespace

std::shared_ptr<spdlog::logger> GetLogger(const std::string& name) {
  LogState& state = State();
  std::lock_guard lock(state.mutex);
  if (auto existing = spdlog::get(name)) return existing;
  auto logger = std::make_shared<spdlog::logger>(name, state.sink);
  logger->set_level(state.level);
  logger->set_pattern("[%Y-%m-%d %H:%M:%S.%e] [%n] [%l] %v");
  spdlog::register_logger(logger);
  return logger;
}

bool SetLogLevel(const std::string& text) {
  auto level = ParseLevel(text);
  if (!level) return false;
  LogState& state = State();
  std::lock_guard lock(state.mutex);
  state.level = *level;
  spdlog::apply_all([&](const std::shared_ptr<spdlog::logger>& l) { l->set_level(*level); });
  return true;
}

}  // namespace nxrt
