#include "errors.hpp"

#include <array>

namespace nb = nanobind;

namespace nxrt::python {
namespace {

// One exception type per StatusCode (index = code), under the base nxrt.Error.
// The names follow ONNX Runtime's where it has one; a second base lets code
// that catches the builtin kind (ValueError, MemoryError...) catch nxrt's.
struct ErrorKind {
  StatusCode code;
  const char* name;
  PyObject* builtin;  // a second base, or null
  const char* doc;
};

PyObject* base_error = nullptr;
std::array<PyObject*, 16> error_types{};

}  // namespace

void RegisterErrors(nb::module_& module) {
  base_error = PyErr_NewExceptionWithDoc("nxrt.Error", "Every error nxrt raises.",
                                         PyExc_RuntimeError, nullptr);
  module.attr("Error") = nb::handle(base_error);
  const ErrorKind kinds[] = {
      {StatusCode::kInvalidArgument, "InvalidArgument", PyExc_ValueError,
       "A model, input or option that nxrt refuses."},
      {StatusCode::kNotFound, "NoSuchFile", PyExc_FileNotFoundError,
       "A file or plugin that is not there."},
      {StatusCode::kUnsupported, "NotImplemented", PyExc_NotImplementedError,
       "An op, dtype or feature no loaded execution provider has."},
      {StatusCode::kFailedPrecondition, "Fail", nullptr,
       "A call that cannot be made in the session's present state."},
      {StatusCode::kOutOfMemory, "OutOfMemory", PyExc_MemoryError,
       "Memory the run could not have, or more than its memory limit."},
      {StatusCode::kUnavailable, "EPFail", nullptr,
       "An execution provider or device that is not available."},
      {StatusCode::kInternal, "RuntimeException", nullptr, "A failure inside nxrt or a plugin."},
      {StatusCode::kCancelled, "Cancelled", nullptr,
       "A run stopped by its RunOptions' terminate flag or deadline."},
  };
  for (const ErrorKind& kind : kinds) {
    PyObject* bases =
        kind.builtin ? PyTuple_Pack(2, base_error, kind.builtin) : PyTuple_Pack(1, base_error);
    const std::string qualified = std::string("nxrt.") + kind.name;
    PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), kind.doc, bases, nullptr);
    Py_DECREF(bases);
    if (type == nullptr) throw nb::python_error();
    error_types[static_cast<size_t>(kind.code)] = type;
    module.attr(kind.name) = nb::handle(type);
  }
}

void Raise(const Status& status) {
  const size_t index = static_cast<size_t>(status.code());
  PyObject* type =
      index < error_types.size() && error_types[index] ? error_types[index] : base_error;
  PyErr_SetString(type, status.message().c_str());
  throw nb::python_error();
}

}  // namespace nxrt::python
