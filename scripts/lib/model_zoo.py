"""The models nxrt is built, tested and benchmarked on, written with onnx.helper.

Every weight comes from a numpy generator with a fixed seed, so each build
writes byte-identical files. Default-domain opset 21, except the decoders,
which need opset 23 for RMSNormalization and com.microsoft for
GroupQueryAttention (both run on onnxruntime's CPU execution provider).
"""
from dataclasses import dataclass

import numpy as np

from graph_builder import FLOAT, INT32, INT64, GraphBuilder

OPSET = 21
DECODER_OPSETS = {"": 23, "com.microsoft": 1}


def _normal(rng, shape, std):
    return (rng.standard_normal(shape) * std).astype(np.float32)


def add_chain(length=1000, seed=1):
    """`length` one-element Adds in a row, each adding its own constant: a per-node overhead probe."""
    rng = np.random.default_rng(seed)
    g = GraphBuilder(f"add_chain_{length}")
    value = g.input("x", FLOAT, [1])
    for k in range(length):
        constant = g.const(rng.uniform(-1e-3, 1e-3, size=[1]).astype(np.float32), f"c{k}")
        value = g.op("Add", [value, constant], stem=f"add{k}")
    g.output(value, "y", FLOAT, [1])
    return g.model({"": OPSET})


def mlp(width=1024, layers=4, seed=2):
    """`layers` x (MatMul width x width, Add bias, Relu) over a symbolic batch."""
    rng = np.random.default_rng(seed)
    g = GraphBuilder("mlp")
    value = g.input("x", FLOAT, ["batch", width])
    for k in range(layers):
        weight = g.const(_normal(rng, [width, width], np.sqrt(2.0 / width)), f"fc{k}.weight")
        bias = g.const(_normal(rng, [width], 0.01), f"fc{k}.bias")
        value = g.op("MatMul", [value, weight], stem=f"fc{k}.matmul")
        value = g.op("Add", [value, bias], stem=f"fc{k}.add")
        value = g.op("Relu", [value], stem=f"fc{k}.relu")
    g.output(value, "y", FLOAT, ["batch", width])
    return g.model({"": OPSET})


def cnn(classes=10, seed=3):
    """Two Conv/BatchNormalization/Relu/MaxPool blocks, GlobalAveragePool, Flatten, Gemm on 1x3x64x64."""
    rng = np.random.default_rng(seed)
    g = GraphBuilder("cnn")
    value = g.input("image", FLOAT, [1, 3, 64, 64])
    channels_in = 3
    for block, channels_out in enumerate([16, 32]):
        fan_in = channels_in * 9
        weight = g.const(_normal(rng, [channels_out, channels_in, 3, 3], np.sqrt(2.0 / fan_in)), f"conv{block}.weight")
        bias = g.const(_normal(rng, [channels_out], 0.01), f"conv{block}.bias")
        value = g.op("Conv", [value, weight, bias], stem=f"conv{block}", kernel_shape=[3, 3], pads=[1, 1, 1, 1])
        scale = g.const(rng.uniform(0.8, 1.2, [channels_out]).astype(np.float32), f"bn{block}.scale")
        shift = g.const(_normal(rng, [channels_out], 0.05), f"bn{block}.bias")
        mean = g.const(_normal(rng, [channels_out], 0.05), f"bn{block}.mean")
        var = g.const(rng.uniform(0.5, 1.5, [channels_out]).astype(np.float32), f"bn{block}.var")
        value = g.op("BatchNormalization", [value, scale, shift, mean, var], stem=f"bn{block}", epsilon=1e-5)
        value = g.op("Relu", [value], stem=f"relu{block}")
        value = g.op("MaxPool", [value], stem=f"pool{block}", kernel_shape=[2, 2], strides=[2, 2])
        channels_in = channels_out
    value = g.op("GlobalAveragePool", [value], stem="gap")
    value = g.op("Flatten", [value], stem="flatten", axis=1)
    weight = g.const(_normal(rng, [classes, channels_in], np.sqrt(1.0 / channels_in)), "fc.weight")
    bias = g.const(_normal(rng, [classes], 0.01), "fc.bias")
    value = g.op("Gemm", [value, weight, bias], stem="fc", transB=1)
    g.output(value, "logits", FLOAT, [1, classes])
    return g.model({"": OPSET})


def bert_layer(hidden=256, heads=4, ffn=1024, seed=4):
    """One post-norm BERT encoder layer over [batch, seq, hidden], attention spelled out op by op.

    Hidden 256 with 4 heads (BERT-base is 768/12) keeps a run quick on small machines.
    """
    rng = np.random.default_rng(seed)
    head_dim = hidden // heads
    std = 0.02
    g = GraphBuilder("bert_layer")
    x = g.input("hidden_states", FLOAT, ["batch", "seq", hidden])

    qkv_weight = g.const(_normal(rng, [hidden, 3 * hidden], std), "attn.qkv.weight")
    qkv_bias = g.const(_normal(rng, [3 * hidden], std), "attn.qkv.bias")
    qkv = g.op("Add", [g.op("MatMul", [x, qkv_weight], stem="attn.qkv.matmul"), qkv_bias], stem="attn.qkv.add")
    q, k, v = g.op("Split", [qkv], stem="attn.split", outputs=3, axis=-1, num_outputs=3)
    heads_shape = g.const(np.array([0, 0, heads, head_dim], np.int64), "attn.heads_shape")

    def to_heads(value, stem, perm):
        value = g.op("Reshape", [value, heads_shape], stem=f"attn.{stem}.reshape")
        return g.op("Transpose", [value], stem=f"attn.{stem}.transpose", perm=perm)

    q = to_heads(q, "q", [0, 2, 1, 3])  # [batch, heads, seq, head_dim]
    k = to_heads(k, "k", [0, 2, 3, 1])  # [batch, heads, head_dim, seq]
    v = to_heads(v, "v", [0, 2, 1, 3])
    scores = g.op("MatMul", [q, k], stem="attn.scores")
    scale = g.const(np.array(1.0 / np.sqrt(head_dim), np.float32), "attn.scale")
    scores = g.op("Mul", [scores, scale], stem="attn.scaled")
    probs = g.op("Softmax", [scores], stem="attn.softmax", axis=-1)
    context = g.op("MatMul", [probs, v], stem="attn.context")
    context = g.op("Transpose", [context], stem="attn.context.transpose", perm=[0, 2, 1, 3])
    merged_shape = g.const(np.array([0, 0, hidden], np.int64), "attn.merged_shape")
    context = g.op("Reshape", [context, merged_shape], stem="attn.context.reshape")
    out_weight = g.const(_normal(rng, [hidden, hidden], std), "attn.out.weight")
    out_bias = g.const(_normal(rng, [hidden], std), "attn.out.bias")
    attended = g.op("Add", [g.op("MatMul", [context, out_weight], stem="attn.out.matmul"), out_bias], stem="attn.out.add")

    def layer_norm(value, stem):
        gamma = g.const(rng.uniform(0.9, 1.1, [hidden]).astype(np.float32), f"{stem}.weight")
        beta = g.const(_normal(rng, [hidden], 0.02), f"{stem}.bias")
        return g.op("LayerNormalization", [value, gamma, beta], stem=stem, axis=-1, epsilon=1e-12)

    x = layer_norm(g.op("Add", [x, attended], stem="attn.residual"), "attn.norm")
    up_weight = g.const(_normal(rng, [hidden, ffn], std), "ffn.up.weight")
    up_bias = g.const(_normal(rng, [ffn], std), "ffn.up.bias")
    up = g.op("Add", [g.op("MatMul", [x, up_weight], stem="ffn.up.matmul"), up_bias], stem="ffn.up.add")
    activated = g.op("Gelu", [up], stem="ffn.gelu")
    down_weight = g.const(_normal(rng, [ffn, hidden], std), "ffn.down.weight")
    down_bias = g.const(_normal(rng, [hidden], std), "ffn.down.bias")
    down = g.op("Add", [g.op("MatMul", [activated, down_weight], stem="ffn.down.matmul"), down_bias], stem="ffn.down.add")
    x = layer_norm(g.op("Add", [x, down], stem="ffn.residual"), "ffn.norm")
    g.output(x, "output", FLOAT, ["batch", "seq", hidden])
    return g.model({"": OPSET})


@dataclass(frozen=True)
class DecoderConfig:
    layers: int = 4
    hidden: int = 256
    heads: int = 8
    kv_heads: int = 2
    ffn: int = 768
    vocab: int = 512
    rotary_positions: int = 1024
    # None: past/present grow by the new tokens each step. An int: both are
    # [batch, kv_heads, kv_capacity, head_dim] and may share one buffer.
    kv_capacity: int | None = None
    seed: int = 5

    @property
    def head_dim(self):
        return self.hidden // self.heads


def decoder(config=DecoderConfig()):
    """A decoder-only transformer with the I/O names of ONNX Runtime GenAI exports.

    Per layer: RMSNormalization, Q/K/V MatMuls, com.microsoft GroupQueryAttention
    with rotary embedding inside (do_rotary=1, cos/sin caches as initializers),
    output MatMul, residual Add, RMSNormalization, SwiGLU MLP, residual Add.
    seqlens_k and total_sequence_length come from attention_mask inside the
    graph, as GenAI exports derive them.
    """
    c = config
    rng = np.random.default_rng(c.seed)
    std = 0.02
    g = GraphBuilder("decoder")
    kv_len = "past_sequence_length" if c.kv_capacity is None else c.kv_capacity
    present_len = "total_sequence_length" if c.kv_capacity is None else c.kv_capacity
    input_ids = g.input("input_ids", INT64, ["batch_size", "sequence_length"])
    mask = g.input("attention_mask", INT64, ["batch_size", "total_sequence_length"])
    past = []
    for layer in range(c.layers):
        key = g.input(f"past_key_values.{layer}.key", FLOAT, ["batch_size", c.kv_heads, kv_len, c.head_dim])
        value = g.input(f"past_key_values.{layer}.value", FLOAT, ["batch_size", c.kv_heads, kv_len, c.head_dim])
        past.append((key, value))

    one = g.const(np.array(1, np.int64), "one")
    axis_1 = g.const(np.array([1], np.int64), "axis_1")
    lengths = g.op("ReduceSum", [mask, axis_1], stem="mask.reduce_sum", keepdims=0)
    last_index = g.op("Sub", [lengths, one], stem="mask.sub")
    seqlens_k = g.op("Cast", [last_index], stem="mask.seqlens_k", to=INT32)
    mask_shape = g.op("Shape", [mask], stem="mask.shape")
    total_len = g.op("Gather", [mask_shape, one], stem="mask.total_len", axis=0)
    total_len = g.op("Cast", [total_len], stem="mask.total_sequence_length", to=INT32)

    inverse_freq = 1.0 / (10000.0 ** (np.arange(0, c.head_dim, 2, dtype=np.float64) / c.head_dim))
    angles = np.outer(np.arange(c.rotary_positions, dtype=np.float64), inverse_freq)
    cos_cache = g.const(np.cos(angles).astype(np.float32), "rotary.cos_cache")
    sin_cache = g.const(np.sin(angles).astype(np.float32), "rotary.sin_cache")

    def rms_norm(value, stem):
        weight = g.const(rng.uniform(0.9, 1.1, [c.hidden]).astype(np.float32), f"{stem}.weight")
        return g.op("RMSNormalization", [value, weight], stem=stem, axis=-1, epsilon=1e-5)

    def linear(value, rows, cols, stem, scale=std):
        return g.op("MatMul", [value, g.const(_normal(rng, [rows, cols], scale), f"{stem}.weight")], stem=stem)

    embedding = g.const(_normal(rng, [c.vocab, c.hidden], 1.0), "embed_tokens.weight")
    x = g.op("Gather", [embedding, input_ids], stem="embed_tokens", axis=0)
    kv_width = c.kv_heads * c.head_dim
    presents = []
    for layer, (past_key, past_value) in enumerate(past):
        p = f"layers.{layer}"
        h = rms_norm(x, f"{p}.input_norm")
        q = linear(h, c.hidden, c.hidden, f"{p}.attn.q_proj")
        k = linear(h, c.hidden, kv_width, f"{p}.attn.k_proj")
        v = linear(h, c.hidden, kv_width, f"{p}.attn.v_proj")
        attended, present_key, present_value = g.op(
            "GroupQueryAttention",
            [q, k, v, past_key, past_value, seqlens_k, total_len, cos_cache, sin_cache],
            stem=f"{p}.attn.gqa", outputs=3, domain="com.microsoft",
            num_heads=c.heads, kv_num_heads=c.kv_heads, do_rotary=1, rotary_interleaved=0)
        presents.append((present_key, present_value))
        x = g.op("Add", [x, linear(attended, c.hidden, c.hidden, f"{p}.attn.o_proj")], stem=f"{p}.attn.residual")
        h = rms_norm(x, f"{p}.post_attention_norm")
        gate = linear(h, c.hidden, c.ffn, f"{p}.mlp.gate_proj")
        up = linear(h, c.hidden, c.ffn, f"{p}.mlp.up_proj")
        silu = g.op("Mul", [gate, g.op("Sigmoid", [gate], stem=f"{p}.mlp.sigmoid")], stem=f"{p}.mlp.silu")
        gated = g.op("Mul", [silu, up], stem=f"{p}.mlp.gated")
        x = g.op("Add", [x, linear(gated, c.ffn, c.hidden, f"{p}.mlp.down_proj")], stem=f"{p}.mlp.residual")
    x = rms_norm(x, "final_norm")
    logits = linear(x, c.hidden, c.vocab, "lm_head")
    g.output(logits, "logits", FLOAT, ["batch_size", "sequence_length", c.vocab])
    for layer, (present_key, present_value) in enumerate(presents):
        shape = ["batch_size", c.kv_heads, present_len, c.head_dim]
        g.output(present_key, f"present.{layer}.key", FLOAT, shape)
        g.output(present_value, f"present.{layer}.value", FLOAT, shape)
    return g.model(DECODER_OPSETS)
