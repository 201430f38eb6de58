"""Prints one screen comparing `nxrt generate --json` reports side by side:
tokens, per-step latency, kernel-cache stats and device-graph counters.

A label may be given several times, one report per repeated run. Its column
then shows the first run's counters and the median over runs of the per-step
latencies, and for labels whose runs were interleaved (A B C A B C ...) each
label's speed-up over the first is the median of the pairwise ratios, so
that a slow spell on a shared machine moves one pair rather than the
verdict. Runs of one model's weights must generate the same tokens.

usage: decode_summary.py LABEL=REPORT.json [LABEL=REPORT.json ...]
"""
import json
import os
import statistics
import sys


def load(argument):
    label, _, path = argument.partition("=")
    if not path:
        raise SystemExit(f"decode_summary: expected LABEL=FILE, got '{argument}'")
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    start = text.find("{")
    if start < 0:
        raise SystemExit(f"decode_summary: {path} holds no JSON report")
    return label, json.JSONDecoder().raw_decode(text, start)[0]


def number(value, digits=1):
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def peak_mib(kib):
    return kib / 1024.0 if isinstance(kib, int) else kib


def mib(count):
    return count / 2**20 if isinstance(count, int) else count


def rows(reports):
    def get(report, *path):
        value = report
        for key in path:
            if not isinstance(value, dict) or key not in value:
                return "-"
            value = value[key]
        return value

    fallbacks = lambda r: sum(get(r, "device_graphs", "eager_fallbacks").values()) \
        if isinstance(get(r, "device_graphs", "eager_fallbacks"), dict) else "-"
    return [
        ("model", lambda r: os.path.basename(str(get(r, "model")))),
        ("kv cache", lambda r: get(r, "kv")),
        ("prefill (us)", lambda r: get(r, "prefill_us")),
        ("decode step median (us)", lambda r: get(r, "median_us")),
        ("decode step p90 (us)", lambda r: get(r, "p90_us")),
        ("tokens per second", lambda r: get(r, "tokens_per_s")),
        ("weights streamed per step (MiB)", lambda r: mib(get(r, "weight_bytes_per_step"))),
        ("kernel cache hits", lambda r: get(r, "kernel_cache", "hits")),
        ("  pre-bound hits", lambda r: get(r, "kernel_cache", "prebound_hits")),
        ("  misses", lambda r: get(r, "kernel_cache", "misses")),
        ("  evictions", lambda r: get(r, "kernel_cache", "evictions")),
        ("device graphs captured", lambda r: get(r, "device_graphs", "captures")),
        ("  replays", lambda r: get(r, "device_graphs", "replays")),
        ("  resets", lambda r: get(r, "device_graphs", "resets")),
        ("  eager fallbacks", fallbacks),
        ("peak memory (MiB)", lambda r: peak_mib(get(r, "peak_rss_kib"))),
    ]


def merge(runs):
    """One report per label: the first run's, with latencies the median over runs."""
    merged = dict(runs[0])
    for key in ("prefill_us", "median_us", "p90_us", "tokens_per_s"):
        values = [run.get(key) for run in runs]
        if all(isinstance(v, (int, float)) for v in values):
            merged[key] = statistics.median(values)
    return merged


def print_speed_ups(labels, runs_by_label):
    """Each label's decode step against the first label's, pair by pair."""
    base = runs_by_label[labels[0]]
    for label in labels[1:]:
        runs = runs_by_label[label]
        if len(runs) != len(base):
            continue
        ratios = []
        for a, b in zip(base, runs):
            m_a, m_b = a.get("median_us"), b.get("median_us")
            if not (isinstance(m_a, (int, float)) and isinstance(m_b, (int, float)) and m_b > 0):
                break
            ratios.append(m_a / m_b)
        else:
            line = f"decode step speed-up, {label} over {labels[0]}: {statistics.median(ratios):.2f}x"
            if len(ratios) > 1:
                line += (f" (median of {len(ratios)} interleaved pairs; "
                         f"pairs ranged {min(ratios):.2f}x to {max(ratios):.2f}x)")
            print(line)


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    runs_by_label = {}
    for label, report in (load(argument) for argument in sys.argv[1:]):
        runs_by_label.setdefault(label, []).append(report)
    labels = list(runs_by_label)
    reports = [(label, merge(runs_by_label[label])) for label in labels]
    table = [("", [label for label, _ in reports])]
    for name, read in rows(reports):
        table.append((name, [number(read(report)) for _, report in reports]))
    width = max(len(name) for name, _ in table)
    columns = [max(len(row[1][i]) for row in table) for i in range(len(reports))]
    for name, cells in table:
        print(name.ljust(width), *(cell.rjust(w) for cell, w in zip(cells, columns)), sep="  ")
    # Runs over the same weights must agree; int4 weights (make-models names
    # those models *_int4_*) generate tokens of their own.
    by_weights = {}
    for label, runs in runs_by_label.items():
        weights = "int4" if "_int4" in os.path.basename(str(runs[0].get("model"))) else "float"
        by_weights.setdefault(weights, []).append(label)
    print()
    for labels_of_model in by_weights.values():
        tokens = {(label, i): run.get("tokens") for label in labels_of_model
                  for i, run in enumerate(runs_by_label[label])}
        names = " and ".join(labels_of_model)
        if len({json.dumps(t) for t in tokens.values()}) == 1:
            print(f"{names}: same generated tokens in every run: {next(iter(tokens.values()))}")
        else:
            for (label, i), generated in tokens.items():
                print(f"{label} run {i + 1} tokens: {generated}")
    print_speed_ups(labels, runs_by_label)


if __name__ == "__main__":
    main()
