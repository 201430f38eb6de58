"""Generator: what `nxrt generate` does, from Python.

A decoder is fed by the roles the session reads from its graph (the token
ids, attention mask, position ids, cache position, and each KV past paired
with the present that extends it), whatever the exporter named them:
Optimum's past_key_values.N.key -> present.N.key, transformers' dynamo
past_key_values.layers.N.keys -> cache.layers.N.keys, ONNX Runtime GenAI's
form. It runs through an IOBinding: a prefill of the prompt, then one token
a step, greedy, each step on the primary device-graph slot, as
`nxrt generate` runs it.

Where the pasts have a static capacity (a fixed-capacity cache), the session
is made with "nxrt.fixed_capacity_kv": the past arrays are bound once and
the session writes each step's rows into them in place, so nothing is copied
and their addresses hold for device-graph replay. Where the pasts grow, each
run's presents are bound as the next run's pasts without a copy.
"""

import time

import numpy as np

from nxrt import _nxrt
from nxrt._nxrt import RunOptions
from nxrt._options import SessionOptions
from nxrt._session import InferenceSession


def _static(dim):
    return dim if isinstance(dim, int) else None


class Generator:
    def __init__(self, model, providers=None, sess_options=None):
        options = sess_options if sess_options is not None else SessionOptions()
        options.add_session_config_entry("nxrt.fixed_capacity_kv", "1")
        self.session = InferenceSession(model, options, providers)
        self._discover()
        self._step_options = RunOptions()
        self._step_options.device_graph_slot = "primary"
        self.step_seconds = []  # per decode step of the last generate()
        self.prefill_seconds = 0.0

    def _discover(self):
        roles = self.session._decoder_signature()
        if roles["problems"]:
            raise _nxrt.InvalidArgument("not a decoder the generator can drive: " +
                                        "; ".join(roles["problems"]))
        inputs = {value.name: value for value in self.session.get_inputs()}
        outputs = {value.name: value for value in self.session.get_outputs()}
        self._roles = roles
        self._pasts = []  # (name, shape with the batch 1 and the growing axis at 0, axis)
        for past, _, axis in roles["kv"]:
            shape = [1 if _static(d) is None else _static(d) for d in inputs[past].shape]
            shape[axis] = 0
            self._pasts.append((past, shape, axis))
        self._presents = [present for _, present, _ in roles["kv"]]
        past, _, axis = roles["kv"][0]
        self.capacity = _static(inputs[past].shape[axis])  # None where the cache grows
        self.vocab = _static(outputs[roles["logits"]].shape[2])
        if self.vocab is None:
            raise _nxrt.InvalidArgument(f"output '{roles['logits']}' has no numeric vocabulary size")

    def _bind_positions(self, binding, columns):
        """Binds `columns`, the positions of the tokens fed, as the position ids [1, n] and
        the cache position [n]; both views share it, so a step updates them in place."""
        if self._roles["position_ids"]:
            binding.bind_input(self._roles["position_ids"], columns.reshape(1, -1))
        if self._roles["cache_position"]:
            binding.bind_input(self._roles["cache_position"], columns)

    def generate(self, prompt, steps=32, stop_tokens=(), max_len=None):
        """The prompt's next token and up to `steps` more, greedy (highest logit, lowest id
        on a tie), stopping after a token in `stop_tokens` or at `max_len` tokens in all."""
        return list(self.stream(prompt, steps, stop_tokens, max_len))

    def stream(self, prompt, steps=32, stop_tokens=(), max_len=None):
        """generate() one token at a time: an iterator that runs the prefill at its
        first next() and one decode step at each next() after. Each stream holds
        its own KV cache, so several may be open on one Generator at once."""
        prompt = [int(token) for token in prompt]
        if not prompt:
            raise _nxrt.InvalidArgument("the prompt has no tokens")
        if self.capacity is not None and len(prompt) > self.capacity:
            raise _nxrt.InvalidArgument(
                f"the KV cache holds {self.capacity} tokens, too few for the prompt's {len(prompt)}")
        return self._tokens(prompt, steps, stop_tokens,
                            self.capacity if max_len is None else max_len)

    def _tokens(self, prompt, steps, stop_tokens, limit):
        binding = self.session.io_binding()
        fixed = self.capacity is not None
        mask_name, logits_name = self._roles["attention_mask"], self._roles["logits"]
        if fixed:
            mask = np.zeros((1, self.capacity), np.int64)
            mask[0, :len(prompt)] = 1
            step_logits = np.empty((1, 1, self.vocab), np.float32)
            binding.bind_output(logits_name, step_logits)
        else:
            mask = np.ones((1, len(prompt)), np.int64)
            step_logits = None
            binding.bind_output(logits_name)
            for present in self._presents:
                binding.bind_output(present)
        if mask_name:
            binding.bind_input(mask_name, mask)
        for past, shape, axis in self._pasts:
            if fixed:
                shape = list(shape)
                shape[axis] = self.capacity
            binding.bind_input(past, np.zeros(shape, np.float32))

        start = time.perf_counter()
        binding.bind_input(self._roles["input_ids"], np.array([prompt], np.int64))
        self._bind_positions(binding, np.arange(len(prompt), dtype=np.int64))
        last = self._run(binding, fixed, None)
        self.prefill_seconds = time.perf_counter() - start
        self.step_seconds = []
        yield last

        token_ids = np.zeros((1, 1), np.int64)
        binding.bind_input(self._roles["input_ids"], token_ids)
        position = np.zeros(1, np.int64)
        self._bind_positions(binding, position)
        total = len(prompt) + 1  # the sequence so far, its last token not yet fed
        for _ in range(steps):
            if last in stop_tokens or (limit is not None and total + 1 > limit):
                return
            start = time.perf_counter()
            token_ids[0, 0] = last
            position[0] = total - 1
            if fixed:
                mask[0, total - 1] = 1
            elif mask_name:
                binding.bind_input(mask_name, np.ones((1, total), np.int64))
            last = self._run(binding, fixed, self._step_options, step_logits)
            self.step_seconds.append(time.perf_counter() - start)
            total += 1
            yield last

    def _run(self, binding, fixed, run_options, step_logits=None):
        self.session.run_with_iobinding(binding, run_options)
        if step_logits is not None:  # a fixed-form step writes its logits there
            return int(step_logits.argmax())
        outputs = binding.get_outputs()
        if not fixed:
            for (past, _, _), present in zip(self._pasts, outputs[1:]):
                binding.bind_input(past, present)
        return int(np.argmax(outputs[0][0, -1]))
