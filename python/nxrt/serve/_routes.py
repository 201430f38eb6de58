"""The Open Inference Protocol's REST paths, parsed.

    GET  /v2/health/live | /v2/health/ready | /v2
    GET  /v2/models/{name}[/versions/{version}][/ready]
    POST /v2/models/{name}[/versions/{version}]/infer
    POST /v2/models/{name}[/versions/{version}]/generate | /generate_stream

Every model is served at version "1".
"""

SERVER_PATHS = {("GET", "/v2/health/live"): "live", ("GET", "/v2/health/ready"): "ready",
                ("GET", "/v2"): "server"}
MODEL_ACTIONS = {("GET", ""): "metadata", ("GET", "ready"): "model_ready",
                 ("POST", "infer"): "infer", ("POST", "generate"): "generate",
                 ("POST", "generate_stream"): "generate_stream"}
VERSION = "1"


class Route:
    """What a request asks: an action, and the model it names (or None)."""

    def __init__(self, action, model=None):
        self.action = action
        self.model = model


def parse(method, path):
    """The Route of `method` `path`, or (status, message) where none matches."""
    path = path.rstrip("/") or "/"
    action = SERVER_PATHS.get((method, path))
    if action is not None:
        return Route(action)
    parts = path.split("/")
    if parts[:3] != ["", "v2", "models"] or len(parts) < 4 or not parts[3]:
        return 404, f"no such path {path}; the server speaks the Open Inference Protocol (/v2/...)"
    model, rest = parts[3], parts[4:]
    if rest[:1] == ["versions"]:
        if len(rest) < 2 or rest[1] != VERSION:
            version = rest[1] if len(rest) > 1 else ""
            return 404, f"model '{model}' has no version '{version}'; it serves version {VERSION}"
        rest = rest[2:]
    if len(rest) > 1:
        return 404, f"no such path {path}"
    name = rest[0] if rest else ""
    action = MODEL_ACTIONS.get((method, name))
    if action is None:
        methods = sorted({m for m, n in MODEL_ACTIONS if n == name})
        if methods:
            return 405, f"{path} takes {' or '.join(methods)}, not {method}"
        return 404, f"no such path {path}"
    return Route(action, model)
