"""Runs one ONNX backend test case on ONNX Runtime's CPU execution provider and
compares its outputs with the case's expected outputs."""
import os

import onnx
import onnxruntime as ort

from onnx_test_cases import load_data_sets, mismatch, one_line
from ort_ml_dtypes import from_ort_value, is_ml_dtype, to_ort_value


def ort_reason(error):
    """ORT's message without the source location and C++ signature it puts before the reason."""
    text = str(error)
    start = text.find("/onnxruntime_src/")
    if start < 0:
        return one_line(text)
    k = text.find(" ", start) + 1
    depth, opened = 0, False
    while k < len(text) and not (opened and depth == 0 and text[k] == " "):
        depth += {"(": 1, ")": -1}.get(text[k], 0)
        opened = opened or text[k] == "("
        k += 1
    return one_line(text[:start] + text[k:].lstrip())


def check_case_on_ort(case_dir):
    """(status, message) of one case on ONNX Runtime: pass, fail (outputs differ) or error."""
    model = onnx.load(os.path.join(case_dir, "model.onnx"))
    data_sets = load_data_sets(case_dir, model)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.log_severity_level = 4
    try:
        session = ort.InferenceSession(os.path.join(case_dir, "model.onnx"), options, providers=["CPUExecutionProvider"])
    except Exception as error:
        return "error", f"session: {ort_reason(error)}"
    output_names = [o.name for o in model.graph.output]
    elem_types = {i.name: i.type.tensor_type.elem_type for i in model.graph.input}
    for n, (inputs, expected) in enumerate(data_sets):
        try:
            if any(map(is_ml_dtype, list(inputs.values()) + expected)):
                feeds = {name: to_ort_value(value, elem_types[name]) if is_ml_dtype(value)
                         else ort.OrtValue.ortvalue_from_numpy(value) for name, value in inputs.items()}
                actual = [from_ort_value(v) for v in session.run_with_ort_values(output_names[:len(expected)], feeds)]
            else:
                actual = session.run(output_names[:len(expected)], inputs)
        except Exception as error:
            return "error", f"run: {ort_reason(error)}"
        for k, (want, got) in enumerate(zip(expected, actual)):
            reason = mismatch(want, got, f"data set {n} output {k} ({output_names[k]})")
            if reason:
                return "fail", reason
    return "pass", ""
