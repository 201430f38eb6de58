"""Writes the seed inputs of one libFuzzer target (fuzz/) into a folder.

Seeds come from every ONNX backend case (Debian's libonnx-testdata and the
cases exported from the .venv's onnx), the model corpus (tests/corpus), and
mutants of those cases made by model_fuzzer.py's mutations:
- model_load: each model.onnx;
- session_run: each model.onnx followed by the 16-byte control block
  (fuzz/session_run/session_run_fuzzer.cpp) asking for extents of 2;
- test_data: each input_K.pb and output_K.pb;
- host_api: each model index with a few call scripts
  (fuzz/host_api/host_api_plugin.cpp).
Files are named by their content's hash, so seeds are never duplicated.

usage: fuzz_seeds.py TARGET OUT [--mutants N] [--seed N] [--max-bytes N]
"""
import argparse
import hashlib
import os
import random
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_fuzzer  # noqa: E402

ROOT = model_fuzzer.ROOT
CASE_ROOTS = [r for r in model_fuzzer.DEFAULT_CASES if os.path.isdir(r)]
CORPUS_MODELS = os.path.join(ROOT, "tests/corpus/models")
CONTROL_BLOCK = bytes([2] * 8) + bytes(8)
# Per model: no calls (outputs never written), allocate output 0 as [2,3]
# float, make it a sequence of one, run the then-branch, read attributes.
HOST_SCRIPTS = [b"", bytes([7, 0, 2, 2, 3, 1]), bytes([9, 0, 1, 8, 0, 2, 2, 3, 1, 0]),
                bytes([12, 0, 1, 1, 1]), bytes([6, 0, 0, 3, 5, 0, 1])]


def case_files(cases, wanted):
    for case in cases:
        if wanted == "model":
            yield os.path.join(case, "model.onnx")
            continue
        for data_set in sorted(d for d in os.listdir(case) if d.startswith("test_data_set_")):
            folder = os.path.join(case, data_set)
            for name in sorted(os.listdir(folder)):
                if name.endswith(".pb"):
                    yield os.path.join(folder, name)


def corpus_models():
    if not os.path.isdir(CORPUS_MODELS):
        return []
    return [os.path.join(CORPUS_MODELS, f) for f in sorted(os.listdir(CORPUS_MODELS))
            if f.endswith(".onnx")]


def mutant_cases(cases, count, seed, scratch):
    rng = random.Random(seed)
    op_types = sorted({n.op_type for c in cases[:200] for n in model_fuzzer.onnx.load(
        os.path.join(c, "model.onnx")).graph.node})
    made = []
    for i in range(count):
        folder = os.path.join(scratch, f"mutant_{i}")
        try:
            model_fuzzer.write_mutant(rng, rng.choice(cases), op_types, folder)
        except Exception:  # a mutation that does not apply to its case
            continue
        made.append(folder)
    return made


def seeds_for(target, cases, extra_models):
    if target == "host_api":
        for model in range(5):
            for script in HOST_SCRIPTS:
                yield bytes([model]) + script
        return
    wanted = "data" if target == "test_data" else "model"
    files = list(case_files(cases, wanted)) + (extra_models if wanted == "model" else [])
    for path in files:
        with open(path, "rb") as handle:
            data = handle.read()
        yield data + CONTROL_BLOCK if target == "session_run" else data


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("target", choices=["model_load", "session_run", "test_data", "host_api"])
    parser.add_argument("out")
    parser.add_argument("--mutants", type=int, default=500, help="mutated cases to add")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max-bytes", type=int, default=1 << 20, help="larger seeds are left out")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    cases = model_fuzzer.case_folders(CASE_ROOTS)
    written = 0
    with tempfile.TemporaryDirectory() as scratch:
        all_cases = cases + mutant_cases(cases, args.mutants, args.seed, scratch)
        for data in seeds_for(args.target, all_cases, corpus_models()):
            if len(data) > args.max_bytes:
                continue
            name = hashlib.sha1(data).hexdigest()
            path = os.path.join(args.out, name)
            if not os.path.exists(path):
                with open(path, "wb") as handle:
                    handle.write(data)
                written += 1
    print(f"fuzz_seeds: {written} seeds for {args.target} in {args.out}")


if __name__ == "__main__":
    main()
