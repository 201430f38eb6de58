"""Generator: what `nxrt generate` does, from Python.

A decoder under ONNX Runtime GenAI's names (input_ids, attention_mask,
past_key_values.N.key/value -> logits, present.N.key/value) is run through
an IOBinding: a prefill of the prompt, then one token a step, greedy, each
step on the primary device-graph slot, as `nxrt generate` runs it.

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
        inputs = {value.name: value for value in self.session.get_inputs()}
        outputs = {value.name: value for value in self.session.get_outputs()}
        problems = []

        def expect(table, kind, name, type_, rank):
            value = table.get(name)
            if value is None:
                problems.append(f"no {kind} '{name}'")
            elif value.type != type_ or value.shape is None or len(value.shape) != rank:
                problems.append(f"{kind} '{name}' is not {type_} of rank {rank}")
            else:
                return value
            return None

        expect(inputs, "input", "input_ids", "tensor(int64)", 2)
        expect(inputs, "input", "attention_mask", "tensor(int64)", 2)
        self._pasts, self._presents = [], []
        layer = 0
        while layer == 0 or f"past_key_values.{layer}.key" in inputs:
            for part in ("key", "value"):
                past = expect(inputs, "input", f"past_key_values.{layer}.{part}",
                              "tensor(float)", 4)
                expect(outputs, "output", f"present.{layer}.{part}", "tensor(float)", 4)
                if past is not None:
                    self._pasts.append(past)
                self._presents.append(f"present.{layer}.{part}")
            layer += 1
        logits = expect(outputs, "output", "logits", "tensor(float)", 3)
        unknown = sorted(set(inputs) - {"input_ids", "attention_mask"} -
                         {past.name for past in self._pasts})
        problems += [f"input '{name}' that the generator cannot feed" for name in unknown]
        if logits is not None and _static(logits.shape[2]) is None:
            problems.append("output 'logits' has no numeric vocabulary size")
        if problems:
            raise _nxrt.InvalidArgument("not a decoder the generator can drive: " +
                                        "; ".join(problems))
        shape = self._pasts[0].shape
        if _static(shape[1]) is None or _static(shape[3]) is None:
            raise _nxrt.InvalidArgument("the pasts have no numeric KV-head count and head size")
        self._kv_shape = (1, shape[1], _static(shape[2]), shape[3])
        self.capacity = _static(shape[2])  # None where the cache grows
        self.vocab = logits.shape[2]

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
        if fixed:
            pasts = [np.zeros(self._kv_shape, np.float32) for _ in self._pasts]
            mask = np.zeros((1, self.capacity), np.int64)
            mask[0, :len(prompt)] = 1
            binding.bind_input("attention_mask", mask)
            step_logits = np.empty((1, 1, self.vocab), np.float32)
            binding.bind_output("logits", step_logits)
        else:
            step_logits = None
            empty = (1, self._kv_shape[1], 0, self._kv_shape[3])
            pasts = [np.zeros(empty, np.float32) for _ in self._pasts]
            binding.bind_input("attention_mask", np.ones((1, len(prompt)), np.int64))
            binding.bind_output("logits")
            for present in self._presents:
                binding.bind_output(present)
        for past, array in zip(self._pasts, pasts):
            binding.bind_input(past.name, array)

        start = time.perf_counter()
        binding.bind_input("input_ids", np.array([prompt], np.int64))
        last = self._run(binding, fixed, None)
        self.prefill_seconds = time.perf_counter() - start
        self.step_seconds = []
        yield last

        token_ids = np.zeros((1, 1), np.int64)
        binding.bind_input("input_ids", token_ids)
        total = len(prompt) + 1  # the sequence so far, its last token not yet fed
        for _ in range(steps):
            if last in stop_tokens or (limit is not None and total + 1 > limit):
                return
            start = time.perf_counter()
            token_ids[0, 0] = last
            if fixed:
                mask[0, total - 1] = 1
            else:
                binding.bind_input("attention_mask", np.ones((1, total), np.int64))
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
            for past, present in zip(self._pasts, outputs[1:]):
                binding.bind_input(past.name, present)
        return int(np.argmax(outputs[0][0, -1]))
