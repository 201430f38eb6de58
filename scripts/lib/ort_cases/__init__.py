"""Test cases whose expected outputs come from ONNX Runtime.

Each module of this package other than `runner` is a case module: it defines
`cases()`, yielding `(name, model, feeds_list)` where `name` is the case
folder's name (letters, digits, '_', '.' and '-'), `model` an onnx.ModelProto
and `feeds_list` a list of data sets, each a dict from graph input name to
numpy array. `runner` runs every case on ONNX Runtime's CPU execution provider
and writes it, with ORT's outputs as the expected ones, in the ONNX backend
test-case layout that `nxrt test` reads.

The helpers below build the one-node models most cases need and give each
case reproducible random data.
"""
import zlib

import numpy as np
from onnx import helper

# The newest IR version the pinned onnxruntime loads; onnx.helper would
# otherwise stamp its own, newer one.
IR_VERSION = 10
MS_DOMAIN = "com.microsoft"


def node_model(op_type, inputs, outputs, attrs=None, domain="", opset=23):
    """A model of one `op_type` node.

    inputs: (name, elem_type, shape) per node input; a name of "" leaves that
    optional input out. outputs: (name, elem_type, shape) per node output
    (onnx.checker wants output shapes; dims may be names); "" leaves that
    optional output out. `opset` is the
    default domain's; a com.microsoft node also imports com.microsoft 1.
    """
    node = helper.make_node(op_type, [name for name, _, _ in inputs],
                            [name for name, _, _ in outputs], name=op_type, domain=domain,
                            **(attrs or {}))
    graph = helper.make_graph(
        [node], op_type,
        [helper.make_tensor_value_info(name, elem_type, shape)
         for name, elem_type, shape in inputs if name],
        [helper.make_tensor_value_info(name, elem_type, shape)
         for name, elem_type, shape in outputs if name])
    opsets = [helper.make_opsetid("", opset)]
    if domain:
        opsets.append(helper.make_opsetid(domain, 1))
    return helper.make_model(graph, opset_imports=opsets, ir_version=IR_VERSION,
                             producer_name="nxrt-ort-cases")


def rng(*key):
    """A generator seeded from `key` (say the module and case name), so each
    case's data is the same on every run and independent of the others."""
    return np.random.default_rng(zlib.crc32("/".join(map(str, key)).encode()))


def normal(generator, shape, dtype=np.float32):
    """Standard-normal values of `shape` as `dtype`."""
    return generator.standard_normal(shape).astype(dtype)
