"""ModelReplica: the Ray Serve deployment that holds a ModelServer.

Ray Serve runs `replicas` of it, anywhere in the cluster. Each makes its
session once, from a path or from bytes in Ray's object store, and runs
one request (or one batch) at a time on its own worker thread, so the
event loop keeps taking requests, and forming the next batch, meanwhile.
A generation streams tokens, and several streams interleave step by step.
"""

import asyncio
import concurrent.futures
import json

import ray
from ray import serve

from nxrt.serve._model_server import ModelServer, Reply

_END = object()


def _sse(payload):
    return b"data: " + json.dumps(payload).encode() + b"\n\n"


@serve.deployment
class ModelReplica:
    def __init__(self, config, model):
        if isinstance(model, ray.ObjectRef):
            model = ray.get(model)
        self._executor = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="nxrt-run")
        self._server = ModelServer(config, model)
        self._batching = config.max_batch_size > 1 and self._server.batch_dim is not None
        self._batched.set_max_batch_size(config.max_batch_size)
        self._batched.set_batch_wait_timeout_s(config.batch_wait_timeout_s)

    async def _on_worker(self, function, *args):
        return await asyncio.get_running_loop().run_in_executor(self._executor, function, *args)

    def ready(self):
        return True

    def metadata(self):
        return self._server.metadata()

    async def infer(self, body, header_length=None):
        if self._batching:
            return await self._batched((body, header_length))
        return await self._on_worker(self._server.infer, body, header_length)

    @serve.batch(max_batch_size=8, batch_wait_timeout_s=0.01)
    async def _batched(self, requests):
        return await self._on_worker(self._server.infer_many, requests)

    async def generate(self, body):
        """The whole generation as one JSON reply."""
        tokens, finish = [], None
        async for event in self._tokens(body):
            if isinstance(event, Reply):
                return event
            token, finish = event
            if token is not None:
                tokens.append(token)
        return Reply(200, json.dumps({"model_name": self._server.name, "output_ids": tokens,
                                      "finish_reason": finish}).encode())

    async def generate_stream(self, body):
        """A Reply with the stream's status first, then server-sent events:
        one per token, and a last one with the finish reason."""
        started = False
        async for event in self._tokens(body):
            if isinstance(event, Reply):
                if started:
                    yield _sse({"error": json.loads(event.body)["error"]})
                else:
                    yield event
                return
            if not started:
                started = True
                yield Reply(200, b"", {"content-type": "text/event-stream"})
            token, finish = event
            payload = {"model_name": self._server.name}
            payload.update({"token_id": token} if token is not None else
                           {"finish_reason": finish})
            yield _sse(payload)

    async def _tokens(self, body):
        """(token, None) per token then (None, finish reason), or one Reply
        where the request is refused or the run fails."""
        request = await self._on_worker(self._server.generation_request, body)
        if isinstance(request, Reply):
            yield request
            return
        generator, prompt, steps, stops = request
        try:
            tokens = await self._on_worker(generator.stream, prompt, steps, stops)
            last = None
            while (token := await self._on_worker(next, tokens, _END)) is not _END:
                last = token
                yield token, None
        except Exception as error:  # noqa: BLE001 (answered, the replica stays up)
            yield self._server.reply_to_error(error)
            return
        yield None, "stop" if last in stops else "length"
