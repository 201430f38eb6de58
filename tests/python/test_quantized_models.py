"""The int8 models onnxruntime's own quantizers make of the generated CNN and
encoder layer (scripts/lib/make_models.py): static QDQ, static QOperator
and dynamic. nxrt runs each on its integer kernels, QDQ through the fusion
into QLinearConv and QLinearMatMul, and matches ONNX Runtime to within a
quarter of one quantisation step."""

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
# it reaches by far less; a wrong product moves them by far more. The
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
@pytest.mark.parametrize("optimized", [True, False])
def test_matches_onnxruntime(name, dims, optimized):
    """Against ONNX Runtime as it ships (fusing QDQ as nxrt does) and with its
    graph optimizations off (running the model's ops one by one)."""
    path = model_path(name)
    model = onnx.load(str(path))
    for seed in range(3):
        feeds = random_feeds(model, dims, seed)
        for y, want in zip(run(nxrt, path, feeds), run(onnxruntime, path, feeds, optimized)):
            np.testing.assert_allclose(y, want, rtol=0, atol=STEP_SHARE * np.abs(want).max(),
                                       err_msg=f"{name}, seed {seed}")


@pytest.mark.parametrize("name,fused", [("cnn_int8_qdq.onnx", ["QLinearConv"] * 2),
                                        ("bert_layer_int8_qdq.onnx", ["QLinearMatMul"] * 6)])
def test_every_quantized_product_is_fused(name, fused):
    printed = subprocess.run([NXRT_CLI, "inspect", str(model_path(name))], check=True,
                             capture_output=True, text=True).stdout
    lines = [line for line in printed.splitlines() if " fused as " in line]
    assert sorted(line.rsplit(" fused as ", 1)[1].split()[0] for line in lines) == fused, printed
