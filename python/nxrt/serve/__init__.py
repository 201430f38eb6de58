"""nxrt.serve: nxrt sessions as Ray Serve replicas, speaking the Open
Inference Protocol (KServe v2) over REST.

    import ray
    from nxrt import serve
    ray.init()
    url = serve.deploy([serve.ModelConfig("encoder", "encoder.onnx", replicas=2,
                                          max_batch_size=8)])
    # POST {url}/v2/models/encoder/infer

Each replica holds one InferenceSession; Ray places the replicas on any
node of its cluster and makes them again when they die. Requests are
batched along the model's batch dim where it has one; a decoder also
answers /generate and /generate_stream (token ids in, token ids out).
It needs ray[serve]; `python -m nxrt.serve MODEL...` (or `nxrt serve`)
serves from the command line.
"""

from nxrt.serve._config import FrontConfig, ModelConfig
from nxrt.serve._deploy import deploy
from nxrt.serve._front import app_name_of
from nxrt.serve._model_server import ModelServer, Reply

__all__ = ["FrontConfig", "ModelConfig", "ModelServer", "Reply", "app_name_of", "deploy"]
