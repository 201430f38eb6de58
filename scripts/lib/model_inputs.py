"""Input tensors for the generated models, from a seeded generator.

Symbolic dims are bound by name (batch, seq, past_sequence_length, ...); the
token ids are drawn below their vocabulary, attention masks are all ones and
token type ids all zeros, so every feed is valid for the model it is made
for.
"""
import numpy as np
import onnx
from onnx import helper

VOCAB_INPUTS = {"input_ids"}
MASK_INPUTS = {"attention_mask"}
TYPE_INPUTS = {"token_type_ids"}
# The token embedding's name (the generated decoders', transformers'
# encoders'), within its name after a quantizer's suffix.
VOCAB_TABLES = ("embed_tokens.weight", "word_embeddings.weight")


def _concrete_shape(value_info, dims):
    shape = []
    for dim in value_info.type.tensor_type.shape.dim:
        if dim.HasField("dim_value"):
            shape.append(dim.dim_value)
        elif dim.dim_param in dims:
            shape.append(dims[dim.dim_param])
        else:
            raise ValueError(f"input {value_info.name}: no size given for dim '{dim.dim_param}'")
    return shape


def _vocabulary(model):
    for init in model.graph.initializer:
        if len(init.dims) == 2 and any(table in init.name for table in VOCAB_TABLES):
            return init.dims[0]
    raise ValueError(f"model has input_ids but none of {', '.join(VOCAB_TABLES)} to size its "
                     "vocabulary")


def random_feeds(model, dims, seed=0):
    """{input name: numpy array} for every graph input of `model` (a ModelProto), dims bound from `dims`."""
    rng = np.random.default_rng(seed)
    initializer_names = {init.name for init in model.graph.initializer}
    feeds = {}
    for value_info in model.graph.input:
        if value_info.name in initializer_names:
            continue
        shape = _concrete_shape(value_info, dims)
        dtype = helper.tensor_dtype_to_np_dtype(value_info.type.tensor_type.elem_type)
        if value_info.name in VOCAB_INPUTS:
            feeds[value_info.name] = rng.integers(0, _vocabulary(model), size=shape).astype(dtype)
        elif value_info.name in MASK_INPUTS:
            feeds[value_info.name] = np.ones(shape, dtype)
        elif value_info.name in TYPE_INPUTS:
            feeds[value_info.name] = np.zeros(shape, dtype)
        elif np.issubdtype(dtype, np.floating):
            feeds[value_info.name] = rng.standard_normal(shape).astype(dtype)
        else:
            raise ValueError(f"input {value_info.name}: no rule for making {dtype} values")
    return feeds


def decoder_dims(past, new, batch=1):
    """Dim bindings for a decoder step that adds `new` tokens to a KV cache holding `past`."""
    return {"batch_size": batch, "sequence_length": new,
            "past_sequence_length": past, "total_sequence_length": past + new}


def load_model_header(path):
    """The model at `path` without reading external weights: enough to make its inputs."""
    return onnx.load(path, load_external_data=False)
