"""Writes nxrt's generated models into a folder, checks each with
onnx.checker and runs each once with onnxruntime's CPU execution provider.
The int4 decoders are the float ones after onnxruntime's own weight-only
quantizer (MatMulNBits, asymmetric, as ONNX Runtime GenAI ships CPU models);
the int8 CNN and encoder layer are after its static (QDQ and QOperator) and
dynamic quantizers."""
import argparse
import logging
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort

import model_zoo
from model_inputs import decoder_dims, random_feeds

DEFAULT_DECODER = model_zoo.DecoderConfig()
FIXED_KV_CAPACITY = 256


def int4(model, block_size, accuracy_level=None):
    """`model` with every constant-weight MatMul as a 4-bit MatMulNBits;
    accuracy_level 4 lets the products quantize activations to int8, as
    ONNX Runtime GenAI's CPU models do."""
    from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer
    logging.getLogger("onnxruntime.quantization.matmul_nbits_quantizer").setLevel(logging.WARNING)
    quantizer = MatMulNBitsQuantizer(model, block_size=block_size, is_symmetric=False,
                                     accuracy_level=accuracy_level)
    quantizer.process()
    return quantizer.model.model


def int8(model, dims, static=None):
    """`model` after onnxruntime's own int8 quantizers: `static` "qdq" or
    "qoperator" calibrates uint8 activations and per-channel int8 weights on
    random inputs bound by `dims` (after onnxruntime's pre-processing, which
    folds BatchNormalization into Conv); None quantizes the MatMul weights
    for DynamicQuantizeLinear activations."""
    import tempfile
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                          quant_pre_process, quantize_dynamic, quantize_static)
    logging.getLogger().setLevel(logging.ERROR)

    class RandomInputs(CalibrationDataReader):
        def __init__(self):
            self.feeds = iter([random_feeds(model, dims, seed) for seed in range(8)])

        def get_next(self):
            return next(self.feeds, None)

    opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    if static is not None and opset < 13:
        # Per-channel DequantizeLinear takes its axis from opset 13 on.
        from onnx import version_converter
        model = version_converter.convert_version(model, 13)
    with tempfile.TemporaryDirectory() as folder:
        given, prepared, output = (os.path.join(folder, f) for f in ("in.onnx", "pre.onnx", "out.onnx"))
        onnx.save(model, given)
        if static is None:
            quantize_dynamic(given, output, weight_type=QuantType.QInt8)
        else:
            quant_pre_process(given, prepared, skip_symbolic_shape=True)
            quantize_static(prepared, output, RandomInputs(), per_channel=True,
                            quant_format=QuantFormat.QDQ if static == "qdq" else QuantFormat.QOperator,
                            activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
        return onnx.load(output)


def corpus(name):
    """The corpus model `name` (tests/corpus/models), its weights drawn from their seeds."""
    import seeded_weights
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                        "tests", "corpus", "models", name + ".onnx")
    return seeded_weights.restore(onnx.load(path, load_external_data=False))


TEXT_DIMS = {"batch_size": 1, "sequence_length": 16}

# file name -> (builder, the dim bindings each probe run uses)
MODELS = {
    "add_chain_1000.onnx": (lambda: model_zoo.add_chain(1000), [{}]),
    "mlp.onnx": (model_zoo.mlp, [{"batch": 2}]),
    "cnn.onnx": (model_zoo.cnn, [{}]),
    "bert_layer.onnx": (model_zoo.bert_layer, [{"batch": 1, "seq": 16}]),
    "cnn_int8_qdq.onnx": (lambda: int8(model_zoo.cnn(), {}, "qdq"), [{}]),
    "cnn_int8_qoperator.onnx": (lambda: int8(model_zoo.cnn(), {}, "qoperator"), [{}]),
    "bert_layer_int8_qdq.onnx": (lambda: int8(model_zoo.bert_layer(), {"batch": 1, "seq": 16}, "qdq"),
                                 [{"batch": 1, "seq": 16}]),
    "bert_layer_int8_dynamic.onnx": (lambda: int8(model_zoo.bert_layer(), {}),
                                     [{"batch": 1, "seq": 16}]),
    # A corpus CNN and encoder (exported by torch.onnx) after the same quantizers.
    "mobilenet_v2_int8_qdq.onnx": (
        lambda: int8(corpus("mobilenet_v2_torchscript"), {"batch_size": 1}, "qdq"),
        [{"batch_size": 1}]),
    "bert_corpus_int8_qdq.onnx": (lambda: int8(corpus("bert_torchscript"), TEXT_DIMS, "qdq"),
                                  [TEXT_DIMS]),
    "bert_corpus_int8_dynamic.onnx": (lambda: int8(corpus("bert_torchscript"), {}), [TEXT_DIMS]),
    "decoder.onnx": (lambda: model_zoo.decoder(DEFAULT_DECODER),
                     [decoder_dims(past=0, new=8), decoder_dims(past=8, new=1)]),
    f"decoder_fixed_kv{FIXED_KV_CAPACITY}.onnx": (
        lambda: model_zoo.decoder(model_zoo.DecoderConfig(kv_capacity=FIXED_KV_CAPACITY)),
        [decoder_dims(past=0, new=8), decoder_dims(past=8, new=1)]),
    "decoder_int4_b32.onnx": (lambda: int4(model_zoo.decoder(DEFAULT_DECODER), 32),
                              [decoder_dims(past=0, new=8), decoder_dims(past=8, new=1)]),
    "decoder_int4_b32_int8.onnx": (lambda: int4(model_zoo.decoder(DEFAULT_DECODER), 32, 4),
                                   [decoder_dims(past=0, new=8), decoder_dims(past=8, new=1)]),
    "decoder_int4_b128.onnx": (lambda: int4(model_zoo.decoder(DEFAULT_DECODER), 128),
                               [decoder_dims(past=0, new=8), decoder_dims(past=8, new=1)]),
    f"decoder_fixed_kv{FIXED_KV_CAPACITY}_int4_b32.onnx": (
        lambda: int4(model_zoo.decoder(model_zoo.DecoderConfig(kv_capacity=FIXED_KV_CAPACITY)), 32),
        [decoder_dims(past=0, new=8), decoder_dims(past=8, new=1)]),
    "decoder_2l_h512.onnx": (
        lambda: model_zoo.decoder(model_zoo.DecoderConfig(layers=2, hidden=512, heads=8, kv_heads=2, ffn=1536)),
        [decoder_dims(past=0, new=8), decoder_dims(past=128, new=1)]),
    "decoder_2l_h512_int4_b32.onnx": (
        lambda: int4(model_zoo.decoder(model_zoo.DecoderConfig(layers=2, hidden=512, heads=8, kv_heads=2, ffn=1536)), 32),
        [decoder_dims(past=0, new=8), decoder_dims(past=128, new=1)]),
    "decoder_2l_h512_int4_b32_int8.onnx": (
        lambda: int4(model_zoo.decoder(model_zoo.DecoderConfig(layers=2, hidden=512, heads=8, kv_heads=2, ffn=1536)), 32, 4),
        [decoder_dims(past=0, new=8), decoder_dims(past=128, new=1)]),
}


def probe(model, dims_list):
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.log_severity_level = 3
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    for dims in dims_list:
        # A fixed-capacity cache is fed whole; the attention mask says how much of it is live.
        feeds = random_feeds(model, dims)
        outputs = session.run(None, feeds)
        for info, value in zip(session.get_outputs(), outputs):
            if not np.all(np.isfinite(value)):
                raise ValueError(f"onnxruntime output {info.name} has non-finite values")
    if any(i.name.startswith("past_key_values.") for i in model.graph.input):
        check_kv_cache(session, model)


def check_kv_cache(session, model):
    """A prefill of all tokens and a prefill of all but the last followed by one
    decode step must agree on the last token's logits. A fixed-capacity cache
    is bound as one buffer for both past and present, as decoding loops do."""
    past_inputs = [i for i in model.graph.input if i.name.startswith("past_key_values.")]
    dims = past_inputs[0].type.tensor_type.shape.dim
    kv_heads, head_dim = dims[1].dim_value, dims[3].dim_value
    capacity = dims[2].dim_value if dims[2].HasField("dim_value") else None
    tokens = random_feeds(model, decoder_dims(past=0, new=6), seed=7)["input_ids"]

    def fresh_cache():
        return {i.name: np.zeros([1, kv_heads, capacity or 0, head_dim], np.float32) for i in past_inputs}

    def step(ids, total, cache):
        binding = session.io_binding()
        binding.bind_cpu_input("input_ids", ids)
        binding.bind_cpu_input("attention_mask", np.ones([1, total], np.int64))
        for name, value in cache.items():
            binding.bind_ortvalue_input(name, value)
            present = name.replace("past_key_values.", "present.")
            if capacity:
                binding.bind_ortvalue_output(present, value)
            else:
                binding.bind_output(present)
        binding.bind_output("logits")
        session.run_with_iobinding(binding)
        *presents, logits = binding.get_outputs()  # in the order bound
        if not capacity:
            cache.update(zip(list(cache), presents))
        return logits.numpy()[0, -1]

    def as_ort_values(cache):
        return {name: ort.OrtValue.ortvalue_from_numpy(value) for name, value in cache.items()}

    whole = step(tokens, 6, as_ort_values(fresh_cache()))
    cache = as_ort_values(fresh_cache())
    step(tokens[:, :5], 5, cache)
    stepped = step(tokens[:, 5:], 6, cache)
    difference = float(np.abs(whole - stepped).max())
    if difference > 1e-4:
        raise ValueError(f"decode step after prefill differs from a whole prefill by {difference:g}")


def write(path, model):
    staging = path + ".partial"
    onnx.save(model, staging)
    os.replace(staging, path)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("output_dir", nargs="?", default="build/models")
    args = parser.parse_args()
    os.makedirs(args.output_dir, exist_ok=True)
    for file_name, (build, dims_list) in MODELS.items():
        path = os.path.join(args.output_dir, file_name)
        try:
            model = build()
            onnx.checker.check_model(model)
            probe(model, dims_list)
            write(path, model)
        except Exception as error:  # one line naming the model, then a failing exit
            print(f"make-models: {file_name}: {error}", file=sys.stderr)
            return 1
        print(f"make-models: {path} ({os.path.getsize(path) / 1e6:.1f} MB, checked, runs in onnxruntime)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
