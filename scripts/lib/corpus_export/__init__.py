"""Exports the model corpus: transformers, torchvision and torch.nn
architectures built from configs written here, with random weights from
fixed seeds, through both torch.onnx exporters (TorchScript and dynamo).

Each architecture module defines `specs()`, yielding `Spec`s. The package
runs only in the export environment (scripts/setup-export-env); what it
writes, tests/corpus, needs numpy, onnx and onnxruntime alone.
"""
