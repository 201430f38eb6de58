"""One script, run with `onnxruntime` and with `nxrt` as the module: the
same calls give the same descriptions and, within float tolerance, the same
outputs, on the generated models and the released ones."""

import numpy as np
import onnxruntime
import pytest
from conftest import MODELS_DIR, RELEASED_MODELS_DIR

import nxrt


def onnxruntime_script(rt, model, feeds):
    """What a user of onnxruntime writes, with the module as a parameter."""
    options = rt.SessionOptions()
    options.intra_op_num_threads = 1
    options.graph_optimization_level = rt.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = rt.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
    described = [(value.name, value.type) for value in session.get_inputs()]
    described += [(value.name, value.type) for value in session.get_outputs()]
    names = [value.name for value in session.get_outputs()]
    outputs = session.run(names, feeds)
    binding = session.io_binding()
    for name, value in feeds.items():
        binding.bind_cpu_input(name, value)
    for name in names:
        binding.bind_output(name)
    session.run_with_iobinding(binding)
    bound = binding.copy_outputs_to_cpu()
    if not isinstance(bound[0], np.ndarray):  # onnxruntime hands back OrtValues
        bound = [value.numpy() for value in bound]
    return described, dict(zip(names, outputs)), dict(zip(names, bound))


def image(*shape):
    return np.random.default_rng(11).uniform(-1, 1, shape).astype(np.float32)


def decoder_feeds(layers, heads, head_dim):
    feeds = {"input_ids": np.array([[5, 17, 3, 99]], np.int64),
             "attention_mask": np.ones((1, 4), np.int64)}
    for layer in range(layers):
        for part in ("key", "value"):
            feeds[f"past_key_values.{layer}.{part}"] = np.zeros((1, heads, 0, head_dim), np.float32)
    return feeds


CASES = {
    "mlp": (MODELS_DIR / "mlp.onnx", lambda: {"x": image(3, 1024)}),
    "cnn": (MODELS_DIR / "cnn.onnx", lambda: {"image": image(1, 3, 64, 64)}),
    "bert_layer": (MODELS_DIR / "bert_layer.onnx", lambda: {"hidden_states": image(2, 7, 256)}),
    "decoder": (MODELS_DIR / "decoder.onnx", lambda: decoder_feeds(4, 2, 32)),
    "ppocrv4_det": (RELEASED_MODELS_DIR / "ppocrv4_det.onnx", lambda: {"x": image(1, 3, 64, 96)}),
    "ppocrv4_rec": (RELEASED_MODELS_DIR / "ppocrv4_rec.onnx", lambda: {"x": image(1, 3, 48, 160)}),
    "ppocr_cls": (RELEASED_MODELS_DIR / "ppocr_mobile_v2_cls.onnx",
                  lambda: {"x": image(1, 3, 48, 192)}),
    "silero_vad": (RELEASED_MODELS_DIR / "silero_vad.onnx",
                   lambda: {"input": 0.1 * image(1, 512), "state": np.zeros((2, 1, 128), np.float32),
                            "sr": np.array(16000, np.int64)}),
    "magika": (RELEASED_MODELS_DIR / "magika_standard_v3_3.onnx",
               lambda: {"bytes": np.random.default_rng(5).integers(0, 256, (1, 2048), np.int32)}),
}


@pytest.mark.parametrize("case", CASES.keys())
def test_the_same_script_gives_the_same_results(case):
    model, make_feeds = CASES[case]
    if not model.exists():
        pytest.skip(f"{model} is not here; scripts/setup-deps fetches the released models")
    ort_described, ort_outputs, ort_bound = onnxruntime_script(onnxruntime, model, make_feeds())
    described, outputs, bound = onnxruntime_script(nxrt, model, make_feeds())
    assert described == ort_described
    for name, expected in ort_outputs.items():
        assert outputs[name].dtype == expected.dtype and outputs[name].shape == expected.shape
        np.testing.assert_allclose(outputs[name], expected, rtol=1e-3, atol=1e-4, err_msg=name)
        np.testing.assert_array_equal(bound[name], outputs[name], err_msg=name)
        np.testing.assert_allclose(ort_bound[name], expected, rtol=1e-5, atol=1e-6)
