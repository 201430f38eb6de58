"""The 8-bit integer ops on the cpu EP (MatMulInteger, QLinearMatMul,
ConvInteger, QLinearConv): every operand dtype, zero points per tensor, per
row and per column or map, constant and fed weights, against exact integer
references computed here in numpy and against ONNX Runtime."""

import itertools

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

import nxrt

ELEM = {np.uint8: TensorProto.UINT8, np.int8: TensorProto.INT8, np.int32: TensorProto.INT32,
        np.float32: TensorProto.FLOAT}


def random_bytes(rng, dtype, shape):
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max + 1, shape).astype(dtype)


def model_of(node, inputs, outputs, initializers):
    graph = helper.make_graph([node], "integer", inputs, outputs, initializers)
    return helper.make_model(graph, ir_version=10, opset_imports=[helper.make_opsetid("", 21)])


def run(module, model, feeds):
    options = module.SessionOptions()
    options.intra_op_num_threads = 1
    session = module.InferenceSession(model.SerializeToString(), options,
                                      providers=["CPUExecutionProvider"])
    return session.run(None, feeds)[0]


def run_onnxruntime(model, feeds):
    """ONNX Runtime's result, or None where it has no kernel for the dtypes."""
    try:
        return run(onnxruntime, model, feeds)
    except Exception as error:  # onnxruntime raises its own NOT_IMPLEMENTED types
        if "NOT_IMPLEMENTED" in str(error) or "Could not find an implementation" in str(error):
            return None
        raise


def requantized(acc, multiplier, zero, dtype):
    """round_half_even(float32(acc) * multiplier) + zero, saturated, in float32 as the kernels."""
    info = np.iinfo(dtype)
    scaled = acc.astype(np.float32) * np.asarray(multiplier, np.float32)
    return np.clip(np.rint(scaled) + zero, info.min, info.max).astype(dtype)


def add_operand(name, value, constant, inputs, initializers, feeds):
    if constant:
        initializers.append(numpy_helper.from_array(value, name))
    else:
        inputs.append(helper.make_tensor_value_info(name, ELEM[value.dtype.type], value.shape))
        feeds[name] = value


# MatMulInteger: A dtype, B dtype, a_zero form, b_zero form.
MATMUL_INTEGER_FORMS = [
    (np.uint8, np.int8, "scalar", "none"),
    (np.uint8, np.uint8, "scalar", "scalar"),
    (np.uint8, np.int8, "none", "column"),
    (np.int8, np.int8, "scalar", "column"),
    (np.int8, np.uint8, "row", "scalar"),
    (np.uint8, np.uint8, "row", "column"),
]


@pytest.mark.parametrize("a_type,b_type,a_zero,b_zero", MATMUL_INTEGER_FORMS)
@pytest.mark.parametrize("k,n", [(7, 1), (64, 33), (300, 70)])
@pytest.mark.parametrize("constant_b", [True, False])
def test_matmul_integer_is_exact(a_type, b_type, a_zero, b_zero, k, n, constant_b):
    rng = np.random.default_rng(k * n)
    rows = 5
    a = random_bytes(rng, a_type, (2, rows, k))
    b = random_bytes(rng, b_type, (k, n))
    inputs = [helper.make_tensor_value_info("A", ELEM[a_type], a.shape)]
    initializers, feeds = [], {"A": a}
    add_operand("B", b, constant_b, inputs, initializers, feeds)
    names = ["A", "B", "", ""]
    za = np.zeros(1, np.int64)
    zb = np.zeros(1, np.int64)
    if a_zero != "none":
        za_value = random_bytes(rng, a_type, (rows,) if a_zero == "row" else ())
        initializers.append(numpy_helper.from_array(za_value, "a_zero"))
        names[2], za = "a_zero", za_value.astype(np.int64).reshape(-1, 1)
    if b_zero != "none":
        zb_value = random_bytes(rng, b_type, (n,) if b_zero == "column" else ())
        add_operand("b_zero", zb_value, True, inputs, initializers, feeds)
        names[3], zb = "b_zero", zb_value.astype(np.int64)
    while names[-1] == "":
        names.pop()
    model = model_of(helper.make_node("MatMulInteger", names, ["Y"]), inputs,
                     [helper.make_tensor_value_info("Y", TensorProto.INT32, None)], initializers)
    want = (a.astype(np.int64) - za) @ (b.astype(np.int64) - zb)
    y = run(nxrt, model, feeds)
    assert y.dtype == np.int32
    np.testing.assert_array_equal(y, want)
    if a_zero != "row":
        theirs = run_onnxruntime(model, feeds)
        if theirs is not None:
            np.testing.assert_array_equal(y, theirs)


def test_matmul_integer_batched_b_and_one_dimensional_a():
    rng = np.random.default_rng(5)
    a = random_bytes(rng, np.uint8, (3, 4, 20))
    b = random_bytes(rng, np.int8, (3, 20, 6))
    inputs = [helper.make_tensor_value_info("A", TensorProto.UINT8, a.shape),
              helper.make_tensor_value_info("B", TensorProto.INT8, b.shape)]
    model = model_of(helper.make_node("MatMulInteger", ["A", "B"], ["Y"]), inputs,
                     [helper.make_tensor_value_info("Y", TensorProto.INT32, None)], [])
    np.testing.assert_array_equal(run(nxrt, model, {"A": a, "B": b}),
                                  a.astype(np.int64) @ b.astype(np.int64))
    vector = a[0, 0]
    inputs[0] = helper.make_tensor_value_info("A", TensorProto.UINT8, vector.shape)
    inputs[1] = helper.make_tensor_value_info("B", TensorProto.INT8, b[0].shape)
    model = model_of(helper.make_node("MatMulInteger", ["A", "B"], ["Y"]), inputs,
                     [helper.make_tensor_value_info("Y", TensorProto.INT32, None)], [])
    np.testing.assert_array_equal(run(nxrt, model, {"A": vector, "B": b[0]}),
                                  vector.astype(np.int64) @ b[0].astype(np.int64))


def qlinear_matmul(rng, a_type, b_type, y_type, k, n, per_column, constant_b, a_shape,
                   symmetric_b=False, b_shape=None):
    a = random_bytes(rng, a_type, a_shape + (k,))
    b = random_bytes(rng, b_type, (b_shape or ()) + (k, n))
    a_scale = np.float32(rng.uniform(0.01, 0.05))
    b_scale = rng.uniform(0.005, 0.02, (n,) if per_column else ()).astype(np.float32)
    y_scale = np.float32(rng.uniform(0.5, 2.0) * np.sqrt(k) * 0.05)
    a_zero = random_bytes(rng, a_type, ())
    b_zero = random_bytes(rng, b_type, (n,) if per_column else ())
    if symmetric_b:
        b_zero = np.full(b_zero.shape, 128 if b_type == np.uint8 else 0, b_type)
    y_zero = random_bytes(rng, y_type, ())
    inputs = [helper.make_tensor_value_info("A", ELEM[a_type], a.shape)]
    initializers, feeds = [], {"A": a}
    for name, value in [("a_scale", np.array(a_scale)), ("a_zero", a_zero)]:
        initializers.append(numpy_helper.from_array(value, name))
    add_operand("B", b, constant_b, inputs, initializers, feeds)
    for name, value in [("b_scale", b_scale), ("b_zero", b_zero),
                        ("y_scale", np.array(y_scale)), ("y_zero", y_zero)]:
        initializers.append(numpy_helper.from_array(np.asarray(value), name))
    node = helper.make_node("QLinearMatMul", ["A", "a_scale", "a_zero", "B", "b_scale", "b_zero",
                                              "y_scale", "y_zero"], ["Y"])
    model = model_of(node, inputs, [helper.make_tensor_value_info("Y", ELEM[y_type], None)],
                     initializers)
    acc = (a.astype(np.int64) - int(a_zero)) @ (b.astype(np.int64) - b_zero.astype(np.int64))
    multiplier = (a_scale * b_scale).astype(np.float32) / y_scale
    return model, feeds, requantized(acc, multiplier, int(y_zero), y_type)


@pytest.mark.parametrize("a_type,b_type,y_type", [(np.uint8, np.int8, np.uint8),
                                                  (np.uint8, np.uint8, np.uint8),
                                                  (np.int8, np.int8, np.int8),
                                                  (np.int8, np.uint8, np.uint8)])
@pytest.mark.parametrize("per_column", [False, True])
@pytest.mark.parametrize("constant_b", [True, False])
@pytest.mark.parametrize("symmetric_b", [False, True])
@pytest.mark.parametrize("k,n", [(16, 8), (256, 40)])
def test_qlinear_matmul_matches_the_integer_reference(a_type, b_type, y_type, per_column,
                                                      constant_b, symmetric_b, k, n):
    """A symmetric B (zero points 0, or 128 for uint8) is requantised inside
    oneDNN's product, any other B by the EP after it."""
    rng = np.random.default_rng(k + n)
    model, feeds, want = qlinear_matmul(rng, a_type, b_type, y_type, k, n, per_column,
                                        constant_b, (3, 7), symmetric_b)
    y = run(nxrt, model, feeds)
    assert y.dtype == y_type
    np.testing.assert_array_equal(y, want)
    theirs = run_onnxruntime(model, feeds)
    if theirs is not None:
        assert np.abs(y.astype(np.int32) - theirs.astype(np.int32)).max() <= 1


@pytest.mark.parametrize("b_type", [np.uint8, np.int8])
def test_qlinear_matmul_of_batched_activations(b_type):
    """Attention's products: B fed per batch, as the QDQ fusion makes them."""
    rng = np.random.default_rng(9)
    model, feeds, want = qlinear_matmul(rng, np.uint8, b_type, np.uint8, 64, 48, False, False,
                                        (2, 4, 30), True, (2, 4))
    np.testing.assert_array_equal(run(nxrt, model, feeds), want)


def integer_conv_reference(x, w, x_zero, w_zero, group, strides, pads, dilations):
    """Exact int64 convolution of (x - x_zero) and (w - w_zero[map]), any spatial rank."""
    spatial = x.ndim - 2
    xs = x.astype(np.int64) - x_zero
    ws = w.astype(np.int64) - np.asarray(w_zero, np.int64).reshape((-1,) + (1,) * (w.ndim - 1))
    xs = np.pad(xs, [(0, 0), (0, 0)] + [(pads[i], pads[i + spatial]) for i in range(spatial)])
    kernel = w.shape[2:]
    out = [(xs.shape[2 + i] - (kernel[i] - 1) * dilations[i] - 1) // strides[i] + 1
           for i in range(spatial)]
    maps, group_channels = w.shape[0], w.shape[1]
    group_maps = maps // group
    y = np.zeros((x.shape[0], maps) + tuple(out), np.int64)
    for offset in itertools.product(*[range(k) for k in kernel]):
        window = tuple(slice(offset[i] * dilations[i],
                             offset[i] * dilations[i] + (out[i] - 1) * strides[i] + 1, strides[i])
                       for i in range(spatial))
        patch = xs[(slice(None), slice(None)) + window]
        for g in range(group):
            channels = patch[:, g * group_channels:(g + 1) * group_channels]
            taps = ws[(slice(g * group_maps, (g + 1) * group_maps), slice(None)) + offset]
            y[:, g * group_maps:(g + 1) * group_maps] += np.einsum("nc...,mc->nm...", channels,
                                                                   taps)
    return y


# x dims, W dims, group, strides, pads, dilations
CONV_SHAPES = [
    ((1, 8, 9, 11), (16, 8, 3, 3), 1, [1, 1], [1, 1, 1, 1], [1, 1]),
    ((2, 6, 10, 10), (4, 3, 3, 3), 2, [2, 2], [0, 1, 2, 0], [1, 1]),
    ((1, 24, 12, 20), (24, 1, 5, 5), 24, [1, 1], [2, 2, 2, 2], [1, 1]),
    ((1, 16, 7, 7), (32, 16, 1, 1), 1, [1, 1], [0, 0, 0, 0], [1, 1]),
    ((1, 4, 9, 9), (8, 4, 3, 3), 1, [1, 1], [2, 2, 2, 2], [2, 2]),
    ((1, 5, 30), (7, 5, 4), 1, [3], [1, 2], [1]),
    ((1, 3, 5, 6, 7), (4, 3, 2, 3, 2), 1, [1, 2, 1], [1, 0, 1, 0, 1, 1], [1, 1, 1]),
]

# x dtype, W dtype, W zero point form ("symmetric": 0 for int8, 128 for uint8)
CONV_FORMS = [
    (np.uint8, np.int8, "symmetric"),
    (np.uint8, np.uint8, "symmetric"),
    (np.int8, np.int8, "symmetric"),
    (np.uint8, np.uint8, "map"),
    (np.int8, np.int8, "scalar"),
]


def w_zero_of(rng, w_type, form, maps):
    if form == "symmetric":
        return np.array(128 if w_type == np.uint8 else 0, w_type)
    return random_bytes(rng, w_type, (maps,) if form == "map" else ())


@pytest.mark.parametrize("x_type,w_type,w_form", CONV_FORMS)
@pytest.mark.parametrize("x_dims,w_dims,group,strides,pads,dilations", CONV_SHAPES)
@pytest.mark.parametrize("constant_w", [True, False])
def test_conv_integer_is_exact(x_type, w_type, w_form, x_dims, w_dims, group, strides, pads,
                               dilations, constant_w):
    rng = np.random.default_rng(sum(x_dims) + sum(w_dims))
    x = random_bytes(rng, x_type, x_dims)
    w = random_bytes(rng, w_type, w_dims)
    x_zero = random_bytes(rng, x_type, ())
    w_zero = w_zero_of(rng, w_type, w_form, w_dims[0])
    inputs = [helper.make_tensor_value_info("x", ELEM[x_type], x_dims)]
    initializers = [numpy_helper.from_array(x_zero, "x_zero"),
                    numpy_helper.from_array(w_zero, "w_zero")]
    feeds = {"x": x}
    add_operand("w", w, constant_w, inputs, initializers, feeds)
    node = helper.make_node("ConvInteger", ["x", "w", "x_zero", "w_zero"], ["y"], group=group,
                            strides=strides, pads=pads, dilations=dilations)
    model = model_of(node, inputs, [helper.make_tensor_value_info("y", TensorProto.INT32, None)],
                     initializers)
    want = integer_conv_reference(x, w, int(x_zero), w_zero, group, strides, pads, dilations)
    y = run(nxrt, model, feeds)
    assert y.dtype == np.int32
    np.testing.assert_array_equal(y, want)


def qlinear_conv(rng, x_type, w_type, w_form, y_type, x_dims, w_dims, group, strides, pads,
                 dilations, per_map, bias, constant_w=True):
    x = random_bytes(rng, x_type, x_dims)
    w = random_bytes(rng, w_type, w_dims)
    maps = w_dims[0]
    x_scale = np.array(rng.uniform(0.01, 0.05), np.float32)
    w_scale = rng.uniform(0.005, 0.02, (maps,) if per_map else ()).astype(np.float32)
    window = np.prod(w_dims[1:])
    y_scale = np.array(rng.uniform(0.5, 2.0) * np.sqrt(window) * 0.05, np.float32)
    x_zero = random_bytes(rng, x_type, ())
    w_zero = w_zero_of(rng, w_type, w_form, maps)
    y_zero = random_bytes(rng, y_type, ())
    b = rng.integers(-5000, 5000, maps).astype(np.int32)
    inputs = [helper.make_tensor_value_info("x", ELEM[x_type], x_dims)]
    initializers, feeds = [], {"x": x}
    for name, value in [("x_scale", x_scale), ("x_zero", x_zero)]:
        initializers.append(numpy_helper.from_array(value, name))
    add_operand("w", w, constant_w, inputs, initializers, feeds)
    for name, value in [("w_scale", w_scale), ("w_zero", w_zero), ("y_scale", y_scale),
                        ("y_zero", y_zero), ("b", b)]:
        initializers.append(numpy_helper.from_array(np.asarray(value), name))
    names = ["x", "x_scale", "x_zero", "w", "w_scale", "w_zero", "y_scale", "y_zero"]
    if bias:
        names.append("b")
    node = helper.make_node("QLinearConv", names, ["y"], group=group, strides=strides,
                            pads=pads, dilations=dilations)
    model = model_of(node, inputs, [helper.make_tensor_value_info("y", ELEM[y_type], None)],
                     initializers)
    acc = integer_conv_reference(x, w, int(x_zero), w_zero, group, strides, pads, dilations)
    spatial = (1,) * (len(x_dims) - 2)
    if bias:
        acc = acc + b.astype(np.int64).reshape((maps,) + spatial)
    multiplier = (x_scale * w_scale / y_scale).astype(np.float32)
    if per_map:
        multiplier = multiplier.reshape((maps,) + spatial)
    return model, feeds, requantized(acc, multiplier, int(y_zero), y_type)


@pytest.mark.parametrize("x_type,w_type,w_form", CONV_FORMS)
@pytest.mark.parametrize("x_dims,w_dims,group,strides,pads,dilations", CONV_SHAPES)
@pytest.mark.parametrize("per_map,bias", [(True, True), (False, False)])
def test_qlinear_conv_matches_the_integer_reference(x_type, w_type, w_form, x_dims, w_dims, group,
                                                    strides, pads, dilations, per_map, bias):
    rng = np.random.default_rng(sum(x_dims) * 7 + sum(w_dims))
    model, feeds, want = qlinear_conv(rng, x_type, w_type, w_form, x_type, x_dims, w_dims, group,
                                      strides, pads, dilations, per_map, bias)
    y = run(nxrt, model, feeds)
    assert y.dtype == x_type
    np.testing.assert_array_equal(y, want)
    theirs = run_onnxruntime(model, feeds)
    if theirs is not None:
        assert np.abs(y.astype(np.int32) - theirs.astype(np.int32)).max() <= 1


def test_qlinear_conv_with_weights_fed_as_an_input():
    rng = np.random.default_rng(11)
    for w_type, w_form in [(np.int8, "symmetric"), (np.uint8, "map")]:
        model, feeds, want = qlinear_conv(rng, np.uint8, w_type, w_form, np.uint8,
                                          (1, 8, 9, 9), (8, 8, 3, 3), 1, [1, 1], [1, 1, 1, 1],
                                          [1, 1], True, True, constant_w=False)
        np.testing.assert_array_equal(run(nxrt, model, feeds), want)


def test_a_wrong_zero_point_count_is_a_clear_error_and_the_session_stays_usable():
    rng = np.random.default_rng(12)
    a = random_bytes(rng, np.uint8, (4, 8))
    b = random_bytes(rng, np.int8, (8, 5))
    inputs = [helper.make_tensor_value_info("A", TensorProto.UINT8, a.shape),
              helper.make_tensor_value_info("b_zero", TensorProto.INT8, ["z"])]
    initializers = [numpy_helper.from_array(b, "B")]
    model = model_of(helper.make_node("MatMulInteger", ["A", "B", "", "b_zero"], ["Y"]), inputs,
                     [helper.make_tensor_value_info("Y", TensorProto.INT32, None)], initializers)
    session = nxrt.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    with pytest.raises(Exception, match="b_zero_point holds 3 values"):
        session.run(None, {"A": a, "b_zero": np.zeros(3, np.int8)})
    zero = np.array([1, 2, 3, 4, 5], np.int8)
    np.testing.assert_array_equal(session.run(None, {"A": a, "b_zero": zero})[0],
                                  a.astype(np.int64) @ (b.astype(np.int64) - zero))


@pytest.mark.parametrize("op", ["QLinearAdd", "QLinearMul"])
@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
@pytest.mark.parametrize("a_shape,b_shape", [((2, 8, 5, 7), (2, 8, 5, 7)),
                                             ((2, 8, 5, 7), (1, 8, 1, 1)),
                                             ((3, 40), ()), ((1, 1, 6), (4, 3, 1)),
                                             ((2, 3, 40, 40), (1, 3, 1, 1)), ((), (48, 40))])
def test_qlinear_binary_is_the_qdq_formula(op, dtype, a_shape, b_shape):
    """com.microsoft QLinearAdd and QLinearMul: within one step of
    quantize(dequantize(A) op dequantize(B)) computed in float32 step by step
    as the QDQ form computes it (the kernel folds the scales into
    multipliers, as ONNX Runtime's does), nearly always equal to it, and
    within one step of ONNX Runtime's kernels."""
    rng = np.random.default_rng(len(a_shape) * 10 + len(b_shape))
    a = random_bytes(rng, dtype, a_shape)
    b = random_bytes(rng, dtype, b_shape)
    scales = [np.array(rng.uniform(0.01, 0.05), np.float32) for _ in range(3)]
    if op == "QLinearMul":
        scales[2] = np.array(rng.uniform(0.01, 0.05) * scales[0] * 60, np.float32)
    zeros = [random_bytes(rng, dtype, ()) for _ in range(3)]
    names = ["a", "a_scale", "a_zero", "b", "b_scale", "b_zero", "c_scale", "c_zero"]
    initializers = [numpy_helper.from_array(v, n) for n, v in
                    zip(["a_scale", "a_zero", "b_scale", "b_zero", "c_scale", "c_zero"],
                        [scales[0], zeros[0], scales[1], zeros[1], scales[2], zeros[2]])]
    inputs = [helper.make_tensor_value_info("a", ELEM[dtype], a_shape),
              helper.make_tensor_value_info("b", ELEM[dtype], b_shape)]
    node = helper.make_node(op, names, ["c"], domain="com.microsoft")
    graph = helper.make_graph([node], "binary", inputs,
                              [helper.make_tensor_value_info("c", ELEM[dtype], None)], initializers)
    model = helper.make_model(graph, ir_version=10, opset_imports=[
        helper.make_opsetid("", 21), helper.make_opsetid("com.microsoft", 1)])
    feeds = {"a": a, "b": b}
    x = (a.astype(np.float32) - np.float32(zeros[0])) * scales[0]
    y = (b.astype(np.float32) - np.float32(zeros[1])) * scales[1]
    combined = (x + y) if op == "QLinearAdd" else (x * y)
    info = np.iinfo(dtype)
    want = np.clip(np.rint(combined / scales[2]) + int(zeros[2]), info.min, info.max).astype(dtype)
    got = run(nxrt, model, feeds)
    assert np.abs(got.astype(np.int32) - want.astype(np.int32)).max() <= 1
    assert np.mean(got == want) >= 0.99
    theirs = run_onnxruntime(model, feeds)
    assert theirs is not None
    assert np.abs(got.astype(np.int32) - theirs.astype(np.int32)).max() <= 1


def contrib_model(node, inputs, outputs, initializers):
    graph = helper.make_graph([node], "contrib", inputs, outputs, initializers)
    return helper.make_model(graph, ir_version=10, opset_imports=[
        helper.make_opsetid("", 21), helper.make_opsetid("com.microsoft", 1)])


@pytest.mark.parametrize("a_type,b_type", [(np.uint8, np.int8), (np.uint8, np.uint8),
                                           (np.int8, np.int8)])
@pytest.mark.parametrize("trans_a,trans_b", [(0, 0), (0, 1), (1, 1)])
@pytest.mark.parametrize("c_shape", [None, (24,), (5, 1), (5, 24)])
@pytest.mark.parametrize("requantised", [True, False])
def test_qgemm_matches_the_integer_reference_and_onnxruntime(a_type, b_type, trans_a, trans_b,
                                                             c_shape, requantised):
    rng = np.random.default_rng(trans_a * 4 + trans_b * 2 + (c_shape is None))
    m, k, n = 5, 37, 24
    a = random_bytes(rng, a_type, (k, m) if trans_a else (m, k))
    b = random_bytes(rng, b_type, (n, k) if trans_b else (k, n))
    alpha = 0.75
    a_scale = np.array(0.02, np.float32)
    b_scale = rng.uniform(0.005, 0.02, n).astype(np.float32)
    a_zero, b_zero = random_bytes(rng, a_type, ()), random_bytes(rng, b_type, (n,))
    y_scale = np.array(0.05, np.float32)
    y_zero = random_bytes(rng, a_type, ())
    names = ["a", "a_scale", "a_zero", "b", "b_scale", "b_zero", "", "", ""]
    initializers = [numpy_helper.from_array(v, name) for name, v in
                    [("a_scale", a_scale), ("a_zero", a_zero), ("b", b), ("b_scale", b_scale),
                     ("b_zero", b_zero)]]
    acc = ((a.T if trans_a else a).astype(np.int64) - int(a_zero)) @ \
        ((b.T if trans_b else b).astype(np.int64) - b_zero.astype(np.int64))
    if c_shape is not None:
        c = rng.integers(-3000, 3000, c_shape).astype(np.int32)
        initializers.append(numpy_helper.from_array(c, "c"))
        names[6] = "c"
        acc = acc + c
    scale = (np.float32(alpha) * a_scale * b_scale).astype(np.float32)
    if requantised:
        initializers += [numpy_helper.from_array(y_scale, "y_scale"),
                         numpy_helper.from_array(y_zero, "y_zero")]
        names[7:9] = ["y_scale", "y_zero"]
        want = requantized(acc, scale / y_scale, int(y_zero), a_type)
        out_type = ELEM[a_type]
    else:
        want = acc.astype(np.float32) * scale
        out_type = TensorProto.FLOAT
    while names[-1] == "":
        names.pop()
    node = helper.make_node("QGemm", names, ["y"], domain="com.microsoft", alpha=alpha,
                            transA=trans_a, transB=trans_b)
    model = contrib_model(node, [helper.make_tensor_value_info("a", ELEM[a_type], a.shape)],
                          [helper.make_tensor_value_info("y", out_type, None)], initializers)
    y = run(nxrt, model, {"a": a})
    np.testing.assert_array_equal(y, want)
    theirs = run_onnxruntime(model, {"a": a})
    if theirs is not None:
        if requantised:
            assert np.abs(y.astype(np.int32) - theirs.astype(np.int32)).max() <= 1
        else:
            np.testing.assert_allclose(y, theirs, rtol=1e-6, atol=1e-6 * np.abs(want).max())


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
@pytest.mark.parametrize("channels_last", [0, 1])
def test_qlinear_global_average_pool_matches_onnxruntime(dtype, channels_last):
    rng = np.random.default_rng(channels_last)
    x = random_bytes(rng, dtype, (2, 7, 9, 24) if channels_last else (2, 24, 7, 9))
    values = [("x_scale", np.array(0.03, np.float32)), ("x_zero", random_bytes(rng, dtype, ())),
              ("y_scale", np.array(0.02, np.float32)), ("y_zero", random_bytes(rng, dtype, ()))]
    node = helper.make_node("QLinearGlobalAveragePool", ["x"] + [n for n, _ in values], ["y"],
                            domain="com.microsoft", channels_last=channels_last)
    model = contrib_model(node, [helper.make_tensor_value_info("x", ELEM[dtype], x.shape)],
                          [helper.make_tensor_value_info("y", ELEM[dtype], None)],
                          [numpy_helper.from_array(v, n) for n, v in values])
    axes = (1, 2) if channels_last else (2, 3)
    sums = x.astype(np.int64).sum(axis=axes, keepdims=True) - int(values[1][1]) * 63
    scale = np.float32(values[0][1] / (values[2][1] * np.float32(63)))
    want = requantized(sums, scale, int(values[3][1]), dtype)
    y = run(nxrt, model, {"x": x})
    np.testing.assert_array_equal(y, want)
    theirs = run_onnxruntime(model, {"x": x})
    assert theirs is not None
    assert np.abs(y.astype(np.int32) - theirs.astype(np.int32)).max() <= 1


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
@pytest.mark.parametrize("kernel,stride", [(2, 2), (3, 2), (3, 1), (4, 3)])
def test_max_pool_of_bytes_without_pads(dtype, kernel, stride):
    """MaxPool on the 8-bit tensors of the QOperator form, against numpy."""
    rng = np.random.default_rng(kernel * 10 + stride)
    x = random_bytes(rng, dtype, (2, 5, 17, 23))
    node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[kernel, kernel],
                            strides=[stride, stride])
    model = model_of(node, [helper.make_tensor_value_info("x", ELEM[dtype], x.shape)],
                     [helper.make_tensor_value_info("y", ELEM[dtype], None)], [])
    out_h, out_w = (17 - kernel) // stride + 1, (23 - kernel) // stride + 1
    want = np.full((2, 5, out_h, out_w), np.iinfo(dtype).min, dtype)
    for i in range(kernel):
        for j in range(kernel):
            want = np.maximum(want, x[:, :, i:i + stride * (out_h - 1) + 1:stride,
                                      j:j + stride * (out_w - 1) + 1:stride])
    np.testing.assert_array_equal(run(nxrt, model, {"x": x}), want)


@pytest.mark.parametrize("op", ["QLinearSigmoid", "QLinearLeakyRelu"])
@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
def test_qlinear_activations_match_the_qdq_formula_and_onnxruntime(op, dtype):
    """Every one of the 256 input values, through the op's table."""
    rng = np.random.default_rng(len(op))
    info = np.iinfo(dtype)
    x = np.arange(info.min, info.max + 1).astype(dtype).reshape(2, 8, 16)
    values = [("x_scale", np.array(0.05, np.float32)), ("x_zero", random_bytes(rng, dtype, ())),
              ("y_scale", np.array(0.004 if op == "QLinearSigmoid" else 0.03, np.float32)),
              ("y_zero", np.array(info.min if op == "QLinearSigmoid" else 0, dtype))]
    attributes = {"alpha": 0.2} if op == "QLinearLeakyRelu" else {}
    node = helper.make_node(op, ["x"] + [n for n, _ in values], ["y"], domain="com.microsoft",
                            **attributes)
    model = contrib_model(node, [helper.make_tensor_value_info("x", ELEM[dtype], x.shape)],
                          [helper.make_tensor_value_info("y", ELEM[dtype], None)],
                          [numpy_helper.from_array(v, n) for n, v in values])
    real = (x.astype(np.float32) - np.float32(values[1][1])) * values[0][1]
    if op == "QLinearSigmoid":
        f = (1 / (1 + np.exp(-real.astype(np.float64)))).astype(np.float32)
    else:
        f = np.where(real >= 0, real, real * np.float32(0.2))
    want = np.clip(np.rint(f / values[2][1]) + int(values[3][1]), info.min, info.max)
    y = run(nxrt, model, {"x": x})
    assert np.abs(y.astype(np.int32) - want.astype(np.int32)).max() <= 1
    assert np.mean(y == want) >= 0.98
    theirs = run_onnxruntime(model, {"x": x})
    assert theirs is not None
    assert np.abs(y.astype(np.int32) - theirs.astype(np.int32)).max() <= 1


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
@pytest.mark.parametrize("axis", [1, -1])
def test_qlinear_concat_requantises_each_operand_as_onnxruntime(dtype, axis):
    rng = np.random.default_rng(axis + 5)
    shapes = [(2, 3, 4), (2, 5, 4), (2, 1, 4)] if axis == 1 else [(2, 3, 4), (2, 3, 2), (2, 3, 7)]
    xs = [random_bytes(rng, dtype, s) for s in shapes]
    y_scale, y_zero = np.array(0.04, np.float32), random_bytes(rng, dtype, ())
    # The first operand shares Y's quantization and is copied; the others
    # are requantised.
    params = [(y_scale, y_zero), (np.array(0.02, np.float32), random_bytes(rng, dtype, ())),
              (np.array(0.07, np.float32), random_bytes(rng, dtype, ()))]
    names, initializers, inputs, feeds = ["y_scale", "y_zero"], [], [], {}
    initializers += [numpy_helper.from_array(y_scale, "y_scale"),
                     numpy_helper.from_array(y_zero, "y_zero")]
    wants = []
    info = np.iinfo(dtype)
    for k, (x, (scale, zero)) in enumerate(zip(xs, params)):
        names += [f"x{k}", f"x{k}_scale", f"x{k}_zero"]
        inputs.append(helper.make_tensor_value_info(f"x{k}", ELEM[dtype], x.shape))
        initializers += [numpy_helper.from_array(scale, f"x{k}_scale"),
                         numpy_helper.from_array(zero, f"x{k}_zero")]
        feeds[f"x{k}"] = x
        real = (x.astype(np.float32) - np.float32(zero)) * scale
        wants.append(np.clip(np.rint(real / y_scale) + int(y_zero), info.min, info.max))
    node = helper.make_node("QLinearConcat", names, ["y"], domain="com.microsoft", axis=axis)
    model = contrib_model(node, inputs, [helper.make_tensor_value_info("y", ELEM[dtype], None)],
                          initializers)
    y = run(nxrt, model, feeds)
    np.testing.assert_array_equal(y, np.concatenate(wants, axis=axis).astype(dtype))
    theirs = run_onnxruntime(model, feeds)
    assert theirs is not None
    assert np.abs(y.astype(np.int32) - theirs.astype(np.int32)).max() <= 1
