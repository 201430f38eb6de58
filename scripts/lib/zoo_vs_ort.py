"""Runs every model of the corpus on nxrt and on ONNX Runtime in one run,
alternating the engines over rounds, on one thread and on two, with each
case's own first data set as the inputs.

Per model and thread count it prints the warm latency of each engine (the
median over rounds of each round's median), the ratio nxrt/ORT with its
range over rounds, the first run (session creation plus the first run, the
median over rounds) in a process that has run the model before, as ONNX
Runtime's is measured inside this one, the first run in a fresh process
(nxrt: loading its plugins and generating oneDNN's code; ONNX Runtime: from
importing onnxruntime), and each engine's peak resident memory; then the
median and the worst ratio over models. --markdown FILE also writes the tables as
Markdown, with the machine and the date.

The corpus is the case folders under --cases whose names start with one of
--prefix: by default the released models of ort_cases and every exported
architecture of corpus_cases."""
import argparse
import datetime
import glob
import os
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx

from bench_vs_ort import ort_session, time_nxrt_report, time_ort, write_inputs
from onnx_test_cases import load_data_sets

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ORT_PEAK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ort_peak_memory.py")


def corpus(cases_dirs, prefixes):
    found = sorted(os.path.dirname(m) for folder in cases_dirs
                   for m in glob.glob(os.path.join(folder, "*", "model.onnx")))
    return [d for d in found if os.path.basename(d).startswith(tuple(prefixes))]


def ort_first_run_us(model_path, feeds, threads):
    start = time.perf_counter_ns()
    session = ort_session(model_path, threads)
    session.run(None, feeds)
    return (time.perf_counter_ns() - start) / 1e3, session


def ort_fresh_process(model_path, input_files, threads):
    """(peak KiB, cold first run µs) of the model on ORT in a process of its own, or (None, None)."""
    command = [sys.executable, "-B", ORT_PEAK, model_path, "3", "--threads", str(threads)]
    command += [f"{name}={path}" for name, path in input_files.items()]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        return None, None
    peak, cold_us = done.stdout.strip().splitlines()[-1].split()
    return int(peak), float(cold_us)


def measure(case_dir, scratch, args, threads):
    model_path = os.path.join(case_dir, "model.onnx")
    model = onnx.load(model_path, load_external_data=False)
    feeds = load_data_sets(case_dir, model)[0][0]
    input_files = write_inputs(os.path.join(scratch, f"{os.path.basename(case_dir)}-{threads}"), feeds)
    ort_rounds, nxrt_rounds = [], []
    for _ in range(args.rounds):
        first_us, session = ort_first_run_us(model_path, feeds, threads)
        median_us, _ = time_ort(session, feeds, args.runs, args.warmup)
        ort_rounds.append((median_us, first_us))
        report = time_nxrt_report(args.nxrt, model_path, input_files, args.runs, args.warmup,
                                  args.timeout, flags=["--warm-process"], threads=threads)
        nxrt_rounds.append((float(report["median_us"]),
                            float(report["create_us"]) + float(report["first_run_us"]),
                            int(report.get("peak_rss_kib", 0)), float(report["cold_first_us"])))
    ratios = [n[0] / o[0] for n, o in zip(nxrt_rounds, ort_rounds)]
    ort_rss_kib, ort_cold_us = ort_fresh_process(model_path, input_files, threads)
    return {
        "nxrt_us": float(np.median([r[0] for r in nxrt_rounds])),
        "ort_us": float(np.median([r[0] for r in ort_rounds])),
        "ratio": float(np.median([r[0] for r in nxrt_rounds])) / float(np.median([r[0] for r in ort_rounds])),
        "low": min(ratios), "high": max(ratios),
        "nxrt_first_us": float(np.median([r[1] for r in nxrt_rounds])),
        "ort_first_us": float(np.median([r[1] for r in ort_rounds])),
        "nxrt_cold_us": float(np.median([r[3] for r in nxrt_rounds])),
        "ort_cold_us": ort_cold_us,
        "nxrt_rss_kib": max(r[2] for r in nxrt_rounds),
        "ort_rss_kib": ort_rss_kib,
    }


COLUMNS = ["model", "nxrt µs", "ORT µs", "nxrt/ORT", "range", "first nxrt ms", "first ORT ms",
           "first ratio", "fresh process nxrt / ORT ms", "RSS nxrt MiB", "RSS ORT MiB", "RSS ratio"]


def row_cells(name, m):
    rss_ratio = f"{m['nxrt_rss_kib'] / m['ort_rss_kib']:.2f}" if m["ort_rss_kib"] else "n/a"
    ort_rss = f"{m['ort_rss_kib'] / 1024:.0f}" if m["ort_rss_kib"] else "n/a"
    ort_cold = f"{m['ort_cold_us'] / 1e3:.1f}" if m["ort_cold_us"] else "n/a"
    fresh = f"{m['nxrt_cold_us'] / 1e3:.1f} / {ort_cold}"
    return [name, f"{m['nxrt_us']:.0f}", f"{m['ort_us']:.0f}", f"{m['ratio']:.2f}",
            f"{m['low']:.2f}-{m['high']:.2f}", f"{m['nxrt_first_us'] / 1e3:.1f}",
            f"{m['ort_first_us'] / 1e3:.1f}", f"{m['nxrt_first_us'] / m['ort_first_us']:.2f}",
            fresh, f"{m['nxrt_rss_kib'] / 1024:.0f}", ort_rss, rss_ratio]


def summary(results):
    ratios = [m["ratio"] for _, m in results]
    worst = max(results, key=lambda r: r[1]["ratio"])
    firsts = [m["nxrt_first_us"] / m["ort_first_us"] for _, m in results]
    return (f"median nxrt/ORT {np.median(ratios):.2f}, worst {worst[1]['ratio']:.2f} ({worst[0]}), "
            f"{sum(r <= 1.0 for r in ratios)} of {len(ratios)} at or under 1.0; first run: median "
            f"{np.median(firsts):.2f}, worst {max(firsts):.2f}, {sum(r <= 1.5 for r in firsts)} of "
            f"{len(firsts)} at or under 1.5")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", action="append", help="folder of case folders; repeatable "
                        "(default: build/release/ort-cases and build/release/corpus-cases)")
    parser.add_argument("--prefix", action="append", help="case-name prefix of the corpus; repeatable "
                        "(default: released_models_ and exported_)")
    parser.add_argument("--nxrt", default=os.path.join(ROOT, "build", "release", "bin", "nxrt"))
    parser.add_argument("--runs", type=int, default=10, help="timed runs per round (default 10)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per model and engine (default 3)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed runs first (default 3)")
    parser.add_argument("--threads", type=int, action="append", help="thread counts (default 1 and 2)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per nxrt process")
    parser.add_argument("--only", help="only the models whose name contains this text")
    parser.add_argument("--markdown", help="also write the tables to this Markdown file")
    args = parser.parse_args()
    cases_dirs = args.cases or [os.path.join(ROOT, "build", "release", folder)
                                for folder in ("ort-cases", "corpus-cases")]
    cases = [c for c in corpus(cases_dirs, args.prefix or ["released_models_", "exported_"])
             if not args.only or args.only in os.path.basename(c)]
    if not cases:
        print(f"zoo-vs-ort: no corpus case in {', '.join(cases_dirs)}; build first "
              "(the nxrt_ort_cases and nxrt_corpus_cases targets)",
              file=sys.stderr)
        return 1
    lines = []
    say = lambda text="": (print(text, flush=True), lines.append(text))
    with tempfile.TemporaryDirectory(prefix="zoo-vs-ort-") as scratch:
        for threads in args.threads or [1, 2]:
            say(f"### {threads} thread(s), {args.rounds} rounds of {args.runs} runs after "
                f"{args.warmup} warm-up runs per engine")
            say()
            say("| " + " | ".join(COLUMNS) + " |")
            say("|" + "---|" * len(COLUMNS))
            results = []
            for case_dir in cases:
                name = os.path.basename(case_dir).removeprefix("released_models_").removeprefix("exported_")
                try:
                    m = measure(case_dir, scratch, args, threads)
                except RuntimeError as error:
                    say(f"| {name} | error: {error} |")
                    continue
                results.append((name, m))
                say("| " + " | ".join(row_cells(name, m)) + " |")
            say()
            if results:
                say(summary(results))
                say()
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as f:
            f.write(f"# nxrt against ONNX Runtime on the model corpus\n\n"
                    f"`scripts/zoo-vs-ort`, {datetime.date.today().isoformat()}, on "
                    f"{platform.processor() or platform.machine()} with {os.cpu_count()} cores "
                    f"(a shared machine: read the ranges).\n\n" + "\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
