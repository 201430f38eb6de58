"""nxrt: ONNX models on plugin execution providers, with onnxruntime's Python API.

    import nxrt
    session = nxrt.InferenceSession("model.onnx", providers=["cpu"])
    outputs = session.run(None, {"x": x})
"""

from nxrt._nxrt import (
    Cancelled,
    EPFail,
    Error,
    Fail,
    InvalidArgument,
    IOBinding,
    NoSuchFile,
    NotImplemented,
    OutOfMemory,
    RunOptions,
    RuntimeException,
    __version__,
)
from nxrt._options import ExecutionMode, GraphOptimizationLevel, SessionOptions
from nxrt._providers import get_available_providers
from nxrt._session import InferenceSession, ModelMetadata
from nxrt.generator import Generator


def get_device():
    """"CPU", or "GPU" where the cuda provider loads (onnxruntime's get_device)."""
    return "GPU" if "CUDAExecutionProvider" in get_available_providers() else "CPU"


__all__ = [
    "Cancelled", "EPFail", "Error", "ExecutionMode", "Fail", "Generator",
    "GraphOptimizationLevel", "InferenceSession", "InvalidArgument", "IOBinding",
    "ModelMetadata", "NoSuchFile", "NotImplemented", "OutOfMemory", "RunOptions",
    "RuntimeException", "SessionOptions", "get_available_providers", "get_device",
]
