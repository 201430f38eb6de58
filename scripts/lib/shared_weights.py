"""Moves the initializers of several models into one external weights file, each distinct tensor stored once.

    shared_weights.py WEIGHTS_FILE MODEL.onnx...

Models made from the same weights (the growing and fixed-capacity forms of a decoder) then share a single copy on
disk; each model refers to it by a path relative to its own folder, as ONNX external data does. Tensors under 1 KiB
stay inline. The models are rewritten in place.
"""

import os
import sys

import onnx

INLINE_LIMIT = 1024


def main(weights_path, model_paths):
    offsets = {}  # (name, bytes) -> offset in the weights file
    with open(weights_path, "wb") as weights:
        for model_path in model_paths:
            model = onnx.load(model_path)
            location = os.path.relpath(weights_path, os.path.dirname(os.path.abspath(model_path)))
            for tensor in model.graph.initializer:
                data = tensor.raw_data
                if len(data) < INLINE_LIMIT:
                    continue
                key = (tensor.name, data)
                if key not in offsets:
                    offsets[key] = weights.tell()
                    weights.write(data)
                tensor.ClearField("raw_data")
                tensor.data_location = onnx.TensorProto.EXTERNAL
                del tensor.external_data[:]
                for entry, value in (("location", location), ("offset", offsets[key]), ("length", len(data))):
                    tensor.external_data.add(key=entry, value=str(value))
            onnx.save(model, model_path)


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:])
