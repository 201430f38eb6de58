"""The Open Inference Protocol codec: metadata, JSON and binary tensors both
ways, and one-line refusals of malformed requests."""

import json
import struct

import numpy as np
import pytest
from conftest import identity_model, model_bytes, model_path, tensor_info
from onnx import TensorProto, helper

import nxrt
from nxrt import inference_protocol as protocol


@pytest.fixture(scope="module")
def mlp():
    return nxrt.InferenceSession(model_path("mlp.onnx"))


def run(session, body, header_length=None):
    request = protocol.decode_request(body, session, header_length)
    names = request.outputs or [value.name for value in session.get_outputs()]
    arrays = session.run(names, request.feeds)
    return protocol.encode_response("m", request, names, arrays), arrays


def read_binary_response(body, header_length):
    header = json.loads(body[:header_length])
    blobs, offset = {}, header_length
    for output in header["outputs"]:
        size = output["parameters"]["binary_data_size"]
        blobs[output["name"]] = body[offset:offset + size]
        offset += size
    assert offset == len(body)
    return header, blobs


def test_metadata_names_datatypes_and_symbolic_dims_as_minus_one(mlp):
    assert protocol.model_metadata("mlp", mlp) == {
        "name": "mlp", "versions": ["1"], "platform": "onnx_nxrt",
        "inputs": [{"name": "x", "datatype": "FP32", "shape": [-1, 1024]}],
        "outputs": [{"name": "y", "datatype": "FP32", "shape": [-1, 1024]}],
    }


def test_a_json_request_gives_the_session_outputs_in_json(mlp):
    x = np.random.default_rng(4).standard_normal((2, 1024)).astype(np.float32)
    body = json.dumps({"id": "r1", "inputs": [
        {"name": "x", "shape": [2, 1024], "datatype": "FP32", "data": x.reshape(-1).tolist()}]})
    (response, header_length), (expected,) = run(mlp, body.encode())
    assert header_length is None
    decoded = json.loads(response)
    assert decoded["id"] == "r1" and decoded["model_name"] == "m"
    (output,) = decoded["outputs"]
    assert (output["name"], output["datatype"], output["shape"]) == ("y", "FP32", [2, 1024])
    np.testing.assert_array_equal(np.array(output["data"], np.float32).reshape(2, 1024), expected)
    np.testing.assert_array_equal(expected, mlp.run(None, {"x": x})[0])


def test_nested_json_data_is_taken_row_major(mlp):
    x = np.arange(2 * 1024, dtype=np.float32).reshape(2, 1024) / 1024
    body = json.dumps({"inputs": [
        {"name": "x", "shape": [2, 1024], "datatype": "FP32", "data": x.tolist()}]}).encode()
    request = protocol.decode_request(body, mlp)
    np.testing.assert_array_equal(request.feeds["x"], x)


def test_binary_tensors_go_both_ways(mlp):
    x = np.random.default_rng(5).standard_normal((3, 1024)).astype(np.float32)
    header = json.dumps({
        "inputs": [{"name": "x", "shape": [3, 1024], "datatype": "FP32",
                    "parameters": {"binary_data_size": x.nbytes}}],
        "outputs": [{"name": "y", "parameters": {"binary_data": True}}]}).encode()
    (response, header_length), (expected,) = run(mlp, header + x.tobytes(), len(header))
    decoded, blobs = read_binary_response(response, header_length)
    assert decoded["outputs"][0]["shape"] == [3, 1024]
    np.testing.assert_array_equal(np.frombuffer(blobs["y"], "<f4").reshape(3, 1024), expected)


def test_bytes_and_fp16_and_bool_tensors():
    strings = nxrt.InferenceSession(identity_model(TensorProto.STRING))
    elements = [b"first", "s\u00e9cond".encode(), b""]
    blob = b"".join(struct.pack("<I", len(e)) + e for e in elements)
    header = json.dumps({
        "inputs": [{"name": "x", "shape": [3], "datatype": "BYTES",
                    "parameters": {"binary_data_size": len(blob)}}],
        "parameters": {"binary_data_output": True}}).encode()
    (response, header_length), _ = run(strings, header + blob, len(header))
    _, blobs = read_binary_response(response, header_length)
    assert blobs["y"] == blob
    as_json = json.dumps({"inputs": [
        {"name": "x", "shape": [2], "datatype": "BYTES", "data": ["a", "b\u00e9"]}]}).encode()
    (response, _), _ = run(strings, as_json)
    assert json.loads(response)["outputs"][0]["data"] == ["a", "b\u00e9"]

    for elem_type, datatype, values in ((TensorProto.FLOAT16, "FP16", [0.5, -2.0, 1024.0]),
                                        (TensorProto.BOOL, "BOOL", [True, False, True])):
        session = nxrt.InferenceSession(identity_model(elem_type))
        body = json.dumps({"inputs": [
            {"name": "x", "shape": [3], "datatype": datatype, "data": values}]}).encode()
        (response, _), _ = run(session, body)
        output = json.loads(response)["outputs"][0]
        assert output["datatype"] == datatype and output["data"] == values


BAD_REQUESTS = {
    "not JSON": (b"{inputs", "not JSON"),
    "no inputs": (b'{"id": "1"}', "list of 'inputs'"),
    "an unknown input": (b'{"inputs": [{"name": "z", "shape": [1], "datatype": "FP32", '
                         b'"data": [1]}]}', "'z' is not an input"),
    "a wrong datatype": (b'{"inputs": [{"name": "x", "shape": [1, 1024], "datatype": "FP64", '
                         b'"data": [0]}]}', "is FP64; the model takes FP32"),
    "an unknown datatype": (b'{"inputs": [{"name": "x", "shape": [1], "datatype": "FP8", '
                            b'"data": [0]}]}', "datatype 'FP8'"),
    "too few elements": (b'{"inputs": [{"name": "x", "shape": [1, 1024], "datatype": "FP32", '
                         b'"data": [1, 2]}]}', "2 elements for shape"),
    "a negative dim": (b'{"inputs": [{"name": "x", "shape": [-1, 1024], "datatype": "FP32", '
                       b'"data": []}]}', "dims of 0 or more"),
    "text for numbers": (b'{"inputs": [{"name": "x", "shape": [1, 1], "datatype": "FP32", '
                         b'"data": ["one"]}]}', "not FP32"),
    "no data": (b'{"inputs": [{"name": "x", "shape": [1, 1024], "datatype": "FP32"}]}',
                "neither 'data' nor binary_data_size"),
}


@pytest.mark.parametrize("body, message", BAD_REQUESTS.values(), ids=BAD_REQUESTS.keys())
def test_a_malformed_request_is_refused_in_one_line(mlp, body, message):
    with pytest.raises(nxrt.InvalidArgument, match=message) as raised:
        protocol.decode_request(body, mlp)
    assert "\n" not in str(raised.value)
    assert json.loads(protocol.error_body(raised.value)) == {"error": str(raised.value)}


def test_binary_sizes_that_do_not_add_up_are_refused(mlp):
    header = json.dumps({"inputs": [{"name": "x", "shape": [1, 1024], "datatype": "FP32",
                                     "parameters": {"binary_data_size": 4096}}]}).encode()
    data = np.zeros(1024, np.float32).tobytes()
    with pytest.raises(nxrt.InvalidArgument, match="passes the end"):
        protocol.decode_request(header + data[:100], mlp, len(header))
    with pytest.raises(nxrt.InvalidArgument, match="8 bytes of binary data follow"):
        protocol.decode_request(header + data + b"extra!!!", mlp, len(header))
    with pytest.raises(nxrt.InvalidArgument, match="Inference-Header-Content-Length"):
        protocol.decode_request(header + data, mlp, len(header) + 10**6)
    strings = nxrt.InferenceSession(identity_model(TensorProto.STRING))
    header = json.dumps({"inputs": [{"name": "x", "shape": [2], "datatype": "BYTES",
                                     "parameters": {"binary_data_size": 6}}]}).encode()
    with pytest.raises(nxrt.InvalidArgument, match="ends inside"):
        protocol.decode_request(header + struct.pack("<I", 9) + b"ab", strings, len(header))


def test_requested_outputs_choose_what_comes_back():
    model = model_bytes([helper.make_node("Add", ["a", "b"], ["sum"]),
                         helper.make_node("Mul", ["a", "b"], ["product"])],
                        [tensor_info("a", TensorProto.INT64, [2]),
                         tensor_info("b", TensorProto.INT64, [2])],
                        [tensor_info("sum", TensorProto.INT64, [2]),
                         tensor_info("product", TensorProto.INT64, [2])])
    session = nxrt.InferenceSession(model)
    body = json.dumps({
        "inputs": [{"name": "a", "shape": [2], "datatype": "INT64", "data": [2, 3]},
                   {"name": "b", "shape": [2], "datatype": "INT64", "data": [4, 5]}],
        "outputs": [{"name": "product"}]}).encode()
    (response, _), _ = run(session, body)
    assert json.loads(response)["outputs"] == [
        {"name": "product", "datatype": "INT64", "shape": [2], "data": [8, 15]}]


@pytest.mark.parametrize("binary", [False, True])
@pytest.mark.parametrize("elem_type,values", [
    (TensorProto.FLOAT, np.array([[0.5, -1.25], [3.0, 4.5]], np.float32)),
    (TensorProto.INT64, np.array([7, -9, 2**40], np.int64)),
    (TensorProto.BOOL, np.array([True, False])),
    (TensorProto.STRING, np.array([b"first", "s\u00e9cond".encode(), b""], dtype=object)),
])
def test_a_client_request_and_response_round_trip_through_a_session(binary, elem_type, values):
    session = nxrt.InferenceSession(identity_model(elem_type, shape=None))
    body, length = protocol.encode_request({"x": values}, binary=binary, binary_outputs=binary)
    assert (length is None) != binary
    (response, response_length), _ = run(session, body, length)
    assert (response_length is None) != binary
    got = protocol.decode_response(response, response_length)["y"]
    assert got.shape == values.shape
    if elem_type == TensorProto.STRING and not binary:  # JSON carries strings as text
        values = np.array([value.decode() for value in values.reshape(-1)], dtype=object)
    assert got.tolist() == values.tolist()


def test_an_error_response_is_raised_with_its_message():
    with pytest.raises(nxrt.InvalidArgument, match="the model takes FP32"):
        protocol.decode_response(protocol.error_body("input 'x' is INT64; the model takes FP32"))
