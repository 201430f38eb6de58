"""Cases of the row normalisations decoder models use: RMSNormalization over
several shapes and axes, in float32 and float16, including the decode-step
shape of one row of 512 values per token."""
import numpy as np
from onnx import TensorProto

from ort_cases import node_model, normal, rng

FLOAT_TYPES = {"f32": (np.float32, TensorProto.FLOAT), "f16": (np.float16, TensorProto.FLOAT16)}


def rms_normalization():
    # (x shape, axis, scale shape, epsilon)
    shapes = [
        ((4, 8), -1, (8,), None),
        ((2, 3, 16), -1, (16,), 1e-6),
        ((2, 3, 16), 1, (3, 16), None),
        ((2, 3, 4, 5), -2, (1, 4, 5), 1e-3),
        ((2, 3, 4, 5), 2, (5,), None),
        ((1, 1, 512), -1, (512,), 1e-6),
        ((3, 1, 256), -1, (256,), 1e-5),
        ((2, 5, 37), -1, (37,), None),
    ]
    for dtype_name, (np_dtype, elem_type) in FLOAT_TYPES.items():
        for x_shape, axis, scale_shape, epsilon in shapes:
            name = (f"rms_{'x'.join(map(str, x_shape))}_axis{axis}"
                    f"_scale{'x'.join(map(str, scale_shape))}_{dtype_name}")
            attrs = {"axis": axis}
            if epsilon is not None:
                attrs["epsilon"] = epsilon
            model = node_model("RMSNormalization",
                               [("X", elem_type, x_shape), ("scale", elem_type, scale_shape)],
                               [("Y", elem_type, x_shape)], attrs)
            g = rng(__name__, name)
            feeds = [{"X": normal(g, x_shape, np_dtype) * np_dtype(3) + np_dtype(0.5),
                      "scale": normal(g, scale_shape, np_dtype)} for _ in range(2)]
            yield name, model, feeds


def cases():
    yield from rms_normalization()
