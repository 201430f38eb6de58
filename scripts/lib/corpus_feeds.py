"""The data sets each corpus model is checked on, from its manifest entry.

Inputs are placed by what they are, read from their names and ranks the way
both torch exporters write them: token ids, the attention mask, position ids,
token type ids, a cache position, past key/value tensors (rank 4, or rank 5
with key and value stacked in front), and the one float input of an image,
audio or feature model. A decoder is checked as
it is used: a left-padded prefill from an empty cache, then one decode step
fed the prefill's present key/values; `run(feeds) -> [outputs]` runs the
model for that chaining (ONNX Runtime at build time, torch when exporting).
"""
import zlib

import numpy as np

import realistic_inputs


def _rng(*key):
    return np.random.default_rng(zlib.crc32("/".join(map(str, key)).encode()))


def _dims(value_info):
    """Declared extents, None where symbolic; torch.export writes a fixed
    extent it was told might vary as a dim_param of its digits ("2")."""
    return [d.dim_value if d.HasField("dim_value") else
            int(d.dim_param) if d.dim_param.isdigit() else None
            for d in value_info.type.tensor_type.shape.dim]


def _role(value_info):
    name = value_info.name.lower()
    for role in ("encoder_attention_mask", "input_ids", "attention_mask", "position_ids", "token_type_ids",
                 "cache_position", "encoder_hidden_states"):
        if role in name:
            return role
    if len(_dims(value_info)) in (4, 5) and ("past" in name or "cache" in name):
        return "past"
    return "signal"


def _inputs(model):
    initializers = {t.name for t in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in initializers]


def _signal(entry, value_info, generator):
    kind = entry["kind"]
    if kind == "image":
        return realistic_inputs.photo(generator, entry["height"], entry["width"])
    if kind == "audio":
        return realistic_inputs.speech(generator, entry["samples"])[None]
    if kind == "log_mel":
        audio = realistic_inputs.speech(generator, entry["frames"] * 160)
        return realistic_inputs.log_mel(audio, entry["mels"], entry["frames"])
    raise ValueError(f"{entry['name']}: no rule feeds input '{value_info.name}' of a {kind} model")


def _text_feeds(entry, inputs, generator, left_padding, past=None):
    """Feeds of a batch of texts (lengths from the entry) for every input."""
    ids, mask, positions = realistic_inputs.tokens(
        generator, entry["vocab"], entry["lengths"], entry.get("pad_id", 0),
        entry.get("first_id"), left_padding)
    batch, width = ids.shape
    feeds = {}
    for value_info in inputs:
        role = _role(value_info)
        if role == "input_ids":
            feeds[value_info.name] = ids
        elif role == "attention_mask":
            feeds[value_info.name] = mask
        elif role == "position_ids":
            feeds[value_info.name] = positions
        elif role == "token_type_ids":
            feeds[value_info.name] = np.zeros_like(ids)
        elif role == "cache_position":
            feeds[value_info.name] = np.arange(width, dtype=np.int64)
        elif role == "encoder_attention_mask":
            encoder_mask = np.ones((batch, entry["encoder_length"]), np.int64)
            encoder_mask[1:, entry["encoder_length"] * 2 // 3:] = 0
            feeds[value_info.name] = encoder_mask
        elif role == "encoder_hidden_states":
            states = generator.standard_normal((batch, entry["encoder_length"], entry["hidden"]))
            feeds[value_info.name] = states.astype(np.float32)
        elif role == "past":
            dims = _dims(value_info)
            # [batch, heads, 0, head_size], or key and value stacked in front.
            empty = (batch, dims[1], 0, dims[3]) if len(dims) == 4 else (2, batch, dims[2], 0, dims[4])
            feeds[value_info.name] = np.zeros(empty, np.float32)
        else:
            feeds[value_info.name] = _signal(entry, value_info, generator)
    return feeds


def _decode_step(entry, inputs, outputs, prefill, present, generator):
    """Feeds of one token per row after `prefill`, whose presents come in
    `present` (the model's outputs, in order)."""
    step = {}
    past_inputs = [i for i in inputs if _role(i) == "past"]
    past_outputs = [value for info, value in zip(outputs, present) if len(_dims(info)) in (4, 5)]
    if len(past_inputs) != len(past_outputs):
        raise ValueError(f"{entry['name']}: {len(past_inputs)} past inputs but "
                         f"{len(past_outputs)} KV outputs to feed them from")
    mask = next(v for k, v in prefill.items() if "attention_mask" in k.lower())
    batch = mask.shape[0]
    next_ids = (2 + generator.integers(0, entry["vocab"] - 2, (batch, 1))).astype(np.int64)
    for value_info in inputs:
        role = _role(value_info)
        if role == "input_ids":
            step[value_info.name] = next_ids
        elif role == "attention_mask":
            step[value_info.name] = np.concatenate([mask, np.ones((batch, 1), np.int64)], axis=1)
        elif role == "position_ids":
            step[value_info.name] = mask.sum(axis=1, keepdims=True).astype(np.int64)
        elif role == "cache_position":
            step[value_info.name] = np.array([mask.shape[1]], np.int64)
        elif role == "past":
            step[value_info.name] = past_outputs[past_inputs.index(value_info)]
        else:
            step[value_info.name] = prefill[value_info.name]
    return step


def data_sets(entry, model, run):
    """[feeds, ...] for the model of manifest `entry`; `run` computes a data
    set's outputs where a later one needs them."""
    inputs = _inputs(model)
    generator = _rng("corpus", entry["name"])
    kind = entry["kind"]
    if kind == "decoder":
        prefill = _text_feeds(entry, inputs, generator, left_padding=True)
        step = _decode_step(entry, inputs, list(model.graph.output), prefill, run(prefill), generator)
        return [prefill, step]
    if kind in ("text", "seq2seq_decoder"):
        return [_text_feeds(entry, inputs, generator, left_padding=False)]
    return [{i.name: _signal(entry, i, generator) for i in inputs} for _ in range(entry.get("sets", 2))]
