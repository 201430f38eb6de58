"""How much of a growing-KV decode step the capture classifier lets replay,
against the ideal measured by running it.

For each decoder, nxrt (through the nxrt package, device graphs off,
profiling on) runs a prefill and two decode steps with a growing cache, fed
by the roles the session reads from the graph. A node belongs to the ideal
when nothing it sees changes between the two steps: its input shapes, and
the input shapes of every node reading its outputs (so that a node whose
output is sized by data, such as ConstantOfShape, counts as changing), and
it produces no KV present, which grows. The classifier's verdicts come from
`nxrt inspect --json`. Reports per model the eligible count, the ideal, the
coverage (eligible and ideal over ideal) and every node the classifier calls
eligible although its shapes change, which would be unsound; exits 1 on an
unsound verdict, or on coverage under --min-coverage.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx

import nxrt
from ort_decoder import index_feeds

PROMPT = [17, 5, 300, 42, 8, 99, 3, 250]


def node_shapes(session, feeds, wanted):
    """The outputs `wanted` and, per node, its input shapes as a list per slot."""
    outputs = session.run(wanted, feeds)
    shapes = {}
    for kind, node, _, _, input_shapes, _, _ in session._take_profile_events():
        if kind == "node":
            shapes[node] = input_shapes.split(" ")
    return outputs, shapes


def decode_step_shapes(model_path, profile_folder):
    """Per node input shapes at the first and the second decode step of a growing cache."""
    options = nxrt.SessionOptions()
    options.add_session_config_entry("nxrt.device_graphs", "0")
    options.enable_profiling = True
    options.profile_file_prefix = os.path.join(profile_folder, "capture_coverage")
    session = nxrt.InferenceSession(model_path, options)
    roles = session._decoder_signature()
    if roles["problems"]:
        raise SystemExit(f"{model_path}: {'; '.join(roles['problems'])}")
    declared = {i.name: i.shape for i in session.get_inputs()}
    cache = {}
    for past, _, axis in roles["kv"]:
        dims = [d if isinstance(d, int) else 1 for d in declared[past]]
        dims[axis] = 0
        cache[past] = np.zeros(dims, np.float32)
    wanted = [roles["logits"]] + [present for _, present, _ in roles["kv"]]
    length, ids, steps = 0, np.array([PROMPT], np.int64), []
    for _ in range(3):
        feeds = index_feeds(roles, ids, [0], length)
        feeds.update(cache)
        outputs, shapes = node_shapes(session, feeds, wanted)
        steps.append(shapes)
        cache = dict(zip(cache, outputs[1:]))
        length += ids.shape[1]
        ids = np.array([[int(outputs[0][0, -1].argmax())]], np.int64)
    session.end_profiling()
    return steps[1], steps[2], {present for _, present, _ in roles["kv"]}


def ideal_nodes(model_path, first, second, presents):
    """The nodes whose shapes hold from the first decode step to the second."""
    graph = onnx.load(model_path, load_external_data=False).graph
    readers = {}  # value -> [(node name, input slot)]
    for node in graph.node:
        for slot, name in enumerate(node.input):
            readers.setdefault(name, []).append((node.name, slot))
    producers = {node.name: node for node in graph.node}

    def slot_changes(name, slot):
        return (name in first and name in second and slot < len(first[name])
                and first[name][slot] != second[name][slot])

    ideal = set()
    for name in first:
        if first[name] != second.get(name):
            continue
        node = producers.get(name)
        if node is not None:
            reads = [r for out in node.output for r in readers.get(out, [])]
            if any(slot_changes(*read) for read in reads) or any(o in presents for o in node.output):
                continue
        ideal.add(name)
    return ideal


def classifier_verdicts(nxrt_cli, model_path):
    report = subprocess.run([nxrt_cli, "inspect", model_path, "--json"], check=True,
                            capture_output=True, text=True)
    capture = json.loads(report.stdout)["capture"]
    # Each entry describes its node as "node 'NAME' (OP)".
    return capture, {re.match(r"node '(.*)' \(", entry["node"]).group(1)
                     for entry in capture["ineligible"]}


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nxrt", required=True, help="the nxrt binary")
    parser.add_argument("--corpus", required=True, help="folder of the corpus cases")
    parser.add_argument("--manifest", required=True, help="tests/corpus/manifest.json")
    parser.add_argument("--min-coverage", type=float, default=0.0,
                        help="fail under this share of the ideal (default 0: report only)")
    args = parser.parse_args()
    with open(args.manifest, encoding="utf-8") as file:
        names = sorted(e["name"] for e in json.load(file) if e["kind"] == "decoder")
    failed = False
    print(f"{'decoder':24} {'nodes':>5} {'eligible':>8} {'ideal':>5} {'coverage':>8}  unsound")
    for name in names:
        path = f"{args.corpus}/exported_{name}/model.onnx"
        with tempfile.TemporaryDirectory(prefix="capture_coverage_") as profile_folder:
            first, second, presents = decode_step_shapes(path, profile_folder)
        ideal = ideal_nodes(path, first, second, presents)
        capture, ineligible = classifier_verdicts(args.nxrt, path)
        eligible = set(first) - ineligible
        covered = len(eligible & ideal) / max(len(ideal), 1)
        unsound = sorted(eligible - ideal)
        failed |= bool(unsound) or covered < args.min_coverage
        print(f"{name:24} {len(first):5} {len(eligible):8} {len(ideal):5} {covered:8.1%}  "
              f"{', '.join(unsound[:4]) if unsound else '-'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
