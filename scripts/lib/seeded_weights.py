"""Large random weights kept as a seed instead of as bytes.

The corpus commits exported graphs without their large initializers: each
one becomes an external-data tensor whose location is `nxrt:seeded` and
whose entries give the seed key and the mean and standard deviation of each
slice along the first axis (base64 float32). Per output channel, so a
convolution with a batch normalisation folded into it keeps each channel's
scale. `restore` draws them again with numpy, so a model is rebuilt without
the framework that exported it.

Only tensors that look like random weights are seeded: float32 of rank 2 or
more, at least MIN_ELEMENTS values and MIN_SLICE per slice, all finite, of
many distinct values, and with neighbours that barely correlate. Masks,
position and rotary tables (smooth along their rows) and small tensors stay
in the graph as exported.
"""
import base64
import zlib

import numpy as np
from onnx import TensorProto, numpy_helper

LOCATION = "nxrt:seeded"
MIN_ELEMENTS = 2048
MIN_SLICE = 16
MIN_DISTINCT = 64
MAX_NEIGHBOUR_CORRELATION = 0.5


def draw(seed_key, shape, means, stds):
    """The float32 tensor of `shape` that `seed_key` stands for, slice k of
    its first axis of mean means[k] and standard deviation stds[k]."""
    generator = np.random.default_rng(zlib.crc32(seed_key.encode()))
    values = generator.standard_normal(shape, dtype=np.float32)
    per_slice = (shape[0],) + (1,) * (len(shape) - 1)
    return (values * stds.reshape(per_slice) + means.reshape(per_slice)).astype(np.float32)


def _encode(values):
    return base64.b64encode(values.astype(np.float32).tobytes()).decode()


def _decode(text):
    return np.frombuffer(base64.b64decode(text), np.float32)


def _seedable(tensor):
    if tensor.data_type != TensorProto.FLOAT or tensor.data_location == TensorProto.EXTERNAL:
        return None
    count = int(np.prod(tensor.dims, dtype=np.int64))
    if len(tensor.dims) < 2 or count < MIN_ELEMENTS or count < MIN_SLICE * tensor.dims[0]:
        return None
    values = numpy_helper.to_array(tensor)
    if not np.isfinite(values).all():
        return None
    sample = values.reshape(-1)[:: max(1, values.size // 4096)]
    if np.unique(sample).size < MIN_DISTINCT:
        return None
    flat = values.reshape(-1).astype(np.float64)
    if abs(np.corrcoef(flat[:-1], flat[1:])[0, 1]) > MAX_NEIGHBOUR_CORRELATION:
        return None
    return values


def _graphs(graph):
    yield graph
    for node in graph.node:
        for attribute in node.attribute:
            if attribute.HasField("g"):
                yield from _graphs(attribute.g)
            for body in attribute.graphs:
                yield from _graphs(body)


def strip(model, prefix):
    """Replaces each seedable initializer of `model` (in place, subgraphs
    included) by its seed; `prefix` (the model's name) keeps the seeds of two
    models apart. Returns how many bytes were left out."""
    left_out = 0
    for graph in _graphs(model.graph):
        for tensor in graph.initializer:
            values = _seedable(tensor)
            if values is None:
                continue
            rows = values.reshape(values.shape[0], -1).astype(np.float64)
            left_out += values.nbytes
            tensor.ClearField("raw_data")
            tensor.ClearField("float_data")
            tensor.data_location = TensorProto.EXTERNAL
            del tensor.external_data[:]
            for key, value in (("location", LOCATION), ("seed_key", f"{prefix}/{tensor.name}"),
                               ("means", _encode(rows.mean(axis=1))),
                               ("stds", _encode(rows.std(axis=1)))):
                entry = tensor.external_data.add()
                entry.key, entry.value = key, value
    return left_out


def restore(model):
    """Draws every seeded initializer of `model` (in place) from its seed."""
    for graph in _graphs(model.graph):
        for tensor in graph.initializer:
            entries = {e.key: e.value for e in tensor.external_data}
            if tensor.data_location != TensorProto.EXTERNAL or entries.get("location") != LOCATION:
                continue
            values = draw(entries["seed_key"], tuple(tensor.dims), _decode(entries["means"]),
                          _decode(entries["stds"]))
            del tensor.external_data[:]
            tensor.data_location = TensorProto.DEFAULT
            tensor.raw_data = values.tobytes()
    return model
