"""Runs one model on ONNX Runtime (CPU, one thread or --threads N) and prints the process's peak resident memory in KiB.

    ort_peak_memory.py MODEL RUNS [--threads N] [NAME=INPUT.pb]...

A process of its own, so that the figure holds this model and nothing else the caller loaded."""
import sys

import onnx
import onnxruntime as ort
from onnx import numpy_helper


def main(model_path, runs, inputs, threads=1):
    feeds = {}
    for entry in inputs:
        name, path = entry.split("=", 1)
        tensor = onnx.TensorProto()
        with open(path, "rb") as f:
            tensor.ParseFromString(f.read())
        feeds[name] = numpy_helper.to_array(tensor)
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.log_severity_level = 3
    session = ort.InferenceSession(model_path, options, providers=["CPUExecutionProvider"])
    for _ in range(runs):
        session.run(None, feeds)
    print(peak_kib())
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
