"""ONNX backend test cases (CASE/model.onnx, CASE/test_data_set_N/{input,output}_K.pb):
finding them, decoding their protobuf files by the model's declared types, and
comparing outputs the way `nxrt test` does (rtol 1e-3, atol 1e-5, NaN equals
NaN, shapes and dtypes must match)."""
import glob
import os
import re

import numpy as np
import onnx
from onnx import helper, numpy_helper

RTOL = 1e-3
ATOL = 1e-5


def one_line(error):
    """The first line of an error's message, bounded, for one-line reports."""
    text = str(error).strip().splitlines()
    return (text[0] if text else type(error).__name__)[:300]


def case_dirs(path):
    """The case folders under `path`, or `path` itself when it is one case, sorted by name."""
    if os.path.isfile(os.path.join(path, "model.onnx")):
        return [path]
    return sorted(os.path.dirname(m) for m in glob.glob(os.path.join(path, "*", "model.onnx")))


def _index(file_name):
    return int(re.search(r"_(\d+)\.pb$", file_name).group(1))


def _load_value(path, type_proto):
    """The numpy value of one .pb file: an array, a list (sequence) or an optional (None or a value)."""
    with open(path, "rb") as f:
        data = f.read()
    if type_proto.HasField("sequence_type"):
        proto = onnx.SequenceProto()
        proto.ParseFromString(data)
        return numpy_helper.to_list(proto)
    if type_proto.HasField("optional_type"):
        proto = onnx.OptionalProto()
        proto.ParseFromString(data)
        return numpy_helper.to_optional(proto)
    if type_proto.HasField("map_type"):
        proto = onnx.MapProto()
        proto.ParseFromString(data)
        return numpy_helper.to_dict(proto)
    proto = onnx.TensorProto()
    proto.ParseFromString(data)
    array = numpy_helper.to_array(proto)
    declared = type_proto.tensor_type.elem_type
    if declared == onnx.TensorProto.BFLOAT16 and proto.data_type == onnx.TensorProto.UINT16:
        # Older onnx releases stored bfloat16 test data as its uint16 bit patterns.
        return array.view(helper.tensor_dtype_to_np_dtype(declared))
    return array


def load_data_sets(case_dir, model):
    """[(inputs {name: value}, expected outputs [value])] for every test_data_set_N of a case."""
    sets = []
    set_dirs = glob.glob(os.path.join(case_dir, "test_data_set_*"))
    for set_dir in sorted(set_dirs, key=lambda d: int(d.rsplit("_", 1)[1])):
        inputs = {}
        for path in sorted(glob.glob(os.path.join(set_dir, "input_*.pb")), key=_index):
            declared = model.graph.input[_index(path)]
            inputs[declared.name] = _load_value(path, declared.type)
        outputs = []
        for path in sorted(glob.glob(os.path.join(set_dir, "output_*.pb")), key=_index):
            outputs.append(_load_value(path, model.graph.output[_index(path)].type))
        sets.append((inputs, outputs))
    return sets


def _is_floating(dtype):
    return dtype.kind in "fc" or dtype.name in ("bfloat16",) or dtype.name.startswith("float8") or dtype.name.startswith("float4")


def mismatch(expected, actual, where="output"):
    """None when `actual` matches `expected`, else a one-line reason."""
    if expected is None or actual is None:
        return None if expected is None and actual is None else f"{where}: expected {'none' if expected is None else 'a value'}, got {'none' if actual is None else 'a value'}"
    if isinstance(expected, list):
        if not isinstance(actual, list):
            return f"{where}: expected a sequence, got {type(actual).__name__}"
        if len(expected) != len(actual):
            return f"{where}: sequence length {len(actual)}, expected {len(expected)}"
        for k, (e, a) in enumerate(zip(expected, actual)):
            reason = mismatch(e, a, f"{where}[{k}]")
            if reason:
                return reason
        return None
    if isinstance(expected, dict):
        return None if expected == actual else f"{where}: maps differ"
    expected = np.asarray(expected)
    actual = np.asarray(actual)
    if expected.dtype != actual.dtype:
        return f"{where}: dtype {actual.dtype}, expected {expected.dtype}"
    if expected.shape != actual.shape:
        return f"{where}: shape {list(actual.shape)}, expected {list(expected.shape)}"
    if _is_floating(expected.dtype):
        wide = np.complex128 if expected.dtype.kind == "c" else np.float64
        e = expected.astype(wide)
        a = actual.astype(wide)
        close = np.isclose(a, e, rtol=RTOL, atol=ATOL, equal_nan=True)
        if not close.all():
            # Equal infinities subtract to NaN; they are close, so masked out.
            with np.errstate(invalid="ignore"):
                gap = np.where(close, 0, np.abs(a - e))
            worst = np.unravel_index(np.argmax(gap), e.shape)
            return (f"{where}: {int((~close).sum())} of {e.size} values differ, "
                    f"at {list(map(int, worst))} got {a[worst]} expected {e[worst]}")
        return None
    if not np.array_equal(expected, actual):
        differ = int(np.sum(expected != actual))
        return f"{where}: {differ} of {expected.size} values differ"
    return None
