"""nxrt.serve on a multi-node Ray cluster on this machine, under load and faults.

A head and two worker nodes, each its own set of processes, all on loopback
(ray.cluster_utils.Cluster). Served: an MLP with a batch dim (batched, two
replicas), a CNN given as bytes through Ray's object store (two replicas),
and a decoder (one replica, streamed generation). While 16 clients send
their requests, one MLP replica is killed and then a worker node is removed
and added back. Every answer is checked against a local InferenceSession:
a 200 must match it, a 503 is retried by the client, and nothing else may
come back. Then bad requests: each gets 400 and the service stays up.

    serve_cluster_check.py MODELS_DIR [--requests N] [--clients N]

Prints one line per phase and a summary; exits 1 on any lost or wrong answer.
"""

import argparse
import http.client
import json
import os
import sys
import threading
import time

# Ray names a node by the address it reaches the others at; this keeps every
# node of the test cluster on 127.0.0.1.
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")

import numpy as np  # noqa: E402
import ray  # noqa: E402
from ray import serve  # noqa: E402
from ray.cluster_utils import Cluster  # noqa: E402

import nxrt  # noqa: E402
from nxrt import inference_protocol  # noqa: E402
from nxrt import serve as nxrt_serve  # noqa: E402

PORT = 18431
HOST = "127.0.0.1"


def log(message):
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


class Client:
    """One keep-alive connection; 503s retried as Retry-After asks."""

    def __init__(self):
        self.connection = http.client.HTTPConnection(HOST, PORT, timeout=60)

    def request(self, method, path, body=None, headers=None, retries=40):
        for _ in range(retries):
            try:
                self.connection.request(method, path, body=body, headers=headers or {})
                response = self.connection.getresponse()
                data = response.read()
            except (ConnectionError, http.client.HTTPException, OSError):
                self.connection.close()
                self.connection = http.client.HTTPConnection(HOST, PORT, timeout=60)
                return "connection lost", None, None
            if response.status != 503:
                return response.status, data, response
            time.sleep(float(response.getheader("retry-after", "0.2")) / 4)
        return 503, data, response


def infer_body(name, array, binary):
    body, length = inference_protocol.encode_request({name: array}, binary=binary,
                                                     binary_outputs=binary)
    return body, {} if length is None else {"Inference-Header-Content-Length": str(length)}


def output_of(data, response):
    arrays = inference_protocol.decode_response(
        data, response.getheader("inference-header-content-length"))
    return next(iter(arrays.values()))


class Load:
    """`count` requests over the MLP and the CNN from `clients` threads."""

    def __init__(self, models_dir, count, clients):
        self.models = {
            "mlp": nxrt.InferenceSession(os.path.join(models_dir, "mlp.onnx")),
            "cnn": nxrt.InferenceSession(os.path.join(models_dir, "cnn.onnx")),
        }
        self.count, self.clients = count, clients
        self.next, self.lock = 0, threading.Lock()
        self.outcomes = {"ok": 0, "wrong": 0, "lost": 0, "503": 0}
        self.worst_difference = 0.0

    def job(self, index):
        rng = np.random.default_rng(index)
        if index % 2:
            return "mlp", "x", rng.standard_normal((1 + index % 3, 1024), np.float32)
        return "cnn", "image", rng.standard_normal((1, 3, 64, 64), np.float32)

    def progress(self):
        with self.lock:
            return self.next / self.count

    def _client(self):
        client = Client()
        while True:
            with self.lock:
                index, self.next = self.next, self.next + 1
            if index >= self.count:
                return
            model, input_name, array = self.job(index)
            body, headers = infer_body(input_name, array, binary=index % 4 < 2)
            status, data, response = client.request(
                "POST", f"/v2/models/{model}/infer", body, headers)
            outcome = "ok"
            if status == 200:
                expected = self.models[model].run(None, {input_name: array})[0]
                got = output_of(data, response)
                difference = float(np.max(np.abs(got - expected))) if got.shape == \
                    expected.shape else float("inf")
                with self.lock:
                    self.worst_difference = max(self.worst_difference, difference)
                if not np.allclose(got, expected, rtol=1e-5, atol=1e-5):
                    outcome = "wrong"
            elif status == 503:
                outcome = "503"
            else:
                outcome = "lost"
                log(f"request {index} to {model}: {status} {data[:200] if data else ''}")
            with self.lock:
                self.outcomes[outcome] += 1

    def run(self):
        threads = [threading.Thread(target=self._client) for _ in range(self.clients)]
        start = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        self.seconds = time.perf_counter() - start


def replicas_running(app):
    status = serve.status().applications.get(app)
    if status is None:
        return 0
    deployment = status.deployments["ModelReplica"]
    return deployment.replica_states.get("RUNNING", 0)


def wait_for(condition, what, timeout_s=90):
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(0.25)


def replica_names(app):
    return {actor["name"] for actor in ray.util.list_named_actors(all_namespaces=True)
            if actor["name"].startswith(f"SERVE_REPLICA::{app}#")}


def kill_one_replica(app):
    victim = sorted(replica_names(app))[0]
    ray.kill(ray.get_actor(victim, namespace="serve"), no_restart=True)
    return victim


def replicas_by_node(apps):
    """{node id: names of the live replicas of `apps` it holds}, from Ray's actor table."""
    prefixes = tuple(f"SERVE_REPLICA::{app}#" for app in apps)
    held = {}
    for actor in ray._private.state.actors().values():  # noqa: SLF001 (no public form without the dashboard)
        if actor["State"] == "ALIVE" and (actor.get("Name") or "").startswith(prefixes):
            held.setdefault(actor["Address"]["NodeID"], set()).add(actor["Name"])
    return held


def faults(cluster, load, workers, worker_cpus):
    """Kills an MLP replica at 25% of the load, and removes a worker node (one
    that holds a replica) at 55% and adds a node back once Serve recovered."""
    wait_for(lambda: load.progress() >= 0.25, "25% of the load")
    before = replica_names("nxrt-model-mlp")
    victim = kill_one_replica("nxrt-model-mlp")
    log(f"killed replica {victim.split('#')[-1]} of mlp")
    wait_for(lambda: len(replica_names("nxrt-model-mlp") - before) == 1 and
             replicas_running("nxrt-model-mlp") == 2, "mlp back at 2 replicas")
    made = (replica_names("nxrt-model-mlp") - before).pop()
    log(f"mlp is back at 2 replicas: {made.split('#')[-1]} made in its place")
    wait_for(lambda: load.progress() >= 0.55, "55% of the load")
    apps = ("nxrt-model-mlp", "nxrt-model-cnn")
    held = replicas_by_node(apps)
    node = max(workers, key=lambda worker: len(held.get(worker.node_id, ())))
    lost = held.get(node.node_id, set())
    cluster.remove_node(node)
    workers.remove(node)
    log(f"removed worker node {node.node_id[:8]} with {len(lost)} replicas of mlp and cnn")

    def recovered():
        names = replica_names(apps[0]) | replica_names(apps[1])
        return not names & lost and len(names) == 4 and all(
            replicas_running(app) == 2 for app in apps)

    wait_for(recovered, "the replicas made again elsewhere")
    log("mlp and cnn are back at 2 replicas each, on the nodes left")
    workers.append(cluster.add_node(num_cpus=worker_cpus, node_ip_address=HOST))
    wait_for(lambda: sum(node["Alive"] for node in ray.nodes()) == 3, "3 live nodes")
    log("a worker node was added back: 3 nodes alive")


def check_generation(models_dir):
    generator = nxrt.Generator(os.path.join(models_dir, "decoder.onnx"))
    failures = []

    def one(prompt):
        client = Client()
        body = json.dumps({"input_ids": prompt, "parameters": {"max_tokens": 12}}).encode()
        status, data, _ = client.request("POST", "/v2/models/decoder/generate_stream", body)
        events = [json.loads(line[len(b"data: "):]) for line in (data or b"").split(b"\n\n")
                  if line.startswith(b"data: ")]
        tokens = [event["token_id"] for event in events if "token_id" in event]
        if status != 200 or tokens != generator.generate(prompt, steps=12):
            failures.append((prompt, status, tokens))

    prompts = [[1, 2, 3], [7, 7, 7, 7, 7], [42], [5, 4, 3, 2, 1, 0]]
    threads = [threading.Thread(target=one, args=(prompt,)) for prompt in prompts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return failures


def check_bad_requests():
    """(what, status) for each bad request not answered 400, and whether a good
    request is answered after them."""
    client = Client()
    big = np.zeros((1, 1024 * 300), np.float32)
    cases = {
        "not JSON": (b"{inputs", {}),
        "a wrong dtype": infer_body("x", np.ones((1, 1024), np.int64), binary=False),
        "a wrong shape": infer_body("x", np.zeros((1, 1000), np.float32), binary=True),
        "an oversized tensor": infer_body("x", big, binary=True),
        "data short of its shape": (json.dumps({"inputs": [{"name": "x", "datatype": "FP32",
                                                            "shape": [1, 1024],
                                                            "data": [0.5]}]}).encode(), {}),
    }
    failures = []
    for what, (body, headers) in cases.items():
        status, data, _ = client.request("POST", "/v2/models/mlp/infer", body, headers)
        if status != 400 or b"error" not in data:
            failures.append((what, status))
    status, _, _ = client.request("POST", "/v2/models/nosuch/infer", b"{}")
    if status != 404:
        failures.append(("an unknown model", status))
    body, headers = infer_body("x", np.ones((2, 1024), np.float32), binary=False)
    status, _, _ = client.request("POST", "/v2/models/mlp/infer", body, headers)
    return failures, status == 200


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models_dir")
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--clients", type=int, default=16)
    arguments = parser.parse_args()
    worker_cpus = 3
    started = time.perf_counter()
    cluster = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 2, "node_ip_address": HOST, "include_dashboard": False})
    workers = [cluster.add_node(num_cpus=worker_cpus, node_ip_address=HOST) for _ in range(2)]
    ray.init(address=cluster.address, log_to_driver=False, logging_level="error")
    try:
        log(f"cluster of 3 nodes up in {time.perf_counter() - started:.1f} s")
        models_dir = arguments.models_dir
        with open(os.path.join(models_dir, "cnn.onnx"), "rb") as model:
            cnn_bytes = model.read()
        nxrt_serve.deploy([
            nxrt_serve.ModelConfig("mlp", os.path.join(models_dir, "mlp.onnx"), replicas=2,
                                   max_batch_size=8),
            nxrt_serve.ModelConfig("cnn", cnn_bytes, replicas=2),
            nxrt_serve.ModelConfig("decoder", os.path.join(models_dir, "decoder.onnx")),
        ], front=nxrt_serve.FrontConfig(max_request_bytes=1 << 20), host=HOST, port=PORT)
        log(f"3 models served at http://{HOST}:{PORT} after "
            f"{time.perf_counter() - started:.1f} s")

        load = Load(models_dir, arguments.requests, arguments.clients)
        load_thread = threading.Thread(target=load.run)
        load_thread.start()
        fault_errors = []
        try:  # in the main thread: a node is started only from there
            faults(cluster, load, workers, worker_cpus)
        except Exception as error:  # noqa: BLE001 (reported below)
            fault_errors.append(error)
        load_thread.join()
        outcomes = load.outcomes
        log(f"{arguments.requests} requests from {arguments.clients} clients in "
            f"{load.seconds:.1f} s: {outcomes['ok']} right, {outcomes['wrong']} wrong, "
            f"{outcomes['lost']} lost, {outcomes['503']} still 503 after retries; largest "
            f"difference from a local session {load.worst_difference:.2e}")
        generation_failures = check_generation(models_dir)
        log(f"4 concurrent token streams: {len(generation_failures)} differ from a local "
            "Generator")
        bad_failures, still_up = check_bad_requests()
        log(f"bad requests: {len(bad_failures)} not answered as they should be "
            f"{bad_failures}; service {'up' if still_up else 'DOWN'} after them")
    finally:
        serve.shutdown()
        ray.shutdown()
        cluster.shutdown()
    failed = (fault_errors or outcomes["wrong"] or outcomes["lost"] or outcomes["503"] or
              generation_failures or bad_failures or not still_up)
    for error in fault_errors:
        log(f"fault phase failed: {error}")
    log(f"{'FAILED' if failed else 'passed'} in {time.perf_counter() - started:.1f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
