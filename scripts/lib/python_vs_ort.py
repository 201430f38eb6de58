"""What nxrt's Python package costs, measured beside onnxruntime's.

Overhead: one run() of a model of one Add on four floats, on one thread,
nxrt.InferenceSession and onnxruntime.InferenceSession alternating round by
round; the model's own work is a few nanoseconds, so the time is the
binding's and the runtime's fixed cost per call.

Released models: each model of the released corpus with the inputs its
users feed (scripts/lib/ort_cases/released_models.py), run through
nxrt.InferenceSession and onnxruntime.InferenceSession, warm, alternating.

Decode: a step of the bundled fixed-capacity decoder through nxrt.Generator
(IOBinding, the KV cache bound in place) against the step `nxrt generate`
reports for the same prompt and steps, alternating.
"""

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

import numpy as np
import onnxruntime
from onnx import TensorProto, helper


def one_add_model():
    info = [helper.make_tensor_value_info(name, TensorProto.FLOAT, [4]) for name in "abc"]
    graph = helper.make_graph([helper.make_node("Add", ["a", "b"], ["c"])], "add", info[:2],
                              info[2:])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    return model.SerializeToString()


def per_call_us(session, feeds, calls):
    for _ in range(max(1, calls // 10)):
        session.run(None, feeds)
    start = time.perf_counter()
    for _ in range(calls):
        session.run(None, feeds)
    return (time.perf_counter() - start) / calls * 1e6


def overhead(nxrt, rounds, calls):
    model = one_add_model()
    ort_options = onnxruntime.SessionOptions()
    ort_options.intra_op_num_threads = 1
    ort = onnxruntime.InferenceSession(model, ort_options, providers=["CPUExecutionProvider"])
    options = nxrt.SessionOptions()
    options.intra_op_num_threads = 1
    ours = nxrt.InferenceSession(model, options)
    one = np.ones(4, np.float32)
    feeds = {"a": one, "b": one}
    ratios, nxrt_us, ort_us = [], [], []
    for _ in range(rounds):
        ort_us.append(per_call_us(ort, feeds, calls))
        nxrt_us.append(per_call_us(ours, feeds, calls))
        ratios.append(nxrt_us[-1] / ort_us[-1])
    return nxrt_us, ort_us, ratios


def released(nxrt, rounds, runs):
    """Per released model: (nxrt us, onnxruntime us, ratios) of a warm run."""
    from ort_cases import released_models  # noqa: PLC0415 (needs the fetched models)

    results = {}
    for name, model, feeds in released_models.cases():
        data, feed = model.SerializeToString(), feeds[0]
        ort_options = onnxruntime.SessionOptions()
        ort_options.intra_op_num_threads = 1
        ort_options.log_severity_level = 3  # its notes on the exports' unused initializers
        ort = onnxruntime.InferenceSession(data, ort_options, providers=["CPUExecutionProvider"])
        options = nxrt.SessionOptions()
        options.intra_op_num_threads = 1
        ours = nxrt.InferenceSession(data, options)
        nxrt_us, ort_us, ratios = [], [], []
        for _ in range(rounds):
            ort_us.append(per_call_us(ort, feed, runs))
            nxrt_us.append(per_call_us(ours, feed, runs))
            ratios.append(nxrt_us[-1] / ort_us[-1])
        results[name] = (nxrt_us, ort_us, ratios)
    return results


def cli_steps_us(cli, model, prompt, steps):
    completed = subprocess.run(
        [cli, "generate", str(model), "--prompt", ",".join(map(str, prompt)), "--steps",
         str(steps), "--kv", "fixed", "--threads", "1", "--json"],
        check=True, capture_output=True, text=True)
    return json.loads(completed.stdout)["step_us"]


def decode(nxrt, cli, model, rounds, steps):
    """Per round, the median step and the fastest step of each engine: the
    fastest is the least disturbed by other load on the machine."""
    options = nxrt.SessionOptions()
    options.intra_op_num_threads = 1
    generator = nxrt.Generator(model, sess_options=options)
    prompt = list(range(1, 17))
    generator.generate(prompt, steps=steps)
    medians = ([], [], [])
    fastest = ([], [], [])
    for _ in range(rounds):
        theirs = cli_steps_us(cli, model, prompt, steps)
        generator.generate(prompt, steps=steps)
        ours = [seconds * 1e6 for seconds in generator.step_seconds]
        for table, pick in ((medians, statistics.median), (fastest, min)):
            table[0].append(pick(ours))
            table[1].append(pick(theirs))
            table[2].append(table[0][-1] / table[1][-1])
    return medians, fastest


def summary(label, ours, theirs, ratios, peer):
    return (f"{label}: nxrt {statistics.median(ours):.2f} us, {peer} "
            f"{statistics.median(theirs):.2f} us; nxrt/{peer} {statistics.median(ratios):.2f} "
            f"(range {min(ratios):.2f}-{max(ratios):.2f}, {len(ratios)} rounds)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=pathlib.Path, required=True)
    parser.add_argument("--rounds", type=int, default=31)
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--steps", type=int, default=128)
    parser.add_argument("--model-runs", type=int, default=10,
                        help="runs a round of each released model times")
    args = parser.parse_args()
    sys.path.insert(0, str(args.build / "python"))
    os.environ.setdefault("NXRT_LOG_LEVEL", "error")
    import nxrt

    print(summary("run() of one Add", *overhead(nxrt, args.rounds, args.calls), "onnxruntime"))
    for name, timing in released(nxrt, args.rounds, args.model_runs).items():
        print(summary(name, *timing, "onnxruntime"))
    model = args.build / "models" / "decoder_fixed_kv256.onnx"
    cli = args.build / "bin" / "nxrt"
    medians, fastest = decode(nxrt, str(cli), model, args.rounds, args.steps)
    print(summary("decode step, fixed KV, median", *medians, "nxrt generate"))
    print(summary("decode step, fixed KV, fastest", *fastest, "nxrt generate"))


if __name__ == "__main__":
    main()
