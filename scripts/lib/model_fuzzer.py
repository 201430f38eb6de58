"""Mutation fuzzer for the checks that stand between a bad model and a crash.

Each mutant is an ONNX backend test case with one to three random edits: an
attribute set to an edge value or dropped, an op renamed, an input dropped,
emptied or rewired, an output added or dropped, an initializer's dims, type
or integer values changed, a graph input's declared type or dims changed, the
opset or a node's domain changed, a test input's values, dims or type
changed, a test input replaced by a well-formed tensor of another shape
under symbolic declared dims (so it reaches the kernels), or the last graph
input made a constant of its test value (so it reaches shape inference and
constant preparation). Mutants run in batches through `nxrt test --json`,
which runs every case in a child process of its own; a case is a finding
when its child crashed, exited before reporting (a sanitizer's report, say),
let an exception escape, or ran past --timeout. A refusal or a wrong answer is the
expected outcome of a bad model and is not a finding. The address space of
`nxrt test` is capped (--memory-limit) so that a mutant asking for a tensor
of gigabytes is refused at once rather than computed until the timeout;
AddressSanitizer builds, which reserve terabytes of shadow memory, keep no
address-space cap, but every build passes the same limit to `nxrt test
--memory-limit`, which bounds the values a session holds.

The same seed gives the same mutants. Findings are copied, test data
included, to OUT/findings/<mutant>/ with the edits in mutations.txt, so each
one reruns with `nxrt test OUT/findings/<mutant>`; a run first clears
OUT/findings of an earlier run's. Exit status 1 when there are findings.

usage: model_fuzzer.py [--nxrt PATH] [--cases DIR]... [--count N] [--seed N]
                       [--batch N] [--timeout S] [--memory-limit GIB] [--ep NAME]
                       [--out DIR]
"""
import argparse
import json
import math
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import AttributeProto, TensorProto, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_CASES = ["/usr/share/libonnx-testdata/data/node",
                 os.path.join(ROOT, "build/release/onnx-node-cases")]

# Messages of `nxrt test` that mean the process running a case did not survive
# it (tools/nxrt/test_cases/isolated_run.cpp).
FINDING_MARKERS = ("crashed the process", "exited with status", "ended before reporting",
                   "uncaught exception", "timed out after")

EDGE_INTS = [0, -1, 1, 2, 3, -(2 ** 31), 2 ** 31 - 1, 2 ** 40, -(2 ** 40), 2 ** 62]
EDGE_FLOATS = [math.nan, math.inf, -math.inf, 0.0, -1.0, 1e30]
INTEGER_TYPES = {TensorProto.INT8, TensorProto.INT16, TensorProto.INT32, TensorProto.INT64,
                 TensorProto.UINT8, TensorProto.UINT16, TensorProto.UINT32, TensorProto.UINT64}
ELEMENT_TYPES = [TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16, TensorProto.BFLOAT16,
                 TensorProto.INT8, TensorProto.INT32, TensorProto.INT64, TensorProto.UINT8,
                 TensorProto.BOOL, TensorProto.STRING]
OTHER_DOMAINS = ["com.microsoft", "ai.onnx.ml", "org.example.none"]


def case_folders(roots):
    found = []
    for root in roots:
        if not os.path.isdir(root):
            raise SystemExit(f"model_fuzzer: {root} is not a folder of test cases")
        for name in sorted(os.listdir(root)):
            folder = os.path.join(root, name)
            if os.path.isfile(os.path.join(folder, "model.onnx")):
                found.append(folder)
    if not found:
        raise SystemExit(f"model_fuzzer: no test cases under {', '.join(roots)}")
    return found


def edge_int(rng, value):
    return rng.choice(EDGE_INTS + [value + 1, value - 1, -value])


def set_integer_element(rng, tensor):
    """Sets one element of an integer tensor to an edge value its type holds;
    returns the element's index and value, or None when it has no elements
    or its data does not fill its dims (a mutant's, or not a tensor at all)."""
    try:
        values = numpy_helper.to_array(tensor).copy()
    except ValueError:
        return None
    if not values.size:
        return None
    flat = values.reshape(-1)
    index = rng.randrange(flat.size)
    info = np.iinfo(flat.dtype)
    flat[index] = min(max(edge_int(rng, int(flat[index])), info.min), info.max)
    tensor.CopyFrom(numpy_helper.from_array(values, tensor.name))
    return index, flat[index]


def read_tensor_file(path):
    """The TensorProto in `path`, or None for a sequence or an optional."""
    tensor = TensorProto()
    with open(path, "rb") as handle:
        try:
            tensor.ParseFromString(handle.read())
        except Exception:  # a sequence or an optional: left alone
            return None
    return tensor


# Each mutation edits the model (or the case's test inputs) in place and
# returns a line describing the edit, or None when the case offers it nothing
# to edit.

def mutate_attribute(rng, model, case):
    nodes = [n for n in model.graph.node if n.attribute]
    if not nodes:
        return None
    node = rng.choice(nodes)
    attribute = rng.choice(node.attribute)
    where = f"{node.op_type} '{node.name}' attribute {attribute.name}"
    if rng.random() < 0.15:
        node.attribute.remove(attribute)
        return f"{where}: dropped"
    if attribute.type == AttributeProto.INT:
        attribute.i = edge_int(rng, attribute.i)
        return f"{where} = {attribute.i}"
    if attribute.type == AttributeProto.INTS:
        values = list(attribute.ints)
        choice = rng.random()
        if values and choice < 0.6:
            index = rng.randrange(len(values))
            values[index] = edge_int(rng, values[index])
        elif values and choice < 0.8:
            values.pop(rng.randrange(len(values)))
        else:
            values.append(edge_int(rng, 0))
        del attribute.ints[:]
        attribute.ints.extend(values)
        return f"{where} = {values}"
    if attribute.type == AttributeProto.FLOAT:
        attribute.f = rng.choice(EDGE_FLOATS)
        return f"{where} = {attribute.f}"
    if attribute.type == AttributeProto.FLOATS and attribute.floats:
        attribute.floats[rng.randrange(len(attribute.floats))] = rng.choice(EDGE_FLOATS)
        return f"{where} = {list(attribute.floats)}"
    if attribute.type == AttributeProto.STRING:
        attribute.s = rng.choice([b"", b"nonsense", attribute.s.upper()])
        return f"{where} = {attribute.s!r}"
    return None


def mutate_op_type(rng, model, case):
    if not model.graph.node:
        return None
    node = rng.choice(model.graph.node)
    old = node.op_type
    node.op_type = rng.choice(sorted(case["op_types"] - {old}))
    return f"node '{node.name}' op {old} -> {node.op_type}"


def visible_values(model, before):
    names = [i.name for i in model.graph.input] + [i.name for i in model.graph.initializer]
    for node in model.graph.node[:before]:
        names.extend(o for o in node.output if o)
    return names


def mutate_node_inputs(rng, model, case):
    nodes = [(i, n) for i, n in enumerate(model.graph.node) if n.input]
    if not nodes:
        return None
    index, node = rng.choice(nodes)
    slot = rng.randrange(len(node.input))
    visible = visible_values(model, index) or [""]
    where = f"{node.op_type} '{node.name}' input {slot}"
    choice = rng.random()
    if choice < 0.35:
        del node.input[-1]
        return f"{node.op_type} '{node.name}': last input dropped"
    if choice < 0.55:
        node.input[slot] = ""
        return f"{where} named empty"
    if choice < 0.7:
        node.input.append(rng.choice(visible))
        return f"{node.op_type} '{node.name}': input {node.input[-1]} appended"
    node.input[slot] = rng.choice(visible)
    return f"{where} rewired to {node.input[slot]}"


def mutate_node_outputs(rng, model, case):
    if not model.graph.node:
        return None
    node = rng.choice(model.graph.node)
    if rng.random() < 0.5 and len(node.output) > 1:
        del node.output[-1]
        return f"{node.op_type} '{node.name}': last output dropped"
    node.output.append(f"{node.name or node.op_type}_extra_output")
    return f"{node.op_type} '{node.name}': an output appended"


def mutate_initializer(rng, model, case):
    if not model.graph.initializer:
        return None
    tensor = rng.choice(model.graph.initializer)
    where = f"initializer {tensor.name}"
    choice = rng.random()
    if choice < 0.3 and tensor.dims:
        axis = rng.randrange(len(tensor.dims))
        tensor.dims[axis] = rng.choice([0, 1, tensor.dims[axis] + 1, 2 ** 20])
        return f"{where} dims = {list(tensor.dims)} (data unchanged)"
    if choice < 0.45:
        tensor.data_type = rng.choice(ELEMENT_TYPES)
        return f"{where} type = {TensorProto.DataType.Name(tensor.data_type)} (data unchanged)"
    if tensor.data_type in INTEGER_TYPES:
        element = set_integer_element(rng, tensor)
        if element:
            return f"{where} element {element[0]} = {element[1]}"
    del tensor.dims[:]
    tensor.dims.extend(rng.choice([[], [0], [1, 1, 1, 1, 1]]))
    return f"{where} dims = {list(tensor.dims)} (data unchanged)"


def mutate_graph_input(rng, model, case):
    initializers = {t.name for t in model.graph.initializer}
    inputs = [i for i in model.graph.input
              if i.name not in initializers and i.type.HasField("tensor_type")]
    if not inputs:
        return None
    value = rng.choice(inputs)
    tensor_type = value.type.tensor_type
    dims = tensor_type.shape.dim if tensor_type.HasField("shape") else []
    if dims and rng.random() < 0.5:
        dim = rng.choice(dims)
        dim.dim_value = rng.choice([0, 1, 7, 2 ** 31])
        return f"graph input {value.name} declares a dim of {dim.dim_value}"
    tensor_type.elem_type = rng.choice(ELEMENT_TYPES)
    return f"graph input {value.name} declares {TensorProto.DataType.Name(tensor_type.elem_type)}"


def mutate_opset(rng, model, case):
    if rng.random() < 0.5 and model.graph.node:
        node = rng.choice(model.graph.node)
        node.domain = rng.choice(OTHER_DOMAINS)
        return f"{node.op_type} '{node.name}' domain = {node.domain}"
    for opset in model.opset_import:
        if opset.domain in ("", "ai.onnx"):
            opset.version = rng.randint(1, 25)
            return f"default opset = {opset.version}"
    return None


def mutate_test_input(rng, model, case):
    inputs = [os.path.join(case["source"], d, f) for d in case["data_sets"]
              for f in sorted(os.listdir(os.path.join(case["source"], d)))
              if f.startswith("input_")]
    if not inputs:
        return None
    path = rng.choice(inputs)
    tensor = read_tensor_file(path)
    if tensor is None:
        return None
    relative = os.path.relpath(path, case["source"])
    choice = rng.random()
    if choice < 0.4 and tensor.data_type in INTEGER_TYPES:
        element = set_integer_element(rng, tensor)
        if not element:
            return None
        edit = f"{relative} element {element[0]} = {element[1]}"
    elif choice < 0.7 and tensor.dims:
        axis = rng.randrange(len(tensor.dims))
        tensor.dims[axis] = rng.choice([0, 1, tensor.dims[axis] + 1])
        edit = f"{relative} dims = {list(tensor.dims)} (data unchanged)"
    else:
        tensor.data_type = rng.choice(ELEMENT_TYPES)
        edit = f"{relative} type = {TensorProto.DataType.Name(tensor.data_type)} (data unchanged)"
    case["edited_inputs"][relative] = tensor.SerializeToString()
    return edit


def mutate_test_input_shape(rng, model, case):
    """A test input replaced by a well-formed tensor of another shape (one
    axis cut to 0, 1 or one less, or grown by one or doubled, the data cut or
    repeated to fit), with the graph input's declared dims made symbolic so
    the tensor reaches the kernels instead of the session's input check."""
    initializers = {t.name for t in model.graph.initializer}
    graph_inputs = [i for i in model.graph.input if i.name not in initializers]
    choices = [(d, k) for d in case["data_sets"] for k in range(len(graph_inputs))
               if os.path.exists(os.path.join(case["source"], d, f"input_{k}.pb"))]
    if not choices:
        return None
    data_set, k = rng.choice(choices)
    relative = os.path.join(data_set, f"input_{k}.pb")
    tensor = read_tensor_file(os.path.join(case["source"], relative))
    if tensor is None:
        return None
    try:
        array = numpy_helper.to_array(tensor)
    except Exception:  # a type numpy lacks
        return None
    if array.ndim == 0:
        array = np.resize(array, (rng.choice([0, 2]),))
    else:
        axis = rng.randrange(array.ndim)
        extent = array.shape[axis]
        target = rng.choice(sorted({0, 1, max(extent - 1, 0), extent + 1, 2 * extent}))
        shape = list(array.shape)
        shape[axis] = target
        if target <= extent:
            array = np.take(array, range(target), axis=axis)
        elif extent == 0:
            array = np.zeros(shape, dtype=array.dtype)
        else:
            reps = [1] * array.ndim
            reps[axis] = -(-target // extent)
            array = np.take(np.tile(array, reps), range(target), axis=axis)
    try:
        edited = numpy_helper.from_array(array, tensor.name)
    except Exception:  # strings numpy padded with zeros
        return None
    case["edited_inputs"][relative] = edited.SerializeToString()
    tensor_type = graph_inputs[k].type.tensor_type
    if tensor_type.HasField("shape"):
        for number, dim in enumerate(tensor_type.shape.dim):
            dim.dim_param = f"fuzz_{k}_{number}"
    return f"{relative} reshaped to {list(array.shape)}, its declared dims made symbolic"


def mutate_input_to_constant(rng, model, case):
    """The last graph input made an initializer holding its first test data
    set's tensor (an integer element set to an edge value half the time), its
    test files dropped: the value then reaches shape inference and the EPs'
    constant preparation (folding, packed weights) instead of a run."""
    initializers = {t.name for t in model.graph.initializer}
    graph_inputs = [i for i in model.graph.input if i.name not in initializers]
    if not graph_inputs or not case["data_sets"]:
        return None
    k = len(graph_inputs) - 1
    name = f"input_{k}.pb"
    path = os.path.join(case["source"], case["data_sets"][0], name)
    if not os.path.exists(path):
        return None
    tensor = read_tensor_file(path)
    if tensor is None:
        return None
    if not tensor.HasField("data_type"):
        return None
    tensor.name = graph_inputs[k].name
    edit = f"graph input {tensor.name} made a constant from {case['data_sets'][0]}/{name}"
    if tensor.data_type in INTEGER_TYPES and rng.random() < 0.5:
        element = set_integer_element(rng, tensor)
        if element:
            edit += f", element {element[0]} = {element[1]}"
    model.graph.initializer.append(tensor)
    model.graph.input.remove(graph_inputs[k])
    case["dropped_inputs"].update(os.path.join(d, name) for d in case["data_sets"])
    return edit


MUTATIONS = [mutate_attribute, mutate_attribute, mutate_op_type, mutate_node_inputs,
             mutate_node_outputs, mutate_initializer, mutate_initializer, mutate_graph_input,
             mutate_opset, mutate_test_input, mutate_test_input, mutate_test_input_shape,
             mutate_test_input_shape, mutate_input_to_constant]


def write_mutant(rng, source, op_types, folder):
    """Writes one mutant of the case in `source` to `folder`; returns its edits."""
    model = onnx.load(os.path.join(source, "model.onnx"))
    data_sets = sorted(d for d in os.listdir(source) if d.startswith("test_data_set_"))
    case = {"source": source, "data_sets": data_sets, "edited_inputs": {},
            "dropped_inputs": set(), "op_types": op_types}
    edits = []
    for _ in range(rng.randint(1, 3)):
        edit = rng.choice(MUTATIONS)(rng, model, case)
        if edit:
            edits.append(edit)
    os.makedirs(folder)
    with open(os.path.join(folder, "model.onnx"), "wb") as handle:
        handle.write(model.SerializeToString())
    for data_set in data_sets:
        os.makedirs(os.path.join(folder, data_set))
        for name in os.listdir(os.path.join(source, data_set)):
            relative = os.path.join(data_set, name)
            target = os.path.join(folder, relative)
            if relative in case["dropped_inputs"]:
                continue
            if relative in case["edited_inputs"]:
                with open(target, "wb") as handle:
                    handle.write(case["edited_inputs"][relative])
            else:
                os.symlink(os.path.join(source, relative), target)
    with open(os.path.join(folder, "mutations.txt"), "w", encoding="utf-8") as handle:
        handle.write(f"from {source}\n" + "".join(f"{edit}\n" for edit in edits))
    return edits


def address_space_cap(args):
    """The RLIMIT_AS for `nxrt test` in bytes, or None to leave it uncapped."""
    with open(args.nxrt, "rb") as handle:
        sanitized = b"__asan_init" in handle.read()
    if sanitized or args.memory_limit <= 0:
        return None
    return int(args.memory_limit * 2 ** 30)


def run_batch(args, batch_dir, cap):
    """Runs every mutant in batch_dir; returns {mutant name: why it is a finding}."""
    command = [args.nxrt, "test", "--json", "--timeout", str(args.timeout), batch_dir]
    if args.memory_limit > 0:
        command += ["--memory-limit", str(args.memory_limit * 1024)]
    for ep in args.ep:
        command += ["--ep", ep]
    limit = None if cap is None else (
        lambda: resource.setrlimit(resource.RLIMIT_AS, (cap, cap)))
    # Under ASan a tensor of terabytes fails to allocate, as it does
    # unsanitized, rather than aborting the case.
    env = dict(os.environ, NXRT_LOG_LEVEL="off")
    env.setdefault("ASAN_OPTIONS", "allocator_may_return_null=1")
    completed = subprocess.run(command, capture_output=True, text=True, preexec_fn=limit,
                               env=env)
    if completed.returncode not in (0, 1):
        return {"(whole batch)": f"nxrt test itself exited with status {completed.returncode}: "
                                 f"{completed.stderr.strip()[-400:]}"}
    report = json.loads(completed.stdout[completed.stdout.find("{"):])
    return {case["name"]: case["message"] for case in report["cases"]
            if case["status"] == "error"
            and any(marker in case["message"] for marker in FINDING_MARKERS)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nxrt", default=os.path.join(ROOT, "build/release/bin/nxrt"))
    parser.add_argument("--cases", action="append", help="a folder of test cases (repeatable)")
    parser.add_argument("--count", type=int, default=1000, help="mutants to run")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--batch", type=int, default=200, help="mutants per `nxrt test` run")
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds allowed per mutant")
    parser.add_argument("--memory-limit", type=float, default=4.0,
                        help="address space of nxrt test and its --memory-limit, in GiB "
                             "(0: uncapped)")
    parser.add_argument("--ep", action="append", default=[], help="passed to nxrt test --ep")
    parser.add_argument("--out", help="where findings are kept (default: a new temporary folder)")
    args = parser.parse_args()
    if not os.access(args.nxrt, os.X_OK):
        raise SystemExit(f"model_fuzzer: {args.nxrt} is not an executable; build nxrt first")

    sources = case_folders(args.cases or DEFAULT_CASES)
    op_types = set()
    for source in sources:
        op_types.update(n.op_type for n in onnx.load(os.path.join(source, "model.onnx")).graph.node)
    out = args.out or tempfile.mkdtemp(prefix="nxrt-fuzz-")
    findings_dir = os.path.join(out, "findings")
    shutil.rmtree(findings_dir, ignore_errors=True)  # an earlier run's
    os.makedirs(findings_dir)
    rng = random.Random(args.seed)
    cap = address_space_cap(args)
    findings = {}
    for start in range(0, args.count, args.batch):
        with tempfile.TemporaryDirectory(prefix="batch-", dir=out) as batch_dir:
            for number in range(start, min(start + args.batch, args.count)):
                source = rng.choice(sources)
                name = f"mutant_{number:05d}_{os.path.basename(source)}"
                write_mutant(rng, source, op_types, os.path.join(batch_dir, name))
            for name, why in run_batch(args, batch_dir, cap).items():
                findings[name] = why
                if name in os.listdir(batch_dir):
                    shutil.copytree(os.path.join(batch_dir, name),
                                    os.path.join(findings_dir, name), symlinks=False)
        print(f"{min(start + args.batch, args.count)}/{args.count} mutants run, "
              f"{len(findings)} findings", flush=True)

    for name, why in sorted(findings.items()):
        print(f"FINDING {name}: {why}")
    print(f"{args.count} mutants of {len(sources)} cases (seed {args.seed}): "
          f"{len(findings)} findings" + (f", kept in {findings_dir}" if findings else ""))
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
