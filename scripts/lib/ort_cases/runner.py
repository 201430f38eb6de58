"""Writes every case of the ort_cases package into a folder of ONNX backend
test cases: OUT/<module>_<name>/model.onnx and test_data_set_<k>/input_<i>.pb,
output_<j>.pb, the expected outputs being what ONNX Runtime's CPU execution
provider computes on one thread.

Each model is checked with onnx.checker first. Each case folder is written
beside its final name and renamed into place, case folders no module yields
any more are removed, and the bytes written depend only on the case modules,
onnx and onnxruntime, so an unchanged package writes an identical folder.
A stamp file, written last, marks a complete run.

Usage: python -m ort_cases.runner OUT_DIR [PACKAGE]
PACKAGE is the package of case modules, ort_cases by default; corpus_cases
holds the exported model corpus.
"""
import copy
import importlib
import os
import pkgutil
import re
import shutil
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, numpy_helper

import ort_cases
from ort_case_runner import ort_reason
from ort_ml_dtypes import from_ort_value, is_ml_dtype, to_ort_value

FRAMEWORK_MODULES = {"runner"}
STAMP = ".ort-cases-complete"
PARTIAL = ".partial"
CASE_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")


class CaseError(Exception):
    """A case that cannot be written; the message names it and says why."""


def case_modules(package):
    """The case modules of `package`, by name, in name order."""
    names = sorted(info.name for info in pkgutil.iter_modules(package.__path__)
                   if info.name not in FRAMEWORK_MODULES)
    modules = []
    for name in names:
        module = importlib.import_module(f"{package.__name__}.{name}")
        if not callable(getattr(module, "cases", None)):
            raise CaseError(f"{package.__name__}/{name}.py defines no cases(); every module of the "
                            "package other than the runner must yield (name, model, feeds_list) "
                            "from cases()")
        modules.append((name, module))
    return modules


def checkable(model):
    """`model` as onnx.checker can check it: the nodes of ops ONNX Runtime keeps
    in the default domain without ONNX defining them (SimplifiedLayerNormalization)
    move to com.microsoft, whose ops the checker does not look up, so the rest
    of the model is still checked."""
    unknown = {node.op_type for node in model.graph.node
               if node.domain in ("", "ai.onnx") and not onnx.defs.has(node.op_type)}
    if not unknown:
        return model
    model = copy.deepcopy(model)
    for node in model.graph.node:
        if node.op_type in unknown:
            node.domain = ort_cases.MS_DOMAIN
    if not any(o.domain == ort_cases.MS_DOMAIN for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid(ort_cases.MS_DOMAIN, 1))
    return model


def graph_inputs(model):
    initializers = {t.name for t in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in initializers]


def session_for(model):
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def run_on_ort(session, model, feeds):
    """The outputs ONNX Runtime computes for `feeds`, in graph output order."""
    names = [o.name for o in model.graph.output]
    if not any(map(is_ml_dtype, feeds.values())):
        return session.run(names, feeds)
    elem_types = {i.name: i.type.tensor_type.elem_type for i in model.graph.input}
    values = {name: to_ort_value(value, elem_types[name]) if is_ml_dtype(value)
              else ort.OrtValue.ortvalue_from_numpy(value) for name, value in feeds.items()}
    return [from_ort_value(v) for v in session.run_with_ort_values(names, values)]


def check_feeds(case, inputs, feeds, k):
    wanted = [i.name for i in inputs]
    if sorted(feeds) != sorted(wanted):
        raise CaseError(f"{case}: data set {k} feeds {sorted(feeds)} but the graph's inputs are "
                        f"{wanted}; feed each graph input exactly once")
    for value_info in inputs:
        value = feeds[value_info.name]
        if not isinstance(value, np.ndarray):
            raise CaseError(f"{case}: data set {k} input '{value_info.name}' is a "
                            f"{type(value).__name__}; feed numpy arrays")
        # The declared shape is checked here as nxrt checks it; like ONNX
        # Runtime, both take any rank for an input declared as a scalar.
        dims = value_info.type.tensor_type.shape.dim
        declared = [d.dim_value if d.HasField("dim_value") and d.dim_value >= 0 else None
                    for d in dims]
        if value_info.type.tensor_type.HasField("shape") and declared and (
                len(declared) != value.ndim or
                any(d is not None and d != n for d, n in zip(declared, value.shape))):
            shown = ["?" if d is None else d for d in declared]
            raise CaseError(f"{case}: data set {k} feeds '{value_info.name}' of shape "
                            f"{list(value.shape)} but the graph declares {shown}; "
                            "make them agree")


def check_outputs(case, model, outputs, k):
    for value_info, value in zip(model.graph.output, outputs):
        declared = value_info.type.tensor_type.elem_type
        got = helper.np_dtype_to_tensor_dtype(value.dtype)
        if declared != got:
            raise CaseError(f"{case}: output '{value_info.name}' is declared "
                            f"{helper.tensor_dtype_to_string(declared)} but ONNX Runtime gave "
                            f"{helper.tensor_dtype_to_string(got)} in data set {k}; "
                            "declare the type the op produces")


def tensor_bytes(value, name):
    # asarray, not ascontiguousarray, which makes a scalar a [1] array.
    return numpy_helper.from_array(np.asarray(value, order="C"), name).SerializeToString(deterministic=True)


def write_case(folder, model, data_sets):
    """Writes one case into `folder`, which must not exist."""
    os.makedirs(folder)
    with open(os.path.join(folder, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString(deterministic=True))
    inputs = graph_inputs(model)
    for k, (feeds, outputs) in enumerate(data_sets):
        set_dir = os.path.join(folder, f"test_data_set_{k}")
        os.makedirs(set_dir)
        for i, value_info in enumerate(inputs):
            with open(os.path.join(set_dir, f"input_{i}.pb"), "wb") as f:
                f.write(tensor_bytes(feeds[value_info.name], value_info.name))
        for j, (value_info, value) in enumerate(zip(model.graph.output, outputs)):
            with open(os.path.join(set_dir, f"output_{j}.pb"), "wb") as f:
                f.write(tensor_bytes(value, value_info.name))


def replace_folder(staging, final):
    """Moves `staging` to `final`, replacing a previous `final` whole."""
    if os.path.exists(final):
        old = final + ".old" + PARTIAL
        shutil.rmtree(old, ignore_errors=True)
        os.replace(final, old)
        os.replace(staging, final)
        shutil.rmtree(old)
    else:
        os.replace(staging, final)


def build_case(module_name, name, model, feeds_list):
    """(folder name, model, [(feeds, outputs)]) of one case, checked and run on ORT."""
    case = f"{module_name}_{name}"
    if not isinstance(name, str) or not CASE_NAME.match(name):
        raise CaseError(f"ort_cases/{module_name}.py: case name {name!r} must be letters, digits, "
                        "'_', '.' or '-'")
    if not isinstance(model, onnx.ModelProto):
        raise CaseError(f"{case}: the model is a {type(model).__name__}; yield an onnx.ModelProto")
    if not feeds_list:
        raise CaseError(f"{case}: no data sets; yield at least one dict of feeds")
    try:
        onnx.checker.check_model(checkable(model), full_check=True)
    except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError) as error:
        raise CaseError(f"{case}: onnx.checker rejects the model: {' '.join(str(error).split())}")
    try:
        session = session_for(model)
    except Exception as error:
        raise CaseError(f"{case}: ONNX Runtime cannot load the model: {ort_reason(error)}")
    inputs = graph_inputs(model)
    data_sets = []
    for k, feeds in enumerate(feeds_list):
        check_feeds(case, inputs, feeds, k)
        try:
            outputs = run_on_ort(session, model, feeds)
        except Exception as error:
            raise CaseError(f"{case}: ONNX Runtime fails data set {k}: {ort_reason(error)}")
        check_outputs(case, model, outputs, k)
        data_sets.append((feeds, outputs))
    return case, model, data_sets


def remove_leftovers(out, keep):
    """Removes what earlier runs left in `out` that this run does not write."""
    for entry in os.listdir(out):
        path = os.path.join(out, entry)
        if entry == STAMP or entry.endswith(PARTIAL) or (os.path.isdir(path) and entry not in keep):
            if os.path.isdir(path):
                shutil.rmtree(path)
            else:
                os.remove(path)


def main(out, package_name="ort_cases"):
    os.makedirs(out, exist_ok=True)
    cases = []
    seen = set()
    for module_name, module in case_modules(importlib.import_module(package_name)):
        for name, model, feeds_list in module.cases():
            case, model, data_sets = build_case(module_name, name, model, feeds_list)
            if case in seen:
                raise CaseError(f"{case}: yielded twice by ort_cases/{module_name}.py; "
                                "give each case its own name")
            seen.add(case)
            cases.append((case, model, data_sets))
    remove_leftovers(out, seen)
    for case, model, data_sets in cases:
        staging = os.path.join(out, case + PARTIAL)
        write_case(staging, model, data_sets)
        replace_folder(staging, os.path.join(out, case))
    with open(os.path.join(out, STAMP), "w") as f:
        f.write(f"onnx {onnx.__version__}, onnxruntime {ort.__version__}\n")
        f.write(f"{len(cases)} cases\n")
    print(f"make-ort-cases: wrote {len(cases)} cases to {out}")


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__.strip().splitlines()[-3])
    try:
        main(*sys.argv[1:])
    except CaseError as error:
        sys.exit(f"make-ort-cases: {error}")
