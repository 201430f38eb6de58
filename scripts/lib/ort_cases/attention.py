"""Cases of the attention ops decoder models use: com.microsoft
GroupQueryAttention (first prompt, later prompt and decode steps over a growing
or a fixed-capacity KV cache, rotary embedding in both layouts, packed QKV,
fewer KV heads than query heads, batches whose sequences have different
lengths, softcap, local window and smooth softmax, float32 and float16),
com.microsoft RotaryEmbedding in both input layouts, and the default-domain
Attention of opset 23 (grouped heads, past and present, causal, masks)."""
import numpy as np
from onnx import TensorProto

from ort_cases import MS_DOMAIN, node_model, normal, rng

FLOAT = TensorProto.FLOAT
INT32 = TensorProto.INT32
INT64 = TensorProto.INT64


def rotary_caches(positions, rotary_dim):
    """cos and sin caches [positions, rotary_dim / 2] of the usual 10000-base angles."""
    inverse = 1.0 / (10000.0 ** (np.arange(0, rotary_dim, 2, dtype=np.float64) / rotary_dim))
    angles = np.outer(np.arange(positions, dtype=np.float64), inverse)
    return np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)


def gqa_case(name, batch, seq, heads, kv_heads, depth, past, totals, total_length,
             packed=False, rotary_dim=0, interleaved=0, attrs=None, data_sets=2,
             dtype=np.float32, positions=None, head_sink=False, bias_shape=None):
    """A GroupQueryAttention case. `past` is the past KV extent (None: no past
    inputs); `totals` the valid length per batch entry after this call
    (seqlens_k + 1), `total_length` the total_sequence_length input;
    `positions` is the position_ids input when given, `head_sink` adds a sink
    logit per head and `bias_shape` an attention_bias input of that shape."""
    capacity = max(total_length, past or 0)
    elem = TensorProto.FLOAT16 if dtype == np.float16 else FLOAT
    node_attrs = {"num_heads": heads, "kv_num_heads": kv_heads}
    if rotary_dim:
        node_attrs.update(do_rotary=1, rotary_interleaved=interleaved)
    node_attrs.update(attrs or {})
    q_width = (heads + 2 * kv_heads) * depth if packed else heads * depth
    kv_width = kv_heads * depth
    inputs = [("query", elem, [batch, seq, q_width]),
              ("" if packed else "key", elem, [batch, seq, kv_width]),
              ("" if packed else "value", elem, [batch, seq, kv_width])]
    # A growing past has a symbolic extent, as exported decoders declare it; a
    # static one is a fixed-capacity cache.
    past_dim = "past_sequence_length" if past is not None and past < total_length else past or 0
    past_shape = [batch, kv_heads, past_dim, depth]
    data_past_shape = [batch, kv_heads, past or 0, depth]
    inputs += [("past_key" if past is not None else "", elem, past_shape),
               ("past_value" if past is not None else "", elem, past_shape),
               ("seqlens_k", INT32, [batch]),
               ("total_sequence_length", INT32, [1])]
    max_positions = 64
    cache_shape = [max_positions, rotary_dim // 2]
    inputs += [("cos_cache" if rotary_dim else "", elem, cache_shape),
               ("sin_cache" if rotary_dim else "", elem, cache_shape)]
    if positions is not None or head_sink or bias_shape:
        inputs += [("position_ids" if positions is not None else "", INT64,
                    list(np.shape(positions))),
                   ("attention_bias" if bias_shape else "", elem, bias_shape or [1]),
                   ("head_sink" if head_sink else "", elem, [heads])]
    present = [batch, kv_heads, "total_sequence_length" if isinstance(past_dim, str) else capacity, depth]
    outputs = [("output", elem, [batch, seq, heads * depth]),
               ("present_key", elem, present), ("present_value", elem, present)]
    model = node_model("GroupQueryAttention", inputs, outputs, node_attrs, domain=MS_DOMAIN)
    g = rng(__name__, name)
    feeds_list = []
    for _ in range(data_sets):
        feeds = {"query": normal(g, [batch, seq, q_width], dtype)}
        if not packed:
            feeds["key"] = normal(g, [batch, seq, kv_width], dtype)
            feeds["value"] = normal(g, [batch, seq, kv_width], dtype)
        if past is not None:
            feeds["past_key"] = normal(g, data_past_shape, dtype)
            feeds["past_value"] = normal(g, data_past_shape, dtype)
        feeds["seqlens_k"] = np.array(totals, np.int32) - 1
        feeds["total_sequence_length"] = np.array([total_length], np.int32)
        if rotary_dim:
            cos, sin = rotary_caches(max_positions, rotary_dim)
            feeds["cos_cache"], feeds["sin_cache"] = cos.astype(dtype), sin.astype(dtype)
        if positions is not None:
            feeds["position_ids"] = np.array(positions, np.int64)
        if head_sink:
            feeds["head_sink"] = normal(g, [heads], dtype)
        if bias_shape:
            feeds["attention_bias"] = normal(g, bias_shape, dtype)
        feeds_list.append(feeds)
    return name, model, feeds_list


def group_query_attention():
    # First prompt: no past, every key of the prompt valid.
    yield gqa_case("gqa_prompt", 1, 5, 4, 2, 16, None, [5], 5)
    yield gqa_case("gqa_prompt_mha", 2, 3, 2, 2, 16, None, [3, 3], 3)
    yield gqa_case("gqa_prompt_rotary", 1, 5, 4, 2, 16, None, [5], 5, rotary_dim=16)
    yield gqa_case("gqa_prompt_rotary_interleaved", 1, 5, 4, 2, 16, None, [5], 5, rotary_dim=16,
                   interleaved=1)
    yield gqa_case("gqa_prompt_partial_rotary", 2, 4, 4, 1, 32, None, [4, 4], 4, rotary_dim=16)
    yield gqa_case("gqa_prompt_partial_rotary_interleaved", 1, 4, 4, 2, 32, None, [4], 4,
                   rotary_dim=16, interleaved=1)
    # The first prompt of a fixed-capacity cache: the past buffer is ignored.
    yield gqa_case("gqa_prompt_fixed_capacity_rotary", 1, 4, 8, 2, 32, 16, [4], 4, rotary_dim=32)
    # Decode steps over a growing past (present = past + 1).
    yield gqa_case("gqa_decode_growing", 1, 1, 4, 2, 16, 5, [6], 6)
    yield gqa_case("gqa_decode_growing_rotary", 1, 1, 8, 2, 32, 7, [8], 8, rotary_dim=32)
    yield gqa_case("gqa_decode_growing_rotary_interleaved", 1, 1, 4, 2, 16, 3, [4], 4,
                   rotary_dim=16, interleaved=1)
    # Decode steps over a fixed-capacity past of 16 rows, 5 of them valid.
    yield gqa_case("gqa_decode_fixed_capacity", 1, 1, 4, 2, 16, 16, [6], 6)
    yield gqa_case("gqa_decode_fixed_capacity_rotary", 1, 1, 8, 2, 32, 16, [6], 6, rotary_dim=32)
    # Batch 2 whose sequences have different valid lengths.
    yield gqa_case("gqa_decode_batch2_lengths", 2, 1, 4, 2, 16, 6, [7, 4], 7, rotary_dim=16)
    yield gqa_case("gqa_decode_batch2_fixed_capacity", 2, 1, 4, 1, 16, 16, [9, 3], 9,
                   rotary_dim=16)
    # A batch-2 first prompt whose second sequence is right-padded (2 valid
    # tokens of 4): its keys beyond the valid ones are ignored.
    yield gqa_case("gqa_prompt_batch2_padded", 2, 4, 4, 2, 16, None, [4, 2], 4)
    yield gqa_case("gqa_prompt_batch2_padded_rotary", 2, 4, 4, 2, 16, None, [4, 2], 4,
                   rotary_dim=16)
    # A later prompt continuing a past (batch 1).
    yield gqa_case("gqa_later_prompt", 1, 3, 4, 2, 16, 4, [7], 7, rotary_dim=16)
    # Packed QKV.
    yield gqa_case("gqa_packed_prompt", 1, 4, 4, 2, 16, None, [4], 4, packed=True)
    yield gqa_case("gqa_packed_prompt_rotary", 2, 3, 4, 2, 16, None, [3, 3], 3, packed=True,
                   rotary_dim=16)
    yield gqa_case("gqa_packed_decode_rotary", 1, 1, 4, 2, 16, 5, [6], 6, packed=True,
                   rotary_dim=16)
    # float16.
    yield gqa_case("gqa_prompt_rotary_f16", 1, 5, 4, 2, 16, None, [5], 5, rotary_dim=16,
                   dtype=np.float16)
    yield gqa_case("gqa_decode_growing_rotary_f16", 1, 1, 8, 2, 32, 7, [8], 8, rotary_dim=32,
                   dtype=np.float16)
    yield gqa_case("gqa_decode_fixed_capacity_f16", 2, 1, 4, 2, 16, 16, [6, 9], 9,
                   dtype=np.float16)
    # position_ids: a first prompt offset from its first entry, a decode step
    # at given positions; a learned sink logit per head.
    yield gqa_case("gqa_prompt_position_ids", 1, 4, 4, 2, 16, None, [4], 4, rotary_dim=16,
                   positions=[[3, 4, 5, 6]])
    yield gqa_case("gqa_decode_position_ids", 2, 1, 4, 2, 16, 6, [7, 5], 7, rotary_dim=16,
                   positions=[[9], [2]])
    yield gqa_case("gqa_prompt_head_sink", 1, 4, 4, 2, 16, None, [4], 4, head_sink=True)
    yield gqa_case("gqa_decode_head_sink_rotary", 1, 1, 4, 2, 16, 5, [6], 6, rotary_dim=16,
                   head_sink=True)
    # attention_bias, broadcast over batch and heads or full, with softcap.
    yield gqa_case("gqa_prompt_attention_bias", 1, 4, 4, 2, 16, None, [4], 4,
                   bias_shape=[1, 1, 4, 4])
    yield gqa_case("gqa_decode_attention_bias_softcap", 2, 1, 4, 2, 16, 5, [6, 4], 6,
                   rotary_dim=16, bias_shape=[2, 4, 1, 6], attrs={"softcap": 2.0})
    # Attributes: scale, softcap, local window, smooth softmax.
    yield gqa_case("gqa_prompt_scale", 1, 4, 4, 2, 16, None, [4], 4, attrs={"scale": 0.3})
    yield gqa_case("gqa_prompt_softcap", 1, 4, 4, 2, 16, None, [4], 4, attrs={"softcap": 2.0})
    yield gqa_case("gqa_prompt_local_window", 1, 6, 4, 2, 16, None, [6], 6,
                   attrs={"local_window_size": 2})
    yield gqa_case("gqa_decode_local_window", 1, 1, 4, 2, 16, 7, [8], 8,
                   attrs={"local_window_size": 3})
    yield gqa_case("gqa_prompt_smooth_softmax", 1, 4, 4, 2, 16, None, [4], 4,
                   attrs={"smooth_softmax": 1})


def rotary_case(name, shape, heads, rotary_dim, interleaved, offset=None, attrs=None):
    """A com.microsoft RotaryEmbedding case over input `shape` ([B, S, hidden]
    or [B, heads, S, head]); position_ids are [B, S] or, with `offset`, one
    starting position."""
    batch = shape[0]
    seq = shape[2] if len(shape) == 4 else shape[1]
    positions = 32
    node_attrs = {"interleaved": interleaved}
    if heads:
        node_attrs["num_heads"] = heads
    node_attrs.update(attrs or {})
    pos_shape = [1] if offset is not None else [batch, seq]
    model = node_model("RotaryEmbedding",
                       [("input", FLOAT, shape), ("position_ids", INT64, pos_shape),
                        ("cos_cache", FLOAT, [positions, rotary_dim // 2]),
                        ("sin_cache", FLOAT, [positions, rotary_dim // 2])],
                       [("output", FLOAT, shape)], node_attrs, domain=MS_DOMAIN)
    g = rng(__name__, name)
    feeds_list = []
    for k in range(2):
        cos, sin = rotary_caches(positions, rotary_dim)
        if offset is not None:
            pos = np.array([offset + k], np.int64)
        else:
            pos = g.integers(0, positions, size=(batch, seq)).astype(np.int64)
        feeds_list.append({"input": normal(g, shape), "position_ids": pos,
                           "cos_cache": cos, "sin_cache": sin})
    return name, model, feeds_list


def rotary_embedding():
    yield rotary_case("rotary_bsh", [2, 3, 64], 4, 16, 0)
    yield rotary_case("rotary_bsh_interleaved", [2, 3, 64], 4, 16, 1)
    yield rotary_case("rotary_bsh_heads_from_cache", [1, 4, 48], 0, 16, 0)
    yield rotary_case("rotary_bnsh", [2, 4, 3, 16], 0, 16, 0)
    yield rotary_case("rotary_bnsh_interleaved", [2, 4, 3, 16], 0, 16, 1)
    yield rotary_case("rotary_bsh_offset", [1, 5, 32], 2, 16, 0, offset=7)
    yield rotary_case("rotary_bsh_partial", [2, 3, 64], 2, 16, 0,
                      attrs={"rotary_embedding_dim": 16})
    yield rotary_case("rotary_bnsh_partial_interleaved", [1, 2, 3, 32], 0, 16, 1,
                      attrs={"rotary_embedding_dim": 16, "num_heads": 2})


def attention_case(name, batch, q_heads, kv_heads, q_len, kv_len, head, past=0, rank=4,
                   mask=None, attrs=None):
    """A default-domain Attention (opset 23) case: rank-4 [B, heads, S, D] or
    rank-3 [B, S, heads * D] inputs, an optional past of `past` rows and an
    optional `mask` ("bool" or "float", [q_len, past + kv_len])."""
    def shape(heads, length):
        return [batch, heads, length, head] if rank == 4 else [batch, length, heads * head]
    node_attrs = dict(attrs or {})
    if rank == 3:
        node_attrs.update(q_num_heads=q_heads, kv_num_heads=kv_heads)
    total = past + kv_len
    mask_type = TensorProto.BOOL if mask == "bool" else FLOAT
    inputs = [("Q", FLOAT, shape(q_heads, q_len)), ("K", FLOAT, shape(kv_heads, kv_len)),
              ("V", FLOAT, shape(kv_heads, kv_len)),
              ("attn_mask" if mask else "", mask_type, [q_len, total])]
    outputs = [("Y", FLOAT, shape(q_heads, q_len))]
    if past:
        cache = [batch, kv_heads, past, head]
        inputs += [("past_key", FLOAT, cache), ("past_value", FLOAT, cache)]
        present = [batch, kv_heads, total, head]
        outputs += [("present_key", FLOAT, present), ("present_value", FLOAT, present)]
    model = node_model("Attention", inputs, outputs, node_attrs, opset=23)
    g = rng(__name__, name)
    feeds_list = []
    for _ in range(2):
        feeds = {"Q": normal(g, shape(q_heads, q_len)), "K": normal(g, shape(kv_heads, kv_len)),
                 "V": normal(g, shape(kv_heads, kv_len))}
        if mask == "bool":
            feeds["attn_mask"] = g.random([q_len, total]) < 0.7
            feeds["attn_mask"][:, 0] = True
        elif mask == "float":
            feeds["attn_mask"] = normal(g, [q_len, total])
        if past:
            feeds["past_key"] = normal(g, [batch, kv_heads, past, head])
            feeds["past_value"] = normal(g, [batch, kv_heads, past, head])
        feeds_list.append(feeds)
    return name, model, feeds_list


def attention():
    yield attention_case("opset23_4d", 2, 4, 4, 3, 5, 8)
    yield attention_case("opset23_4d_grouped_causal", 1, 6, 2, 4, 4, 16,
                         attrs={"is_causal": 1})
    yield attention_case("opset23_3d_grouped_past", 2, 4, 2, 1, 1, 8, past=6, rank=3)
    yield attention_case("opset23_4d_causal_past", 1, 2, 2, 3, 3, 8, past=5,
                         attrs={"is_causal": 1})
    yield attention_case("opset23_4d_bool_mask", 2, 2, 2, 3, 4, 8, mask="bool")
    yield attention_case("opset23_3d_float_mask_past_softcap", 1, 4, 4, 2, 2, 8, past=3,
                         rank=3, mask="float", attrs={"softcap": 3.0, "scale": 0.2})


def cases():
    yield from group_query_attention()
    yield from rotary_embedding()
    yield from attention()
