// nxrt's loggers. Everything logs through spdlog: the core under "nxrt", each
// plugin under its own name. The level comes from NXRT_LOG_LEVEL (trace,
// debug, info, warn, error, off; default warn), read once, and SetLogLevel.
#pragma once

#include <memory>
#include <string>

#include <spdlog/spdlog.h>

namespace nxrt {

// The logger named `name`, made on first use with the shared sink and level.
std::shared_ptr<spdlog::logger> GetLogger(const std::string& name = "nxrt");

// Sets the level of every nxrt logger, present and future. Accepts the names
// above; returns false (and changes nothing) for any other text.
bool SetLogLevel(const std::string& level);

}  // namespace nxrt
