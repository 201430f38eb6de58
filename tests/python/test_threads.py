"""Several Python threads run one session; the GIL is released while a model runs."""

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from conftest import model_path

import nxrt


def test_concurrent_runs_give_the_results_of_sequential_ones():
    session = nxrt.InferenceSession(model_path("mlp.onnx"))
    rng = np.random.default_rng(3)
    inputs = [rng.standard_normal((1 + i % 4, 1024)).astype(np.float32) for i in range(64)]
    expected = [session.run(None, {"x": x})[0] for x in inputs]
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda x: session.run(None, {"x": x})[0], inputs))
    for got, want in zip(results, expected):
        np.testing.assert_array_equal(got, want)


def count_while(condition):
    ticks = 0
    start = time.perf_counter()
    while condition():
        ticks += 1
    return ticks / (time.perf_counter() - start)


def test_the_gil_is_released_while_the_model_runs():
    options = nxrt.SessionOptions()
    options.intra_op_num_threads = 1
    session = nxrt.InferenceSession(model_path("mlp.onnx"), options)
    x = np.ones((1024, 1024), np.float32)
    session.run(None, {"x": x})
    deadline = time.perf_counter() + 0.2
    alone = count_while(lambda: time.perf_counter() < deadline)
    done = threading.Event()

    def run():
        for _ in range(3):
            session.run(None, {"x": x})
        done.set()

    runner = threading.Thread(target=run)
    runner.start()
    beside_runs = count_while(lambda: not done.is_set())
    runner.join()
    # With the GIL held through a run, this thread would count only in the
    # moments between runs, a tenth of its pace alone or less.
    assert beside_runs > 0.25 * alone, (beside_runs, alone)
