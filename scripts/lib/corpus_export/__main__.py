"""Exports every corpus architecture through both torch.onnx exporters into
tests/corpus: each graph with its large weights replaced by their seeds
(seeded_weights), and manifest.json, which records for each model where it
came from, how it is fed (corpus_feeds) and how far ONNX Runtime's outputs
on the exported weights were from torch's.

Entries and files of architectures no longer listed are removed.

Usage: python -m corpus_export [--only TEXT]... [--out DIR]
"""
import argparse
import importlib
import json
import os
import sys
import time
import warnings

import numpy as np
import onnx
import onnxruntime as ort
import torch

import corpus_feeds
import seeded_weights

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
MODULES = ["decoders", "encoders", "seq2seq", "vision", "audio"]
OPSET = 17


def torchscript(spec, path):
    module, example = spec.build()
    torch.onnx.export(module, tuple(example.values()), path, dynamo=False, opset_version=OPSET,
                      input_names=list(example), output_names=spec.outputs,
                      dynamic_axes=spec.dynamic)
    return module


def dynamo(spec, path):
    module, example = spec.build()
    if spec.dynamo:
        import onnx_ir
        from transformers.exporters.exporter_onnx import OnnxConfig, OnnxExporter
        model, kwargs = spec.dynamo()
        onnx_ir.save(OnnxExporter().export(model, kwargs, config=OnnxConfig(dynamic=True)).program, path)
    else:
        shapes = tuple({axis: torch.export.Dim.AUTO for axis in spec.dynamic.get(name, {})}
                       for name in example)
        program = torch.onnx.export(module, tuple(example.values()), dynamo=True,
                                    input_names=list(example), dynamic_shapes=shapes)
        program.save(path)
    return module


def ort_runner(model):
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.log_severity_level = 3
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return lambda feeds: session.run(None, feeds)


def torch_outputs(module, model, feeds):
    initializers = {t.name for t in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in initializers]
    with torch.no_grad():
        out = module(*[torch.from_numpy(np.ascontiguousarray(feeds[n])) for n in names])
    out = out if isinstance(out, (tuple, list)) else (out,)
    flat = []
    for value in out:
        flat += list(value) if isinstance(value, (tuple, list)) else [value]
    return [v.numpy() for v in flat if isinstance(v, torch.Tensor)]


def framework_gap(entry, module, model):
    """The largest |ORT - torch| over every data set and output both give,
    and the largest |torch| beside it."""
    run = ort_runner(model)
    gap, scale = 0.0, 0.0
    for feeds in corpus_feeds.data_sets(entry, model, run):
        for mine, theirs in zip(run(feeds), torch_outputs(module, model, feeds)):
            if mine.shape != theirs.shape:
                raise ValueError(f"{entry['name']}: output shape {mine.shape} on ONNX Runtime, "
                                 f"{theirs.shape} in torch")
            if mine.dtype.kind == "f":
                gap = max(gap, float(np.abs(mine - theirs).max(initial=0)))
                scale = max(scale, float(np.abs(theirs).max(initial=0)))
    return gap, scale


def export_one(spec, exporter, out_dir):
    name = f"{spec.name}_{exporter}"
    path = os.path.join(out_dir, "models", name + ".onnx")
    started = time.time()
    module = (torchscript if exporter == "torchscript" else dynamo)(spec, path)
    model = onnx.load(path)
    entry = dict(spec.feed, name=name, source=spec.source, exporter=exporter,
                 torch=torch.__version__.split("+")[0])
    gap, scale = framework_gap(entry, module, model)
    seeded = seeded_weights.strip(model, name)
    for leftover in [path + ".data", path + "_data"]:
        if os.path.exists(leftover):
            os.remove(leftover)
    onnx.save(model, path)
    restored = seeded_weights.restore(onnx.load(path, load_external_data=False))
    for feeds in corpus_feeds.data_sets(entry, restored, ort_runner(restored)):
        if not all(np.isfinite(o).all() for o in ort_runner(restored)(feeds) if o.dtype.kind == "f"):
            raise ValueError(f"{name}: the seeded weights give non-finite outputs")
    entry.update(framework_max_abs=float(f"{gap:.3g}"), framework_max_value=float(f"{scale:.3g}"),
                 nodes=len(model.graph.node), seeded_mib=round(seeded / 2**20, 2),
                 file_kib=round(os.path.getsize(path) / 1024, 1))
    print(f"corpus_export: {name}: {entry['nodes']} nodes, {entry['file_kib']} KiB "
          f"(+{entry['seeded_mib']} MiB seeded), torch vs ORT {gap:.2e} of {scale:.2e}, "
          f"{time.time() - started:.0f} s", flush=True)
    return entry


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append",
                        help="only the models whose name contains this text; repeatable")
    parser.add_argument("--out", default=os.path.join(ROOT, "tests", "corpus"))
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    os.makedirs(os.path.join(args.out, "models"), exist_ok=True)
    manifest_path = os.path.join(args.out, "manifest.json")
    entries = {}
    if os.path.exists(manifest_path):
        with open(manifest_path, encoding="utf-8") as f:
            entries = {e["name"]: e for e in json.load(f)}
    failures = []
    listed = set()
    for module_name in MODULES:
        for spec in importlib.import_module(f"corpus_export.{module_name}").specs():
            for exporter in spec.exporters:
                name = f"{spec.name}_{exporter}"
                listed.add(name)
                if args.only and not any(text in name for text in args.only):
                    continue
                try:
                    entries[name] = export_one(spec, exporter, args.out)
                except Exception as error:  # one architecture's failure must not stop the rest
                    failures.append(f"{name}: {' '.join(str(error).split())[:400]}")
                    print(f"corpus_export: {failures[-1]}", flush=True)
    for name in set(entries) - listed:
        del entries[name]
        stale = os.path.join(args.out, "models", name + ".onnx")
        if os.path.exists(stale):
            os.remove(stale)
    with open(manifest_path, "w", encoding="utf-8") as f:
        json.dump(sorted(entries.values(), key=lambda e: e["name"]), f, indent=1)
        f.write("\n")
    if failures:
        print(f"corpus_export: {len(failures)} failed:\n  " + "\n  ".join(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
