"""com.microsoft MatMulNBits on the cpu EP: every bit width, block size and
zero point form, g_idx and bias, float32 and float16, against the product
of the dequantized weights in float64 and against ONNX Runtime."""

import ml_dtypes
import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

import nxrt


def pack_codes(codes, bits):
    """Codes along the last axis packed into bytes, element 0 lowest."""
    per_byte = 8 // bits
    grouped = codes.reshape(codes.shape[:-1] + (-1, per_byte)).astype(np.uint8)
    packed = np.zeros(grouped.shape[:-1], np.uint8)
    for i in range(per_byte):
        packed |= (grouped[..., i] << (i * bits)).astype(np.uint8)
    return packed


def quantized_matmul(k, n, bits, block, zero_points, g_idx, bias, accuracy_level=0,
                     dtype=np.float32, seed=0, declared_k=None):
    """The serialised single-node model and its weights [N, K] in float64."""
    rng = np.random.default_rng(seed)
    blocks = -(-k // block)
    codes = rng.integers(0, 2**bits, (n, blocks * block))
    scales = rng.uniform(0.01, 0.1, (n, blocks)).astype(dtype)
    initializers = [numpy_helper.from_array(pack_codes(codes, bits).reshape(n, blocks, -1), "B"),
                    numpy_helper.from_array(scales.reshape(-1), "scales")]
    inputs = ["A", "B", "scales", "", "", ""]
    block_of_k = np.arange(k) // block
    if g_idx:
        block_of_k = rng.permutation(block_of_k)
        initializers.append(numpy_helper.from_array(block_of_k.astype(np.int32), "g_idx"))
        inputs[4] = "g_idx"
    zero = np.full((n, blocks), 2.0 ** (bits - 1))
    if zero_points == "packed":
        per_row = -(-blocks * bits // 8) * (8 // bits)
        padded = np.zeros((n, per_row), np.int64)
        padded[:, :blocks] = rng.integers(0, 2**bits, (n, blocks))
        zero = padded[:, :blocks].astype(np.float64)
        initializers.append(numpy_helper.from_array(pack_codes(padded, bits).reshape(-1), "zp"))
        inputs[3] = "zp"
    elif zero_points == "float":
        given = rng.uniform(0, 2**bits - 1, (n, blocks)).astype(dtype)
        zero = given.astype(np.float64)
        initializers.append(numpy_helper.from_array(given.reshape(-1), "zp"))
        inputs[3] = "zp"
    if bias:
        initializers.append(numpy_helper.from_array(rng.normal(size=n).astype(dtype), "bias"))
        inputs[5] = "bias"
    while inputs[-1] == "":
        inputs.pop()
    weights = (codes[:, :k] - zero[:, block_of_k]) * scales.astype(np.float64)[:, block_of_k]
    elem = {np.float32: TensorProto.FLOAT, np.float16: TensorProto.FLOAT16,
            ml_dtypes.bfloat16: TensorProto.BFLOAT16}[dtype]
    node = helper.make_node("MatMulNBits", inputs, ["Y"], domain="com.microsoft", K=k, N=n,
                            bits=bits, block_size=block, accuracy_level=accuracy_level)
    graph = helper.make_graph(
        [node], "nbits", [helper.make_tensor_value_info("A", elem, ["batch", "rows", declared_k or k])],
        [helper.make_tensor_value_info("Y", elem, ["batch", "rows", n])], initializers)
    model = helper.make_model(graph, ir_version=10, opset_imports=[
        helper.make_opsetid("", 21), helper.make_opsetid("com.microsoft", 1)])
    offset = numpy_helper.to_array(initializers[-1]).astype(np.float64) if bias else 0.0
    return model.SerializeToString(), weights, offset


def session(module, model, threads=1):
    options = module.SessionOptions()
    options.intra_op_num_threads = threads
    return module.InferenceSession(model, options, providers=["CPUExecutionProvider"])


def expected(a, weights, offset):
    return a.astype(np.float64) @ weights.T + offset


FORMS = [
    # bits, block, zero points, g_idx, bias
    (4, 32, "none", False, False),
    (4, 32, "packed", False, True),
    (4, 16, "float", False, False),
    (4, 64, "packed", True, False),
    (4, 128, "none", False, True),
    (4, 256, "packed", False, False),
    (8, 32, "packed", False, False),
    (8, 128, "none", False, True),
    (8, 64, "float", False, False),
    (2, 32, "packed", False, False),
]


@pytest.mark.parametrize("bits,block,zero_points,g_idx,bias", FORMS)
@pytest.mark.parametrize("rows", [1, 4, 7])
def test_matches_the_dequantized_product_and_onnxruntime(bits, block, zero_points, g_idx, bias,
                                                         rows):
    k = 3 * block + 8  # a last block that is only partly used
    model, weights, offset = quantized_matmul(k, 40, bits, block, zero_points, g_idx, bias)
    a = np.random.default_rng(1).normal(size=(2, rows, k)).astype(np.float32)
    y = session(nxrt, model).run(None, {"A": a})[0]
    want = expected(a, weights, offset)
    scale = np.abs(want).max()
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5 * scale)
    if (bits, zero_points) == (8, "float") or (g_idx and zero_points == "packed"):
        return  # forms ONNX Runtime 1.31 refuses, or reads otherwise than the spec's formula
    theirs = session(onnxruntime, model).run(None, {"A": a})[0]
    np.testing.assert_allclose(y, theirs, rtol=1e-5, atol=1e-5 * scale)


@pytest.mark.parametrize("threads", [1, 2])
def test_one_session_serves_every_row_count_and_both_threads_agree(threads):
    model, weights, offset = quantized_matmul(512, 300, 4, 32, "packed", False, True)
    nx = session(nxrt, model, threads)
    rng = np.random.default_rng(2)
    for rows in (1, 9, 1, 64, 3, 4, 2, 1):
        a = rng.normal(size=(1, rows, 512)).astype(np.float32)
        want = expected(a, weights, offset)
        np.testing.assert_allclose(nx.run(None, {"A": a})[0], want, rtol=1e-5,
                                   atol=1e-5 * np.abs(want).max(), err_msg=f"rows {rows}")


def test_float16_activations_scales_and_bias():
    model, weights, offset = quantized_matmul(200, 48, 4, 32, "float", False, True,
                                              dtype=np.float16)
    a = np.random.default_rng(3).normal(size=(1, 5, 200)).astype(np.float16)
    y = session(nxrt, model).run(None, {"A": a})[0]
    assert y.dtype == np.float16
    want = expected(a, weights, offset)
    np.testing.assert_allclose(y.astype(np.float64), want, rtol=2e-3, atol=2e-3 * np.abs(want).max())
    theirs = session(onnxruntime, model).run(None, {"A": a})[0]
    np.testing.assert_allclose(y.astype(np.float32), theirs.astype(np.float32), rtol=4e-3,
                               atol=4e-3 * np.abs(want).max())


def test_bfloat16_activations_scales_and_zero_points():
    """Checked against the dequantized product alone: ONNX Runtime's CPU
    kernel has no bfloat16 form."""
    model, weights, offset = quantized_matmul(128, 24, 4, 32, "float", False, False,
                                              dtype=ml_dtypes.bfloat16)
    a = np.random.default_rng(5).normal(size=(1, 3, 128)).astype(ml_dtypes.bfloat16)
    y = session(nxrt, model).run(None, {"A": a})[0]
    assert y.dtype == ml_dtypes.bfloat16
    want = expected(a, weights, offset)
    np.testing.assert_allclose(y.astype(np.float64), want, rtol=1e-2, atol=1e-2 * np.abs(want).max())


@pytest.mark.parametrize("block,zero_points", [(16, "none"), (32, "packed"), (64, "packed"),
                                               (128, "float")])
@pytest.mark.parametrize("rows", [1, 3, 7, 40])
def test_int8_activations_at_accuracy_level_4_match_onnxruntime(block, zero_points, rows):
    """Level 4 lets A be int8: quantized per block as ONNX Runtime does, a
    row's result is ONNX Runtime's up to float rounding, whatever the row
    count."""
    k = 3 * block + 8
    model, weights, offset = quantized_matmul(k, 40, 4, block, zero_points, False, True,
                                              accuracy_level=4)
    a = np.random.default_rng(4).normal(size=(1, rows, k)).astype(np.float32)
    ours = session(nxrt, model).run(None, {"A": a})[0]
    theirs = session(onnxruntime, model).run(None, {"A": a})[0]
    scale = np.abs(expected(a, weights, offset)).max()
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=2e-6 * scale)
    if rows > 1:  # the first row alone gets the same values
        alone = session(nxrt, model).run(None, {"A": a[:, :1]})[0]
        np.testing.assert_allclose(alone[0, 0], ours[0, 0], rtol=1e-5, atol=2e-6 * scale)


def test_a_wrong_inner_dim_is_a_one_line_error_and_the_session_stays_usable():
    model, weights, offset = quantized_matmul(64, 16, 4, 32, "none", False, False, declared_k="k")
    nx = session(nxrt, model)
    with pytest.raises(nxrt.InvalidArgument, match=r"MatMulNBits .*last dim must be K = 64"):
        nx.run(None, {"A": np.ones((1, 2, 63), np.float32)})
    a = np.ones((1, 2, 64), np.float32)
    np.testing.assert_allclose(nx.run(None, {"A": a})[0], expected(a, weights, offset), rtol=1e-5)


def test_codes_of_the_wrong_size_are_refused_when_the_session_is_made():
    model, _, _ = quantized_matmul(64, 16, 4, 32, "none", False, False)
    from onnx import load_from_string
    proto = load_from_string(model)
    proto.graph.node[0].attribute[1].i = 17  # N no longer matches B and scales
    with pytest.raises(nxrt.Error, match=r"input 1 \(B, .*\) has 512 elements; it needs 544"):
        session(nxrt, proto.SerializeToString()).run(None, {"A": np.ones((1, 1, 64), np.float32)})


def test_weights_fed_as_inputs_are_checked_on_every_run():
    """One kernel serves every shape, so weights that are graph inputs are
    checked on each call, not only when it was made."""
    node = helper.make_node("MatMulNBits", ["A", "B", "scales"], ["Y"], domain="com.microsoft",
                            K=64, N=16, bits=4, block_size=32)
    graph = helper.make_graph(
        [node], "nbits",
        [helper.make_tensor_value_info("A", TensorProto.FLOAT, ["rows", 64]),
         helper.make_tensor_value_info("B", TensorProto.UINT8, ["n", "blocks", 16]),
         helper.make_tensor_value_info("scales", TensorProto.FLOAT, ["count"])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["rows", 16])])
    model = helper.make_model(graph, ir_version=10, opset_imports=[
        helper.make_opsetid("", 21), helper.make_opsetid("com.microsoft", 1)]).SerializeToString()
    nx = session(nxrt, model)
    a = np.ones((2, 64), np.float32)
    good = {"A": a, "B": np.full((16, 2, 16), 0x99, np.uint8), "scales": np.ones(32, np.float32)}
    np.testing.assert_array_equal(nx.run(None, good)[0], np.full((2, 16), 64.0, np.float32))
    short = {**good, "B": np.full((8, 2, 16), 0x99, np.uint8)}
    with pytest.raises(nxrt.InvalidArgument, match=r"MatMulNBits .*B has 256 elements; it needs 512"):
        nx.run(None, short)
    np.testing.assert_array_equal(nx.run(None, good)[0], np.full((2, 16), 64.0, np.float32))
