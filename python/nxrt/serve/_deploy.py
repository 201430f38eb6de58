"""deploy(): the front and one application per model, onto a Ray cluster.

Each model is its own Serve application (nxrt-model-{name}) with no HTTP
route; the front (application "nxrt", route "/") reaches it by handle. So
the front answers from the start, and a model still loading is answered
503 rather than left waiting. deploy() returns once every model is ready,
or raises with the one-line reason a model could not be made.
"""

import time

import ray
from ray import serve

from nxrt.serve._config import FrontConfig
from nxrt.serve._front import Front, app_name_of
from nxrt.serve._replica import ModelReplica

# Ray Serve's own per-request cost, lowered for the replicas: their user code
# never blocks the event loop (runs go to a worker thread), so it shares the
# replica's loop instead of hopping to a thread of its own, and access logs
# are written in batches.
_REPLICA_ENVIRONMENT = {"env_vars": {"RAY_SERVE_RUN_USER_CODE_IN_SEPARATE_THREAD": "0",
                                     "RAY_SERVE_REQUEST_PATH_LOG_BUFFER_SIZE": "1000"}}


def _replica_app(config):
    model = config.model
    if isinstance(model, (bytes, bytearray, memoryview)):
        model = ray.put(bytes(model))
    deployment = ModelReplica.options(
        num_replicas=config.replicas,
        max_ongoing_requests=config.max_ongoing_requests,
        ray_actor_options={"num_cpus": config.threads, "runtime_env": _REPLICA_ENVIRONMENT},
    )
    return deployment.bind(config, model)


def deploy(models, front=None, host="127.0.0.1", port=8000, proxy_location="HeadOnly",
           timeout_s=300.0):
    """Serves `models` (ModelConfigs) on the Ray cluster ray.init() joined,
    and returns the URL of the front once every model is ready.
    proxy_location: Ray Serve's, "HeadOnly" or "EveryNode" (one proxy per
    node, each on `port`, for a cluster of several machines)."""
    front = front or FrontConfig()
    names = [model.name for model in models]
    if len(set(names)) != len(names):
        raise ValueError(f"two models share a name: {', '.join(sorted(names))}")
    for model in models:
        model.check()
    wanted = sum(model.replicas * model.threads for model in models)
    cpus = ray.cluster_resources().get("CPU", 0)
    if wanted > cpus:
        raise ValueError(f"the replicas ask for {wanted} CPUs (replicas x threads) and the Ray "
                         f"cluster has {cpus:g}; serve fewer replicas or threads, or add nodes")
    serve.start(http_options={"host": host, "port": port, "location": proxy_location})
    placement = {"num_cpus": 0, "runtime_env": _REPLICA_ENVIRONMENT}
    if front.on_head_node:
        placement["resources"] = {"node:__internal_head__": 0.001}
    # The front only awaits its replicas; a bound on what it holds in flight
    # would only queue requests in the proxy.
    targets = [serve.RunTarget(Front.options(num_replicas=front.replicas,
                                             max_ongoing_requests=front.max_ongoing_requests,
                                             ray_actor_options=placement)
                               .bind(names, front), name="nxrt", route_prefix="/")]
    targets += [serve.RunTarget(_replica_app(model), name=app_name_of(model.name),
                                route_prefix=None) for model in models]
    serve.run_many(targets, wait_for_applications_running=False)
    deadline = time.monotonic() + timeout_s
    wait_until_running([target.name for target in targets], timeout_s)
    loading = serve.get_app_handle("nxrt").loading.remote(
        max(deadline - time.monotonic(), 1.0)).result()
    if loading:
        raise RuntimeError(f"not ready after {timeout_s:g} s: {', '.join(loading)}")
    return f"http://{host}:{port}"


def wait_until_running(app_names, timeout_s):
    """Returns once each application runs; raises RuntimeError with the
    reason one failed, or after timeout_s."""
    deadline = time.monotonic() + timeout_s
    while True:
        applications = serve.status().applications
        waiting = []
        for name in app_names:
            status = applications.get(name)
            if status is not None and status.status == "DEPLOY_FAILED":
                raise RuntimeError(f"{name} could not be deployed: {_first_line(status.message)}")
            if status is None or status.status != "RUNNING":
                waiting.append(name)
        if not waiting:
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"not running after {timeout_s:g} s: {', '.join(waiting)}")
        time.sleep(0.2)


def _first_line(message):
    """The error of a failed replica, which Ray wraps in a traceback."""
    lines = [line.strip() for line in (message or "").splitlines() if line.strip()]
    for line in reversed(lines):
        if line.startswith(("nxrt.", "ValueError", "onnxruntime")) or "Error:" in line:
            return line
    return lines[-1] if lines else "no reason given"
