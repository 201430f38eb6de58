"""Runs one model on ONNX Runtime (CPU, one thread or --threads N) and prints the process's peak resident memory in KiB,
then the microseconds from importing onnxruntime to the end of the first run (what a fresh process pays before its
first result, Python's own start and the input files left out).

    ort_peak_memory.py MODEL RUNS [--threads N] [NAME=INPUT.pb]...

A process of its own, so that the figures hold this model and nothing else the caller loaded."""
import sys
import time

import onnx
from onnx import numpy_helper


def main(model_path, runs, inputs, threads=1):
    feeds = {}
    for entry in inputs:
        name, path = entry.split("=", 1)
        tensor = onnx.TensorProto()
        with open(path, "rb") as f:
            tensor.ParseFromString(f.read())
        feeds[name] = numpy_helper.to_array(tensor)
    start = time.perf_counter_ns()
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.log_severity_level = 3
    session = ort.InferenceSession(model_path, options, providers=["CPUExecutionProvider"])
    session.run(None, feeds)
    cold_us = (time.perf_counter_ns() - start) / 1e3
    for _ in range(runs - 1):
        session.run(None, feeds)
    print(peak_kib(), round(cold_us))
    return 0


def peak_kib():
    """VmHWM, this process's own high-water mark (getrusage's maxrss also counts the parent at fork)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


if __name__ == "__main__":
    rest = sys.argv[3:]
    threads = 1
    if rest[:1] == ["--threads"]:
        threads, rest = int(rest[1]), rest[2:]
    sys.exit(main(sys.argv[1], int(sys.argv[2]), rest, threads))
