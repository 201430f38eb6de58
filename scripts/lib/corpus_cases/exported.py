"""Every model of tests/corpus/manifest.json: transformers, torchvision and
torch.nn architectures exported by torch.onnx's TorchScript and dynamo
exporters (scripts/export-corpus made them)."""
import json
import os

import onnx

import corpus_feeds
import seeded_weights
from ort_cases.runner import session_for

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
CORPUS = os.path.join(ROOT, "tests", "corpus")


def cases():
    with open(os.path.join(CORPUS, "manifest.json"), encoding="utf-8") as f:
        manifest = json.load(f)
    for entry in manifest:
        path = os.path.join(CORPUS, "models", entry["name"] + ".onnx")
        model = seeded_weights.restore(onnx.load(path, load_external_data=False))
        session = session_for(model)
        yield entry["name"], model, corpus_feeds.data_sets(entry, model,
                                                           lambda feeds: session.run(None, feeds))
