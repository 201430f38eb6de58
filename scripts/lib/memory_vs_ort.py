"""Measures the peak resident memory of nxrt (`nxrt bench --json`) and of ONNX Runtime running the models that
scripts/bench-vs-ort times, with the same inputs, one thread each, each engine in a process of its own.

Each figure is the engine's peak for the model less its peak for a one-node model, so that what the runtime costs
before any model (interpreter, libraries, plugins) drops out of the comparison."""
import argparse
import os
import subprocess
import sys
import tempfile

import onnx
from onnx import TensorProto, helper

from bench_vs_ort import ROWS, add_shared_arguments, find_models_folder, nxrt_has_bench_command, write_inputs
from json_report import parse_json_report
from model_inputs import load_model_header, random_feeds

ORT_PEAK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ort_peak_memory.py")


def write_one_node_model(path):
    """A model of one Identity over a float [1]: each engine's baseline."""
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "baseline",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    # An IR version every ONNX Runtime of the last years reads.
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), path)


def nxrt_peak_kib(binary, model_path, input_files, runs, timeout):
    command = [binary, "bench", model_path, "--runs", str(runs), "--warmup", "0", "--threads", "1", "--json"]
    for name, path in input_files.items():
        command += ["--input", f"{name}={path}"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    try:
        return int(parse_json_report(done.stdout)["peak_rss_kib"])
    except (ValueError, KeyError, TypeError):
        said = (done.stderr or done.stdout).strip().splitlines()
        raise RuntimeError(f"nxrt exit code {done.returncode}" + (f": {said[-1][:200]}" if said else ""))


def ort_peak_kib(model_path, input_files, runs, timeout):
    command = [sys.executable, "-B", ORT_PEAK, model_path, str(runs)]
    command += [f"{name}={path}" for name, path in input_files.items()]
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        said = done.stderr.strip().splitlines()
        raise RuntimeError(f"ORT exit code {done.returncode}" + (f": {said[-1][:200]}" if said else ""))
    return int(done.stdout.strip().splitlines()[-1].split()[0])


def mib(kib):
    return kib / 1024.0


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    add_shared_arguments(parser, "measure")
    parser.add_argument("--runs", type=int, default=3, help="runs of each model per engine (default 3)")
    args = parser.parse_args()

    models = find_models_folder(args.models)
    if models is None:
        print("memory-vs-ort: the generated models are missing; build, or run scripts/make-models", file=sys.stderr)
        return 1
    if not nxrt_has_bench_command(args.nxrt):
        print(f"memory-vs-ort: {args.nxrt} is missing or has no `bench` command; build first", file=sys.stderr)
        return 1
    # A replay row runs the same model as the row before it: its memory is that row's.
    rows = [row for row in ROWS if "replay" not in row[0] and (not args.only or args.only in row[0])]
    if not rows:
        print(f"memory-vs-ort: no row matches '{args.only}'", file=sys.stderr)
        return 1

    print(f"peak resident memory above each engine's one-node baseline, {args.runs} runs, one thread, "
          f"models from {models}")
    print(f"{'model':<32}{'weights MiB':>12}{'nxrt MiB':>10}{'ORT MiB':>10}{'nxrt/ORT':>10}")
    with tempfile.TemporaryDirectory(prefix="memory-vs-ort-") as scratch:
        baseline = os.path.join(scratch, "baseline.onnx")
        write_one_node_model(baseline)
        baseline_inputs = write_inputs(os.path.join(scratch, "baseline"),
                                       random_feeds(load_model_header(baseline), {}, seed=0))
        try:
            nxrt_base = nxrt_peak_kib(args.nxrt, baseline, baseline_inputs, args.runs, args.timeout)
            ort_base = ort_peak_kib(baseline, baseline_inputs, args.runs, args.timeout)
        except (RuntimeError, subprocess.TimeoutExpired) as error:
            print(f"memory-vs-ort: the one-node baseline failed: {error}", file=sys.stderr)
            return 1
        for n, (label, file, dims) in enumerate(rows):
            model_path = os.path.join(models, file)
            model = onnx.load(model_path, load_external_data=False)
            weights = sum(len(t.raw_data) for t in model.graph.initializer)
            input_files = write_inputs(os.path.join(scratch, f"row{n}"),
                                       random_feeds(load_model_header(model_path), dims, seed=n))
            try:
                nxrt_kib = nxrt_peak_kib(args.nxrt, model_path, input_files, args.runs, args.timeout) - nxrt_base
                ort_kib = ort_peak_kib(model_path, input_files, args.runs, args.timeout) - ort_base
            except (RuntimeError, subprocess.TimeoutExpired) as error:
                print(f"{label:<32}{mib(weights / 1024):>12.1f}  {error}", flush=True)
                continue
            ratio = f"{nxrt_kib / ort_kib:.2f}" if ort_kib > 0 else "n/a"
            print(f"{label:<32}{mib(weights / 1024):>12.1f}{mib(nxrt_kib):>10.1f}{mib(ort_kib):>10.1f}{ratio:>10}",
                  flush=True)
        print(f"baselines: nxrt {mib(nxrt_base):.1f} MiB, ORT (Python process) {mib(ort_base):.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
