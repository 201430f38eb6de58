"""Shared helpers of the nxrt package's tests.

ctest runs them with PYTHONPATH at the build tree's package and these set:
NXRT_MODELS_DIR (the generated models), NXRT_CLI (the nxrt command),
NXRT_RELEASED_MODELS_DIR (the released models scripts/fetch-released-models
brings; tests of them skip where it is empty) and NXRT_CORPUS_CASES_DIR (the
exported corpus as cases, with its weights; tests of it skip without it).
"""

import os
import pathlib

import numpy as np
import pytest
from onnx import TensorProto, helper

MODELS_DIR = pathlib.Path(os.environ.get("NXRT_MODELS_DIR", "models"))
RELEASED_MODELS_DIR = pathlib.Path(os.environ.get("NXRT_RELEASED_MODELS_DIR", ".cache"))
NXRT_CLI = os.environ.get("NXRT_CLI", "nxrt")
CORPUS_CASES_DIR = pathlib.Path(os.environ.get("NXRT_CORPUS_CASES_DIR", "corpus-cases"))


def model_bytes(nodes, inputs, outputs, initializers=(), opset=21, ir_version=10, **model_fields):
    """A serialised model; `inputs` and `outputs` are ValueInfoProtos."""
    graph = helper.make_graph(nodes, "test", inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              ir_version=ir_version, **model_fields)
    return model.SerializeToString()


def tensor_info(name, elem_type, shape):
    return helper.make_tensor_value_info(name, elem_type, shape)


def add_model(shape=(4,), elem_type=TensorProto.FLOAT):
    """c = a + b."""
    return model_bytes([helper.make_node("Add", ["a", "b"], ["c"])],
                       [tensor_info("a", elem_type, shape), tensor_info("b", elem_type, shape)],
                       [tensor_info("c", elem_type, shape)])


def identity_model(elem_type, shape=("n",)):
    return model_bytes([helper.make_node("Identity", ["x"], ["y"])],
                       [tensor_info("x", elem_type, shape)], [tensor_info("y", elem_type, shape)])


def model_path(name):
    path = MODELS_DIR / name
    if not path.exists():
        pytest.skip(f"{path} is not built; build the models target")
    return path


def corpus_model_path(name):
    """The model of the exported corpus's case `exported_<name>`."""
    path = CORPUS_CASES_DIR / f"exported_{name}" / "model.onnx"
    if not path.exists():
        pytest.skip(f"{path} is not built; build the nxrt_corpus_cases target")
    return path


@pytest.fixture
def rng():
    return np.random.default_rng(7)
