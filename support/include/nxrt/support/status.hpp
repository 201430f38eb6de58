// Status and Result: how nxrt's C++ layers report failure.
//
// A Status is either OK or an error with a code and a one-line message that
// names the file, node, op and what to do. Result<T> holds a value or an error
// Status. Errors travel up by return value; nothing below the public API
// throws, so a malformed model or a failing plugin never unwinds through
// foreign frames.
#pragma once

#include "nxrt/support/export.hpp"

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace nxrt {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,
  kNotFound,
  kUnsupported,
  kFailedPrecondition,
  kOutOfMemory,
  kUnavailable,
  kInternal,
  kCancelled,  // a run stopped by its RunOptions (terminate flag or deadline)
};

NXRT_API const char* StatusCodeName(StatusCode code);

class [[nodiscard]] NXRT_API Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return {}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // "code: message", for logs and the command line.
  std::string ToString() const;

  // Returns a copy whose message starts with `context: `.
  Status WithContext(const std::string& context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string m) {
  return {StatusCode::kInvalidArgument, std::move(m)};
}
inline Status NotFound(std::string m) {
  return {StatusCode::kNotFound, std::move(m)};
}
inline Status Unsupported(std::string m) {
  return {StatusCode::kUnsupported, std::move(m)};
}
inline Status FailedPrecondition(std::string m) {
  return {StatusCode::kFailedPrecondition, std::move(m)};
}
inline Status Unavailable(std::string m) {
  return {StatusCode::kUnavailable, std::move(m)};
}
inline Status Internal(std::string m) {
  return {StatusCode::kInternal, std::move(m)};
}

// A value of type T, or the error Status that explains why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}        // NOLINT: implicit by design
  Result(Status status) : state_(std::move(status)) {  // NOLINT: implicit by design
    assert(!std::get<Status>(state_).ok() && "a Result needs a value or an error");
  }

  bool ok() const { return std::holds_alternative<T>(state_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(state_);
  }
  T& value() & { return std::get<T>(state_); }
  const T& value() const& { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> state_;
};

}  // namespace nxrt

#define NXRT_STATUS_CONCAT_INNER_(a, b) a##b
#define NXRT_STATUS_CONCAT_(a, b) NXRT_STATUS_CONCAT_INNER_(a, b)

// Returns the Status of `expr` from the enclosing function when it is an error.
#define NXRT_RETURN_IF_ERROR(expr)                       \
  do {                                                   \
    ::nxrt::Status nxrt_status_tmp_ = (expr);            \
    if (!nxrt_status_tmp_.ok()) return nxrt_status_tmp_; \
  } while (false)

// Declares or assigns `lhs` from the Result `expr`, returning its error.
#define NXRT_ASSIGN_OR_RETURN(lhs, expr) \
  NXRT_ASSIGN_OR_RETURN_IMPL_(NXRT_STATUS_CONCAT_(nxrt_result_, __LINE__), lhs, expr)
#define NXRT_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.ok()) return tmp.status();               \
  lhs = std::move(tmp).value()
