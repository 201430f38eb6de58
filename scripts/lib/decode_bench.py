"""Greedy decoding on nxrt and on ONNX Runtime side by side, alternating
the engines over rounds, on one thread and on two.

For the bundled decoders (--models: decoder.onnx with a growing cache,
decoder_fixed_kv256.onnx at fixed capacity) and every corpus decoder
(--corpus, growing), each round runs `nxrt generate --json` in a fresh
process, then the same greedy decode in a fresh onnxruntime session fed by
the roles nxrt reports (ort_decoder.py), and checks that both give the same
tokens. Per model and thread count it prints the first prefill (the first
run of each fresh session, the median over rounds), the warm prefill (a
second prompt, 7 tokens longer, on the same session: nxrt through
nxrt.Generator; batch 1 only), the decode step (the median over rounds of
each round's median step), the ratios nxrt/ORT with their range over
rounds, and tokens per second. ONNX Runtime's runs are timed around
run_with_iobinding alone, not the Python loop around them.
--int4 adds each decoder again after ONNX Runtime's MatMulNBitsQuantizer
(4-bit, block 32, asymmetric; the same model for both engines) and prints
each one's nxrt step over nxrt's float step.
--markdown FILE also writes the table with the machine and the date.
"""
import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile

import numpy as np
import onnx

import nxrt
from decode_vs_ort import MODELS, corpus_decoders
from make_models import int4
from ort_decoder import OrtDecoder, greedy


def nxrt_round(nxrt, model_path, kv, args, threads):
    command = [nxrt, "generate", model_path, "--ep", "cpu", "--kv", kv, "--batch", str(args.batch),
               "--prompt-tokens", str(args.prompt_tokens), "--steps", str(args.steps),
               "--threads", str(threads), "--json"]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"decode-vs-ort: {' '.join(command)} failed: {done.stderr.strip()}")
    return json.loads(done.stdout)


def longer(prompts):
    """The prompts of the warm prefill: each 7 tokens longer, a length not seen before."""
    return [list(p) + [(t * 7 + 3) % 97 for t in range(7)] for p in prompts]


def ort_round(model_path, report, args, threads):
    prompts = report["prompt"] if args.batch > 1 else [report["prompt"]]
    decoder = OrtDecoder(model_path, report["decoder"], args.batch, threads)
    tokens, _ = greedy(decoder, prompts, args.steps)
    prefill_us = decoder.run_seconds[0] * 1e6
    step_us = float(np.median(decoder.run_seconds[1:])) * 1e6
    decoder.reset()
    decoder.prefill(longer(prompts))
    return tokens, prefill_us, step_us, decoder.run_seconds[-1] * 1e6


def nxrt_warm_prefill_us(model_path, report, threads):
    """A second prompt's prefill in one nxrt.Generator, at a length new to the session."""
    options = nxrt.SessionOptions()
    options.intra_op_num_threads = threads
    generator = nxrt.Generator(model_path, sess_options=options)
    generator.generate(report["prompt"], steps=1)
    generator.generate(longer([report["prompt"]])[0], steps=0)
    return generator.prefill_seconds * 1e6


def measure(nxrt, model_path, kv, args, threads):
    rows = {"nxrt_prefill": [], "ort_prefill": [], "nxrt_step": [], "ort_step": [],
            "nxrt_warm": [], "ort_warm": [], "same": True}
    for _ in range(args.rounds):
        report = nxrt_round(nxrt, model_path, kv, args, threads)
        tokens, prefill_us, step_us, ort_warm_us = ort_round(model_path, report, args, threads)
        if args.batch == 1:
            rows["nxrt_warm"].append(nxrt_warm_prefill_us(model_path, report, threads))
            rows["ort_warm"].append(ort_warm_us)
        rows["same"] &= tokens == (report["tokens"] if args.batch > 1 else [report["tokens"]])
        rows["nxrt_prefill"].append(report["prefill_us"])
        rows["nxrt_step"].append(report["median_us"])
        rows["ort_prefill"].append(prefill_us)
        rows["ort_step"].append(step_us)
    return rows


INT4_SUFFIX = " int4 b32"


def quantized(run, folder):
    """`run` (path, label, kv) with its decoder's MatMuls as 4-bit MatMulNBits, saved in `folder`."""
    path, label, kv = run
    out = os.path.join(folder, label.replace("/", "_").replace(".onnx", "") + "_int4_b32.onnx")
    onnx.save(int4(onnx.load(path), 32), out)
    return out, label + INT4_SUFFIX, kv


def row(label, kv, threads, m, batch):
    median = lambda key: float(np.median(m[key]))  # noqa: E731
    ratios = [n / o for n, o in zip(m["nxrt_step"], m["ort_step"])]
    prefill_ratio = median("nxrt_prefill") / median("ort_prefill")
    warm = "- | - | -"
    if m["nxrt_warm"]:
        warm_ratios = [n / o for n, o in zip(m["nxrt_warm"], m["ort_warm"])]
        warm = (f"{median('nxrt_warm'):.0f} | {median('ort_warm'):.0f} | "
                f"{np.median(warm_ratios):.2f} ({min(warm_ratios):.2f}-{max(warm_ratios):.2f})")
    return (f"| {label} | {kv} | {threads} | {median('nxrt_prefill'):.0f} | "
            f"{median('ort_prefill'):.0f} | {prefill_ratio:.2f} | {warm} | {median('nxrt_step'):.0f} | "
            f"{median('ort_step'):.0f} | {np.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f}) | "
            f"{batch * 1e6 / median('nxrt_step'):.0f} | {batch * 1e6 / median('ort_step'):.0f} | "
            f"{'yes' if m['same'] else 'NO'} |")


HEADER = ("| decoder | kv | threads | nxrt first prefill us | ORT first prefill us | ratio | "
          "nxrt warm prefill us | ORT warm prefill us | ratio (range) | "
          "nxrt step us | ORT step us | step ratio (range) | nxrt tok/s | ORT tok/s | same tokens |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nxrt", required=True, help="the nxrt binary")
    parser.add_argument("--models", help="folder of the generated models")
    parser.add_argument("--corpus", help="folder of the corpus cases")
    parser.add_argument("--manifest", help="tests/corpus/manifest.json")
    parser.add_argument("--only", action="append", default=[], help="decoders whose name has TEXT")
    parser.add_argument("--threads", type=int, action="append", help="repeatable (default 1 and 2)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=64)
    parser.add_argument("--prompt-tokens", type=int, default=16)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--int4", action="store_true",
                        help="also each decoder with 4-bit weights (block 32)")
    parser.add_argument("--markdown", help="also write the table to this Markdown file")
    args = parser.parse_args()
    runs = []
    if args.models:
        runs += [(os.path.join(args.models, f), f, kv) for f, kv in MODELS[:2]]
    if args.corpus:
        runs += [(path, label, "growing") for path, label in corpus_decoders(args.corpus, args.manifest)]
    runs = [r for r in runs if not args.only or any(text in r[1] for text in args.only)]
    scratch = tempfile.TemporaryDirectory(prefix="decode-vs-ort-")
    if args.int4:
        runs = [variant for r in runs for variant in (r, quantized(r, scratch.name))]
    lines = [HEADER]
    print(HEADER, flush=True)
    all_same = True
    int4_over_float = []
    for threads in args.threads or [1, 2]:
        float_step = {}
        for path, label, kv in runs:
            m = measure(args.nxrt, path, kv, args, threads)
            all_same &= m["same"]
            lines.append(row(label, kv, threads, m, args.batch))
            print(lines[-1], flush=True)
            step = float(np.median(m["nxrt_step"]))
            if label.endswith(INT4_SUFFIX):
                float_label = label[:-len(INT4_SUFFIX)]
                int4_over_float.append(f"- {float_label}, {threads} thread(s): "
                                       f"{step / float_step[float_label]:.2f}")
            else:
                float_step[label] = step
    if int4_over_float:
        lines += ["", "nxrt's int4 step over its float step:", ""] + int4_over_float
        print("\n".join(lines[-len(int4_over_float) - 2:]), flush=True)
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as f:
            f.write(f"# Greedy decoding, nxrt against ONNX Runtime\n\n"
                    f"`scripts/decode-vs-ort`, {datetime.date.today()}, {platform.node()}: "
                    f"{os.cpu_count()} cores; {args.rounds} rounds alternating the engines, "
                    f"{args.prompt_tokens}-token prompt, {args.steps} steps, batch {args.batch}. "
                    "First prefill: the first run of a fresh session. Warm prefill: a second "
                    "prompt, 7 tokens longer, on the same session. Step: the median step of each "
                    "round, the median over rounds; ONNX Runtime's timed around "
                    "run_with_iobinding alone. The ratio is nxrt/ORT with its range over "
                    "rounds.\n\n")
            f.write("\n".join(lines) + "\n")
    return 0 if all_same else 1


if __name__ == "__main__":
    sys.exit(main())
