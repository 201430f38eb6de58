"""Times int8 models and their float originals on nxrt and on ONNX Runtime
(CPU, one thread each, same inputs), the engines alternating round by
round, and prints per model the median latencies, nxrt/ORT with its range
over the rounds, and each engine's int8/float ratio. The models: the
generated CNN and encoder layer, the corpus's MobileNetV2 and BERT
(exported by torch.onnx) and their int8 forms (scripts/make-models), and
the released PP-OCRv4 detector and recogniser
(scripts/fetch-released-models) after onnxruntime's static quantizer (QDQ,
and QOperator for the detector),
made here on first use into .cache/quantized-models. Both engines run from
Python, whose call costs a few microseconds beside these millisecond runs.

Usage: python quantized_vs_ort.py --build DIR [--released DIR] [--rounds N] [--runs N]
"""
import argparse
import os
import sys
import time

import numpy as np
import onnx
import onnxruntime as ort

import make_models
from model_inputs import random_feeds

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

OCR_DET_DIMS = {"p2o.DynamicDimension.0": 1, "p2o.DynamicDimension.1": 480,
                "p2o.DynamicDimension.2": 480}
OCR_REC_DIMS = {"p2o.DynamicDimension.0": 1, "?": 48, "p2o.DynamicDimension.1": 320}

# (label, float model, int8 model, dims); a path under "released" is made
# from the released model of that name, one under "corpus" is the corpus
# case of that name.
PAIRS = [
    ("cnn 1x3x64x64, static QDQ", "cnn.onnx", "cnn_int8_qdq.onnx", {}),
    ("cnn 1x3x64x64, static QOperator", "cnn.onnx", "cnn_int8_qoperator.onnx", {}),
    ("bert_layer seq 128, static QDQ", "bert_layer.onnx", "bert_layer_int8_qdq.onnx",
     {"batch": 1, "seq": 128}),
    ("bert_layer seq 128, dynamic", "bert_layer.onnx", "bert_layer_int8_dynamic.onnx",
     {"batch": 1, "seq": 128}),
    ("MobileNetV2 (corpus) 224x224, static QDQ", "corpus/mobilenet_v2_torchscript",
     "mobilenet_v2_int8_qdq.onnx", {"batch_size": 1}),
    ("BERT (corpus) seq 128, static QDQ", "corpus/bert_torchscript", "bert_corpus_int8_qdq.onnx",
     {"batch_size": 1, "sequence_length": 128}),
    ("BERT (corpus) seq 128, dynamic", "corpus/bert_torchscript", "bert_corpus_int8_dynamic.onnx",
     {"batch_size": 1, "sequence_length": 128}),
    ("PP-OCRv4 det 480x480, static QDQ", "released/ppocrv4_det.onnx",
     "released/ppocrv4_det_int8_qdq.onnx", OCR_DET_DIMS),
    ("PP-OCRv4 det 480x480, static QOperator", "released/ppocrv4_det.onnx",
     "released/ppocrv4_det_int8_qoperator.onnx", OCR_DET_DIMS),
    ("PP-OCRv4 rec 48x320, static QDQ", "released/ppocrv4_rec.onnx",
     "released/ppocrv4_rec_int8_qdq.onnx", OCR_REC_DIMS),
]


def resolve(name, models, released, cache, dims):
    """The path of `name`, quantizing a released model on first use; None
    when its source is missing."""
    if name.startswith("corpus/"):
        path = os.path.join(os.path.dirname(models), "corpus-cases",
                            "exported_" + name.split("/", 1)[1], "model.onnx")
        return path if os.path.isfile(path) else None
    if not name.startswith("released/"):
        path = os.path.join(models, name)
        return path if os.path.isfile(path) else None
    file_name = name.split("/", 1)[1]
    stem, _, form = file_name[:-len(".onnx")].partition("_int8_")
    if not form:
        path = os.path.join(released, file_name)
        return path if os.path.isfile(path) else None
    path = os.path.join(cache, file_name)
    source = os.path.join(released, stem + ".onnx")
    if not os.path.isfile(path):
        if not os.path.isfile(source):
            return None
        os.makedirs(cache, exist_ok=True)
        make_models.write(path, make_models.int8(onnx.load(source), dims, form))
    return path


def session(module, path):
    options = module.SessionOptions()
    options.intra_op_num_threads = 1
    return module.InferenceSession(path, options, providers=["CPUExecutionProvider"])


def seconds_per_run(session, feeds, runs):
    session.run(None, feeds)
    start = time.perf_counter()
    for _ in range(runs):
        session.run(None, feeds)
    return (time.perf_counter() - start) / runs


def measure(nxrt, path, dims, rounds, runs):
    """Per engine the median seconds per run, and nxrt/ORT per round."""
    feeds = random_feeds(onnx.load(path, load_external_data=False), dims)
    sessions = [session(nxrt, path), session(ort, path)]
    times = [[], []]
    for _ in range(rounds):
        for engine in (0, 1):
            times[engine].append(seconds_per_run(sessions[engine], feeds, runs))
    ratios = [a / b for a, b in zip(*times)]
    return [float(np.median(t)) for t in times], ratios


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--build", required=True, help="the build tree: its python package and models")
    parser.add_argument("--released", default=os.path.join(ROOT, ".cache", "released-models"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    sys.path.insert(0, os.path.join(args.build, "python"))
    import nxrt
    models = os.path.join(args.build, "models")
    cache = os.path.join(ROOT, ".cache", "quantized-models")
    print(f"{args.rounds} rounds of {args.runs} runs per engine and model, one thread each")
    print(f"{'model':36} {'form':6} {'nxrt ms':>9} {'ORT ms':>9} {'nxrt/ORT':>9} {'range':>11}"
          f" {'int8/float nxrt':>16} {'ORT':>6}")
    for label, float_name, int8_name, dims in PAIRS:
        paths = [resolve(n, models, args.released, cache, dims) for n in (float_name, int8_name)]
        if None in paths:
            print(f"{label:36} skipped: {float_name} or {int8_name} is missing")
            continue
        results = [measure(nxrt, p, dims, args.rounds, args.runs) for p in paths]
        for form, (medians, ratios) in zip(("float", "int8"), results):
            print(f"{label:36} {form:6} {medians[0] * 1e3:9.2f} {medians[1] * 1e3:9.2f}"
                  f" {np.median(ratios):9.2f} {min(ratios):5.2f}-{max(ratios):<5.2f}", end="")
            if form == "int8":
                print(f" {medians[0] / results[0][0][0]:16.2f}"
                      f" {medians[1] / results[0][0][1]:6.2f}", end="")
            print(flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
