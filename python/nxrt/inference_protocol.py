"""The Open Inference Protocol (KServe v2) REST messages, as data.

Model metadata, inference requests with tensors in JSON or in the binary
tensor data extension, and responses, converted to and from what an
InferenceSession takes and gives; and a client's side of the same
(encode_request, decode_response). It knows nothing of HTTP: a server hands
it the body and the Inference-Header-Content-Length header, and sends back
what it returns. A request it cannot take raises nxrt.InvalidArgument with
one line naming the input and what is wrong (a server answers 400 with it).

Binary tensors are little-endian, row major, without padding; a BOOL is one
byte; a BYTES element is a 4-byte little-endian length and its bytes.
"""

import json
import struct

import numpy as np

from nxrt import _nxrt

# Protocol datatype -> numpy dtype name (None for BYTES, held as object).
_NUMPY_OF = {
    "BOOL": "bool", "UINT8": "uint8", "UINT16": "uint16", "UINT32": "uint32",
    "UINT64": "uint64", "INT8": "int8", "INT16": "int16", "INT32": "int32", "INT64": "int64",
    "FP16": "float16", "FP32": "float32", "FP64": "float64", "BYTES": None, "BF16": "bfloat16",
}
# ONNX tensor element type (as InferenceSession spells it) -> protocol datatype.
_DATATYPE_OF_ONNX = {
    "bool": "BOOL", "uint8": "UINT8", "uint16": "UINT16", "uint32": "UINT32",
    "uint64": "UINT64", "int8": "INT8", "int16": "INT16", "int32": "INT32", "int64": "INT64",
    "float16": "FP16", "float": "FP32", "double": "FP64", "string": "BYTES", "bfloat16": "BF16",
}


def _invalid(message):
    return _nxrt.InvalidArgument(message)


def datatype_of(value_type):
    """The protocol datatype of an ONNX type string ("tensor(float)" -> "FP32"),
    or None where the protocol has none."""
    if not value_type.startswith("tensor(") or not value_type.endswith(")"):
        return None
    return _DATATYPE_OF_ONNX.get(value_type[len("tensor("):-1])


def numpy_dtype_of(value_type):
    """The numpy dtype of an ONNX type string, or None for a non-tensor or a
    string tensor."""
    datatype = datatype_of(value_type)
    return None if datatype in (None, "BYTES") else _numpy_dtype(datatype)


def _numpy_dtype(datatype):
    name = _NUMPY_OF[datatype]
    if name == "bfloat16":
        import ml_dtypes  # noqa: PLC0415 (only a BF16 tensor needs it)
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def _datatype_of_array(array):
    if array.dtype.kind in "OUS":
        return "BYTES"
    for datatype, name in _NUMPY_OF.items():
        if name == array.dtype.name:
            return datatype
    raise _invalid(f"a tensor of numpy dtype {array.dtype.name} has no protocol datatype")


def _described(values):
    described = []
    for value in values:
        # A dim of unknown extent, or a value of unknown rank, is -1.
        shape = [-1] if value.shape is None else [
            dim if isinstance(dim, int) else -1 for dim in value.shape]
        described.append({
            "name": value.name,
            "datatype": datatype_of(value.type) or value.type,
            "shape": shape,
        })
    return described


def model_metadata(name, session, versions=("1",)):
    """GET /v2/models/{name}: inputs and outputs with datatypes and shapes,
    a symbolic dim as -1."""
    return {
        "name": name,
        "versions": list(versions),
        "platform": "onnx_nxrt",
        "inputs": _described(session.get_inputs()),
        "outputs": _described(session.get_outputs()),
    }


class InferenceRequest:
    """A decoded request: its id, the feeds for InferenceSession.run, and the
    outputs asked for (None for all) with whether each goes back as binary."""

    def __init__(self, request_id, feeds, outputs, binary_outputs):
        self.id = request_id
        self.feeds = feeds
        self.outputs = outputs
        self.binary_outputs = binary_outputs  # output name -> bool


def _bytes_elements(blob, count, what):
    elements, offset = [], 0
    for _ in range(count):
        if offset + 4 > len(blob):
            raise _invalid(f"{what}: its BYTES binary data ends inside an element's length")
        (length,) = struct.unpack_from("<I", blob, offset)
        offset += 4
        if offset + length > len(blob):
            raise _invalid(f"{what}: its BYTES binary data ends inside an element")
        elements.append(bytes(blob[offset:offset + length]))
        offset += length
    if offset != len(blob):
        raise _invalid(f"{what}: {len(blob) - offset} bytes follow its {count} elements")
    return np.array(elements, dtype=object)


def _decode_input(entry, inputs, binary, offset):
    """(array, bytes of `binary` it took) for one $request_input; `inputs`
    describes the model's inputs by name."""
    if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
        raise _invalid("every input is an object with a 'name'")
    name = entry["name"]
    declared = inputs.get(name)
    if declared is None:
        raise _invalid(f"'{name}' is not an input of the model")
    datatype = entry.get("datatype")
    if datatype not in _NUMPY_OF:
        raise _invalid(f"input '{name}': datatype {datatype!r} is not one of "
                       f"{', '.join(_NUMPY_OF)}")
    expected = datatype_of(declared.type)
    if datatype != expected:
        raise _invalid(f"input '{name}' is {datatype}; the model takes {expected}")
    return _tensor_of(entry, f"input '{name}'", binary, offset)


def _tensor_of(entry, what, binary, offset):
    """(array, bytes of `binary` it took) for a tensor entry whose datatype is
    known; `what` names it in errors."""
    datatype, shape = entry["datatype"], entry.get("shape")
    if not isinstance(shape, list) or not all(isinstance(d, int) and d >= 0 for d in shape):
        raise _invalid(f"{what}: 'shape' is a list of dims of 0 or more")
    count = int(np.prod(shape, dtype=np.int64))
    size = (entry.get("parameters") or {}).get("binary_data_size")
    if size is not None:
        if not isinstance(size, int) or size < 0 or offset + size > len(binary):
            raise _invalid(f"{what}: binary_data_size {size} passes the end of the body")
        blob = binary[offset:offset + size]
        if datatype == "BYTES":
            return _bytes_elements(blob, count, what).reshape(shape), size
        dtype = _numpy_dtype(datatype)
        if size != count * dtype.itemsize:
            raise _invalid(f"{what}: {size} bytes of binary data for shape {shape} of "
                           f"{datatype}, which takes {count * dtype.itemsize}")
        return np.frombuffer(blob, dtype.newbyteorder("<")).reshape(shape), size
    if "data" not in entry:
        raise _invalid(f"{what} has neither 'data' nor binary_data_size")
    flat = np.asarray(entry["data"], dtype=object).reshape(-1)
    if flat.size != count:
        raise _invalid(f"{what}: {flat.size} elements for shape {shape}, which holds {count}")
    if datatype == "BYTES":
        return flat.reshape(shape), 0
    try:
        return flat.astype(_numpy_dtype(datatype)).reshape(shape), 0
    except (TypeError, ValueError) as error:
        raise _invalid(f"{what}: its data is not {datatype}: {error}") from None


def decode_request(body, session, header_length=None):
    """POST /v2/models/{name}/infer: the request in `body`, whose first
    `header_length` bytes are the JSON when the binary extension is used."""
    body = memoryview(body)
    length = len(body) if header_length is None else int(header_length)
    if not 0 <= length <= len(body):
        raise _invalid(f"Inference-Header-Content-Length {length} is not within the body's "
                       f"{len(body)} bytes")
    try:
        request = json.loads(bytes(body[:length]))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise _invalid(f"the request is not JSON: {error}") from None
    if not isinstance(request, dict) or not isinstance(request.get("inputs"), list):
        raise _invalid("the request is a JSON object with a list of 'inputs'")
    declared = {value.name: value for value in session.get_inputs()}
    declared.update({value.name: value for value in session.get_overridable_initializers()})
    binary, offset, feeds = body[length:], 0, {}
    for entry in request["inputs"]:
        array, used = _decode_input(entry, declared, binary, offset)
        offset += used
        feeds[entry["name"]] = array
    if offset != len(binary):
        raise _invalid(f"{len(binary) - offset} bytes of binary data follow the inputs")
    binary_default = bool((request.get("parameters") or {}).get("binary_data_output", False))
    outputs, binary_outputs = None, {}
    if request.get("outputs") is not None:
        if not isinstance(request["outputs"], list):
            raise _invalid("'outputs' is a list of objects with a 'name'")
        outputs = []
        for entry in request["outputs"]:
            if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                raise _invalid("'outputs' is a list of objects with a 'name'")
            outputs.append(entry["name"])
            binary_outputs[entry["name"]] = bool(
                (entry.get("parameters") or {}).get("binary_data", binary_default))
    else:
        binary_outputs = {value.name: binary_default for value in session.get_outputs()}
    return InferenceRequest(request.get("id"), feeds, outputs, binary_outputs)


def _binary_of(array, datatype):
    if datatype == "BYTES":
        parts = []
        for element in array.reshape(-1):
            data = element if isinstance(element, bytes) else str(element).encode()
            parts += [struct.pack("<I", len(data)), data]
        return b"".join(parts)
    return np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<"), copy=False).tobytes()


def _json_data(array, datatype):
    if datatype == "BYTES":
        return [element.decode("utf-8", "replace") if isinstance(element, bytes) else str(element)
                for element in array.reshape(-1)]
    if datatype == "BF16":
        array = array.astype(np.float32)
    return array.reshape(-1).tolist()


def encode_response(model_name, request, names, arrays, model_version=None):
    """(body, header_length) for the outputs `names` with values `arrays`;
    header_length is None unless an output goes back as binary data."""
    outputs, blobs = [], []
    for name, array in zip(names, arrays):
        array = np.asarray(array)
        datatype = _datatype_of_array(array)
        entry = {"name": name, "datatype": datatype, "shape": list(array.shape)}
        if request.binary_outputs.get(name, False):
            blob = _binary_of(array, datatype)
            entry["parameters"] = {"binary_data_size": len(blob)}
            blobs.append(blob)
        else:
            entry["data"] = _json_data(array, datatype)
        outputs.append(entry)
    response = {"model_name": model_name, "outputs": outputs}
    if model_version is not None:
        response["model_version"] = str(model_version)
    if request.id is not None:
        response["id"] = request.id
    header = json.dumps(response).encode()
    if not blobs:
        return header, None
    return header + b"".join(blobs), len(header)


def encode_request(feeds, binary=False, outputs=None, binary_outputs=False):
    """A client's POST /v2/models/{name}/infer body for `feeds` (name ->
    array): (body, header_length), each tensor as binary data where `binary`;
    header_length is None for a JSON body alone. `outputs` names the outputs
    asked for (None for all); `binary_outputs` asks for them as binary data."""
    entries, blobs = [], []
    for name, array in feeds.items():
        array = np.asarray(array)
        datatype = _datatype_of_array(array)
        entry = {"name": name, "datatype": datatype, "shape": list(array.shape)}
        if binary:
            blob = _binary_of(array, datatype)
            entry["parameters"] = {"binary_data_size": len(blob)}
            blobs.append(blob)
        else:
            entry["data"] = _json_data(array, datatype)
        entries.append(entry)
    request = {"inputs": entries}
    if outputs is not None:
        request["outputs"] = [{"name": name} for name in outputs]
    if binary_outputs:
        request["parameters"] = {"binary_data_output": True}
    header = json.dumps(request).encode()
    if not blobs:
        return header, None
    return header + b"".join(blobs), len(header)


def decode_response(body, header_length=None):
    """A client's reading of an inference response: {output name: array}.
    An error response raises nxrt.InvalidArgument with its message."""
    body = memoryview(body)
    length = len(body) if header_length is None else int(header_length)
    response = json.loads(bytes(body[:length]))
    if "error" in response:
        raise _invalid(response["error"])
    binary, offset, arrays = body[length:], 0, {}
    for entry in response.get("outputs", []):
        what = f"output '{entry.get('name')}'"
        if entry.get("datatype") not in _NUMPY_OF:
            raise _invalid(f"{what}: datatype {entry.get('datatype')!r} is not the protocol's")
        array, used = _tensor_of(entry, what, binary, offset)
        offset += used
        arrays[entry["name"]] = array
    return arrays


def error_body(message):
    """The protocol's error object."""
    return json.dumps({"error": str(message)}).encode()
