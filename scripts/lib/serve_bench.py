"""Throughput and latency of nxrt.serve against the number of replicas and
the batching settings, with ONNX Runtime in the same deployment code
(ModelConfig.runtime="onnxruntime") under the same load, alternating the
engines. Everything runs on this machine's cores: Ray, its HTTP proxy, the
front, the replicas and the clients.

    serve_bench.py [--seconds S] [--rounds N]

Two studies, each on a model made here with fixed random weights, sized so
the replicas, not Ray's per-request cost, decide the throughput:
- scaling: a convolution tower (32 3x3 convolutions of 64 channels on a
  64x64 image, about 50 ms a run on one thread, 48 KiB a request), 1, 2 and
  4 replicas of one thread, no batching, 8 clients;
- batching: an encoder of 64 512x2048 feed-forward blocks on one pooled
  512-vector per request, bound by streaming its 512 MB of weights (about
  30 ms a run alone, 35 ms for 8 rows), 2 replicas, batches of up to 1
  and 8 (waiting at most 10 or 30 ms for a batch to fill), 16 clients.
With --released, a third study serves a released model, the PP-OCRv4 text
recogniser, on [1,3,48,320] crops: 1 and 2 replicas, and 2 batching up to
8 (30 ms wait), 8 clients.
Each line gives requests/s and p50/p99 latency per engine and round, then
the ratios nxrt/ORT (throughput: above 1 is nxrt faster; p99: below 1).
"""

import argparse
import http.client
import os
import shutil
import statistics
import tempfile
import threading
import time

import numpy as np
import onnx
import ray
from onnx import TensorProto, helper, numpy_helper
from ray import serve

from nxrt import inference_protocol
from nxrt import serve as nxrt_serve

PORT = 18632
HOST = "127.0.0.1"


def conv_tower(path):
    rng = np.random.default_rng(1)
    nodes, weights, last, channels = [], [], "image", 3
    for index in range(32):
        weight = f"w{index}"
        weights.append(numpy_helper.from_array(
            (rng.standard_normal((64, channels, 3, 3)) / np.sqrt(9 * channels)).astype(np.float32),
            weight))
        nodes += [helper.make_node("Conv", [last, weight], [f"c{index}"], pads=[1, 1, 1, 1]),
                  helper.make_node("Relu", [f"c{index}"], [f"r{index}"])]
        last, channels = f"r{index}", 64
    nodes += [helper.make_node("GlobalAveragePool", [last], ["pooled"]),
              helper.make_node("Flatten", ["pooled"], ["features"])]
    save(path, nodes, weights, ("image", ["batch", 3, 64, 64]), ("features", ["batch", 64]))


def feed_forward_encoder(path):
    rng = np.random.default_rng(2)
    nodes, weights, last = [], [], "embedding"
    for index in range(64):
        up, down = f"up{index}", f"down{index}"
        weights += [numpy_helper.from_array((rng.standard_normal((512, 2048)) / 23).astype(
            np.float32), up), numpy_helper.from_array((rng.standard_normal((2048, 512)) / 45)
                                                      .astype(np.float32), down)]
        nodes += [helper.make_node("MatMul", [last, up], [f"h{index}"]),
                  helper.make_node("Relu", [f"h{index}"], [f"a{index}"]),
                  helper.make_node("MatMul", [f"a{index}", down], [f"d{index}"]),
                  helper.make_node("Add", [f"d{index}", last], [f"o{index}"])]
        last = f"o{index}"
    nodes.append(helper.make_node("Identity", [last], ["encoded"]))
    save(path, nodes, weights, ("embedding", ["batch", 512]), ("encoded", ["batch", 512]))


def save(path, nodes, weights, model_input, model_output):
    graph = helper.make_graph(
        nodes, "bench", [helper.make_tensor_value_info(model_input[0], TensorProto.FLOAT,
                                                       model_input[1])],
        [helper.make_tensor_value_info(model_output[0], TensorProto.FLOAT, model_output[1])],
        weights)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                                ir_version=8), path)


def request_body(input_name, shape, seed):
    array = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    body, length = inference_protocol.encode_request({input_name: array}, binary=True,
                                                     binary_outputs=True)
    return body, {"Inference-Header-Content-Length": str(length)}


def load(input_name, shape, clients, seconds):
    """(requests/s, p50 ms, p99 ms) of `clients` closed-loop clients."""
    bodies = [request_body(input_name, shape, seed) for seed in range(clients)]
    latencies, errors, lock = [], [], threading.Lock()
    stop_at = time.perf_counter() + seconds

    def client(index):
        connection = http.client.HTTPConnection(HOST, PORT, timeout=60)
        body, headers = bodies[index]
        mine = []
        while (start := time.perf_counter()) < stop_at:
            connection.request("POST", "/v2/models/encoder/infer", body=body, headers=headers)
            response = connection.getresponse()
            response.read()
            if response.status != 200:
                errors.append(response.status)
            mine.append(time.perf_counter() - start)
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=client, args=(index,)) for index in range(clients)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    if errors:
        raise RuntimeError(f"{len(errors)} requests failed, statuses {sorted(set(errors))}")
    latencies.sort()
    return (len(latencies) / elapsed, 1e3 * latencies[len(latencies) // 2],
            1e3 * latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))])


def measure(model, runtime, replicas, batch, request, clients, seconds):
    batch, wait_ms = batch if isinstance(batch, tuple) else (batch, 10)
    nxrt_serve.deploy([nxrt_serve.ModelConfig(
        "encoder", model, runtime=runtime, replicas=replicas, max_batch_size=batch,
        batch_wait_timeout_s=wait_ms / 1000)], host=HOST, port=PORT)
    load(*request, clients, min(2.0, seconds))  # warm: every replica, every batch size seen
    result = load(*request, clients, seconds)
    serve.delete(nxrt_serve.app_name_of("encoder"))
    return result


def study(title, settings, model, request, clients, seconds, rounds):
    print(f"\n{title}: {os.path.basename(model)}, requests {list(request[1])}, {clients} "
          f"clients, {seconds:g} s per run")
    print(f"{'setting':<24} {'engine':<5} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8}")
    summary = {}
    for label, replicas, batch in settings:
        runs = {"nxrt": [], "onnxruntime": []}
        for round_index in range(rounds):
            order = ("nxrt", "onnxruntime") if round_index % 2 == 0 else ("onnxruntime", "nxrt")
            for runtime in order:
                runs[runtime].append(measure(model, runtime, replicas, batch, request, clients,
                                             seconds))
                rate, p50, p99 = runs[runtime][-1]
                print(f"{label:<24} {runtime[:4]:<5} {rate:8.1f} {p50:8.2f} {p99:8.2f}",
                      flush=True)
        summary[label] = runs
    print(f"{'setting':<24} {'nxrt/ORT req/s':>22} {'nxrt/ORT p99':>22}")
    for label, runs in summary.items():
        rates = [n[0] / o[0] for n, o in zip(runs["nxrt"], runs["onnxruntime"])]
        p99s = [n[2] / o[2] for n, o in zip(runs["nxrt"], runs["onnxruntime"])]
        print(f"{label:<24} {statistics.median(rates):8.2f} ({min(rates):.2f}-{max(rates):.2f})"
              f"     {statistics.median(p99s):8.2f} ({min(p99s):.2f}-{max(p99s):.2f})")
    return summary


def gain(summary, label, base):
    ratios = [a[0] / b[0] for a, b in zip(summary[label]["nxrt"], summary[base]["nxrt"])]
    return statistics.median(ratios), min(ratios), max(ratios)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=6.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--only", choices=["scaling", "batching", "released"],
                        help="one study alone")
    parser.add_argument("--released", help="the released models' folder "
                        "(scripts/fetch-released-models); its text recogniser is served too")
    arguments = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="serve-bench-")
    tower, encoder = os.path.join(folder, "conv_tower.onnx"), os.path.join(folder, "encoder.onnx")
    conv_tower(tower)
    feed_forward_encoder(encoder)
    print(f"{os.cpu_count()} cores; Ray given 4 logical CPUs so 4 one-thread replicas fit")
    ray.init(num_cpus=4, include_dashboard=False, log_to_driver=False, logging_level="error")
    try:
        scaling = batching = released = None
        if arguments.only in (None, "scaling"):
            scaling = study("scaling", [("1 replica", 1, 1), ("2 replicas", 2, 1),
                                    ("4 replicas", 4, 1)],
                            tower, ("image", (1, 3, 64, 64)), 8, arguments.seconds,
                            arguments.rounds)
        if arguments.only in (None, "batching"):
            batching = study("batching", [("2 replicas, no batching", 2, 1),
                                          ("2 replicas, batch <= 8", 2, (8, 10)),
                                          ("2 replicas, <= 8, 30 ms", 2, (8, 30))],
                             encoder, ("embedding", (1, 512)), 16, arguments.seconds,
                             arguments.rounds)
        recogniser = os.path.join(arguments.released or "", "ppocrv4_rec.onnx")
        if arguments.only in (None, "released") and os.path.isfile(recogniser):
            released = study("released", [("1 replica", 1, 1), ("2 replicas", 2, 1),
                                          ("2 replicas, <= 8, 30 ms", 2, (8, 30))],
                             recogniser, ("x", (1, 3, 48, 320)), 8, arguments.seconds,
                             arguments.rounds)
    finally:
        serve.shutdown()
        ray.shutdown()
        shutil.rmtree(folder)
    cores = os.cpu_count()
    for label in ("2 replicas", "4 replicas") if scaling else ():
        median, low, high = gain(scaling, label, "1 replica")
        print(f"nxrt {label} / 1 replica: {median:.2f}x ({low:.2f}-{high:.2f}) on {cores} cores")
    for label in ("2 replicas", "2 replicas, <= 8, 30 ms") if released else ():
        median, low, high = gain(released, label, "1 replica")
        print(f"nxrt PP-OCRv4 recogniser '{label}' / 1 replica: {median:.2f}x "
              f"({low:.2f}-{high:.2f})")
    for label in ("2 replicas, batch <= 8", "2 replicas, <= 8, 30 ms") if batching else ():
        median, low, high = gain(batching, label, "2 replicas, no batching")
        print(f"nxrt '{label}' / no batching: {median:.2f}x ({low:.2f}-{high:.2f})")


if __name__ == "__main__":
    main()
