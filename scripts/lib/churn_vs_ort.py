"""Shape churn: workloads whose input shapes change from run to run, on nxrt
and on ONNX Runtime in one run, one thread each.

Each workload runs in a fresh process per engine (so its peak RSS is its own),
the engines alternating round by round. A workload is one session fed a
sequence of shapes, each new to it:

- recogniser: the released PP-OCRv4 text recogniser, one text-line crop per
  run at its own width (48 x W);
- detector: the released PP-OCRv4 text detector, one page per run at its own
  size (H and W multiples of 32);
- decoder: the bundled decoder serving requests with prompts of 1-512 tokens,
  greedy, 16 tokens each (a prefill and 15 decode steps), its KV cache
  growing; time to first token is the prefill's;
- encoder: the bundled BERT layer over batches 1-8 and sequences 1-256.

Per workload and engine it prints the whole time, the per-run p50 and p99,
the peak RSS, and the RSS after the last run over the RSS after the first.
"cold/warm" is a run at a never-seen shape over an immediate second run at
that shape, the median over the sampled shapes.

    churn_vs_ort.py --build DIR [--rounds N] [--only TEXT] [--quick]
    churn_vs_ort.py --worker ENGINE WORKLOAD --build DIR   (one engine's pass, JSON out)
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RELEASED = os.environ.get("NXRT_RELEASED_MODELS", os.path.join(ROOT, ".cache", "released-models"))
COLD_WARM_SAMPLES = 24


def distinct(generator, draw, count):
    """`count` distinct values of `draw(generator)`, in drawn order."""
    seen, values = set(), []
    while len(values) < count:
        value = draw(generator)
        if value not in seen:
            seen.add(value)
            values.append(value)
    return values


def recogniser(count):
    widths = distinct(np.random.default_rng(11), lambda g: int(g.integers(8, 321)) * 4, count)
    return os.path.join(RELEASED, "ppocrv4_rec.onnx"), [{"x": [1, 3, 48, w]} for w in widths]


def detector(count):
    sizes = distinct(np.random.default_rng(12),
                     lambda g: (int(g.integers(10, 31)) * 32, int(g.integers(10, 31)) * 32), count)
    return os.path.join(RELEASED, "ppocrv4_det.onnx"), [{"x": [1, 3, h, w]} for h, w in sizes]


def encoder(count):
    pairs = distinct(np.random.default_rng(13),
                     lambda g: (int(g.integers(1, 9)), int(g.integers(1, 257))), count)
    return "bert_layer.onnx", [{"hidden_states": [b, s, 256]} for b, s in pairs]


def decoder_prompts(count):
    return "decoder.onnx", [int(n) for n in np.random.default_rng(14).integers(1, 513, count)]


# label -> (what it runs, its argument); a decoder workload's shapes are its prompts.
WORKLOADS = {
    "recogniser, 24 widths": (recogniser, 24),
    "recogniser, 200 widths": (recogniser, 200),
    "detector, 16 pages": (detector, 16),
    "detector, 100 pages": (detector, 100),
    "decoder, 200 requests": (decoder_prompts, 200),
    "encoder, 200 batch x seq": (encoder, 200),
    "encoder, 1000 batch x seq": (encoder, 1000),
}
QUICK = {"recogniser, 24 widths", "detector, 16 pages", "decoder, 200 requests",
         "encoder, 200 batch x seq"}
GENERATED_TOKENS = 16


def rss_kib(field):
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def open_session(engine, build, model_path):
    if engine == "nxrt":
        sys.path.insert(0, os.path.join(build, "python"))
        import nxrt as runtime
    else:
        import onnxruntime as runtime
    options = runtime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    return runtime.InferenceSession(model_path, options, providers=["CPUExecutionProvider"])


def timed(session, feeds):
    start = time.perf_counter()
    outputs = session.run(None, feeds)
    return time.perf_counter() - start, outputs


def image_pass(session, shapes):
    """Times each shape's first run; every stride-th shape runs again at once (its warm run)."""
    generator = np.random.default_rng(0)
    stride = max(1, len(shapes) // COLD_WARM_SAMPLES)
    runs, pairs, rss_first = [], [], None
    for k, dims in enumerate(shapes):
        feeds = {name: generator.standard_normal(shape).astype(np.float32) for name, shape in dims.items()}
        cold, _ = timed(session, feeds)
        runs.append(cold)
        if rss_first is None:
            rss_first = rss_kib("VmRSS")
        if k % stride == 0:
            pairs.append((cold, timed(session, feeds)[0]))
    return {"runs": runs, "pairs": pairs, "rss_first_kib": rss_first}


def decoder_pass(session, prompts):
    """Greedy requests through plain run(): each request starts from an empty KV cache."""
    pasts = [i for i in session.get_inputs() if i.name.startswith("past_key_values.")]
    _, kv_heads, _, head_dim = pasts[0].shape
    vocabulary = session.get_outputs()[0].shape[-1]
    if not isinstance(vocabulary, int):
        raise RuntimeError("the decoder's logits do not declare their vocabulary size")
    generator = np.random.default_rng(0)
    runs, first_tokens, pairs, rss_first = [], [], [], None
    stride = max(1, len(prompts) // COLD_WARM_SAMPLES)
    for k, length in enumerate(prompts):
        cache = {i.name: np.zeros([1, kv_heads, 0, head_dim], np.float32) for i in pasts}
        ids = generator.integers(0, vocabulary, [1, length]).astype(np.int64)
        total = 0
        request = 0.0
        for step in range(GENERATED_TOKENS):
            total += ids.shape[1]
            feeds = {"input_ids": ids, "attention_mask": np.ones([1, total], np.int64), **cache}
            spent, outputs = timed(session, feeds)
            if step == 0 and k % stride == 0:
                pairs.append((spent, timed(session, feeds)[0]))
            logits, presents = outputs[0], outputs[1:]
            cache = dict(zip(cache, presents))
            ids = np.array([[int(np.argmax(logits[0, -1]))]], np.int64)
            request += spent
            if step == 0:
                first_tokens.append(spent)
        runs.append(request)
        if rss_first is None:
            rss_first = rss_kib("VmRSS")
    return {"runs": runs, "pairs": pairs, "rss_first_kib": rss_first, "first_tokens": first_tokens}


def worker(engine, label, build):
    make, argument = WORKLOADS[label]
    model, shapes = make(argument)
    if not os.path.isabs(model):
        model = os.path.join(build, "models", model)
    session = open_session(engine, build, model)
    start = time.perf_counter()
    report = (decoder_pass if make is decoder_prompts else image_pass)(session, shapes)
    report["total_s"] = time.perf_counter() - start
    report["rss_last_kib"] = rss_kib("VmRSS")
    report["peak_kib"] = rss_kib("VmHWM")
    print(json.dumps(report))


def run_worker(engine, label, build, timeout):
    command = [sys.executable, "-B", os.path.abspath(__file__), "--worker", engine, label, "--build", build]
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip().splitlines()
        raise RuntimeError(f"{engine} exit code {done.returncode}: {said[-1][:300] if said else ''}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def percentile(values, q):
    return float(np.percentile(np.asarray(values), q))


def summary(report):
    pairs = report["pairs"]
    return {
        "total": report["total_s"],
        "p50": percentile(report["runs"], 50) * 1e3,
        "p99": percentile(report["runs"], 99) * 1e3,
        "peak": report["peak_kib"] / 1024,
        "growth": report["rss_last_kib"] / report["rss_first_kib"],
        "cold_warm": statistics.median(cold / warm for cold, warm in pairs),
        "ttft50": percentile(report["first_tokens"], 50) * 1e3 if "first_tokens" in report else None,
        "ttft99": percentile(report["first_tokens"], 99) * 1e3 if "first_tokens" in report else None,
    }


def span(values, form="{:.2f}"):
    values = sorted(values)
    middle = statistics.median(values)
    if len(values) == 1:
        return form.format(middle)
    return (form + " ({}-{})").format(middle, form.format(values[0]), form.format(values[-1]))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=os.path.join(ROOT, "build", "release"))
    parser.add_argument("--rounds", type=int, default=2, help="passes per engine, alternating (default 2)")
    parser.add_argument("--only", help="run only the workloads whose label contains this text")
    parser.add_argument("--quick", action="store_true", help="only the shorter form of each workload")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds allowed per pass")
    parser.add_argument("--worker", nargs=2, metavar=("ENGINE", "WORKLOAD"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker[0], args.worker[1], args.build)
        return 0
    labels = [label for label in WORKLOADS if (not args.only or args.only in label)
              and (not args.quick or label in QUICK)]
    print("workload | nxrt s | ORT s | nxrt/ORT total | p50 ms nxrt / ORT | p99 ms nxrt / ORT | "
          "peak MiB nxrt / ORT | RSS last/first nxrt | cold/warm nxrt / ORT")
    print("---|---|---|---|---|---|---|---|---")
    ratios, ttft = [], []
    for label in labels:
        results = {"nxrt": [], "ort": []}
        for round_ in range(args.rounds):
            for engine in ("nxrt", "ort") if round_ % 2 == 0 else ("ort", "nxrt"):
                try:
                    results[engine].append(summary(run_worker(engine, label, args.build, args.timeout)))
                except (RuntimeError, subprocess.TimeoutExpired, FileNotFoundError) as error:
                    print(f"{label}: {error}", file=sys.stderr)
                    return 1
        n, o = results["nxrt"], results["ort"]
        ratio = [a["total"] / b["total"] for a, b in zip(n, o)]
        ratios.append(statistics.median(ratio))
        median = lambda rows, key: statistics.median(r[key] for r in rows)
        print(f"{label} | {median(n, 'total'):.2f} | {median(o, 'total'):.2f} | {span(ratio)}x | "
              f"{median(n, 'p50'):.2f} / {median(o, 'p50'):.2f} | {median(n, 'p99'):.2f} / {median(o, 'p99'):.2f} | "
              f"{median(n, 'peak'):.0f} / {median(o, 'peak'):.0f} | {median(n, 'growth'):.2f} | "
              f"{median(n, 'cold_warm'):.2f} / {median(o, 'cold_warm'):.2f}", flush=True)
        if n[0]["ttft50"] is not None:
            ttft.append((label, [a["ttft50"] / b["ttft50"] for a, b in zip(n, o)],
                         [a["ttft99"] / b["ttft99"] for a, b in zip(n, o)]))
    if ratios:
        print(f"\nmedian nxrt/ORT total over workloads: {statistics.median(ratios):.2f}x")
    for label, p50, p99 in ttft:
        print(f"{label}: time to first token nxrt/ORT p50 {span(p50)}x, p99 {span(p99)}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
