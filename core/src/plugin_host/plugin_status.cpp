#include "plugin_host/plugin_status.hpp"

#include <atomic>
#include <new>
#include <string>

struct nxrt_status {
  nxrt_status_code code;
  std::string message;
};

namespace nxrt::plugin_host {
namespace {

std::atomic<size_t> live_statuses{0};

// Handed out when a status cannot be allocated; release ignores it.
nxrt_status* OutOfMemoryStatus() {
  static nxrt_status* status =
      new nxrt_status{NXRT_STATUS_OUT_OF_MEMORY, "out of memory while reporting an error"};
  return status;
}

}  // namespace

StatusCode FromAbiCode(nxrt_status_code code) {
  switch (code) {
    case NXRT_STATUS_OK:
      return StatusCode::kOk;
    case NXRT_STATUS_INVALID_ARGUMENT:
      return StatusCode::kInvalidArgument;
    case NXRT_STATUS_NOT_FOUND:
      return StatusCode::kNotFound;
    case NXRT_STATUS_UNSUPPORTED:
      return StatusCode::kUnsupported;
    case NXRT_STATUS_FAILED_PRECONDITION:
      return StatusCode::kFailedPrecondition;
    case NXRT_STATUS_OUT_OF_MEMORY:
      return StatusCode::kOutOfMemory;
    case NXRT_STATUS_UNAVAILABLE:
      return StatusCode::kUnavailable;
    case NXRT_STATUS_INTERNAL:
      return StatusCode::kInternal;
  }
  return StatusCode::kInternal;
}

nxrt_status_code ToAbiCode(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return NXRT_STATUS_OK;
    case StatusCode::kInvalidArgument:
      return NXRT_STATUS_INVALID_ARGUMENT;
    case StatusCode::kNotFound:
      return NXRT_STATUS_NOT_FOUND;
    case StatusCode::kUnsupported:
      return NXRT_STATUS_UNSUPPORTED;
    case StatusCode::kFailedPrecondition:
      return NXRT_STATUS_FAILED_PRECONDITION;
    case StatusCode::kOutOfMemory:
      return NXRT_STATUS_OUT_OF_MEMORY;
    case StatusCode::kUnavailable:
      return NXRT_STATUS_UNAVAILABLE;
    case StatusCode::kInternal:
      return NXRT_STATUS_INTERNAL;
    case StatusCode::kCancelled:
      // The ABI has no such code; the executor that stopped the run marks
      // it cancelled again once the EP hands the status back.
      return NXRT_STATUS_FAILED_PRECONDITION;
  }
  return NXRT_STATUS_INTERNAL;
}

nxrt_status* StatusCreate(nxrt_status_code code, const char* message) {
  // An OK code would make a "successful" non-NULL status; report it as the
  // plugin bug it is instead.
  if (code == NXRT_STATUS_OK) {
    code = NXRT_STATUS_INTERNAL;
    message = "plugin made an error status with code OK";
  }
  try {
    auto* status = new nxrt_status{code, message ? message : ""};
    live_statuses.fetch_add(1, std::memory_order_relaxed);
    return status;
  } catch (const std::bad_alloc&) {
    return OutOfMemoryStatus();
  }
}

void StatusRelease(nxrt_status* status) {
  if (status == nullptr || status == OutOfMemoryStatus()) return;
  live_statuses.fetch_sub(1, std::memory_order_relaxed);
  delete status;
}

nxrt_status_code StatusCodeOf(const nxrt_status* status) {
  return status ? status->code : NXRT_STATUS_OK;
}

const char* StatusMessageOf(const nxrt_status* status) {
  return status ? status->message.c_str() : "";
}

Status TakeStatus(nxrt_status* status) {
  if (status == nullptr) return Status::Ok();
  Status converted(FromAbiCode(status->code), status->message);
  StatusRelease(status);
  return converted;
}

nxrt_status* MakeStatus(const Status& status) {
  if (status.ok()) return nullptr;
  return StatusCreate(ToAbiCode(status.code()), status.message().c_str());
}

nxrt_status* MakeStatus(nxrt_status_code code, std::string_view message) {
  return StatusCreate(code, std::string(message).c_str());
}

size_t LiveStatusCount() {
  return live_statuses.load(std::memory_order_relaxed);
}

}  // namespace nxrt::plugin_host
