#!/usr/bin/env python3
"""Runs one folder of ONNX backend test cases through `nxrt test --json` and
checks the verdicts against the folder's list of expected failures.

The check fails when a case fails that the list does not name (a regression),
when a listed case now passes or is skipped (the list went stale: delete its
line), or when the list names a case that does not exist. Each such case is
printed with the reason. --update rewrites the list from this run, taking
each reason from nxrt's own message.

List format: one `case_name  reason` per line; blank lines and lines
starting with '#' are ignored.
"""
import argparse
import json
import os
import subprocess
import sys

SKIP_EXIT_CODE = 77  # ctest's SKIP_RETURN_CODE: the folder is not there


def read_expected(path):
    expected = {}
    if not os.path.exists(path):
        return expected
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            name, _, reason = line.partition(" ")
            if not reason.strip():
                sys.exit(f"{path}:{number}: '{name}' has no reason; write `case_name  reason`")
            expected[name] = reason.strip()
    return expected


def one_line(text, limit=300):
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def reason_from_message(case_path, message):
    """The part of nxrt's message that says why: without the model's path, and
    for an unclaimed node the providers' decline reasons alone."""
    model_prefix = os.path.join(case_path, "model.onnx") + ": "
    if message.startswith(model_prefix):
        message = message[len(model_prefix):]
    marker = "is claimed by no execution provider: "
    if marker in message:
        message = "no EP claims it: " + message.split(marker, 1)[1].split("; add a provider", 1)[0]
    return one_line(message, 240)


def write_expected(path, folder_label, failures):
    with open(path, "w", encoding="utf-8") as f:
        f.write(f"# Cases of {folder_label} that nxrt does not pass yet with --ep cpu, and why\n")
        f.write("# (nxrt's own message). Delete a line when its case passes.\n")
        width = max((len(name) for name in failures), default=0)
        for name in sorted(failures):
            f.write(f"{name:<{width}}  {one_line(failures[name])}\n")


def parse_report(stdout):
    """The JSON object nxrt prints, even when log lines come before it."""
    decoder = json.JSONDecoder()
    offset = 0
    for line in stdout.splitlines(keepends=True):
        stripped = line.lstrip()
        if stripped.startswith("{"):
            try:
                report, _ = decoder.raw_decode(stdout, offset + len(line) - len(stripped))
                if isinstance(report, dict) and "cases" in report:
                    return report
            except ValueError:
                pass
        offset += len(line)
    raise ValueError("no JSON report in nxrt's output")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nxrt", required=True, help="the nxrt binary")
    parser.add_argument("--cases", required=True, help="the folder of test cases")
    parser.add_argument("--expected", required=True, help="the expected-failures list")
    parser.add_argument("--ep", default="cpu")
    parser.add_argument("--ep-option", action="append", default=[],
                        help="NAME:KEY=VALUE for nxrt test's --ep-option; repeatable")
    parser.add_argument("--timeout", default="60", help="seconds per case")
    parser.add_argument("--rtol", help="nxrt test's relative tolerance (its default when absent)")
    parser.add_argument("--atol", help="nxrt test's absolute tolerance (its default when absent)")
    parser.add_argument("--update", action="store_true", help="rewrite the list from this run")
    args = parser.parse_args()

    if not os.path.isdir(args.cases):
        print(f"{args.cases} does not exist; nothing to check")
        return SKIP_EXIT_CODE
    command = [args.nxrt, "test", "--json", "--ep", args.ep, "--timeout", args.timeout]
    for option in args.ep_option:
        command += ["--ep-option", option]
    for flag in ("rtol", "atol"):
        if getattr(args, flag) is not None:
            command += [f"--{flag}", getattr(args, flag)]
    command.append(args.cases)
    done = subprocess.run(command, capture_output=True, text=True)
    try:
        report = parse_report(done.stdout)
    except ValueError:
        print(f"`{' '.join(command)}` gave no JSON report (exit status {done.returncode})")
        print((done.stderr or done.stdout).strip()[-2000:])
        return 1

    folder_label = os.path.basename(os.path.normpath(args.cases))
    verdicts = {case["name"]: (case["status"], case.get("message") or "") for case in report["cases"]}
    failures = {name: message for name, (status, message) in verdicts.items()
                if status in ("fail", "error")}
    if args.update:
        paths = {case["name"]: case.get("path", "") for case in report["cases"]}
        write_expected(args.expected, folder_label,
                       {name: reason_from_message(paths[name], message)
                        for name, message in failures.items()})
        print(f"wrote {len(failures)} expected failures to {args.expected}")
        return 0

    expected = read_expected(args.expected)
    new_failures = sorted(name for name in failures if name not in expected)
    now_passing = sorted(name for name in expected
                         if name in verdicts and verdicts[name][0] not in ("fail", "error"))
    unknown = sorted(name for name in expected if name not in verdicts)

    passed = sum(1 for status, _ in verdicts.values() if status == "pass")
    print(f"{folder_label}: {passed} passed, {len(failures)} failed "
          f"({len(failures) - len(new_failures)} expected), "
          f"{sum(1 for s, _ in verdicts.values() if s == 'skip')} skipped")
    for name in new_failures:
        status, message = verdicts[name]
        print(f"NEW {status.upper()} {name}: {one_line(message, 1000)}")
    for name in now_passing:
        status, message = verdicts[name]
        print(f"NOW {'PASSES' if status == 'pass' else 'SKIPPED'} {name}"
              f"{': ' + message if message else ''} (expected to fail: {expected[name]}); "
              f"delete its line from {args.expected}")
    for name in unknown:
        print(f"UNKNOWN {name}: listed in {args.expected} but no such case in {args.cases}; "
              "delete its line")
    return 1 if new_failures or now_passing or unknown else 0


if __name__ == "__main__":
    sys.exit(main())
