"""Front: the one HTTP ingress, at route "/", that speaks the protocol.

It parses the path, answers health and server metadata itself, and hands
a model's requests to that model's replicas through a deployment handle,
as bytes: the replica decodes, runs and encodes. A request whose replica
dies or cannot be reached is sent again, to another replica, until
FrontConfig.retry_seconds pass; then it is answered 503. Inference is
idempotent, so a retried request gives the answer it would have given.
A model whose replicas are still being made is answered 503 as loading.
"""

import asyncio
import json

import ray.exceptions
from ray import serve
from ray.serve import exceptions as serve_exceptions
from starlette.responses import Response, StreamingResponse

import nxrt
from nxrt.serve import _routes
from nxrt.serve._model_server import Reply, error_reply

_UNREACHABLE = (ray.exceptions.RayActorError, serve_exceptions.BackPressureError,
                serve_exceptions.DeploymentUnavailableError,
                serve_exceptions.ReplicaUnavailableError)


def _response(reply):
    return Response(reply.body, status_code=reply.status, headers=reply.headers)


def app_name_of(model):
    return f"nxrt-model-{model}"


@serve.deployment
class Front:
    def __init__(self, models, config):
        self._config = config
        self._handles = {name: serve.get_deployment_handle("ModelReplica", app_name_of(name))
                         for name in models}
        self._ready = set()
        self._watchers = None

    def _watch(self):
        """Starts one task per model that marks it ready once a replica answers."""
        if self._watchers is None:
            self._watchers = [asyncio.ensure_future(self._watch_model(name))
                              for name in self._handles]

    async def _watch_model(self, name):
        while True:
            try:
                await asyncio.wait_for(self._handles[name].ready.remote(), 5.0)
                self._ready.add(name)
                return
            except Exception:  # noqa: BLE001 (not deployed yet, or still loading)
                await asyncio.sleep(0.2)

    async def loading(self, timeout_s):
        """The models not yet ready after waiting up to timeout_s for them."""
        self._watch()
        await asyncio.wait(self._watchers, timeout=timeout_s)
        return sorted(set(self._handles) - self._ready)

    async def __call__(self, request):
        self._watch()
        route = _routes.parse(request.method, request.url.path)
        if not isinstance(route, _routes.Route):
            return _response(error_reply(*route))
        if route.model is None:
            return _response(self._server_reply(route.action))
        if route.model not in self._handles:
            served = ", ".join(sorted(self._handles)) or "none"
            return _response(error_reply(404, f"no model '{route.model}'; served: {served}"))
        if route.model not in self._ready:
            reply = error_reply(503, f"model '{route.model}' is loading; retry shortly")
            reply.headers["retry-after"] = "1"
            return _response(reply)
        if route.action == "model_ready":
            return _response(Reply(200, json.dumps({"name": route.model, "ready": True}).encode()))
        if route.action == "metadata":
            return _response(await self._call(route.model, "metadata"))
        body = await self._body(request)
        if isinstance(body, Reply):
            return _response(body)
        if route.action == "infer":
            length = request.headers.get("inference-header-content-length")
            if length is not None and not length.isdigit():
                return _response(error_reply(400, "Inference-Header-Content-Length is a byte "
                                                  f"count, not {length!r}"))
            return _response(await self._call(route.model, "infer", body,
                                              None if length is None else int(length)))
        if route.action == "generate":
            return _response(await self._call(route.model, "generate", body))
        return await self._stream(route.model, body)

    def _server_reply(self, action):
        if action == "live":
            return Reply(200, b'{"live": true}')
        if action == "ready":
            waiting = sorted(set(self._handles) - self._ready)
            if waiting:
                return error_reply(503, f"loading: {', '.join(waiting)}")
            return Reply(200, b'{"ready": true}')
        return Reply(200, json.dumps({"name": "nxrt", "version": nxrt.__version__,
                                      "extensions": ["binary_tensor_data", "generate"]}).encode())

    async def _body(self, request):
        limit = self._config.max_request_bytes
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            return error_reply(400, f"the request's {declared} bytes are over the server's "
                                    f"limit of {limit}; send fewer or smaller tensors")
        body = await request.body()
        if len(body) > limit:
            return error_reply(400, f"the request's {len(body)} bytes are over the server's "
                                    f"limit of {limit}; send fewer or smaller tensors")
        return body

    async def _call(self, model, method, *args):
        """The model's Reply to `method`, tried again on another replica while
        the one it reached is gone, until retry_seconds pass."""
        return await self._retrying(model, lambda: getattr(self._handles[model], method)
                                    .remote(*args))

    async def _retrying(self, model, attempt):
        loop = asyncio.get_running_loop()
        deadline, delay = loop.time() + self._config.retry_seconds, 0.05
        while True:
            try:
                return await attempt()
            except _UNREACHABLE as error:
                if loop.time() + delay > deadline:
                    return error_reply(503, f"model '{model}': no replica answered within "
                                            f"{self._config.retry_seconds:g} s "
                                            f"({type(error).__name__}); retry later")
                await asyncio.sleep(delay)
                delay = min(delay * 2, 1.0)

    async def _stream(self, model, body):
        handle = self._handles[model].options(stream=True)
        holder = {}

        async def first():
            holder["events"] = handle.generate_stream.remote(body)
            return await holder["events"].__anext__()

        head = await self._retrying(model, first)
        if head.status != 200 or "events" not in holder:
            return _response(head)

        async def events():
            try:
                async for chunk in holder["events"]:
                    yield chunk
            except _UNREACHABLE as error:
                yield b"data: " + json.dumps({"error": f"model '{model}': the replica was lost "
                                             f"mid-stream ({type(error).__name__})"}).encode() \
                    + b"\n\n"

        return StreamingResponse(events(), status_code=200, headers=head.headers)

