// Conversion between numpy arrays and nxrt's tensors and values.
//
// Inputs: an array that is C-contiguous, of a dtype nxrt lays out the same
// way, is borrowed, not copied; anything else numpy.asarray accepts is
// copied once into that layout. Sub-byte dtypes (ml_dtypes' int4, uint4,
// float4_e2m1fn, int2, uint2: one element per byte in numpy) are packed as
// ONNX packs them. bfloat16 and the float8 types come through ml_dtypes.
// Strings come from str, bytes or object arrays of str.
//
// Outputs: a tensor's storage is handed to numpy without a copy; numpy owns
// it from then on. Strings become object arrays of str; a sequence a list of
// arrays; an absent optional None.
#pragma once

#include "casters.hpp"

#include <string>
#include <vector>

#include "nxrt/session.hpp"
#include "nxrt/tensor.hpp"
#include "nxrt/value.hpp"

namespace nxrt::python {

// Buffers a run borrows from Python arrays, released when this goes away.
// Create, fill and destroy it with the GIL held.
class BorrowedBuffers {
 public:
  BorrowedBuffers() = default;
  BorrowedBuffers(const BorrowedBuffers&) = delete;
  BorrowedBuffers& operator=(const BorrowedBuffers&) = delete;
  ~BorrowedBuffers();

  // The buffer of `array` when it is C-contiguous (and writable, when
  // asked); false, with no Python error set, when it is not.
  bool Borrow(nanobind::handle array, bool writable, Py_buffer*& view);

 private:
  std::vector<Py_buffer*> views_;
};

// `object` as a tensor named `name` (for errors). With `writable`, borrowed
// memory must be writable (the run may update it in place) or is copied.
Tensor TensorFromPython(nanobind::handle object, const std::string& name, bool writable,
                        BorrowedBuffers& borrowed);

// `object` as the value `declared` describes: a list for a sequence, None
// for an absent optional, otherwise a tensor.
Value ValueFromPython(nanobind::handle object, const ValueDescription& declared, bool writable,
                      BorrowedBuffers& borrowed);

nanobind::object TensorToPython(Tensor&& tensor);
nanobind::object ValueToPython(Value&& value);

// `dims` as the tuple numpy takes for a shape.
nanobind::tuple ShapeTuple(const std::vector<int64_t>& dims);

// ONNX Runtime's spelling of a declared type: "tensor(float)",
// "seq(tensor(int64))", "optional(tensor(float))".
std::string TypeString(const ValueDescription& value);

}  // namespace nxrt::python
