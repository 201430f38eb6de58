"""Dynamic batching: requests stacked along the model's batch dim, one run,
and each request's rows handed back to it.

A model is batchable when every input and every output has the same
symbolic dim first (the batch dim, "batch" or "N" or whatever the exporter
called it). Requests are stacked only when they agree on everything else:
the inputs they send, each input's dtype and trailing dims, and the outputs
they ask for. Each output is then split at the requests' row counts.
"""

import numpy as np


def batch_dim_of(session):
    """The name of the symbolic dim that leads every input and output, or None
    where the model has no such dim."""
    values = list(session.get_inputs()) + list(session.get_outputs())
    leading = set()
    for value in values:
        shape = value.shape
        if not shape or not isinstance(shape[0], str):
            return None
        leading.add(shape[0])
    return leading.pop() if len(leading) == 1 else None


def _stack_key(request):
    feeds = request.feeds
    parts = [(name, array.dtype.str, array.shape[1:]) for name, array in sorted(feeds.items())]
    outputs = None if request.outputs is None else tuple(request.outputs)
    return (tuple(parts), outputs)


def _rows(request):
    counts = {array.shape[0] for array in request.feeds.values() if array.ndim > 0}
    return counts.pop() if len(counts) == 1 else None


def plan(requests):
    """Groups of indices into `requests` that may run as one: each group's
    requests agree on all but their leading dim. A request whose inputs
    disagree on their leading dim, or that has a scalar, runs alone."""
    groups, by_key = [], {}
    for index, request in enumerate(requests):
        if _rows(request) is None or any(array.ndim == 0 for array in request.feeds.values()):
            groups.append([index])
            continue
        key = _stack_key(request)
        if key not in by_key:
            by_key[key] = len(groups)
            groups.append([])
        groups[by_key[key]].append(index)
    return groups


def stack(requests):
    """The feeds of one run for `requests` (one group of plan())."""
    if len(requests) == 1:
        return requests[0].feeds
    return {name: np.concatenate([request.feeds[name] for request in requests])
            for name in requests[0].feeds}


def split(requests, outputs):
    """Each request's rows of `outputs` (the run of stack(requests))."""
    if len(requests) == 1:
        return [outputs]
    bounds = np.cumsum([_rows(request) for request in requests])[:-1]
    per_output = [np.split(np.asarray(output), bounds) for output in outputs]
    return [[parts[index] for parts in per_output] for index in range(len(requests))]
