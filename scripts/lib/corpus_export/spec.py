"""What the exporter needs to know of one corpus architecture."""
import dataclasses
from typing import Callable

import torch


@dataclasses.dataclass
class Spec:
    """One architecture.

    name: the case name stem; the exporter's name is appended.
    source: the class and config, as the manifest records it.
    feed: the manifest entry's feeding fields (corpus_feeds reads them):
      kind and its sizes.
    build: () -> (module, example), module a torch.nn.Module in eval mode
      taking its inputs positionally in the order of `example`, a dict from
      input name to an example tensor.
    outputs: the TorchScript export's output names.
    dynamic: input or output name -> {axis: dim name} for TorchScript.
    dynamo: () -> (model, kwargs) for transformers' own ONNX exporter, or
      None to give torch.onnx's dynamo exporter `module` with `example`.
    exporters: which of "torchscript" and "dynamo" to run.
    """
    name: str
    source: str
    feed: dict
    build: Callable
    outputs: list
    dynamic: dict
    dynamo: Callable = None
    exporters: tuple = ("torchscript", "dynamo")


class Positional(torch.nn.Module):
    """A Hugging Face model called with its inputs in a fixed order, returning
    a tuple (the exporters and the framework check both want one)."""

    def __init__(self, model, names):
        super().__init__()
        self.model = model
        self.names = list(names)

    def forward(self, *args):
        return self.model(**dict(zip(self.names, args)), return_dict=False)


def seeded(seed):
    """Seeds torch so a model built next has the same weights every time."""
    torch.manual_seed(seed)
