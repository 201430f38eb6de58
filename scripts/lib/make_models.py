"""Writes nxrt's generated models into a folder, checks each with
onnx.checker and runs each once with onnxruntime's CPU execution provider."""
import argparse
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort

import model_zoo
from model_inputs import decoder_dims, random_feeds

DEFAULT_DECODER = model_zoo.DecoderConfig()
FIXED_KV_CAPACITY = 256

# file name -> (builder, the dim bindings each probe run uses)
MODELS = {
    "add_chain_1000.onnx": (lambda: model_zoo.add_chain(1000), [{}]),
    "mlp.onnx": (model_zoo.mlp, [{"batch": 2}]),
    "cnn.onnx": (model_zoo.cnn, [{}]),
    "bert_layer.onnx": (model_zoo.bert_layer, [{"batch": 1, "seq": 16}]),
    "decoder.onnx": (lambda: model_zoo.decoder(DEFAULT_DECODER),
                     [decoder_dims(past=0, new=8), decoder_dims(past=8, new=1)]),
    f"decoder_fixed_kv{FIXED_KV_CAPACITY}.onnx": (
        lambda: model_zoo.decoder(model_zoo.DecoderConfig(kv_capacity=FIXED_KV_CAPACITY)),
        [decoder_dims(past=0, new=8), decoder_dims(past=8, new=1)]),
    "decoder_2l_h512.onnx": (
        lambda: model_zoo.decoder(model_zoo.DecoderConfig(layers=2, hidden=512, heads=8, kv_heads=2, ffn=1536)),
        [decoder_dims(past=0, new=8), decoder_dims(past=128, new=1)]),
}


def probe(path, model, dims_list):
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.log_severity_level = 3
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    for dims in dims_list:
        # A fixed-capacity cache is fed whole; the attention mask says how much of it is live.
        feeds = random_feeds(model, dims)
        outputs = session.run(None, feeds)
        for info, value in zip(session.get_outputs(), outputs):
            if not np.all(np.isfinite(value)):
                raise ValueError(f"onnxruntime output {info.name} has non-finite values")


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
            write(path, model)
            probe(path, model, dims_list)
        except Exception as error:  # one line naming the model, then a failing exit
            print(f"make-models: {file_name}: {error}", file=sys.stderr)
            return 1
        print(f"make-models: {path} ({os.path.getsize(path) / 1e6:.1f} MB, checked, runs in onnxruntime)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
