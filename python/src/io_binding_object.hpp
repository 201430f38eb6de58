// nxrt.IOBinding: inputs and outputs bound once to arrays the caller keeps,
// so a loop of runs converts and copies nothing it need not.
//
// A bound input is borrowed, not copied, when it is C-contiguous; the
// caller may change its contents between runs in place (a decode loop
// writes the next token into the same [1, 1] array). A session made with
// fixed-capacity KV (SessionOptions' "nxrt.fixed_capacity_kv") updates a
// bound past KV array in place, so the cache is never copied and its
// address never moves, which device-graph replay needs.
//
// An output bound to an array is written into it when the run's output has
// the array's dtype and byte size; get_outputs() then returns that array
// (reshaped to the output's shape when that differs). An output bound
// without an array, or whose size did not match, gets fresh storage that
// get_outputs() hands to numpy without a copy.
#pragma once

#include "casters.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "array_conversion.hpp"
#include "nxrt/session.hpp"

namespace nxrt::python {

class SessionObject;

class BindingObject {
 public:
  explicit BindingObject(nanobind::object session);
  BindingObject(const BindingObject&) = delete;
  BindingObject& operator=(const BindingObject&) = delete;

  void BindInput(const std::string& name, nanobind::handle array);
  void BindOutput(const std::string& name, nanobind::handle array);
  void ClearInputs();
  void ClearOutputs();
  // Every bound output after the last run, in the order bound.
  nanobind::list GetOutputs();

  // For SessionObject::RunWithBinding.
  std::span<const NamedTensor> inputs() const { return inputs_; }
  std::span<const std::string> output_names() const { return output_names_; }
  std::vector<Tensor>& outputs() { return outputs_; }
  // Points every output bound to an array at it again, before a run.
  void PrepareOutputs();
  void RunFinished();

 private:
  struct BoundOutput {
    nanobind::object array;  // None when unbound
    Py_buffer* view = nullptr;
    DataType dtype = DataType::kUndefined;
    std::vector<int64_t> dims;  // the array's, as bound
    nanobind::object result;    // what get_outputs() returns, once made
  };

  nanobind::object session_object_;  // keeps the session alive
  SessionObject& session_;
  std::vector<NamedTensor> inputs_;
  std::vector<std::unique_ptr<BorrowedBuffers>> input_buffers_;  // parallel to inputs_
  std::vector<std::string> output_names_;
  std::vector<Tensor> outputs_;
  std::vector<BoundOutput> bound_outputs_;  // parallel to output_names_
  std::vector<std::unique_ptr<BorrowedBuffers>> output_buffers_;
  bool ran_ = false;
};

void RegisterBinding(nanobind::module_& module);

}  // namespace nxrt::python
