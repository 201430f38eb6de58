"""A small helper for writing ONNX graphs node by node with onnx.helper.

Keeps value names unique, turns numpy arrays into initializers, and gathers
nodes, inputs and outputs until `model()` assembles them.
"""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class GraphBuilder:
    def __init__(self, name):
        self.name = name
        self.nodes = []
        self.inputs = []
        self.outputs = []
        self.initializers = []
        self._used_names = set()

    def unique(self, stem):
        name = stem
        n = 1
        while name in self._used_names:
            name = f"{stem}_{n}"
            n += 1
        self._used_names.add(name)
        return name

    def input(self, name, elem_type, shape):
        self._used_names.add(name)
        self.inputs.append(helper.make_tensor_value_info(name, elem_type, shape))
        return name

    def output(self, value, name, elem_type, shape):
        """Declares `value` as a graph output called `name`, renaming through Identity when they differ."""
        if value != name:
            self._used_names.add(name)
            self.nodes.append(helper.make_node("Identity", [value], [name], name=self.unique(f"{name}_out")))
        self.outputs.append(helper.make_tensor_value_info(name, elem_type, shape))
        return name

    def const(self, array, stem):
        name = self.unique(stem)
        self.initializers.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def op(self, op_type, inputs, stem=None, outputs=1, domain="", **attrs):
        """Adds one node; returns its output name, or a list of names when outputs > 1."""
        base = stem or op_type.lower()
        node_name = self.unique(base)
        names = [self.unique(f"{base}_out{k}" if outputs > 1 else f"{base}_out") for k in range(outputs)]
        self.nodes.append(helper.make_node(op_type, inputs, names, name=node_name, domain=domain, **attrs))
        return names if outputs > 1 else names[0]

    def model(self, opsets):
        """The model with the given {domain: version} imports, e.g. {"": 21, "com.microsoft": 1}."""
        graph = helper.make_graph(self.nodes, self.name, self.inputs, self.outputs, self.initializers)
        imports = [helper.make_opsetid(domain, version) for domain, version in opsets.items()]
        model = helper.make_model(graph, opset_imports=imports, producer_name="nxrt-make-models")
        # The oldest IR that carries these opsets, so older readers accept the file.
        model.ir_version = helper.find_min_ir_version_for(imports, ignore_unknown=True)
        return model


FLOAT = TensorProto.FLOAT
INT64 = TensorProto.INT64
INT32 = TensorProto.INT32
