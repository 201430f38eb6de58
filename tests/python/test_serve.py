"""nxrt.serve's parts that need no Ray cluster: the protocol paths, the
model server's answers, dynamic batching against runs alone, and the same
serving code on onnxruntime. The cluster itself is tested by
scripts/serve-cluster-check (ctest python.serve_cluster)."""

import json
import os
import shutil
import signal
import subprocess
import sys
import urllib.request

import numpy as np
import pytest
from conftest import NXRT_CLI, model_path

from nxrt import inference_protocol
from nxrt.serve import ModelConfig, ModelServer, _routes


def infer_body(name, array, binary=False):
    return inference_protocol.encode_request({name: array}, binary=binary, binary_outputs=binary)


def output_of(reply):
    assert reply.status == 200, reply.body
    length = reply.headers.get("inference-header-content-length")
    return next(iter(inference_protocol.decode_response(reply.body, length).values()))


@pytest.mark.parametrize("method,path,action,model", [
    ("GET", "/v2/health/live", "live", None),
    ("GET", "/v2/health/ready/", "ready", None),
    ("GET", "/v2", "server", None),
    ("GET", "/v2/models/m", "metadata", "m"),
    ("GET", "/v2/models/m/versions/1/ready", "model_ready", "m"),
    ("POST", "/v2/models/m/infer", "infer", "m"),
    ("POST", "/v2/models/m/versions/1/generate_stream", "generate_stream", "m"),
])
def test_the_protocol_paths_are_routed(method, path, action, model):
    route = _routes.parse(method, path)
    assert (route.action, route.model) == (action, model)


@pytest.mark.parametrize("method,path,status,says", [
    ("GET", "/v1/models/m", 404, "Open Inference Protocol"),
    ("GET", "/v2/models/m/versions/3", 404, "serves version 1"),
    ("GET", "/v2/models/m/infer", 405, "takes POST"),
    ("POST", "/v2/models/m/infer/more", 404, "no such path"),
])
def test_a_path_outside_the_protocol_is_refused_with_its_status(method, path, status, says):
    refused = _routes.parse(method, path)
    assert refused[0] == status and says in refused[1]


@pytest.fixture(scope="module")
def mlp():
    return ModelServer(ModelConfig("mlp", str(model_path("mlp.onnx"))), str(model_path("mlp.onnx")))


def test_a_batch_gives_each_request_what_it_gets_alone(mlp, rng):
    arrays = [rng.standard_normal((rows, 1024)).astype(np.float32) for rows in (1, 3, 2, 1)]
    alone = [output_of(mlp.infer(*infer_body("x", array))) for array in arrays]
    bodies = [infer_body("x", array, binary=index % 2 == 1) for index, array in enumerate(arrays)]
    replies = mlp.infer_many(bodies)
    for index, (reply, expected) in enumerate(zip(replies, alone)):
        assert ("inference-header-content-length" in reply.headers) == (index % 2 == 1)
        got = output_of(reply)
        assert got.shape == expected.shape
        # The same sums in another order: a batch runs a matrix product where
        # a single row runs a vector product.
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_a_bad_request_in_a_batch_is_answered_400_and_the_others_run(mlp, rng):
    good = rng.standard_normal((2, 1024)).astype(np.float32)
    replies = mlp.infer_many([infer_body("x", good), (b"{not json", None),
                              infer_body("x", np.zeros((1, 7), np.float32)),
                              infer_body("x", good)])
    assert [reply.status for reply in replies] == [200, 400, 400, 200]
    assert "not JSON" in json.loads(replies[1].body)["error"]
    assert json.loads(replies[2].body)["error"].count("\n") == 0
    np.testing.assert_array_equal(output_of(replies[0]), output_of(replies[3]))


def test_the_batch_dim_is_found_only_where_every_value_leads_with_it(mlp):
    assert mlp.batch_dim == "batch"
    cnn = model_path("cnn.onnx")
    assert ModelServer(ModelConfig("cnn", str(cnn)), str(cnn)).batch_dim is None


def test_the_metadata_gives_symbolic_dims_as_minus_one(mlp):
    metadata = json.loads(mlp.metadata().body)
    assert metadata["inputs"] == [{"name": "x", "datatype": "FP32", "shape": [-1, 1024]}]


def test_onnxruntime_behind_the_same_code_gives_the_same_answers(mlp, rng):
    path = str(model_path("mlp.onnx"))
    ort = ModelServer(ModelConfig("mlp", path, runtime="onnxruntime"), path)
    array = rng.standard_normal((2, 1024)).astype(np.float32)
    np.testing.assert_allclose(output_of(ort.infer(*infer_body("x", array))),
                               output_of(mlp.infer(*infer_body("x", array))), rtol=1e-4, atol=1e-5)
    assert ort.infer(*infer_body("x", np.zeros((1, 7), np.float32))).status == 400


def test_a_memory_limit_refuses_a_request_that_needs_more_with_400(rng):
    path = str(model_path("mlp.onnx"))
    limited = ModelServer(ModelConfig("mlp", path, memory_limit_bytes=1 << 20), path)
    assert limited.infer(*infer_body("x", np.ones((1, 1024), np.float32))).status == 200
    reply = limited.infer(*infer_body("x", np.ones((512, 1024), np.float32), binary=True))
    assert reply.status == 400 and "limit" in json.loads(reply.body)["error"]


def test_a_generation_request_is_checked_before_it_runs():
    path = str(model_path("decoder.onnx"))
    decoder = ModelServer(ModelConfig("decoder", path), path)
    generator, prompt, steps, stops = decoder.generation_request(
        json.dumps({"input_ids": [1, 2], "parameters": {"max_tokens": 4}}).encode())
    assert (prompt, steps, stops) == ([1, 2], 4, [])
    assert list(generator.stream(prompt, steps)) == generator.generate(prompt, steps)
    for body, says in [(b"[]", "input_ids"), (json.dumps({"input_ids": [10**6]}).encode(),
                                               "vocabulary size"),
                       (json.dumps({"input_ids": [1], "parameters": {"max_tokens": -1}}).encode(),
                        "max_tokens")]:
        reply = decoder.generation_request(body)
        assert reply.status == 400 and says in json.loads(reply.body)["error"]
    mlp_path = str(model_path("mlp.onnx"))
    reply = ModelServer(ModelConfig("mlp", mlp_path), mlp_path).generation_request(b"{}")
    assert reply.status == 400 and "cannot generate" in json.loads(reply.body)["error"]


def test_nxrt_serve_serves_until_ctrl_c_and_stops_cleanly():
    if not shutil.which(NXRT_CLI):
        pytest.skip(f"no nxrt command at {NXRT_CLI}")
    port = 18000 + os.getpid() % 1000
    environment = dict(os.environ, NXRT_PYTHON=sys.executable)
    server = subprocess.Popen([NXRT_CLI, "serve", str(model_path("mlp.onnx")), "--port", str(port)],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                              env=environment)
    try:
        line = server.stdout.readline()
        assert f"mlp at http://127.0.0.1:{port}/v2/models/<name>" in line, line
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/v2/models/mlp") as response:
            assert json.load(response)["inputs"][0]["shape"] == [-1, 1024]
        server.send_signal(signal.SIGINT)
        assert server.wait(timeout=60) == 0
        assert "stopping" in server.stdout.read()
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()


def test_nxrt_serve_refuses_a_missing_model_in_one_line():
    if not shutil.which(NXRT_CLI):
        pytest.skip(f"no nxrt command at {NXRT_CLI}")
    completed = subprocess.run([NXRT_CLI, "serve", "/no/such/model.onnx"], capture_output=True,
                               text=True, env=dict(os.environ, NXRT_PYTHON=sys.executable))
    assert completed.returncode == 2
    assert completed.stderr.strip() == \
        "nxrt serve: model 'model': no model file at /no/such/model.onnx"
