"""Moves tensors whose element types numpy knows only through ml_dtypes
(bfloat16, float8, 4- and 2-bit types) in and out of ONNX Runtime, whose
Python binding takes and gives them only as OrtValues holding raw bytes."""
import ctypes
import math

import numpy as np
import onnxruntime as ort
from onnx import helper

NPY_USERDEF = 256  # numpy numbers dtypes registered from outside (ml_dtypes) from here up
SUB_BYTE_BITS = {"int4": 4, "uint4": 4, "float4_e2m1fn": 4, "int2": 2, "uint2": 2}
SIGNED_INTEGERS = {"int4", "int2"}
FLOATS_BY_BITS = {"float4_e2m1fn"}


def is_ml_dtype(value):
    return isinstance(value, np.ndarray) and value.dtype.num >= NPY_USERDEF


def _pack(array):
    """The bytes ONNX Runtime keeps for `array`: sub-byte elements packed low bits first."""
    array = np.ascontiguousarray(array)
    bits = SUB_BYTE_BITS.get(array.dtype.name)
    if bits is None:
        return array.tobytes()
    per_byte = 8 // bits
    codes = array.view(np.uint8).ravel() & ((1 << bits) - 1)
    codes = np.concatenate([codes, np.zeros(-len(codes) % per_byte, np.uint8)]).reshape(-1, per_byte)
    packed = np.zeros(len(codes), np.uint8)
    for j in range(per_byte):
        packed |= codes[:, j] << (bits * j)
    return packed.tobytes()


def _unpack(raw, dtype, count):
    bits = SUB_BYTE_BITS[dtype.name]
    per_byte = 8 // bits
    shifts = (bits * np.arange(per_byte)).astype(np.uint8)
    codes = ((raw[:, None] >> shifts) & ((1 << bits) - 1)).ravel()[:count].astype(np.uint8)
    if dtype.name in FLOATS_BY_BITS:
        return codes.view(dtype)
    if dtype.name in SIGNED_INTEGERS:
        signed = codes.astype(np.int8)
        return np.where(signed >= 1 << (bits - 1), signed - (1 << bits), signed).astype(np.int8).astype(dtype)
    return codes.astype(dtype)


def to_ort_value(array, onnx_elem_type):
    value = ort.OrtValue.ortvalue_from_shape_and_type(list(array.shape), onnx_elem_type)
    data = _pack(array)
    if data:
        ctypes.memmove(value.data_ptr(), data, len(data))
    return value


def from_ort_value(value):
    """The numpy array an OrtValue holds, ml_dtypes types included."""
    dtype = np.dtype(helper.tensor_dtype_to_np_dtype(value.element_type()))
    if dtype.num < NPY_USERDEF:
        return value.numpy()
    shape = value.shape()
    count = math.prod(shape)
    bits = SUB_BYTE_BITS.get(dtype.name)
    size = math.ceil(count * bits / 8) if bits else count * dtype.itemsize
    raw = np.frombuffer(ctypes.string_at(value.data_ptr(), size), np.uint8) if size else np.zeros(0, np.uint8)
    flat = _unpack(raw, dtype, count) if bits else raw.view(dtype)
    return flat.reshape(shape)
