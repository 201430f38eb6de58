// The Python exceptions nxrt raises, one per StatusCode, all under
// nxrt.Error. A failed Status becomes one of them carrying the Status's
// one-line message, so a caller can catch a kind (nxrt.InvalidArgument) or
// every nxrt failure (nxrt.Error). Raising never leaves the session in
// another state than the failed call found it.
#pragma once

#include "casters.hpp"

#include <string>

#include "nxrt/support/status.hpp"

namespace nxrt::python {

// Creates the exception types as attributes of `module`; called once at import.
void RegisterErrors(nanobind::module_& module);

// Raises the exception of `status`'s code (a C++ exception nanobind turns
// into the Python one). `status` must not be ok.
[[noreturn]] void Raise(const Status& status);

inline void ThrowIfError(const Status& status) {
  if (!status.ok()) Raise(status);
}

template <typename T>
T ValueOrRaise(Result<T> result) {
  if (!result.ok()) Raise(result.status());
  return std::move(result).value();
}

[[noreturn]] inline void RaiseInvalidArgument(std::string message) {
  Raise(InvalidArgument(std::move(message)));
}

}  // namespace nxrt::python
