"""The int8 models onnxruntime's own quantizers make of the generated CNN and
encoder layer (scripts/lib/make_models.py): static QDQ, static QOperator
and dynamic. nxrt runs each on its integer kernels, QDQ through the fusion
into QLinearConv and QLinearMatMul, and matches ONNX Runtime to within a
quarter of one quantisation step."""

import collections
import subprocess

import numpy as np
import onnx
import onnxruntime
import pytest

import nxrt
from conftest import NXRT_CLI, model_path

MODELS = [
    ("cnn_int8_qdq.onnx", {}),
    ("cnn_int8_qoperator.onnx", {}),
    ("bert_layer_int8_qdq.onnx", {"batch": 1, "seq": 24}),
    ("bert_layer_int8_dynamic.onnx", {"batch": 2, "seq": 24}),
]

# Of the largest output magnitude: a quarter of an int8 step (1/255 of a
# tensor's range). Float rounding that differs between the engines may flip
# a rounding tie where an activation is quantized, which moves the outputs
# it reaches by far less; a wrong product moves them by far more. Where ONNX
# Runtime's optimized and plain runs differ by more (its fused elementwise
# kernels round in another order), nxrt may be as far from either. The
# kernels themselves are checked bit for bit (test_integer_ops.py).
STEP_SHARE = 1e-3


def random_feeds(model, dims, seed):
    """Standard normal float32 for each graph input, symbolic dims bound by `dims`."""
    rng = np.random.default_rng(seed)
    feeds = {}
    for value in model.graph.input:
        shape = [d.dim_value if d.HasField("dim_value") else dims[d.dim_param]
                 for d in value.type.tensor_type.shape.dim]
        feeds[value.name] = rng.standard_normal(shape).astype(np.float32)
    return feeds


def run(module, path, feeds, optimized=True):
    options = module.SessionOptions()
    options.intra_op_num_threads = 1
    if not optimized:
        options.graph_optimization_level = module.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = module.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


@pytest.mark.parametrize("name,dims", MODELS)
def test_matches_onnxruntime(name, dims):
    """Against ONNX Runtime as it ships (fusing QDQ as nxrt does) and with its
    graph optimizations off (running the model's ops one by one)."""
    path = model_path(name)
    model = onnx.load(str(path))
    for seed in range(3):
        feeds = random_feeds(model, dims, seed)
        ours = run(nxrt, path, feeds)
        optimized, plain = run(onnxruntime, path, feeds), run(onnxruntime, path, feeds, False)
        for y, fused, unfused in zip(ours, optimized, plain):
            bound = max(STEP_SHARE * np.abs(unfused).max(), np.abs(fused - unfused).max())
            for want, form in ((fused, "optimized"), (unfused, "plain")):
                np.testing.assert_allclose(y, want, rtol=0, atol=bound,
                                           err_msg=f"{name}, seed {seed}, ONNX Runtime {form}")


# Every Conv, MatMul, Add and Mul of the QDQ models between DequantizeLinear
# and QuantizeLinear, by the op it runs as.
QDQ_FUSIONS = {
    "cnn_int8_qdq.onnx": {"QLinearConv": 2},
    "bert_layer_int8_qdq.onnx": {"QLinearMatMul": 6, "com.microsoft::QLinearAdd": 6,
                                 "com.microsoft::QLinearMul": 1},
}


@pytest.mark.parametrize("name", sorted(QDQ_FUSIONS))
def test_every_quantized_op_is_fused(name):
    printed = subprocess.run([NXRT_CLI, "inspect", str(model_path(name))], check=True,
                             capture_output=True, text=True).stdout
    fused = collections.Counter(line.rsplit(" fused as ", 1)[1].split()[0]
                                for line in printed.splitlines() if " fused as " in line)
    assert fused == QDQ_FUSIONS[name], printed
