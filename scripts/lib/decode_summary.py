"""Prints one screen comparing `nxrt generate --json` reports side by side:
tokens, per-step latency, kernel-cache stats and device-graph counters.

usage: decode_summary.py LABEL=REPORT.json [LABEL=REPORT.json ...]
"""
import json
import os
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
        ("kernel cache hits", lambda r: get(r, "kernel_cache", "hits")),
        ("  pre-bound hits", lambda r: get(r, "kernel_cache", "prebound_hits")),
        ("  misses", lambda r: get(r, "kernel_cache", "misses")),
        ("  evictions", lambda r: get(r, "kernel_cache", "evictions")),
        ("device graphs captured", lambda r: get(r, "device_graphs", "captures")),
        ("  replays", lambda r: get(r, "device_graphs", "replays")),
        ("  resets", lambda r: get(r, "device_graphs", "resets")),
        ("  eager fallbacks", fallbacks),
    ]


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    reports = [load(argument) for argument in sys.argv[1:]]
    table = [("", [label for label, _ in reports])]
    for name, read in rows(reports):
        table.append((name, [number(read(report)) for _, report in reports]))
    width = max(len(name) for name, _ in table)
    columns = [max(len(row[1][i]) for row in table) for i in range(len(reports))]
    for name, cells in table:
        print(name.ljust(width), *(cell.rjust(w) for cell, w in zip(cells, columns)), sep="  ")
    tokens = {label: report.get("tokens") for label, report in reports}
    if len({json.dumps(t) for t in tokens.values()}) == 1:
        print(f"\nsame generated tokens in every run: {next(iter(tokens.values()))}")
    else:
        for label, generated in tokens.items():
            print(f"\n{label} tokens: {generated}")
    medians = [r.get("median_us") for _, r in reports]
    if len(reports) == 2 and all(isinstance(m, (int, float)) and m > 0 for m in medians):
        print(f"decode step speed-up, {reports[1][0]} over {reports[0][0]}: "
              f"{medians[0] / medians[1]:.2f}x")


if __name__ == "__main__":
    main()
