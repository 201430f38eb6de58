"""Vision models: torchvision classifiers, a single-shot detector's
backbone and head, a segmentation network, and transformers' ViT and Swin,
each fed photos normalised as its library does.

Batch normalisation is calibrated on photos before export: with torchvision's
initial statistics a randomly initialised network's activations fade to
nothing (logits of 1e-10), which no trained model shows. The detector stops
at its head (box regressions and class scores per anchor): with random
weights its scores tie, and the boxes non-maximum suppression keeps among
ties differ between any two correct runtimes."""
import numpy as np
import torch
import torchvision
import transformers

import realistic_inputs
from corpus_export.spec import Positional, Spec, seeded

CLASSIFIERS = {
    "resnet18": ("resnet18", ("torchscript", "dynamo")),
    "mobilenet_v2": ("mobilenet_v2", ("torchscript",)),
    "mobilenet_v3_small": ("mobilenet_v3_small", ("torchscript", "dynamo")),
    "efficientnet_b0": ("efficientnet_b0", ("torchscript", "dynamo")),
    "regnet_y_400mf": ("regnet_y_400mf", ("torchscript",)),
    "convnext_tiny": ("convnext_tiny", ("torchscript",)),
    "densenet121": ("densenet121", ("torchscript",)),
    "shufflenet_v2": ("shufflenet_v2_x1_0", ("torchscript",)),
}
VIT = dict(image_size=224, patch_size=16, hidden_size=192, num_hidden_layers=4, num_attention_heads=3,
           intermediate_size=768)
SWIN = dict(image_size=224, patch_size=4, embed_dim=48, depths=[2, 2, 2], num_heads=[3, 6, 12],
            window_size=7)


class FirstOutput(torch.nn.Module):
    """A model whose output is a dict or tuple, reduced to the tensors kept."""

    def __init__(self, model, key):
        super().__init__()
        self.model = model
        self.key = key

    def forward(self, image):
        return self.model(image)[self.key]


class DetectionHead(torch.nn.Module):
    """A torchvision SSD's backbone and head: per anchor, box regressions and
    class probabilities."""

    def __init__(self, model):
        super().__init__()
        self.backbone = model.backbone
        self.head = model.head

    def forward(self, image):
        out = self.head(list(self.backbone(image).values()))
        return out["bbox_regression"], out["cls_logits"].softmax(-1)


def calibrated(model, size):
    """`model` in eval mode with its batch normalisation statistics measured
    on photos of `size`."""
    norms = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    for norm in norms:
        norm.reset_running_stats()
        norm.momentum = None
    model.train()
    generator = np.random.default_rng(size)
    with torch.no_grad():
        for _ in range(4):
            model(torch.from_numpy(np.concatenate(
                [realistic_inputs.photo(generator, size, size) for _ in range(4)])))
    return model.eval()


def _image_spec(name, source, build, size, exporters, outputs=("logits",), dynamic_size=False):
    axes = {0: "batch_size"} | ({2: "height", 3: "width"} if dynamic_size else {})
    dynamic = {"image": axes} | {o: {0: "batch_size"} for o in outputs if o == "logits"}
    return Spec(name, source, {"kind": "image", "height": size, "width": size},
                lambda: (build(), {"image": torch.randn(1, 3, size, size)}),
                list(outputs), dynamic, exporters=exporters)


def _classifier(factory):
    seeded(5)
    return calibrated(getattr(torchvision.models, factory)(weights=None), 224)


def specs():
    for name, (factory, exporters) in CLASSIFIERS.items():
        yield _image_spec(name, f"torchvision.models.{factory}(weights=None)",
                          lambda factory=factory: _classifier(factory), 224, exporters)

    def vit():
        seeded(6)
        return transformers.ViTForImageClassification(transformers.ViTConfig(**VIT)).eval()

    spec = _image_spec("vit", f"transformers ViTForImageClassification(ViTConfig({VIT}))",
                       lambda: Positional(vit(), ["pixel_values"]).eval(), 224, ("torchscript", "dynamo"))
    spec.dynamo = lambda: (vit(), {"pixel_values": torch.randn(1, 3, 224, 224)})
    yield spec

    def swin():
        seeded(7)
        return Positional(transformers.SwinForImageClassification(transformers.SwinConfig(**SWIN)),
                          ["pixel_values"]).eval()

    yield _image_spec("swin", f"transformers SwinForImageClassification(SwinConfig({SWIN}))", swin, 224,
                      ("torchscript",))

    def detector():
        seeded(8)
        return calibrated(DetectionHead(torchvision.models.detection.ssdlite320_mobilenet_v3_large(
            weights=None, weights_backbone=None, num_classes=91)), 320)

    yield _image_spec("ssdlite320_mobilenet_v3_head", "torchvision.models.detection."
                      "ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None): backbone "
                      "and head", detector, 320, ("torchscript", "dynamo"),
                      outputs=("bbox_regression", "scores"))

    def segmenter():
        seeded(9)
        return calibrated(FirstOutput(torchvision.models.segmentation.lraspp_mobilenet_v3_large(
            weights=None, weights_backbone=None, num_classes=21), "out"), 256)

    yield _image_spec("lraspp_mobilenet_v3", "torchvision.models.segmentation."
                      "lraspp_mobilenet_v3_large(weights=None, weights_backbone=None)",
                      segmenter, 256, ("torchscript",), outputs=("out",), dynamic_size=True)
