"""Checks `nxrt generate` against ONNX Runtime, step by step.

For each generated decoder (--models: decoder.onnx with a growing KV cache,
decoder_fixed_kv256.onnx with a fixed-capacity one, and both with int4
weights through MatMulNBits, one with int8 activations) and each decoder of
the exported corpus (--corpus: Llama, Qwen2, Mistral, Phi-3, Gemma, GPT-2
and OPT from both exporters), this runs `nxrt generate --ep cpu --json
--output-dir D --batch B` (one thread, or `--threads`), then the same greedy
decode of the same prompts in onnxruntime (CPUExecutionProvider, one
thread), fed by the roles nxrt reports (ort_decoder.py). Every run's
last-position logits of every row must agree (rtol 1e-3, atol 1e-5) and so
must the generated tokens. With --int4 BLOCK every decoder runs after ONNX
Runtime's MatMulNBitsQuantizer at that block size instead (4-bit
MatMulNBits on both engines). Prints the worst difference of the first runs
and of every mismatch; exits 1 on a mismatch, 77 (a skip for ctest) when
the models are not there.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

from ort_decoder import OrtDecoder, greedy

SKIP_EXIT_CODE = 77
RTOL, ATOL = 1e-3, 1e-5
# int8 activations (MatMulNBits at accuracy_level 4) round each block of a
# product's input to 1/127 of its largest value; inputs that differ in the
# last bit between the engines can round a code the other way, one
# quantisation step, which the following layers carry into the logits. So
# their logits may differ by up to this share of the step's largest logit.
INT8_LOGIT_SHARE = 2e-2
INT8_MODELS = {"decoder_int4_b32_int8.onnx"}
MODELS = (("decoder.onnx", "growing"), ("decoder_fixed_kv256.onnx", "fixed"),
          ("decoder_int4_b32.onnx", "growing"), ("decoder_int4_b32_int8.onnx", "growing"),
          ("decoder_int4_b128.onnx", "growing"),
          ("decoder_fixed_kv256_int4_b32.onnx", "fixed"))


def run_nxrt(nxrt, model_path, kv, batch, prompt_tokens, steps, threads, output_dir, speculate):
    command = [nxrt, "generate", model_path, "--ep", "cpu", "--kv", kv, "--batch", str(batch),
               "--prompt-tokens", str(prompt_tokens), "--steps", str(steps),
               "--threads", str(threads), "--output-dir", output_dir, "--json"]
    if speculate:
        command += ["--speculate", speculate]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise SystemExit(f"decode_vs_ort: {' '.join(command)} failed: {result.stderr.strip()}")
    report = json.loads(result.stdout)
    logits = []
    runs = len(report["tokens"] if batch == 1 else report["tokens"][0])
    for run in range(runs):
        tensor = onnx.load_tensor(os.path.join(output_dir, f"step_{run:03d}.pb"))
        logits.append(numpy_helper.to_array(tensor))
    return report, logits


def check_model(nxrt, model_path, label, kv, batch, prompt_tokens, steps, threads, speculate):
    with tempfile.TemporaryDirectory(prefix="decode_vs_ort_") as output_dir:
        report, nxrt_logits = run_nxrt(nxrt, model_path, kv, batch, prompt_tokens, steps, threads,
                                       output_dir, speculate)
    prompts = report["prompt"] if batch > 1 else [report["prompt"]]
    nxrt_tokens = report["tokens"] if batch > 1 else [report["tokens"]]
    print(f"{label} (kv {kv}, batch {batch}, prompts of {[len(p) for p in prompts]} tokens, "
          f"nxrt on {threads} thread(s))")
    if report["steps"] != steps:
        print(f"  nxrt ran {report['steps']} of {steps} steps")
        return False
    decoder = OrtDecoder(model_path, report["decoder"], batch)
    ort_tokens, ort_logits = greedy(decoder, prompts, steps)
    ok = True
    for run, (logits, expected) in enumerate(zip(nxrt_logits, ort_logits)):
        logits = logits.reshape(expected.shape)
        difference = np.abs(logits - expected)
        worst = np.unravel_index(np.argmax(difference - RTOL * np.abs(expected)), expected.shape)
        atol = INT8_LOGIT_SHARE * np.abs(expected).max() if label in INT8_MODELS else ATOL
        close = np.allclose(logits, expected, rtol=RTOL, atol=atol)
        ok &= close
        if run < 4 or not close or run == len(ort_logits) - 1:
            print(f"  run {run:3d}: worst |nxrt - ort| {difference.max():.3g} "
                  f"(at {tuple(int(i) for i in worst)}: {logits[worst]:.6g} vs {expected[worst]:.6g})"
                  f"{'' if close else '  MISMATCH'}")
    if ort_tokens != nxrt_tokens:
        print(f"  tokens differ:\n    nxrt {nxrt_tokens}\n    ort  {ort_tokens}")
        ok = False
    print(f"  {'same' if ok else 'DIFFERENT'}: {len(nxrt_logits)} runs, row 0's first tokens "
          f"{nxrt_tokens[0][:12]}")
    if speculate:
        print(f"  speculation {speculate}: {report['runs']} runs for {steps} tokens, "
              f"{report['speculation']}")
    print(f"  nxrt decode step median {report['median_us']:.1f} us, "
          f"{report['tokens_per_s']:.1f} tokens/s, device graphs {report['device_graphs']}")
    return ok


def corpus_decoders(corpus_cases, manifest):
    """(model path, label) of every decoder of the exported corpus, from its manifest."""
    with open(manifest, encoding="utf-8") as file:
        entries = json.load(file)
    names = sorted(e["name"] for e in entries if e["kind"] == "decoder")
    return [(os.path.join(corpus_cases, f"exported_{name}", "model.onnx"), name) for name in names]


def quantized_runs(runs, block, folder):
    """`runs` with each decoder's MatMuls as 4-bit MatMulNBits of `block`,
    saved in `folder`."""
    from make_models import int4
    quantized = []
    for path, label, kv in runs:
        out = os.path.join(folder, f"{label}_int4_b{block}.onnx")
        onnx.save(int4(onnx.load(path), block), out)
        quantized.append((out, f"{label} int4 b{block}", kv))
    return quantized


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nxrt", required=True, help="the nxrt binary")
    parser.add_argument("--models", help="folder of the generated models")
    parser.add_argument("--corpus", help="folder of the corpus cases (the exported decoders)")
    parser.add_argument("--manifest", help="the corpus manifest, tests/corpus/manifest.json")
    parser.add_argument("--batch", type=int, default=1, help="rows of prompts, left-padded")
    parser.add_argument("--speculate", help="nxrt generate's --speculate, e.g. ngram:4; ONNX "
                        "Runtime decodes plainly, so the tokens must still agree")
    parser.add_argument("--prompt-tokens", type=int, default=16)
    parser.add_argument("--steps", type=int, default=32)
    parser.add_argument("--threads", type=int, default=1, help="the cpu EP's threads in nxrt (default 1)")
    parser.add_argument("--int4", type=int, action="append", metavar="BLOCK",
                        help="run every decoder with 4-bit weights of this block size instead "
                        "(repeatable)")
    args = parser.parse_args()
    runs = []  # (model path, label, kv form)
    if args.models:
        runs += [(os.path.join(args.models, f), f, kv) for f, kv in MODELS]
    if args.corpus:
        runs += [(path, label, "growing") for path, label in corpus_decoders(args.corpus, args.manifest)]
    missing = [path for path, _, _ in runs if not os.path.exists(path)]
    if missing:
        print(f"decode_vs_ort: {', '.join(missing)} missing; build the 'models' and "
              "'nxrt_corpus_cases' targets")
        return SKIP_EXIT_CODE
    with tempfile.TemporaryDirectory(prefix="decode_vs_ort_int4_") as folder:
        if args.int4:
            runs = [run for block in args.int4 for run in quantized_runs(runs, block, folder)]
        results = [check_model(args.nxrt, path, label, kv, args.batch, args.prompt_tokens,
                               args.steps, args.threads, args.speculate) for path, label, kv in runs]
    failed = [label for (_, label, _), ok in zip(runs, results) if not ok]
    print(f"decode_vs_ort: {len(runs) - len(failed)} of {len(runs)} decoders generate ONNX Runtime's "
          f"tokens and logits" + (f"; different: {', '.join(failed)}" if failed else ""))
    return 0 if not failed else 1


if __name__ == "__main__":
    sys.exit(main())
