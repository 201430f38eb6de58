"""InferenceSession: one model ready to run, with onnxruntime's API.

`run` and `run_with_iobinding` are nxrt's C++ session methods themselves:
a call goes from Python to C++ with nothing between, releases the GIL while
the model runs, and may be made from several threads at once.
"""

import datetime
import json
import os

from nxrt import _nxrt
from nxrt._options import SessionOptions
from nxrt._providers import provider_specs, to_ort_name


class ModelMetadata:
    """What the model file says about itself (onnxruntime's ModelMetadata)."""

    def __init__(self, fields, graph_name):
        (
            self.producer_name,
            self.producer_version,
            self.domain,
            self.version,
            self.description,
            self.graph_description,
            self.custom_metadata_map,
        ) = fields
        self.graph_name = graph_name


class InferenceSession(_nxrt.Session):
    """A model loaded from a path or from its bytes, placed on `providers`.

    providers: names in priority order, each nxrt's ("cpu", "cuda", a plugin
    library's path) or onnxruntime's ("CPUExecutionProvider"...), or a
    (name, options dict) pair; None for the cpu provider alone.
    provider_options: one dict per provider, merged into its options.
    Errors are nxrt.Error subclasses carrying one line that says what to fix.
    """

    def __init__(self, path_or_bytes, sess_options=None, providers=None, provider_options=None,
                 **kwargs):
        if kwargs:
            raise _nxrt.InvalidArgument(f"unknown arguments: {', '.join(sorted(kwargs))}")
        self._options = sess_options if sess_options is not None else SessionOptions()
        threads = self._options.intra_op_num_threads
        if not isinstance(threads, int) or threads < 0:
            raise _nxrt.InvalidArgument("intra_op_num_threads is 0 (the default) or more")
        specs = provider_specs(providers, provider_options, threads)
        self._provider_options = [dict(options) for _, options in specs]
        super().__init__(path_or_bytes, self._options._to_config(specs))
        self._model_path = None if isinstance(path_or_bytes, (bytes, bytearray, memoryview)) \
            else os.fspath(path_or_bytes)
        self._profile_start = datetime.datetime.now()

    def get_inputs(self):
        return list(self._inputs())

    def get_outputs(self):
        return list(self._outputs())

    def get_overridable_initializers(self):
        return list(self._overridable_initializers())

    def get_providers(self):
        return [to_ort_name(name) for name in self._provider_names()]

    def get_provider_options(self):
        return {to_ort_name(name): options
                for name, options in zip(self._provider_names(), self._provider_options)}

    def get_session_options(self):
        return self._options

    def get_modelmeta(self):
        name = os.path.splitext(os.path.basename(self._model_path))[0] if self._model_path else ""
        return ModelMetadata(self._metadata(), name)

    def io_binding(self):
        return _nxrt.IOBinding(self)

    def end_profiling(self):
        """Writes the runs profiled so far as a Chrome trace (chrome://tracing,
        Perfetto) and returns its file name; "" when profiling is off."""
        if not self._options.enable_profiling:
            return ""
        stamp = self._profile_start.strftime("%Y-%m-%d_%H-%M-%S")
        path = f"{self._options.profile_file_prefix}_{stamp}.json"
        events = []
        for kind, node, op_type, provider, shapes, start_us, duration_us in \
                self._take_profile_events():
            events.append({
                "cat": "Node" if kind == "node" else "Segment",
                "name": node,
                "ph": "X",
                "ts": round(start_us, 3),
                "dur": round(duration_us, 3),
                "pid": os.getpid(),
                "tid": 0,
                "args": {"op_name": op_type, "provider": provider, "kind": kind,
                         "input_type_shape": shapes},
            })
        with open(path, "w", encoding="utf-8") as trace:
            json.dump(events, trace)
        return path
