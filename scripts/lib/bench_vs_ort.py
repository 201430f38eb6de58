"""Times the generated models on nxrt (`nxrt bench --json`) and on ONNX Runtime
in the same run, with the same input tensors, one thread each (or
`--threads`), and prints median latencies side by side with the ratio
nxrt/ORT.

Each row alternates the two engines for several rounds, so that a burst of
load on a shared machine falls on both rather than on one: a row reports,
per engine, the median over rounds of each round's median (and p90), and the
range of the per-round ratios."""
import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnxruntime as ort
from onnx import numpy_helper

from json_report import parse_json_report
from model_inputs import decoder_dims, load_model_header, random_feeds

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODEL_FOLDERS = [os.path.join(ROOT, "build", "release", "models"), os.path.join(ROOT, "build", "models")]

# (row label, model file, symbolic dim bindings)
ROWS = [
    ("add_chain_1000", "add_chain_1000.onnx", {}),
    ("add_chain_1000 replay", "add_chain_1000.onnx", {}),
    ("mlp batch 1", "mlp.onnx", {"batch": 1}),
    ("mlp batch 64", "mlp.onnx", {"batch": 64}),
    ("cnn 1x3x64x64", "cnn.onnx", {}),
    ("cnn int8 QDQ", "cnn_int8_qdq.onnx", {}),
    ("cnn int8 QOperator", "cnn_int8_qoperator.onnx", {}),
    ("bert_layer batch 1 seq 128", "bert_layer.onnx", {"batch": 1, "seq": 128}),
    ("bert_layer int8 QDQ seq 128", "bert_layer_int8_qdq.onnx", {"batch": 1, "seq": 128}),
    ("bert_layer int8 dynamic seq 128", "bert_layer_int8_dynamic.onnx", {"batch": 1, "seq": 128}),
    ("decoder_2l_h512 decode, KV 128", "decoder_2l_h512.onnx", decoder_dims(past=128, new=1)),
    ("decoder_2l_h512 int4 decode, KV 128", "decoder_2l_h512_int4_b32.onnx",
     decoder_dims(past=128, new=1)),
    ("decoder_2l_h512 int4 int8-activation decode, KV 128", "decoder_2l_h512_int4_b32_int8.onnx",
     decoder_dims(past=128, new=1)),
    ("decoder_2l_h512 prefill 128", "decoder_2l_h512.onnx", decoder_dims(past=0, new=128)),
    ("decoder_2l_h512 int4 prefill 128", "decoder_2l_h512_int4_b32.onnx",
     decoder_dims(past=0, new=128)),
    ("decoder int4 decode, KV 128", "decoder_int4_b32.onnx", decoder_dims(past=128, new=1)),
]

# Extra `nxrt bench` flags of a row: a replay row runs on the Primary
# device-graph slot, so after warm-up nxrt replays the captured segment.
NXRT_FLAGS = {"add_chain_1000 replay": ["--capture"]}


def percentile_us(samples_ns, q):
    return float(np.percentile(np.asarray(samples_ns, np.float64), q)) / 1e3


def ort_session(model_path, threads=1):
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.log_severity_level = 3
    return ort.InferenceSession(model_path, options, providers=["CPUExecutionProvider"])


def time_ort(session, feeds, runs, warmup):
    for _ in range(warmup):
        session.run(None, feeds)
    samples = []
    for _ in range(runs):
        start = time.perf_counter_ns()
        session.run(None, feeds)
        samples.append(time.perf_counter_ns() - start)
    return percentile_us(samples, 50), percentile_us(samples, 90)


def nxrt_has_bench_command(binary):
    if not os.access(binary, os.X_OK):
        return False
    try:
        return subprocess.run([binary, "bench", "--help"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def time_nxrt(binary, model_path, input_files, runs, warmup, timeout, flags=(), threads=1):
    """(median µs, p90 µs) from `nxrt bench --json`, or raises RuntimeError with nxrt's own words."""
    report = time_nxrt_report(binary, model_path, input_files, runs, warmup, timeout, flags, threads)
    return float(report["median_us"]), float(report["p90_us"])


def time_nxrt_report(binary, model_path, input_files, runs, warmup, timeout, flags=(), threads=1):
    """The whole `nxrt bench --json` report, or raises RuntimeError with nxrt's own words."""
    command = [binary, "bench", model_path, *flags]
    for name, path in input_files.items():
        command += ["--input", f"{name}={path}"]
    command += ["--runs", str(runs), "--warmup", str(warmup), "--threads", str(threads), "--json"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"timed out after {timeout:g} s")
    try:
        report = parse_json_report(done.stdout)
        float(report["median_us"]), float(report["p90_us"])
        return report
    except (ValueError, KeyError, TypeError):
        said = (done.stderr or done.stdout).strip().splitlines()
        raise RuntimeError(f"exit code {done.returncode}" + (f": {said[-1][:200]}" if said else ""))


def write_inputs(folder, feeds):
    """Writes each feed as a TensorProto .pb file; returns {input name: path}."""
    os.makedirs(folder)
    files = {}
    for k, (name, array) in enumerate(feeds.items()):
        path = os.path.join(folder, f"input_{k}.pb")
        with open(path, "wb") as f:
            f.write(numpy_helper.from_array(array, name).SerializeToString())
        files[name] = path
    return files


def find_models_folder(requested):
    candidates = [requested] if requested else MODEL_FOLDERS
    for folder in candidates:
        if all(os.path.isfile(os.path.join(folder, file)) for _, file, _ in ROWS):
            return folder
    return None


def add_shared_arguments(parser, verb):
    """The options bench-vs-ort and memory-vs-ort share; `verb` says what a row does ("run", "measure")."""
    parser.add_argument("--models", help="folder of generated models (default: build/release/models, else build/models)")
    parser.add_argument("--nxrt", default=os.path.join(ROOT, "build", "release", "bin", "nxrt"), help="the nxrt binary")
    parser.add_argument("--timeout", type=float, default=300, help="seconds allowed per nxrt process (default 300)")
    parser.add_argument("--only", help=f"{verb} only the rows whose label contains this text")


def fmt(value):
    return f"{value:.1f}" if isinstance(value, float) else value


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    add_shared_arguments(parser, "run")
    parser.add_argument("--runs", type=int, default=30, help="timed runs per round (default 30)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds per row, alternating the engines (default 5)")
    parser.add_argument("--warmup", type=int, default=5, help="untimed runs first (default 5)")
    parser.add_argument("--threads", type=int, default=1,
                        help="threads of each engine: ORT's intra-op threads, the cpu EP's (default 1)")
    args = parser.parse_args()
    if args.threads < 1:
        print(f"bench-vs-ort: --threads {args.threads}: expected a positive count", file=sys.stderr)
        return 1

    models = find_models_folder(args.models)
    if models is None:
        where = args.models or " or ".join(MODEL_FOLDERS)
        print(f"bench-vs-ort: the generated models are not in {where}; build, or run scripts/make-models", file=sys.stderr)
        return 1
    rows = [row for row in ROWS if not args.only or args.only in row[0]]
    if not rows:
        print(f"bench-vs-ort: no row matches '{args.only}'", file=sys.stderr)
        return 1
    with_nxrt = nxrt_has_bench_command(args.nxrt)
    notes = [] if with_nxrt else [f"nxrt: {args.nxrt} is missing or has no `bench` command; ORT column only."]

    header = (f"{'model':<32}{'nxrt median µs':>16}{'ORT median µs':>16}{'nxrt/ORT':>10}{'ratio range':>14}"
              f"{'nxrt p90 µs':>14}{'ORT p90 µs':>13}")
    print(f"{len(rows)} rows, {args.rounds} rounds of {args.runs} runs after {args.warmup} warm-up runs per engine, "
          f"{args.threads} thread(s) each, models from {models}")
    print(header)
    with tempfile.TemporaryDirectory(prefix="bench-vs-ort-") as scratch:
        for n, (label, file, dims) in enumerate(rows):
            model_path = os.path.join(models, file)
            feeds = random_feeds(load_model_header(model_path), dims, seed=n)
            input_files = write_inputs(os.path.join(scratch, f"row{n}"), feeds)
            session = ort_session(model_path, args.threads)
            ort_rounds, nxrt_rounds = [], []
            for _ in range(args.rounds):
                ort_rounds.append(time_ort(session, feeds, args.runs, args.warmup))
                if not with_nxrt:
                    continue
                try:
                    nxrt_rounds.append(time_nxrt(args.nxrt, model_path, input_files, args.runs, args.warmup,
                                                 args.timeout, NXRT_FLAGS.get(label, ()), args.threads))
                except RuntimeError as error:
                    notes.append(f"nxrt {label}: {error}")
                    nxrt_rounds = None
                    break
            ort_median = float(np.median([r[0] for r in ort_rounds]))
            ort_p90 = float(np.median([r[1] for r in ort_rounds]))
            nxrt_median, nxrt_p90, ratio, spread = "n/a", "n/a", "n/a", "n/a"
            if nxrt_rounds is None:
                nxrt_median = nxrt_p90 = "error"
            elif nxrt_rounds:
                nxrt_median = float(np.median([r[0] for r in nxrt_rounds]))
                nxrt_p90 = float(np.median([r[1] for r in nxrt_rounds]))
                ratio = f"{nxrt_median / ort_median:.2f}"
                per_round = [x[0] / o[0] for x, o in zip(nxrt_rounds, ort_rounds)]
                spread = f"{min(per_round):.2f}-{max(per_round):.2f}"
            print(f"{label:<32}{fmt(nxrt_median):>16}{fmt(ort_median):>16}{ratio:>10}{spread:>14}"
                  f"{fmt(nxrt_p90):>14}{fmt(ort_p90):>13}", flush=True)
    for note in notes:
        print(note)
    return 0


if __name__ == "__main__":
    sys.exit(main())
