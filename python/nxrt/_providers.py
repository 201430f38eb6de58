"""Execution providers by nxrt's names and by ONNX Runtime's.

nxrt names a provider by its plugin ("cpu", "cuda", "mock") or by the path
of its library. ONNX Runtime's names for the providers nxrt has are taken as
well, so code written for onnxruntime runs unchanged.
"""

import os

from nxrt import _nxrt

_ORT_NAMES = {"CPUExecutionProvider": "cpu", "CUDAExecutionProvider": "cuda"}
_NXRT_TO_ORT = {nxrt: ort for ort, nxrt in _ORT_NAMES.items()}


def to_nxrt_name(name):
    """nxrt's name for a provider given by either spelling, or the path as given."""
    if not isinstance(name, (str, os.PathLike)):
        raise _nxrt.InvalidArgument(f"a provider is named by a str, not {type(name).__name__}")
    name = os.fspath(name)
    return _ORT_NAMES.get(name, name)


def to_ort_name(name):
    """ONNX Runtime's name where it has one, otherwise nxrt's."""
    return _NXRT_TO_ORT.get(name, name)


def provider_specs(providers, provider_options, threads):
    """[(nxrt name, [(key, value)])] from onnxruntime-style arguments.

    `providers` holds names, or (name, options dict) pairs; `provider_options`,
    when given, one dict per provider. `threads` above 0 goes to the cpu
    provider as its "threads" option unless that is given.
    """
    if providers is None:
        providers = ["cpu"]
    if isinstance(providers, (str, os.PathLike)):
        providers = [providers]
    if provider_options is not None and len(provider_options) != len(providers):
        raise _nxrt.InvalidArgument(
            f"provider_options has {len(provider_options)} entries for {len(providers)} providers"
        )
    specs = []
    for index, provider in enumerate(providers):
        options = {}
        if isinstance(provider, tuple):
            if len(provider) != 2 or not isinstance(provider[1], dict):
                raise _nxrt.InvalidArgument("a provider pair is (name, options dict)")
            provider, options = provider
        if provider_options is not None:
            options = {**options, **provider_options[index]}
        name = to_nxrt_name(provider)
        pairs = [(str(key), str(value)) for key, value in options.items()]
        if threads and _is_cpu(name) and not any(key == "threads" for key, _ in pairs):
            pairs.append(("threads", str(threads)))
        specs.append((name, pairs))
    return specs


def _is_cpu(name):
    return name == "cpu" or os.path.basename(name) == "libep_cpu.so"


def get_available_providers():
    """The providers whose plugins load here, most capable first, cpu last.

    cpu and cuda are listed by ONNX Runtime's names, other plugins by theirs.
    """
    names = [name for name, _, loaded, _ in _nxrt.discover_plugins() if loaded and name]
    ordered = [name for name in names if name == "cuda"]
    ordered += sorted(name for name in names if name not in ("cuda", "cpu"))
    ordered += [name for name in names if name == "cpu"]
    return [to_ort_name(name) for name in dict.fromkeys(ordered)]
