#include "io_binding_object.hpp"

#include "errors.hpp"
#include "session_object.hpp"

namespace nb = nanobind;

namespace nxrt::python {

BindingObject::BindingObject(nb::object session)
    : session_object_(std::move(session)), session_(nb::cast<SessionObject&>(session_object_)) {}

void BindingObject::BindInput(const std::string& name, nb::handle array) {
  auto buffers = std::make_unique<BorrowedBuffers>();
  Tensor tensor = TensorFromPython(array, name, session_.fixed_capacity_kv(), *buffers);
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (inputs_[i].name == name) {
      inputs_[i].tensor = std::move(tensor);
      input_buffers_[i] = std::move(buffers);
      return;
    }
  }
  inputs_.push_back({name, std::move(tensor)});
  input_buffers_.push_back(std::move(buffers));
}

void BindingObject::BindOutput(const std::string& name, nb::handle array) {
  BoundOutput bound;
  auto buffers = std::make_unique<BorrowedBuffers>();
  if (!array.is_none()) {
    const Tensor tensor = TensorFromPython(array, name, true, *buffers);
    if (tensor.owns_data() || !buffers->Borrow(array, true, bound.view)) {
      RaiseInvalidArgument("output '" + name +
                           "' can only be bound to a writable C-contiguous array of a dtype "
                           "numpy lays out as ONNX does");
    }
    bound.array = nb::borrow(array);
    bound.dtype = tensor.dtype();
    bound.dims = tensor.shape();
  }
  size_t index = 0;
  while (index < output_names_.size() && output_names_[index] != name) ++index;
  if (index == output_names_.size()) {
    output_names_.push_back(name);
    outputs_.emplace_back();
    bound_outputs_.emplace_back();
    output_buffers_.emplace_back();
  }
  bound_outputs_[index] = std::move(bound);
  output_buffers_[index] = std::move(buffers);
  outputs_[index] = Tensor();
}

void BindingObject::ClearInputs() {
  inputs_.clear();
  input_buffers_.clear();
}

void BindingObject::ClearOutputs() {
  output_names_.clear();
  outputs_.clear();
  bound_outputs_.clear();
  output_buffers_.clear();
  ran_ = false;
}

void BindingObject::PrepareOutputs() {
  for (size_t i = 0; i < bound_outputs_.size(); ++i) {
    BoundOutput& bound = bound_outputs_[i];
    bound.result = nb::object();
    // An unbound output keeps the storage of the run before, unless
    // get_outputs() handed it to numpy.
    if (bound.view == nullptr) continue;
    outputs_[i] = Tensor::Borrow(bound.dtype, bound.dims, bound.view->buf,
                                 static_cast<size_t>(bound.view->len));
  }
}

void BindingObject::RunFinished() {
  ran_ = true;
}

nb::list BindingObject::GetOutputs() {
  nb::list result;
  if (!ran_) return result;
  for (size_t i = 0; i < bound_outputs_.size(); ++i) {
    BoundOutput& bound = bound_outputs_[i];
    if (!bound.result.is_valid()) {
      Tensor& tensor = outputs_[i];
      if (bound.view != nullptr && tensor.data() == bound.view->buf) {
        const bool same_shape = tensor.shape() == bound.dims;
        bound.result =
            same_shape ? bound.array : bound.array.attr("reshape")(ShapeTuple(tensor.shape()));
      } else {
        bound.result = TensorToPython(std::move(tensor));
        tensor = Tensor();
      }
    }
    result.append(bound.result);
  }
  return result;
}

void RegisterBinding(nb::module_& module) {
  nb::class_<BindingObject>(module, "IOBinding")
      .def(nb::init<nb::object>(), nb::arg("session"))
      .def("bind_input", &BindingObject::BindInput, nb::arg("name"), nb::arg("array"),
           "Binds input `name` to `array`, borrowed where its layout allows.")
      .def("bind_cpu_input", &BindingObject::BindInput, nb::arg("name"), nb::arg("array"),
           "ONNX Runtime's name for bind_input.")
      .def("bind_output", &BindingObject::BindOutput, nb::arg("name"),
           nb::arg("array").none() = nb::none(),
           "Binds output `name`, to be written into `array` when given.")
      .def("clear_binding_inputs", &BindingObject::ClearInputs)
      .def("clear_binding_outputs", &BindingObject::ClearOutputs)
      .def("get_outputs", &BindingObject::GetOutputs,
           "The bound outputs of the last run, in the order bound.")
      .def("copy_outputs_to_cpu", [](BindingObject& b) {
        nb::list copies;
        for (nb::handle array : b.GetOutputs()) copies.append(array.attr("copy")());
        return copies;
      });
}

}  // namespace nxrt::python
