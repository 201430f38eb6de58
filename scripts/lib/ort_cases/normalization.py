"""Cases of the row normalisations decoder models use: RMSNormalization,
SimplifiedLayerNormalization and com.microsoft SkipSimplifiedLayerNormalization
and SkipLayerNormalization, over several shapes and axes, with and without
their optional inputs and outputs, in float32 and float16 (and float64 for
the RMS forms), including the decode-step shape of one row of 512 values per
token."""
import numpy as np
from onnx import TensorProto

from ort_cases import MS_DOMAIN, node_model, normal, rng

FLOAT_TYPES = {"f32": (np.float32, TensorProto.FLOAT), "f16": (np.float16, TensorProto.FLOAT16)}
# ONNX Runtime's skip forms take no double; its RMS forms do.
RMS_TYPES = {**FLOAT_TYPES, "f64": (np.float64, TensorProto.DOUBLE)}
FLOAT = TensorProto.FLOAT


def shape_text(shape):
    return "x".join(map(str, shape))


def activations(generator, shape, np_dtype):
    """Values like a residual stream's: spread wider than 1 and off centre."""
    return (normal(generator, shape) * 3 + 0.5).astype(np_dtype)


def stat_shape(x_shape, axis):
    return tuple(d if i < axis % len(x_shape) else 1 for i, d in enumerate(x_shape))


def rms_forms():
    """RMSNormalization (opset 23) and SimplifiedLayerNormalization, which
    ONNX Runtime keeps in the default domain; the latter also with its
    inv_std_var output."""
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
        # Scales broadcast other than by repeating over rows.
        ((2, 3, 4, 5), -2, (4, 1), None),
        ((2, 3, 4, 5), 1, (3, 1, 5), None),
        ((2, 3, 4, 5), 2, (2, 1, 1, 1), None),
        ((2, 3, 4, 5), -1, (1,), None),
    ]
    forms = [("rms", "RMSNormalization", False),
             ("simplified", "SimplifiedLayerNormalization", False),
             ("simplified_inv_std", "SimplifiedLayerNormalization", True)]
    for stem, op, inv_std in forms:
        for dtype_name, (np_dtype, elem_type) in RMS_TYPES.items():
            for x_shape, axis, scale_shape, epsilon in shapes:
                name = f"{stem}_{shape_text(x_shape)}_axis{axis}_scale{shape_text(scale_shape)}_{dtype_name}"
                attrs = {"axis": axis}
                if epsilon is not None:
                    attrs["epsilon"] = epsilon
                outputs = [("Y", elem_type, x_shape)]
                if inv_std:
                    outputs.append(("inv_std_var", FLOAT, stat_shape(x_shape, axis)))
                model = node_model(op, [("X", elem_type, x_shape), ("scale", elem_type, scale_shape)],
                                   outputs, attrs, opset=23)
                g = rng(__name__, name)
                feeds = [{"X": activations(g, x_shape, np_dtype), "scale": normal(g, scale_shape, np_dtype)}
                         for _ in range(2)]
                yield name, model, feeds


def skip_forms():
    """SkipSimplifiedLayerNormalization (input, skip, gamma, bias) and
    SkipLayerNormalization (input, skip, gamma, beta, bias); outputs output,
    mean, inv_std_var and input_skip_bias_sum. The simplified form's mean is
    left out: ONNX Runtime does not compute it."""
    # (x shape, skip shape, epsilon)
    shapes = [
        ((2, 3, 16), (2, 3, 16), None),
        ((2, 3, 16), (3, 16), 1e-5),
        ((2, 3, 16), (1, 3, 16), None),
        ((6, 24), (6, 24), 1e-6),
        ((1, 1, 512), (1, 1, 512), 1e-6),
        ((4, 1, 256), (4, 1, 256), 1e-5),
    ]
    # (stem, op, optional inputs given, outputs asked for)
    forms = [
        ("skip_simplified", "SkipSimplifiedLayerNormalization", [], ["output"]),
        ("skip_simplified_bias", "SkipSimplifiedLayerNormalization", ["bias"], ["output"]),
        ("skip_simplified_bias_all_outputs", "SkipSimplifiedLayerNormalization", ["bias"],
         ["output", "", "inv_std_var", "input_skip_bias_sum"]),
        ("skip_simplified_sum", "SkipSimplifiedLayerNormalization", [],
         ["output", "", "", "input_skip_bias_sum"]),
        ("skip_layer", "SkipLayerNormalization", [], ["output"]),
        ("skip_layer_beta", "SkipLayerNormalization", ["beta"], ["output"]),
        ("skip_layer_bias", "SkipLayerNormalization", ["bias"], ["output", "", "", "input_skip_bias_sum"]),
        ("skip_layer_beta_bias_all_outputs", "SkipLayerNormalization", ["beta", "bias"],
         ["output", "mean", "inv_std_var", "input_skip_bias_sum"]),
    ]
    for stem, op, optional, wanted in forms:
        simplified = "Simplified" in op
        optional_inputs = ["bias"] if simplified else ["beta", "bias"]
        for dtype_name, (np_dtype, elem_type) in FLOAT_TYPES.items():
            for x_shape, skip_shape, epsilon in shapes:
                name = f"{stem}_{shape_text(x_shape)}_skip{shape_text(skip_shape)}_{dtype_name}"
                hidden = x_shape[-1]
                inputs = [("input", elem_type, x_shape), ("skip", elem_type, skip_shape),
                          ("gamma", elem_type, (hidden,))]
                inputs += [(n if n in optional else "", elem_type, (hidden,)) for n in optional_inputs]
                while not inputs[-1][0]:
                    inputs.pop()
                stats = x_shape[:-1] + (1,)
                types = {"output": (elem_type, x_shape), "mean": (FLOAT, stats),
                         "inv_std_var": (FLOAT, stats), "input_skip_bias_sum": (elem_type, x_shape)}
                outputs = [(n, *types[n]) if n else ("", None, None) for n in wanted]
                attrs = {} if epsilon is None else {"epsilon": epsilon}
                model = node_model(op, inputs, outputs, attrs, domain=MS_DOMAIN, opset=17)
                g = rng(__name__, name)
                feeds = []
                for _ in range(2):
                    feeds.append({"input": activations(g, x_shape, np_dtype),
                                  "skip": activations(g, skip_shape, np_dtype),
                                  "gamma": normal(g, (hidden,), np_dtype)})
                    for n in optional:
                        feeds[-1][n] = normal(g, (hidden,), np_dtype)
                yield name, model, feeds


def cases():
    yield from rms_forms()
    yield from skip_forms()
