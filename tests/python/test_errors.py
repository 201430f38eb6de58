"""Bad input raises one of nxrt's exceptions with a one-line message, never
crashes the interpreter, and leaves the session usable; RunOptions stop runs."""

import threading
import time

import numpy as np
import pytest
from conftest import add_model, model_path

import nxrt


@pytest.fixture
def session():
    return nxrt.InferenceSession(add_model())


def good_feed():
    one = np.ones(4, np.float32)
    return {"a": one, "b": one}


BAD_FEEDS = {
    "wrong dtype": ({"a": np.ones(4, np.int32), "b": np.ones(4, np.float32)}, nxrt.InvalidArgument,
                    "is int32, expected float"),
    "wrong shape": ({"a": np.ones(5, np.float32), "b": np.ones(4, np.float32)},
                    nxrt.InvalidArgument, "dim 0 is 5"),
    "missing input": ({"a": np.ones(4, np.float32)}, nxrt.InvalidArgument, "'b'"),
    "unknown input": ({**good_feed(), "c": np.ones(4, np.float32)}, nxrt.InvalidArgument, "'c'"),
    "None for a tensor": ({"a": None, "b": np.ones(4, np.float32)}, nxrt.InvalidArgument,
                          "not optional"),
    "an object numpy cannot make an array of": (
        {"a": {"not": "an array"}, "b": np.ones(4, np.float32)}, nxrt.InvalidArgument, "'a'"),
    "ragged nested lists": ({"a": [[1.0], [1.0, 2.0]], "b": np.ones(4, np.float32)},
                            nxrt.InvalidArgument, "input 'a' is not an array"),
    "a dtype ONNX has no type for": ({"a": np.ones(4, "datetime64[s]"), "b": np.ones(4, np.float32)},
                                     nxrt.InvalidArgument, "datetime64"),
    "strings for floats": ({"a": np.array(["x"] * 4), "b": np.ones(4, np.float32)},
                           nxrt.InvalidArgument, "is string, expected float"),
}


@pytest.mark.parametrize("feed, error, message", BAD_FEEDS.values(), ids=BAD_FEEDS.keys())
def test_bad_input_raises_one_line_and_the_session_stays_usable(session, feed, error, message):
    with pytest.raises(error, match=message) as raised:
        session.run(None, feed)
    assert "\n" not in str(raised.value)
    assert isinstance(raised.value, nxrt.Error)
    np.testing.assert_array_equal(session.run(None, good_feed())[0], np.full(4, 2, np.float32))


def test_the_feed_must_be_a_dict_and_names_str(session):
    with pytest.raises(nxrt.InvalidArgument, match="dict"):
        session.run(None, [np.ones(4, np.float32)])
    with pytest.raises(nxrt.InvalidArgument, match="str"):
        session.run(None, {1: np.ones(4, np.float32)})
    with pytest.raises(nxrt.InvalidArgument, match="str"):
        session.run([3], good_feed())


@pytest.mark.parametrize("model", [b"", b"\x08\x07garbage", b"\xff" * 64])
def test_a_malformed_model_is_refused(model):
    with pytest.raises(nxrt.InvalidArgument, match="<model bytes>"):
        nxrt.InferenceSession(model)


def test_a_missing_file_and_a_wrong_argument_type_are_refused():
    with pytest.raises(nxrt.NoSuchFile, match="no/such/model.onnx"):
        nxrt.InferenceSession("no/such/model.onnx")
    with pytest.raises(nxrt.InvalidArgument, match="path"):
        nxrt.InferenceSession(42)


def test_errors_are_also_the_builtin_kinds():
    assert issubclass(nxrt.InvalidArgument, ValueError)
    assert issubclass(nxrt.NoSuchFile, FileNotFoundError)
    assert issubclass(nxrt.OutOfMemory, MemoryError)
    assert issubclass(nxrt.Error, RuntimeError)


def test_terminate_stops_a_run_and_the_next_one_runs():
    session = nxrt.InferenceSession(model_path("add_chain_1000.onnx"))
    x = np.ones(1, np.float32)
    options = nxrt.RunOptions()
    options.terminate = True
    with pytest.raises(nxrt.Cancelled):
        session.run(None, {"x": x}, options)
    options.terminate = False
    assert session.run(None, {"x": x}, options)[0].shape == (1,)


def test_terminate_set_from_another_thread_stops_a_long_run():
    session = nxrt.InferenceSession(model_path("mlp.onnx"))
    x = np.ones((2048, 1024), np.float32)
    options = nxrt.RunOptions()
    stopped = []

    def run_until_stopped():
        try:
            while True:
                session.run(None, {"x": x}, options)
        except nxrt.Cancelled as cancelled:
            stopped.append(cancelled)

    runner = threading.Thread(target=run_until_stopped)
    runner.start()
    time.sleep(0.2)
    options.terminate = True
    runner.join(timeout=30)
    assert stopped and not runner.is_alive()


def test_a_passed_deadline_stops_the_run():
    session = nxrt.InferenceSession(model_path("add_chain_1000.onnx"))
    options = nxrt.RunOptions()
    options.deadline = time.monotonic() - 1
    with pytest.raises(nxrt.Cancelled):
        session.run(None, {"x": np.ones(1, np.float32)}, options)
    options.deadline = time.monotonic() + 60
    session.run(None, {"x": np.ones(1, np.float32)}, options)
