"""ModelServer: one model behind the Open Inference Protocol, without Ray.

It holds one InferenceSession and turns protocol request bodies into
protocol responses: metadata, inference (alone or as a dynamic batch) and
generation. Every answer is a Reply (status, body, headers); nothing it is
sent raises, so a bad request cannot take the process that holds it down.

The runtime is a module with onnxruntime's Python API: nxrt, or onnxruntime
itself, so the same serving code measures both.
"""

import importlib
import json

import numpy as np

import nxrt
from nxrt import inference_protocol
from nxrt.serve import _batching

JSON = {"content-type": "application/json"}


class Reply:
    """A protocol answer: HTTP status, body bytes and headers."""

    __slots__ = ("status", "body", "headers")

    def __init__(self, status, body, headers=None):
        self.status = status
        self.body = body
        self.headers = dict(JSON if headers is None else headers)

    def __reduce__(self):
        return (Reply, (self.status, self.body, self.headers))


def error_reply(status, message):
    return Reply(status, inference_protocol.error_body(message))


class _Outcome:
    """What one decoded request becomes: a Reply, or the outputs of its run."""

    def __init__(self, request=None, reply=None):
        self.request = request
        self.reply = reply


class ModelServer:
    """One model, one session. `config` is a ModelConfig."""

    def __init__(self, config, model):
        self.name = config.name
        self._runtime = importlib.import_module(config.runtime)
        self._client_errors = _client_error_types(self._runtime)
        options = self._runtime.SessionOptions()
        options.intra_op_num_threads = config.threads
        if config.runtime == "onnxruntime":
            options.inter_op_num_threads = 1
            if config.memory_limit_bytes:
                raise ValueError("memory_limit_bytes is an nxrt session option; onnxruntime "
                                 "has none, so leave it unset for the onnxruntime runtime")
        elif config.memory_limit_bytes:
            options.memory_limit_bytes = config.memory_limit_bytes
        self.session = self._runtime.InferenceSession(model, options, providers=config.providers)
        self._model = model
        self._providers = config.providers
        self._threads = config.threads
        self._metadata = json.dumps(inference_protocol.model_metadata(
            self.name, self.session)).encode()
        self.batch_dim = _batching.batch_dim_of(self.session)
        self._output_names = [value.name for value in self.session.get_outputs()]
        self._generator = None
        self._generator_error = None
        if self.batch_dim and config.max_batch_size > 1:
            self._warm(config.max_batch_size)

    def _warm(self, max_batch_size):
        """Runs every batch size once on zeros, so that no request waits while
        the runtime makes its kernels for a batch size it has not seen. Only
        where the batch dim is the inputs' one unknown dim."""
        feeds = {}
        for value in self.session.get_inputs():
            dtype = inference_protocol.numpy_dtype_of(value.type)
            if dtype is None or not all(isinstance(dim, int) for dim in value.shape[1:]):
                return
            feeds[value.name] = (dtype, value.shape[1:])
        for rows in range(1, max_batch_size + 1):
            try:
                self.session.run(None, {name: np.zeros((rows, *shape), dtype)
                                        for name, (dtype, shape) in feeds.items()})
            except Exception:  # noqa: BLE001 (zeros may not be a valid input; requests still are)
                return

    def metadata(self):
        return Reply(200, self._metadata)

    def infer(self, body, header_length=None):
        return self.infer_many([(body, header_length)])[0]

    def infer_many(self, requests):
        """One Reply per (body, header_length), the compatible ones run as one
        batch along the batch dim where the model has one."""
        outcomes = [self._decode(body, length) for body, length in requests]
        pending = [index for index, outcome in enumerate(outcomes) if outcome.reply is None]
        decoded = [outcomes[index].request for index in pending]
        groups = _batching.plan(decoded) if self.batch_dim else [[i] for i in range(len(pending))]
        for group in groups:
            members = [decoded[i] for i in group]
            for position, reply in zip(group, self._run_group(members)):
                outcomes[pending[position]].reply = reply
        return [outcome.reply for outcome in outcomes]

    def _decode(self, body, header_length):
        try:
            return _Outcome(request=inference_protocol.decode_request(
                body, self.session, header_length))
        except Exception as error:  # noqa: BLE001 (a protocol answer, whatever went wrong)
            return _Outcome(reply=self.reply_to_error(error))

    def _run_group(self, members):
        try:
            outputs = self.session.run(members[0].outputs, _batching.stack(members))
        except Exception as error:  # noqa: BLE001
            if len(members) == 1:
                return [self.reply_to_error(error)]
            return [reply for member in members for reply in self._run_group([member])]
        rows = sum(next(iter(member.feeds.values())).shape[0] for member in members)
        if len(members) > 1 and any(np.ndim(output) == 0 or np.shape(output)[0] != rows
                                    for output in outputs):
            # The outputs do not follow the batch dim after all: run one by one.
            return [reply for member in members for reply in self._run_group([member])]
        names = members[0].outputs or self._output_names
        return [self._encode(member, names, parts)
                for member, parts in zip(members, _batching.split(members, outputs))]

    def _encode(self, request, names, arrays):
        try:
            body, header_length = inference_protocol.encode_response(
                self.name, request, names, arrays)
        except Exception as error:  # noqa: BLE001
            return self.reply_to_error(error)
        headers = dict(JSON)
        if header_length is not None:
            headers = {"content-type": "application/octet-stream",
                       "inference-header-content-length": str(header_length)}
        return Reply(200, body, headers)

    def reply_to_error(self, error):
        """The protocol answer to `error`: 400 where the request was wrong, 500 else."""
        status = 400 if isinstance(error, self._client_errors) else 500
        return error_reply(status, _one_line(error))

    # Generation (decoders only).

    def generation_request(self, body):
        """(Generator, prompt, steps, stop tokens) for a generate request, or a
        Reply that refuses it."""
        generator = self._decoder()
        if generator is None:
            return error_reply(400, f"model '{self.name}' cannot generate: "
                                    f"{self._generator_error}")
        try:
            request = json.loads(bytes(body))
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            return error_reply(400, f"the request is not JSON: {error}")
        prompt = request.get("input_ids") if isinstance(request, dict) else None
        if not isinstance(prompt, list) or not prompt or not all(
                isinstance(token, int) and 0 <= token < generator.vocab for token in prompt):
            return error_reply(400, "'input_ids' is a list of one or more token ids, each 0 or "
                                    f"more and under the vocabulary size {generator.vocab}")
        parameters = request.get("parameters") or {}
        steps = parameters.get("max_tokens", 32)
        stops = parameters.get("stop_token_ids", [])
        if not isinstance(steps, int) or steps < 0:
            return error_reply(400, "parameters.max_tokens is a count of 0 or more")
        if not isinstance(stops, list) or not all(isinstance(token, int) for token in stops):
            return error_reply(400, "parameters.stop_token_ids is a list of token ids")
        return generator, prompt, steps, stops

    def _decoder(self):
        if self._generator is None and self._generator_error is None:
            if self._runtime.__name__ != "nxrt":
                self._generator_error = "generation runs on the nxrt runtime"
                return None
            try:
                options = self._runtime.SessionOptions()
                options.intra_op_num_threads = self._threads
                self._generator = self._runtime.Generator(self._model, self._providers, options)
            except Exception as error:  # noqa: BLE001
                self._generator_error = _one_line(error)
        return self._generator


def _client_error_types(runtime):
    """The exceptions that mean the request was wrong (status 400): the
    protocol codec's, and the runtime's refusals of an input."""
    if runtime.__name__ == "nxrt":
        return (runtime.InvalidArgument, runtime.OutOfMemory)
    from onnxruntime.capi import onnxruntime_pybind11_state as state  # noqa: PLC0415
    return (nxrt.InvalidArgument, state.InvalidArgument)


def _one_line(error):
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__
