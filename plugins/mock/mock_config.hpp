// What a mock EP instance is told to do, parsed from its create_ep options:
//
//   log=ID                  call-log name (default "default")
//   claim=Add,Relu | *      ops to claim (default *)
//   decline=Op:reason;...   ops to decline with that reason (wins over claim)
//   capture_safe=0|1        kernels say they are capture-safe (default 1)
//   share=0|1               kernels share prepared constants (default 0)
//   any_shape=0|1           kernels serve other shapes of their ranks (default 0)
//   any_shape_from=N        the Nth kernel made (from 1) and every later one
//                           serve other shapes, the earlier ones do not
//   device_graphs=0|1       the instance captures device graphs (default 1)
//   fail_POINT=N            the Nth call (from 1) of POINT fails; POINT is one
//                           of claim, create_kernel, prepare, adopt, compute,
//                           reset, begin_capture, end_capture, replay
//   break_output=N          the Nth compute call (from 1) leaves its first
//                           output holding fewer bytes than its dims need
//   telemetry=key:n,...     values kernels report (uploaded_bytes,
//                           committed_bytes, logical_bytes, unique_bytes,
//                           page_ins, physical_bytes); unset: no telemetry
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "nxrt/ep_abi.h"
#include "nxrt/ep_sdk.hpp"

namespace nxrt::mock {

enum class FaultPoint {
  kClaim,
  kCreateKernel,
  kPrepare,
  kAdopt,
  kCompute,
  kReset,
  kBeginCapture,
  kEndCapture,
  kReplay,
  kTelemetryArm,
};

const char* FaultPointName(FaultPoint point);

struct MockConfig {
  std::string log_id = "default";
  bool claim_all = true;
  std::set<std::string> claimed_ops;
  std::map<std::string, std::string> declined_ops;  // op -> reason
  bool capture_safe = true;
  bool share_constants = false;
  bool serves_other_shapes = false;
  uint64_t serves_other_shapes_from = 0;  // 0: as serves_other_shapes says
  bool device_graphs = true;
  std::map<FaultPoint, uint64_t> fail_on_call;  // point -> failing call number
  uint64_t break_output_on_call = 0;            // 0: never
  std::optional<nxrt_telemetry> telemetry;
  // When set, create_ep answers UNAVAILABLE with this message, as an EP whose
  // device is missing does.
  std::optional<std::string> unavailable;

  // Throws nxrt::sdk::Error(INVALID_ARGUMENT) naming a bad key or value.
  static MockConfig Parse(const nxrt::sdk::Options& options);
};

}  // namespace nxrt::mock
