#include "mock_config.hpp"

#include <sstream>
#include <vector>

namespace nxrt::mock {
namespace {

using nxrt::sdk::Error;

constexpr FaultPoint kAllPoints[] = {
    FaultPoint::kClaim,        FaultPoint::kCreateKernel, FaultPoint::kPrepare,
    FaultPoint::kAdopt,        FaultPoint::kCompute,      FaultPoint::kReset,
    FaultPoint::kBeginCapture, FaultPoint::kEndCapture,   FaultPoint::kReplay,
    FaultPoint::kTelemetryArm,
};

std::vector<std::string> Split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  std::string part;
  while (std::getline(stream, part, separator)) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

[[noreturn]] void BadValue(const std::string& key, const std::string& value,
                           const std::string& expected) {
  throw Error(NXRT_STATUS_INVALID_ARGUMENT,
              "mock EP option " + key + "='" + value + "': expected " + expected);
}

bool ParseBool(const std::string& key, const std::string& value) {
  if (value == "1" || value == "true") return true;
  if (value == "0" || value == "false") return false;
  BadValue(key, value, "0 or 1");
}

uint64_t ParseCount(const std::string& key, const std::string& value) {
  try {
    size_t used = 0;
    const unsigned long long n = std::stoull(value, &used);
    if (used == value.size() && n > 0) return n;
  } catch (const std::exception&) {
    // Reported below with the expected form.
  }
  BadValue(key, value, "a positive call number");
}

nxrt_telemetry ParseTelemetry(const std::string& key, const std::string& value) {
  nxrt_telemetry t{};
  t.struct_size = sizeof(t);
  for (const std::string& item : Split(value, ',')) {
    const size_t colon = item.find(':');
    if (colon == std::string::npos) BadValue(key, value, "name:number pairs");
    const std::string name = item.substr(0, colon);
    const uint64_t n = ParseCount(key, item.substr(colon + 1));
    if (name == "uploaded_bytes") {
      t.uploaded_bytes = n;
    } else if (name == "committed_bytes") {
      t.committed_bytes = n;
    } else if (name == "logical_bytes") {
      t.logical_bytes = n;
    } else if (name == "unique_bytes") {
      t.unique_bytes = n;
    } else if (name == "page_ins") {
      t.page_ins = n;
    } else if (name == "physical_bytes") {
      t.has_physical_bytes = 1;
      t.physical_bytes = n;
    } else {
      BadValue(key, value,
               "names among uploaded_bytes, committed_bytes, logical_bytes, "
               "unique_bytes, page_ins, physical_bytes");
    }
  }
  return t;
}

}  // namespace

const char* FaultPointName(FaultPoint point) {
  switch (point) {
    case FaultPoint::kClaim:
      return "claim";
    case FaultPoint::kCreateKernel:
      return "create_kernel";
    case FaultPoint::kPrepare:
      return "prepare";
    case FaultPoint::kAdopt:
      return "adopt";
    case FaultPoint::kCompute:
      return "compute";
    case FaultPoint::kReset:
      return "reset";
    case FaultPoint::kBeginCapture:
      return "begin_capture";
    case FaultPoint::kEndCapture:
      return "end_capture";
    case FaultPoint::kReplay:
      return "replay";
    case FaultPoint::kTelemetryArm:
      return "telemetry_arm";
  }
  return "unknown";
}

MockConfig MockConfig::Parse(const nxrt::sdk::Options& options) {
  MockConfig config;
  for (size_t i = 0; i < options.size(); ++i) {
    const auto [key_view, value_view] = options.at(i);
    const std::string key(key_view);
    const std::string value(value_view);
    if (key == "log") {
      config.log_id = value;
    } else if (key == "claim") {
      config.claim_all = value == "*";
      config.claimed_ops.clear();
      if (!config.claim_all) {
        for (const std::string& op : Split(value, ',')) config.claimed_ops.insert(op);
      }
    } else if (key == "decline") {
      for (const std::string& item : Split(value, ';')) {
        const size_t colon = item.find(':');
        const std::string op = item.substr(0, colon);
        config.declined_ops[op] = colon == std::string::npos
                                      ? "the mock EP was told to decline " + op
                                      : item.substr(colon + 1);
      }
    } else if (key == "capture_safe") {
      config.capture_safe = ParseBool(key, value);
    } else if (key == "share") {
      config.share_constants = ParseBool(key, value);
    } else if (key == "any_shape") {
      config.serves_other_shapes = ParseBool(key, value);
    } else if (key == "any_shape_from") {
      config.serves_other_shapes_from = ParseCount(key, value);
    } else if (key == "device_graphs") {
      config.device_graphs = ParseBool(key, value);
    } else if (key == "telemetry") {
      config.telemetry = ParseTelemetry(key, value);
    } else if (key == "break_output") {
      config.break_output_on_call = ParseCount(key, value);
    } else if (key == "unavailable") {
      config.unavailable = value;
    } else {
      bool matched = false;
      for (FaultPoint point : kAllPoints) {
        if (key == std::string("fail_") + FaultPointName(point)) {
          config.fail_on_call[point] = ParseCount(key, value);
          matched = true;
        }
      }
      if (!matched) {
        throw Error(
            NXRT_STATUS_INVALID_ARGUMENT,
            "mock EP: unknown option '" + key +
                "'; known: log, claim, decline, capture_safe, share, any_shape, any_shape_from, "
                "device_graphs, break_output, telemetry, unavailable, fail_<point>");
      }
    }
  }
  return config;
}

}  // namespace nxrt::mock
