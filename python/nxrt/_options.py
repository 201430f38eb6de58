"""SessionOptions, as onnxruntime.SessionOptions, and nxrt's own entries.

The attributes ONNX Runtime users set map onto nxrt's session options:
intra_op_num_threads is the cpu provider's thread count,
graph_optimization_level ORT_DISABLE_ALL turns nxrt's graph rewrites off
(any other level leaves them on), and free dimension overrides and the
log level mean what they mean there. nxrt's own options are session config
entries under "nxrt."; an unknown "nxrt." key is refused, and other keys
(ONNX Runtime's own) are kept and read back but change nothing.
"""

import enum
import os

from nxrt import _nxrt


class GraphOptimizationLevel(enum.IntEnum):
    ORT_DISABLE_ALL = 0
    ORT_ENABLE_BASIC = 1
    ORT_ENABLE_EXTENDED = 2
    ORT_ENABLE_LAYOUT = 3
    ORT_ENABLE_ALL = 99


class ExecutionMode(enum.IntEnum):
    ORT_SEQUENTIAL = 0
    ORT_PARALLEL = 1


def _flag(key, value):
    if value not in ("0", "1"):
        raise _nxrt.InvalidArgument(f"session config entry '{key}' is 0 or 1, not '{value}'")
    return value == "1"


def _count(key, value):
    if not value.isdigit() or int(value) < 1:
        raise _nxrt.InvalidArgument(f"session config entry '{key}' is a count of 1 or more")
    return int(value)


def _capture_mode(key, value):
    if value not in ("fail-safe", "denylist"):
        raise _nxrt.InvalidArgument(f"session config entry '{key}' is fail-safe or denylist")
    return value


def _folders(_key, value):
    return [folder for folder in value.split(os.pathsep) if folder]


# nxrt's session config entries: key -> (SessionConfig attribute, parser).
NXRT_CONFIG_ENTRIES = {
    "nxrt.kernel_cache_variants_per_node": ("kernel_cache_variants_per_node", _count),
    "nxrt.capture_mode": ("capture_mode", _capture_mode),
    "nxrt.device_graphs": ("device_graphs", _flag),
    "nxrt.fixed_capacity_kv": ("fixed_capacity_kv", _flag),
    "nxrt.kv_in_ep_memory": ("kv_in_ep_memory", _flag),
    "nxrt.plugin_path": ("plugin_folders", _folders),
}


class SessionOptions:
    """How an InferenceSession is built."""

    def __init__(self):
        self.intra_op_num_threads = 0  # 0: the cpu provider's default
        self.inter_op_num_threads = 0  # nxrt runs one node at a time; kept for onnxruntime code
        self.execution_mode = ExecutionMode.ORT_SEQUENTIAL
        self.graph_optimization_level = GraphOptimizationLevel.ORT_ENABLE_ALL
        self.enable_profiling = False
        self.profile_file_prefix = "nxrt_profile"
        self.memory_limit_bytes = 0  # the session's value buffers at most; 0 for no limit
        self.log_id = ""
        self._log_severity_level = None
        self._free_dimensions = []
        self._config = {}

    @property
    def log_severity_level(self):
        """0 verbose, 1 info, 2 warning, 3 error, 4 fatal: nxrt's log level for the process
        once a session is made with it; unset, the level stays as it is (NXRT_LOG_LEVEL)."""
        return 2 if self._log_severity_level is None else self._log_severity_level

    @log_severity_level.setter
    def log_severity_level(self, level):
        if not isinstance(level, int) or not 0 <= level <= 4:
            raise _nxrt.InvalidArgument("log_severity_level is 0 (verbose) to 4 (fatal)")
        self._log_severity_level = level

    def add_free_dimension_override_by_name(self, name, value):
        """Fixes every symbolic dim called `name` to `value` before shapes are inferred."""
        self._free_dimensions.append((str(name), int(value)))

    def add_session_config_entry(self, key, value):
        key, value = str(key), str(value)
        if key.startswith("nxrt.") and key not in NXRT_CONFIG_ENTRIES:
            known = ", ".join(sorted(NXRT_CONFIG_ENTRIES))
            raise _nxrt.InvalidArgument(f"unknown session config entry '{key}'; nxrt's are {known}")
        if key in NXRT_CONFIG_ENTRIES:
            NXRT_CONFIG_ENTRIES[key][1](key, value)
        self._config[key] = value

    def get_session_config_entry(self, key):
        if key not in self._config:
            raise _nxrt.InvalidArgument(f"no session config entry '{key}'")
        return self._config[key]

    def _to_config(self, provider_specs):
        config = _nxrt.SessionConfig()
        config.providers = provider_specs
        config.free_dimension_overrides = list(self._free_dimensions)
        config.rewrite_graph = self.graph_optimization_level != GraphOptimizationLevel.ORT_DISABLE_ALL
        if not isinstance(self.memory_limit_bytes, int) or self.memory_limit_bytes < 0:
            raise _nxrt.InvalidArgument("memory_limit_bytes is a byte count, 0 for no limit")
        config.memory_limit_bytes = self.memory_limit_bytes
        config.log_severity_level = self._log_severity_level
        config.profiling = bool(self.enable_profiling)
        for key, value in self._config.items():
            if key in NXRT_CONFIG_ENTRIES:
                attribute, parse = NXRT_CONFIG_ENTRIES[key]
                setattr(config, attribute, parse(key, value))
        return config
