#!/usr/bin/env python3
"""Writes the overridable form of a folder of ONNX backend test cases, then
checks it with check_conformance.py (the remaining arguments go there).

In the overridable form each case's graph inputs are also initializers that
hold the case's test_data_set_0 inputs, and the input files are gone, so
every run takes the initializers' data: the same values through the path of
an initializer a run could replace, which no kernel may prepare as a
constant. Cases with an input that is not a tensor are left out.

Old test data stores bfloat16 tensors as uint16; such a tensor is marked
bfloat16 (the same bits), as the input declares.

usage: overridable_form.py --source DIR --out DIR check_conformance.py ARGS...
(--cases of check_conformance is the --out folder)
"""
import argparse
import glob
import os
import shutil
import subprocess
import sys

SKIP_EXIT_CODE = 77

try:
    import onnx
except ImportError:
    print("overridable_form: the onnx package is missing; run scripts/setup-deps")
    sys.exit(SKIP_EXIT_CODE)


def overridable_case(case, out):
    """Writes `case` in the overridable form under `out`; False when it cannot be."""
    data = os.path.join(case, "test_data_set_0")
    model = onnx.load(os.path.join(case, "model.onnx"))
    graph = model.graph
    if not graph.input or not os.path.isdir(data):
        return False
    initializers = []
    for index, declared in enumerate(graph.input):
        path = os.path.join(data, f"input_{index}.pb")
        if not declared.type.HasField("tensor_type") or not os.path.exists(path):
            return False
        tensor = onnx.TensorProto()
        with open(path, "rb") as handle:
            tensor.ParseFromString(handle.read())
        declared_dtype = declared.type.tensor_type.elem_type
        if tensor.data_type == onnx.TensorProto.UINT16 and declared_dtype == onnx.TensorProto.BFLOAT16:
            tensor.data_type = onnx.TensorProto.BFLOAT16
        tensor.name = declared.name
        initializers.append(tensor)
    graph.initializer.extend(initializers)
    model.ir_version = max(model.ir_version, 4)  # initializers as inputs came with IR 4
    target = os.path.join(out, os.path.basename(case))
    os.makedirs(os.path.join(target, "test_data_set_0"))
    for expected in glob.glob(os.path.join(data, "output_*.pb")):
        shutil.copy(expected, os.path.join(target, "test_data_set_0"))
    onnx.save(model, os.path.join(target, "model.onnx"))
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", required=True, help="the folder of test cases")
    parser.add_argument("--out", required=True, help="where the overridable form goes")
    parser.add_argument("check", nargs=argparse.REMAINDER,
                        help="check_conformance.py and its arguments")
    args = parser.parse_args()
    if not os.path.isdir(args.source):
        print(f"overridable_form: {args.source} is missing")
        return SKIP_EXIT_CODE
    shutil.rmtree(args.out, ignore_errors=True)
    os.makedirs(args.out)
    written = sum(overridable_case(case, args.out)
                  for case in sorted(glob.glob(os.path.join(args.source, "*")))
                  if os.path.exists(os.path.join(case, "model.onnx")))
    print(f"overridable_form: {written} cases in {args.out}")
    return subprocess.call([sys.executable, "-B"] + args.check)


if __name__ == "__main__":
    sys.exit(main())
