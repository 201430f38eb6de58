#include "array_conversion.hpp"

#include <nanobind/ndarray.h>

#include <cstring>
#include <string_view>

#include "errors.hpp"
#include "nxrt/graph/dtype.hpp"

namespace nb = nanobind;

namespace nxrt::python {
namespace {

// Modules looked up once and kept for the process (never released, so
// interpreter shutdown does not run into them).
nb::handle Numpy() {
  static nb::handle numpy = nb::module_::import_("numpy").release();
  return numpy;
}

nb::handle MlDtypes() {
  static nb::handle ml_dtypes = [] {
    try {
      return nb::module_::import_("ml_dtypes").release();
    } catch (nb::python_error&) {
      Raise(
          Unsupported("bfloat16, float8 and sub-byte tensors need the ml_dtypes package; "
                      "pip install ml_dtypes"));
    }
  }();
  return ml_dtypes;
}

// The dtypes numpy holds only through ml_dtypes, by their numpy name.
struct ExtendedType {
  DataType dtype;
  const char* numpy_name;
  int bits;  // below 8 for a sub-byte type, packed in ONNX
};
constexpr ExtendedType kExtendedTypes[] = {
    {DataType::kBfloat16, "bfloat16", 16},
    {DataType::kFloat8E4M3FN, "float8_e4m3fn", 8},
    {DataType::kFloat8E4M3FNUZ, "float8_e4m3fnuz", 8},
    {DataType::kFloat8E5M2, "float8_e5m2", 8},
    {DataType::kFloat8E5M2FNUZ, "float8_e5m2fnuz", 8},
    {DataType::kFloat8E8M0, "float8_e8m0fnu", 8},
    {DataType::kInt4, "int4", 4},
    {DataType::kUint4, "uint4", 4},
    {DataType::kFloat4E2M1, "float4_e2m1fn", 4},
    {DataType::kInt2, "int2", 2},
    {DataType::kUint2, "uint2", 2},
};

const ExtendedType* FindExtended(DataType dtype) {
  for (const ExtendedType& t : kExtendedTypes) {
    if (t.dtype == dtype) return &t;
  }
  return nullptr;
}

// The nxrt dtype of a numpy dtype, from its kind and item size (and name for
// the ml_dtypes ones); kUndefined when nxrt has none.
DataType FromNumpyDtype(nb::handle dtype) {
  const std::string kind = nb::cast<std::string>(dtype.attr("kind"));
  const size_t size = nb::cast<size_t>(dtype.attr("itemsize"));
  const char k = kind.empty() ? '?' : kind[0];
  switch (k) {
    case 'b':
      return DataType::kBool;
    case 'i':
      return size == 1   ? DataType::kInt8
             : size == 2 ? DataType::kInt16
             : size == 4 ? DataType::kInt32
             : size == 8 ? DataType::kInt64
                         : DataType::kUndefined;
    case 'u':
      return size == 1   ? DataType::kUint8
             : size == 2 ? DataType::kUint16
             : size == 4 ? DataType::kUint32
             : size == 8 ? DataType::kUint64
                         : DataType::kUndefined;
    case 'c':
      return size == 8    ? DataType::kComplex64
             : size == 16 ? DataType::kComplex128
                          : DataType::kUndefined;
    case 'U':
    case 'S':
    case 'O':
      return DataType::kString;
    case 'f':
      if (size == 2) return DataType::kFloat16;
      if (size == 4) return DataType::kFloat32;
      if (size == 8) return DataType::kFloat64;
      break;
    default:
      break;
  }
  const std::string name = nb::cast<std::string>(dtype.attr("name"));
  for (const ExtendedType& t : kExtendedTypes) {
    if (name == t.numpy_name) return t.dtype;
  }
  return DataType::kUndefined;
}

std::vector<int64_t> ShapeOf(nb::handle array) {
  std::vector<int64_t> shape;
  for (nb::handle dim : nb::borrow<nb::tuple>(array.attr("shape"))) {
    shape.push_back(nb::cast<int64_t>(dim));
  }
  return shape;
}

Tensor StringTensor(nb::handle array, std::vector<int64_t> shape, const std::string& name) {
  std::vector<std::string> strings;
  nb::list items = nb::borrow<nb::list>(array.attr("ravel")().attr("tolist")());
  strings.reserve(items.size());
  for (nb::handle item : items) {
    if (nb::isinstance<nb::str>(item)) {
      strings.push_back(nb::cast<std::string>(item));
    } else if (nb::isinstance<nb::bytes>(item)) {
      nb::bytes b = nb::borrow<nb::bytes>(item);
      strings.emplace_back(b.c_str(), b.size());
    } else {
      RaiseInvalidArgument("input '" + name + "': a string tensor holds str or bytes, not " +
                           nb::cast<std::string>(item.type().attr("__name__")));
    }
  }
  return ValueOrRaise(Tensor::FromStrings(std::move(shape), std::move(strings)));
}

// ml_dtypes keeps a sub-byte element in the low bits of a byte; ONNX packs
// 8 / bits of them into each byte, the first in the lowest bits.
Tensor PackSubByte(nb::handle array, const ExtendedType& type, std::vector<int64_t> shape) {
  nb::object bytes_array = Numpy().attr("ascontiguousarray")(array).attr("view")("uint8");
  nb::bytes raw = nb::borrow<nb::bytes>(bytes_array.attr("tobytes")());
  Tensor tensor = ValueOrRaise(Tensor::Zeros(type.dtype, std::move(shape)));
  const auto* in = reinterpret_cast<const uint8_t*>(raw.c_str());
  auto* out = static_cast<uint8_t*>(tensor.data());
  const int per_byte = 8 / type.bits;
  const uint8_t mask = static_cast<uint8_t>((1u << type.bits) - 1);
  for (size_t i = 0; i < raw.size(); ++i) {
    out[i / per_byte] |= static_cast<uint8_t>((in[i] & mask) << (type.bits * (i % per_byte)));
  }
  return tensor;
}

nb::object UnpackSubByte(const Tensor& tensor, const ExtendedType& type) {
  const size_t count = tensor.element_count();
  nb::object unpacked = Numpy().attr("empty")(count, "uint8");
  Py_buffer view;
  if (PyObject_GetBuffer(unpacked.ptr(), &view, PyBUF_WRITABLE) != 0) throw nb::python_error();
  const auto* in = static_cast<const uint8_t*>(tensor.data());
  auto* out = static_cast<uint8_t*>(view.buf);
  const int per_byte = 8 / type.bits;
  const uint8_t mask = static_cast<uint8_t>((1u << type.bits) - 1);
  for (size_t i = 0; i < count; ++i) {
    out[i] = static_cast<uint8_t>((in[i / per_byte] >> (type.bits * (i % per_byte))) & mask);
  }
  PyBuffer_Release(&view);
  nb::tuple shape = ShapeTuple(tensor.shape());
  return unpacked.attr("view")(MlDtypes().attr(type.numpy_name)).attr("reshape")(shape);
}

nb::dlpack::dtype DlpackOf(DataType dtype) {
  using Code = nb::dlpack::dtype_code;
  const auto make = [](Code code, int bits) {
    return nb::dlpack::dtype{static_cast<uint8_t>(code), static_cast<uint8_t>(bits), 1};
  };
  switch (dtype) {
    case DataType::kFloat32:
      return make(Code::Float, 32);
    case DataType::kFloat64:
      return make(Code::Float, 64);
    case DataType::kFloat16:
      return make(Code::Float, 16);
    case DataType::kInt8:
      return make(Code::Int, 8);
    case DataType::kInt16:
      return make(Code::Int, 16);
    case DataType::kInt32:
      return make(Code::Int, 32);
    case DataType::kInt64:
      return make(Code::Int, 64);
    case DataType::kUint8:
      return make(Code::UInt, 8);
    case DataType::kUint16:
      return make(Code::UInt, 16);
    case DataType::kUint32:
      return make(Code::UInt, 32);
    case DataType::kUint64:
      return make(Code::UInt, 64);
    case DataType::kBool:
      return make(Code::Bool, 8);
    case DataType::kComplex64:
      return make(Code::Complex, 64);
    case DataType::kComplex128:
      return make(Code::Complex, 128);
    case DataType::kBfloat16:
      return make(Code::UInt, 16);  // viewed as ml_dtypes.bfloat16 after
    default:
      return make(Code::UInt, 8);  // the float8 types, viewed after
  }
}

}  // namespace

BorrowedBuffers::~BorrowedBuffers() {
  for (Py_buffer* view : views_) {
    PyBuffer_Release(view);
    delete view;
  }
}

bool BorrowedBuffers::Borrow(nb::handle array, bool writable, Py_buffer*& view) {
  auto* held = new Py_buffer;
  const int flags = PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0);
  if (PyObject_GetBuffer(array.ptr(), held, flags) != 0) {
    PyErr_Clear();
    delete held;
    return false;
  }
  views_.push_back(held);
  view = held;
  return true;
}

Tensor TensorFromPython(nb::handle object, const std::string& name, bool writable,
                        BorrowedBuffers& borrowed) {
  nb::handle numpy = Numpy();
  nb::object array = nb::borrow(object);
  if (!nb::isinstance(object, numpy.attr("ndarray"))) {
    try {
      array = numpy.attr("asarray")(object);
    } catch (nb::python_error& e) {
      RaiseInvalidArgument("input '" + name +
                           "' is not an array numpy can make: " + std::string(e.what()));
    }
  }
  const DataType dtype = FromNumpyDtype(array.attr("dtype"));
  if (dtype == DataType::kUndefined) {
    RaiseInvalidArgument("input '" + name + "' has numpy dtype " +
                         nb::cast<std::string>(array.attr("dtype").attr("name")) +
                         ", which no ONNX tensor type holds");
  }
  std::vector<int64_t> shape = ShapeOf(array);
  if (dtype == DataType::kString) return StringTensor(array, std::move(shape), name);
  const ExtendedType* extended = FindExtended(dtype);
  if (extended && extended->bits < 8) return PackSubByte(array, *extended, std::move(shape));
  // ml_dtypes arrays have no buffer of their own type; their bytes do.
  if (extended) array = array.attr("view")("uint8");
  Py_buffer* view = nullptr;
  if (!borrowed.Borrow(array, writable, view)) {
    nb::object copy = numpy.attr("array")(array, nb::arg("order") = "C");
    if (!borrowed.Borrow(copy, writable, view)) throw nb::python_error();
  }
  return Tensor::Borrow(dtype, std::move(shape), view->buf, static_cast<size_t>(view->len));
}

Value ValueFromPython(nb::handle object, const ValueDescription& declared, bool writable,
                      BorrowedBuffers& borrowed) {
  const bool optional = declared.kind == graph::ValueKind::kOptionalTensor ||
                        declared.kind == graph::ValueKind::kOptionalSequence;
  if (object.is_none()) {
    if (optional) return Value();
    RaiseInvalidArgument("input '" + declared.name + "' is " + TypeString(declared) +
                         ", not optional; None cannot be fed");
  }
  if (declared.kind == graph::ValueKind::kSequence ||
      declared.kind == graph::ValueKind::kOptionalSequence) {
    if (!nb::isinstance<nb::list>(object) && !nb::isinstance<nb::tuple>(object)) {
      RaiseInvalidArgument("input '" + declared.name + "' is " + TypeString(declared) +
                           "; feed a list of arrays");
    }
    std::vector<Tensor> elements;
    size_t index = 0;
    for (nb::handle element : object) {
      elements.push_back(TensorFromPython(
          element, declared.name + "[" + std::to_string(index++) + "]", writable, borrowed));
    }
    return Value::Sequence(std::move(elements));
  }
  return Value(TensorFromPython(object, declared.name, writable, borrowed));
}

nb::object TensorToPython(Tensor&& tensor) {
  nb::tuple shape = ShapeTuple(tensor.shape());
  if (tensor.dtype() == DataType::kString) {
    nb::list items;
    for (const std::string& s : tensor.strings()) {
      PyObject* text =
          PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "surrogateescape");
      if (text == nullptr) throw nb::python_error();
      items.append(nb::steal(text));
    }
    return Numpy().attr("array")(items, nb::arg("dtype") = "object").attr("reshape")(shape);
  }
  const ExtendedType* extended = FindExtended(tensor.dtype());
  if (extended && extended->bits < 8) return UnpackSubByte(tensor, *extended);
  std::vector<size_t> dims(tensor.shape().begin(), tensor.shape().end());
  auto* owned = new Tensor(std::move(tensor));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<Tensor*>(p); });
  nb::ndarray<nb::numpy> array(owned->data(), dims.size(), dims.data(), owner, nullptr,
                               DlpackOf(owned->dtype()));
  nb::object result = nb::cast(array, nb::rv_policy::reference);
  if (extended) return result.attr("view")(MlDtypes().attr(extended->numpy_name));
  return result;
}

nb::object ValueToPython(Value&& value) {
  if (value.is_none()) return nb::none();
  if (value.is_tensor()) return TensorToPython(std::move(value.tensor()));
  nb::list elements;
  for (Tensor& element : value.sequence()) elements.append(TensorToPython(std::move(element)));
  return elements;
}

nb::tuple ShapeTuple(const std::vector<int64_t>& dims) {
  PyObject* tuple = PyTuple_New(static_cast<Py_ssize_t>(dims.size()));
  if (tuple == nullptr) throw nb::python_error();
  for (size_t i = 0; i < dims.size(); ++i) {
    PyTuple_SET_ITEM(tuple, static_cast<Py_ssize_t>(i), PyLong_FromLongLong(dims[i]));
  }
  return nb::steal<nb::tuple>(tuple);
}

std::string TypeString(const ValueDescription& value) {
  const std::string tensor = "tensor(" + std::string(graph::DataTypeName(value.dtype)) + ")";
  switch (value.kind) {
    case graph::ValueKind::kSequence:
      return "seq(" + tensor + ")";
    case graph::ValueKind::kOptionalTensor:
      return "optional(" + tensor + ")";
    case graph::ValueKind::kOptionalSequence:
      return "optional(seq(" + tensor + "))";
    default:
      return tensor;
  }
}

}  // namespace nxrt::python
