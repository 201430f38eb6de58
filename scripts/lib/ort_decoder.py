"""The greedy loop `nxrt generate` runs, on onnxruntime, fed the same way.

nxrt reports how it placed a decoder's inputs (`nxrt generate --json`,
"decoder": the token ids, attention mask, position ids and cache position
by name, and each KV past with its present and growing axis; the batch is
the past's other symbolic axis).
OrtDecoder feeds onnxruntime by those roles with nxrt's conventions: a batch
of prompts left-padded with id 0, the padding masked out and given position
1, each row's real tokens counted from 0, the cache position the absolute
column. A past with a static growing axis is a fixed-capacity cache: it is
bound once as one OrtValue for past and present, and the mask spans the
capacity, ones over the valid tokens.
"""
import time

import numpy as np
import onnxruntime as ort

PADDING_TOKEN = 0
ORT_DTYPES = {"tensor(float)": np.float32, "tensor(float16)": np.float16}


class OrtDecoder:
    def __init__(self, model_path, roles, batch, threads=1):
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.log_severity_level = 3
        self.session = ort.InferenceSession(model_path, options, providers=["CPUExecutionProvider"])
        self.roles = roles
        self.batch = batch
        inputs = {i.name: i for i in self.session.get_inputs()}
        first = roles["kv"][0]
        capacity = inputs[first["past"]].shape[first["past_axis"]]
        self.capacity = _extent(capacity)
        self.inputs = inputs
        self.reset()

    def reset(self):
        """Empties the cache for a new prompt on the same session."""
        roles, batch = self.roles, self.batch
        inputs = self.inputs
        self.cache = {}
        for kv in roles["kv"]:
            past = inputs[kv["past"]]
            dims = [_extent(d) for d in past.shape]
            # The batch is the symbolic axis besides the growing one; none where it is static.
            for axis, extent in enumerate(dims):
                if extent is None and axis != kv["past_axis"]:
                    dims[axis] = batch
            dims[kv["past_axis"]] = self.capacity or 0
            self.cache[kv["past"]] = ort.OrtValue.ortvalue_from_numpy(
                np.zeros(dims, ORT_DTYPES[past.type]))
        self.padding = [0] * batch
        self.length = 0
        self.run_seconds = []  # of each run_with_iobinding call, for timing

    def prefill(self, prompts):
        """Runs the left-padded prompts; answers each row's last logits [batch, vocab]."""
        longest = max(len(p) for p in prompts)
        self.padding = [longest - len(p) for p in prompts]
        ids = np.array([[PADDING_TOKEN] * pad + list(p) for pad, p in zip(self.padding, prompts)],
                       np.int64)
        return self._run(ids)

    def step(self, tokens):
        """Runs one token per row after the cached ones; answers [batch, vocab]."""
        return self._run(np.array(tokens, np.int64).reshape(self.batch, 1))

    def _run(self, ids):
        roles = self.roles
        binding = self.session.io_binding()
        for name, value in index_feeds(roles, ids, self.padding, self.length, self.capacity).items():
            binding.bind_cpu_input(name, value)
        for kv in roles["kv"]:
            value = self.cache[kv["past"]]
            binding.bind_ortvalue_input(kv["past"], value)
            if self.capacity:
                binding.bind_ortvalue_output(kv["present"], value)
            else:
                binding.bind_output(kv["present"])
        binding.bind_output(roles["logits"])
        start = time.perf_counter()
        self.session.run_with_iobinding(binding)
        self.run_seconds.append(time.perf_counter() - start)
        *presents, logits = binding.get_outputs()  # in the order bound
        if not self.capacity:
            self.cache = dict(zip(self.cache, presents))
        self.length += ids.shape[1]
        return logits.numpy()[:, -1].copy()


def index_feeds(roles, ids, padding, length, capacity=None):
    """The token ids [batch, n] fed after `length` cached columns, with the mask, position ids
    and cache position the roles name, for rows left-padded by `padding` columns each."""
    total = length + ids.shape[1]
    feeds = {roles["input_ids"]: ids}
    if roles["attention_mask"]:
        columns = np.arange(capacity or total)
        mask = np.stack([(columns >= pad) & (columns < total) for pad in padding])
        feeds[roles["attention_mask"]] = mask.astype(np.int64)
    columns = np.arange(length, total)
    if roles["position_ids"]:
        positions = np.stack([np.where(columns < pad, 1, columns - pad) for pad in padding])
        feeds[roles["position_ids"]] = positions.astype(np.int64)
    if roles["cache_position"]:
        feeds[roles["cache_position"]] = columns.astype(np.int64)
    return feeds


def _extent(dim):
    """A declared extent as a number (exporters write some as digit strings); None for a symbol."""
    if isinstance(dim, int):
        return dim
    return int(dim) if isinstance(dim, str) and dim.isdigit() else None


def greedy(decoder, prompts, steps):
    """Greedy tokens per row: one from the prefill, then one per step; and each run's logits."""
    logits = [decoder.prefill(prompts)]
    tokens = [[int(t)] for t in logits[-1].argmax(-1)]
    for _ in range(steps):
        logits.append(decoder.step([row[-1] for row in tokens]))
        for row, token in zip(tokens, logits[-1].argmax(-1)):
            row.append(int(token))
    return tokens, logits
