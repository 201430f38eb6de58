"""Every ONNX tensor type numpy can hold goes in and comes back unchanged,
and sequences and optionals come through as lists and None."""

import ml_dtypes
import numpy as np
import pytest
from conftest import identity_model, model_bytes, tensor_info
from onnx import TensorProto, helper

import nxrt

NUMPY_TYPES = [
    (TensorProto.FLOAT, np.float32, "float"),
    (TensorProto.DOUBLE, np.float64, "double"),
    (TensorProto.FLOAT16, np.float16, "float16"),
    (TensorProto.INT8, np.int8, "int8"),
    (TensorProto.INT16, np.int16, "int16"),
    (TensorProto.INT32, np.int32, "int32"),
    (TensorProto.INT64, np.int64, "int64"),
    (TensorProto.UINT8, np.uint8, "uint8"),
    (TensorProto.UINT16, np.uint16, "uint16"),
    (TensorProto.UINT32, np.uint32, "uint32"),
    (TensorProto.UINT64, np.uint64, "uint64"),
    (TensorProto.BOOL, np.bool_, "bool"),
    (TensorProto.COMPLEX64, np.complex64, "complex64"),
    (TensorProto.COMPLEX128, np.complex128, "complex128"),
    (TensorProto.BFLOAT16, ml_dtypes.bfloat16, "bfloat16"),
    (TensorProto.FLOAT8E4M3FN, ml_dtypes.float8_e4m3fn, "float8e4m3fn"),
    (TensorProto.FLOAT8E4M3FNUZ, ml_dtypes.float8_e4m3fnuz, "float8e4m3fnuz"),
    (TensorProto.FLOAT8E5M2, ml_dtypes.float8_e5m2, "float8e5m2"),
    (TensorProto.FLOAT8E5M2FNUZ, ml_dtypes.float8_e5m2fnuz, "float8e5m2fnuz"),
    (TensorProto.INT4, ml_dtypes.int4, "int4"),
    (TensorProto.UINT4, ml_dtypes.uint4, "uint4"),
]


@pytest.mark.parametrize("elem_type, dtype, name", NUMPY_TYPES, ids=[t[2] for t in NUMPY_TYPES])
def test_a_tensor_of_every_type_round_trips(elem_type, dtype, name):
    session = nxrt.InferenceSession(identity_model(elem_type))
    assert session.get_inputs()[0].type == f"tensor({name})"
    # Values every one of the types holds exactly, in an odd count so that
    # sub-byte packing has a half-filled last byte.
    values = np.array([0, 1, 2, 3, 1, 0, 2], np.float32)
    if dtype is np.bool_:
        values = values > 1
    x = values.astype(dtype)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * values[::-1]
    (y,) = session.run(None, {"x": x})
    assert y.dtype == np.dtype(dtype)
    assert y.shape == x.shape
    assert y.tobytes() == x.tobytes()


def test_negative_int4_values_keep_their_sign():
    session = nxrt.InferenceSession(identity_model(TensorProto.INT4))
    x = np.array([-8, -1, 7, 0, -3], ml_dtypes.int4)
    np.testing.assert_array_equal(session.run(None, {"x": x})[0].astype(np.int8),
                                  x.astype(np.int8))


def test_strings_come_from_str_object_and_bytes_arrays():
    session = nxrt.InferenceSession(identity_model(TensorProto.STRING, shape=[2, 2]))
    expected = np.array([["a", "bé"], ["", "long text"]], dtype=object)
    for x in (expected, expected.astype(str), np.array([[b"a", "bé".encode()], [b"", b"long text"]])):
        (y,) = session.run(None, {"x": x})
        assert y.dtype == object and y.shape == (2, 2)
        assert y.tolist() == expected.tolist()


def test_a_string_array_of_other_objects_is_refused():
    session = nxrt.InferenceSession(identity_model(TensorProto.STRING))
    with pytest.raises(nxrt.InvalidArgument, match="str or bytes, not int"):
        session.run(None, {"x": np.array(["a", 3], dtype=object)})


def test_scalars_and_empty_tensors_keep_their_shapes():
    scalar = nxrt.InferenceSession(identity_model(TensorProto.FLOAT, shape=[]))
    (y,) = scalar.run(None, {"x": np.float32(2.5)})
    assert y.shape == () and y == 2.5
    empty = nxrt.InferenceSession(identity_model(TensorProto.INT64, shape=["n", 3]))
    (y,) = empty.run(None, {"x": np.zeros((0, 3), np.int64)})
    assert y.shape == (0, 3) and y.dtype == np.int64


def test_views_and_fortran_order_arrays_are_read_as_numpy_shows_them():
    session = nxrt.InferenceSession(identity_model(TensorProto.FLOAT, shape=["r", "c"]))
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    for x in (base[:, ::2], base.T, np.asfortranarray(base), base[1:3]):
        np.testing.assert_array_equal(session.run(None, {"x": x})[0], x)


def test_python_lists_and_scalars_are_taken_as_numpy_would():
    session = nxrt.InferenceSession(identity_model(TensorProto.INT64))
    np.testing.assert_array_equal(session.run(None, {"x": np.array([1, 2, 3])})[0], [1, 2, 3])
    np.testing.assert_array_equal(session.run(None, {"x": [4, 5]})[0], [4, 5])


def test_a_sequence_is_a_list_of_arrays():
    model = model_bytes(
        [helper.make_node("SequenceInsert", ["s", "x"], ["t"])],
        [helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT, None),
         tensor_info("x", TensorProto.FLOAT, ["n"])],
        [helper.make_tensor_sequence_value_info("t", TensorProto.FLOAT, None)])
    session = nxrt.InferenceSession(model)
    assert session.get_inputs()[0].type == "seq(tensor(float))"
    a, b = np.array([1, 2], np.float32), np.array([3], np.float32)
    (t,) = session.run(None, {"s": [a], "x": b})
    assert isinstance(t, list) and len(t) == 2
    np.testing.assert_array_equal(t[0], a)
    np.testing.assert_array_equal(t[1], b)
    with pytest.raises(nxrt.InvalidArgument, match="list of arrays"):
        session.run(None, {"s": a, "x": b})


def test_an_absent_optional_is_none():
    optional_float = helper.make_optional_type_proto(
        helper.make_tensor_type_proto(TensorProto.FLOAT, ["n"]))
    model = model_bytes(
        [helper.make_node("OptionalHasElement", ["o"], ["has"]),
         helper.make_node("Optional", [], ["empty"],
                          type=helper.make_tensor_type_proto(TensorProto.FLOAT, ["n"]))],
        [helper.make_value_info("o", optional_float)],
        [tensor_info("has", TensorProto.BOOL, []), helper.make_value_info("empty", optional_float)])
    session = nxrt.InferenceSession(model)
    assert session.get_inputs()[0].type == "optional(tensor(float))"
    has, empty = session.run(None, {"o": None})
    assert not has and empty is None
    has, empty = session.run(None, {"o": np.array([1.5], np.float32)})
    assert has and empty is None
