"""InferenceSession's calls: descriptions, metadata, providers, options."""

import json
import os
import pathlib

import numpy as np
import pytest
from conftest import add_model, model_bytes, model_path, tensor_info
from onnx import TensorProto, helper

import nxrt


def test_inputs_and_outputs_describe_the_model():
    session = nxrt.InferenceSession(model_path("mlp.onnx"))
    (x,) = session.get_inputs()
    (y,) = session.get_outputs()
    assert (x.name, x.shape, x.type) == ("x", ["batch", 1024], "tensor(float)")
    assert (y.name, y.shape, y.type) == ("y", ["batch", 1024], "tensor(float)")


def test_overridable_initializers_are_listed_and_may_be_fed():
    weight = helper.make_tensor("w", TensorProto.FLOAT, [2], [10.0, 20.0])
    model = model_bytes([helper.make_node("Add", ["x", "w"], ["y"])],
                        [tensor_info("x", TensorProto.FLOAT, [2]),
                         tensor_info("w", TensorProto.FLOAT, [2])],
                        [tensor_info("y", TensorProto.FLOAT, [2])], initializers=[weight])
    session = nxrt.InferenceSession(model)
    (w,) = session.get_overridable_initializers()
    assert (w.name, w.shape, w.type) == ("w", [2], "tensor(float)")
    x = np.array([1, 2], np.float32)
    np.testing.assert_array_equal(session.run(None, {"x": x})[0], [11, 22])
    np.testing.assert_array_equal(session.run(None, {"x": x, "w": x})[0], [2, 4])


def test_model_metadata_comes_from_the_file(tmp_path):
    model = model_bytes([helper.make_node("Identity", ["x"], ["y"])],
                        [tensor_info("x", TensorProto.FLOAT, [1])],
                        [tensor_info("y", TensorProto.FLOAT, [1])],
                        producer_name="unit-test", producer_version="3.1", domain="org.test",
                        model_version=7, doc_string="a model")
    path = tmp_path / "described.onnx"
    path.write_bytes(model)
    meta = nxrt.InferenceSession(path).get_modelmeta()
    assert (meta.producer_name, meta.domain, meta.version, meta.description) == (
        "unit-test", "org.test", 7, "a model")
    assert meta.graph_name == "described"
    assert meta.custom_metadata_map == {}


def test_a_model_loads_from_str_pathlike_and_bytes():
    path = model_path("mlp.onnx")
    x = np.ones((1, 1024), np.float32)
    data = path.read_bytes()
    sources = (str(path), pathlib.Path(path), data, bytearray(data), memoryview(data))
    results = [nxrt.InferenceSession(source).run(None, {"x": x})[0] for source in sources]
    for result in results[1:]:
        np.testing.assert_array_equal(result, results[0])


def test_output_names_choose_and_order_the_outputs():
    model = model_bytes([helper.make_node("Add", ["a", "b"], ["sum"]),
                         helper.make_node("Mul", ["a", "b"], ["product"])],
                        [tensor_info("a", TensorProto.FLOAT, [2]),
                         tensor_info("b", TensorProto.FLOAT, [2])],
                        [tensor_info("sum", TensorProto.FLOAT, [2]),
                         tensor_info("product", TensorProto.FLOAT, [2])])
    session = nxrt.InferenceSession(model)
    a, b = np.array([2, 3], np.float32), np.array([4, 5], np.float32)
    product, total = session.run(["product", "sum"], {"a": a, "b": b})
    np.testing.assert_array_equal(product, a * b)
    np.testing.assert_array_equal(total, a + b)
    assert len(session.run([], {"a": a, "b": b})) == 2


def test_providers_take_nxrt_and_onnxruntime_names():
    assert "CPUExecutionProvider" in nxrt.get_available_providers()
    assert nxrt.get_available_providers()[-1] == "CPUExecutionProvider"
    for providers in (["cpu"], ["CPUExecutionProvider"], [("cpu", {"threads": 1})], None):
        session = nxrt.InferenceSession(add_model(), providers=providers)
        assert session.get_providers() == ["CPUExecutionProvider"]
    session = nxrt.InferenceSession(add_model(), providers=["cpu"],
                                    provider_options=[{"threads": 2}])
    assert session.get_provider_options() == {"CPUExecutionProvider": {"threads": "2"}}


def test_intra_op_threads_go_to_the_cpu_provider():
    options = nxrt.SessionOptions()
    options.intra_op_num_threads = 3
    session = nxrt.InferenceSession(add_model(), options)
    assert session.get_provider_options() == {"CPUExecutionProvider": {"threads": "3"}}


def test_an_unknown_provider_is_refused_by_name():
    with pytest.raises(nxrt.NoSuchFile, match="no-such-ep"):
        nxrt.InferenceSession(add_model(), providers=["no-such-ep"])


def test_graph_optimization_level_turns_the_rewrites_off_and_on():
    x = np.random.default_rng(1).standard_normal((1, 3, 64, 64)).astype(np.float32)
    outputs = []
    for level in (nxrt.GraphOptimizationLevel.ORT_DISABLE_ALL,
                  nxrt.GraphOptimizationLevel.ORT_ENABLE_ALL):
        options = nxrt.SessionOptions()
        options.graph_optimization_level = level
        outputs.append(nxrt.InferenceSession(model_path("cnn.onnx"), options).run(
            None, {"image": x})[0])
    np.testing.assert_allclose(outputs[0], outputs[1], rtol=1e-4, atol=1e-5)


def test_a_free_dimension_override_fixes_a_symbolic_dim():
    options = nxrt.SessionOptions()
    options.add_free_dimension_override_by_name("batch", 2)
    session = nxrt.InferenceSession(model_path("mlp.onnx"), options)
    assert session.get_inputs()[0].shape == [2, 1024]
    session.run(None, {"x": np.zeros((2, 1024), np.float32)})
    with pytest.raises(nxrt.InvalidArgument, match="dim 0 is 3"):
        session.run(None, {"x": np.zeros((3, 1024), np.float32)})


def test_the_memory_limit_refuses_a_run_that_would_pass_it_and_the_session_stays_usable():
    options = nxrt.SessionOptions()
    options.memory_limit_bytes = 64 * 1024
    session = nxrt.InferenceSession(model_path("mlp.onnx"), options)
    with pytest.raises(nxrt.OutOfMemory, match="limit"):
        session.run(None, {"x": np.zeros((64, 1024), np.float32)})
    assert session.run(None, {"x": np.zeros((1, 1024), np.float32)})[0].shape == (1, 1024)


def test_session_config_entries_set_nxrt_options_and_keep_others():
    options = nxrt.SessionOptions()
    options.add_session_config_entry("nxrt.kernel_cache_variants_per_node", "2")
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    nxrt.InferenceSession(add_model(), options)
    with pytest.raises(nxrt.InvalidArgument, match="nxrt.fixed_capacity_kv"):
        options.add_session_config_entry("nxrt.no_such_key", "1")
    with pytest.raises(nxrt.InvalidArgument, match="0 or 1"):
        options.add_session_config_entry("nxrt.device_graphs", "yes")


def test_log_severity_level_is_checked():
    options = nxrt.SessionOptions()
    assert options.log_severity_level == 2
    options.log_severity_level = 3
    nxrt.InferenceSession(add_model(), options)
    with pytest.raises(nxrt.InvalidArgument):
        options.log_severity_level = 7
    run_options = nxrt.RunOptions()
    run_options.log_severity_level = 9
    session = nxrt.InferenceSession(add_model())
    one = np.ones(4, np.float32)
    with pytest.raises(nxrt.InvalidArgument, match="log_severity_level 9"):
        session.run(None, {"a": one, "b": one}, run_options)


def test_profiling_writes_a_chrome_trace_of_every_node(tmp_path):
    options = nxrt.SessionOptions()
    options.enable_profiling = True
    options.profile_file_prefix = str(tmp_path / "trace")
    session = nxrt.InferenceSession(model_path("mlp.onnx"), options)
    session.run(None, {"x": np.ones((1, 1024), np.float32)})
    path = session.end_profiling()
    assert os.path.dirname(path) == str(tmp_path)
    events = json.loads(pathlib.Path(path).read_text())
    assert events and all(event["ph"] == "X" and event["dur"] >= 0 for event in events)
    assert "MatMul" in {event["args"]["op_name"] for event in events}
    assert nxrt.InferenceSession(add_model()).end_profiling() == ""


def test_unknown_keyword_arguments_are_refused():
    with pytest.raises(nxrt.InvalidArgument, match="no_such_argument"):
        nxrt.InferenceSession(add_model(), no_such_argument=1)
