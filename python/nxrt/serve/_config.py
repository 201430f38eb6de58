"""What nxrt.serve is told: the models to serve and how the front answers."""

import dataclasses
import os


@dataclasses.dataclass
class ModelConfig:
    """One model, served at /v2/models/{name}.

    model: a path, the model's bytes, or a ray.ObjectRef to its bytes (put
    once into Ray's object store, read by every replica on every node).
    runtime: "nxrt", or "onnxruntime" to serve the same model on ONNX
    Runtime through the same code.
    providers: as InferenceSession takes them; None for the cpu provider.
    threads: the session's threads, and the CPUs Ray reserves per replica.
    memory_limit_bytes: the session's value buffers at most (nxrt only);
    a request that needs more is answered 400.
    max_batch_size: above 1, requests are batched along the model's batch
    dim, waiting at most batch_wait_timeout_s for a batch to fill.
    """

    name: str
    model: object
    runtime: str = "nxrt"
    providers: list = None
    threads: int = 1
    memory_limit_bytes: int = 0
    replicas: int = 1
    max_batch_size: int = 1
    batch_wait_timeout_s: float = 0.01
    max_ongoing_requests: int = 32

    def check(self):
        """Raises ValueError naming the field that is wrong."""
        if not self.name or "/" in self.name:
            raise ValueError(f"model name {self.name!r} is empty or holds a '/'")
        if self.runtime not in ("nxrt", "onnxruntime"):
            raise ValueError(f"model '{self.name}': runtime {self.runtime!r} is 'nxrt' or "
                             "'onnxruntime'")
        if isinstance(self.model, (str, os.PathLike)) and not os.path.isfile(self.model):
            raise ValueError(f"model '{self.name}': no model file at {os.fspath(self.model)}")
        for field in ("threads", "replicas", "max_batch_size", "max_ongoing_requests"):
            value = getattr(self, field)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"model '{self.name}': {field} is 1 or more, not {value!r}")
        if self.batch_wait_timeout_s < 0:
            raise ValueError(f"model '{self.name}': batch_wait_timeout_s is 0 or more")


@dataclasses.dataclass
class FrontConfig:
    """The HTTP front: one deployment that routes the protocol's paths.

    max_request_bytes: a larger request body is answered 400 unread.
    retry_seconds: how long a request is retried on other replicas when the
    one it went to dies or is unreachable, before it is answered 503.
    on_head_node: keeps the front beside Ray's HTTP proxy on the head node,
    so losing a worker node loses no request in flight through the front.
    max_ongoing_requests: the requests one front replica holds at once.
    """

    replicas: int = 1
    on_head_node: bool = True
    max_ongoing_requests: int = 1024
    max_request_bytes: int = 64 << 20
    retry_seconds: float = 30.0
