"""Runs ONNX backend test cases on ONNX Runtime (CPUExecutionProvider) and on
`nxrt test --json`, and prints both engines' totals per folder side by side,
then the cases one engine passes and the other does not."""
import argparse
import collections
import json
import multiprocessing
import multiprocessing.connection
import os
import subprocess
import sys
import time

from json_report import parse_json_report
from onnx_test_cases import case_dirs, one_line

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TESTDATA = "/usr/share/libonnx-testdata/data"
DEFAULT_FOLDERS = [f"{TESTDATA}/{suite}" for suite in ("node", "pytorch-converted", "pytorch-operator", "simple")]
# Where scripts/export-onnx-node-cases writes by default, then where the release build does.
EXPORTED_CASE_FOLDERS = [os.path.join(ROOT, "build", "onnx-node-cases"), os.path.join(ROOT, "build", "release", "onnx-node-cases")]
NXRT_CHUNK = 64


def ort_worker(connection):
    # Imported here so that only worker processes, never the parent, start ORT's threads.
    from ort_case_runner import check_case_on_ort

    while True:
        case_dir = connection.recv()
        if case_dir is None:
            return
        try:
            result = check_case_on_ort(case_dir)
        except Exception as error:
            result = ("error", f"harness: {one_line(error)}")
        connection.send(result)


class OrtPool:
    """Worker processes that run one case at a time; a case that hangs past the
    timeout or kills its worker becomes an error and the worker is replaced."""

    def __init__(self, jobs, timeout):
        self.jobs = jobs
        self.timeout = timeout
        self.context = multiprocessing.get_context("fork")

    def _start(self):
        parent_end, child_end = self.context.Pipe()
        process = self.context.Process(target=ort_worker, args=(child_end,), daemon=True)
        process.start()
        child_end.close()
        return process, parent_end

    def run(self, cases, progress):
        results = {}
        pending = collections.deque(cases)
        idle = [self._start() for _ in range(min(self.jobs, len(cases)))]
        busy = {}  # connection -> (process, case, deadline)
        while pending or busy:
            while idle and pending:
                process, connection = idle.pop()
                case = pending.popleft()
                connection.send(case)
                busy[connection] = (process, case, time.monotonic() + self.timeout)
            ready = multiprocessing.connection.wait(list(busy), timeout=0.5)
            for connection in ready:
                process, case, _ = busy.pop(connection)
                try:
                    results[case] = connection.recv()
                    idle.append((process, connection))
                except EOFError:
                    process.join()
                    results[case] = ("error", f"ORT crashed the process (exit code {process.exitcode})")
                    idle.append(self._start())
                progress(len(results))
            now = time.monotonic()
            for connection, (process, case, deadline) in list(busy.items()):
                if now > deadline:
                    process.kill()
                    process.join()
                    del busy[connection]
                    results[case] = ("error", f"timed out after {self.timeout:g} s")
                    idle.append(self._start())
                    progress(len(results))
        for process, connection in idle:
            connection.send(None)
            process.join(timeout=5)
        return results


def nxrt_has_test_command(binary):
    if not os.access(binary, os.X_OK):
        return False
    try:
        return subprocess.run([binary, "test", "--help"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def run_nxrt(binary, cases, timeout):
    """{case: (status, message)} from `nxrt test --json`, in chunks; a chunk that
    crashes or times out is rerun case by case so one bad case is one error."""
    results = {}
    for start in range(0, len(cases), NXRT_CHUNK):
        results.update(_run_nxrt_chunk(binary, cases[start:start + NXRT_CHUNK], timeout))
    return results


def _run_nxrt_chunk(binary, chunk, timeout):
    try:
        done = subprocess.run([binary, "test", "--json", *chunk], capture_output=True, text=True,
                              timeout=timeout * len(chunk))
        report = parse_json_report(done.stdout)
        by_path = {os.path.realpath(c.get("path", "")): c for c in report["cases"]}
        by_name = {c.get("name"): c for c in report["cases"]}
        results = {}
        for case in chunk:
            entry = by_path.get(os.path.realpath(case)) or by_name.get(os.path.basename(case))
            results[case] = (entry["status"], entry.get("message") or "") if entry else ("error", "missing from nxrt's report")
        return results
    except subprocess.TimeoutExpired:
        failure = f"timed out after {timeout:g} s"
    except (ValueError, KeyError, TypeError):
        ended = f"killed by signal {-done.returncode}" if done.returncode < 0 else f"exit code {done.returncode}"
        said = (done.stderr or done.stdout).strip()
        failure = f"no JSON report ({ended})" + (f": {one_line(said)}" if said else "")
    if len(chunk) > 1:
        results = {}
        for case in chunk:
            results.update(_run_nxrt_chunk(binary, [case], timeout))
        return results
    return {chunk[0]: ("error", failure)}


def folder_label(folder):
    return os.path.basename(os.path.normpath(folder))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("folders", nargs="*", help="folders of test cases, or single case folders "
                        f"(default: {TESTDATA}/{{node,pytorch-converted,pytorch-operator,simple}} and build/onnx-node-cases, else build/release/onnx-node-cases)")
    parser.add_argument("--nxrt", default=os.path.join(ROOT, "build", "release", "bin", "nxrt"), help="the nxrt binary")
    parser.add_argument("--timeout", type=float, default=60, help="seconds allowed per case (default 60)")
    parser.add_argument("--jobs", type=int, default=1, help="ORT worker processes (default 1)")
    parser.add_argument("--list-ort-failures", action="store_true", help="also list every case ORT does not pass")
    parser.add_argument("--json-out", help="write every case's results to this file")
    args = parser.parse_args()

    folders = args.folders or DEFAULT_FOLDERS + [f for f in EXPORTED_CASE_FOLDERS if os.path.isdir(f)][:1]
    cases_by_folder = {}
    for folder in folders:
        if not os.path.isdir(folder):
            print(f"conformance-vs-ort: {folder} is not a folder", file=sys.stderr)
            return 2
        cases_by_folder[folder] = case_dirs(folder)
    all_cases = [case for cases in cases_by_folder.values() for case in cases]
    if not all_cases:
        print("conformance-vs-ort: no test cases found", file=sys.stderr)
        return 2

    def progress(done):
        if done % 200 == 0 or done == len(all_cases):
            print(f"  ORT: {done}/{len(all_cases)} cases", file=sys.stderr, flush=True)

    ort_results = OrtPool(args.jobs, args.timeout).run(all_cases, progress)
    nxrt_results = None
    if nxrt_has_test_command(args.nxrt):
        nxrt_results = run_nxrt(args.nxrt, all_cases, args.timeout)

    def passed(results, cases):
        return sum(results[c][0] == "pass" for c in cases)

    width = max(len(folder_label(f)) for f in folders) + 2
    print(f"{'folder':<{width}}{'ORT passed/total':>18}{'nxrt passed/total':>20}")
    for folder, cases in cases_by_folder.items():
        nxrt_column = f"{passed(nxrt_results, cases)}/{len(cases)}" if nxrt_results else "n/a"
        print(f"{folder_label(folder):<{width}}{passed(ort_results, cases):>11}/{len(cases):<6}{nxrt_column:>20}")

    def name(case):
        return f"{folder_label(os.path.dirname(case))}/{os.path.basename(case)}"

    if nxrt_results is None:
        print(f"\nnxrt: {args.nxrt} is missing or has no `test` command; ORT column only.")
    else:
        for title, winner, loser, loser_name in (("ORT passes, nxrt does not", ort_results, nxrt_results, "nxrt"),
                                                 ("nxrt passes, ORT does not", nxrt_results, ort_results, "ORT")):
            differing = [c for c in all_cases if winner[c][0] == "pass" and loser[c][0] != "pass"]
            print(f"\n{title} ({len(differing)}):")
            for case in differing:
                status, message = loser[case]
                print(f"  {name(case)}  {loser_name} {status}: {message}")
    if args.list_ort_failures:
        failing = [c for c in all_cases if ort_results[c][0] != "pass"]
        print(f"\nORT does not pass ({len(failing)}):")
        for case in failing:
            status, message = ort_results[case]
            print(f"  {name(case)}  {status}: {message}")
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump({"cases": [{"path": c, "ort": list(ort_results[c]),
                                  "nxrt": list(nxrt_results[c]) if nxrt_results else None} for c in all_cases]}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
