"""IOBinding and Generator: inputs borrowed, outputs written in place, the KV
cache updated where it lies, and a decode loop that gives `nxrt generate`'s tokens."""

import json
import shutil
import subprocess

import numpy as np
import pytest
from conftest import NXRT_CLI, add_model, corpus_model_path, model_path

import nxrt


def test_outputs_are_handed_to_numpy_without_a_copy():
    session = nxrt.InferenceSession(add_model())
    one = np.ones(4, np.float32)
    (c,) = session.run(None, {"a": one, "b": one})
    assert not c.flags.owndata and c.base is not None and c.flags.writeable


def test_a_bound_output_array_receives_the_output():
    session = nxrt.InferenceSession(add_model())
    a, b = np.arange(4, dtype=np.float32), np.full(4, 10, np.float32)
    out = np.zeros(4, np.float32)
    binding = session.io_binding()
    binding.bind_cpu_input("a", a)
    binding.bind_input("b", b)
    binding.bind_output("c", out)
    session.run_with_iobinding(binding)
    (c,) = binding.get_outputs()
    assert c is out
    np.testing.assert_array_equal(out, a + b)
    # Inputs are borrowed: a change in place is seen by the next run.
    a += 1
    session.run_with_iobinding(binding)
    np.testing.assert_array_equal(out, a + b)
    copies = binding.copy_outputs_to_cpu()
    assert copies[0] is not out
    np.testing.assert_array_equal(copies[0], out)


def test_an_unbound_or_mismatched_output_gets_storage_of_its_own():
    session = nxrt.InferenceSession(add_model())
    one = np.ones(4, np.float32)
    binding = session.io_binding()
    binding.bind_input("a", one)
    binding.bind_input("b", one)
    binding.bind_output("c")
    assert binding.get_outputs() == []
    session.run_with_iobinding(binding)
    np.testing.assert_array_equal(binding.get_outputs()[0], 2 * one)
    small = np.zeros(2, np.float32)
    binding.bind_output("c", small)
    session.run_with_iobinding(binding)
    (c,) = binding.get_outputs()
    assert c is not small and c.shape == (4,)
    with pytest.raises(nxrt.InvalidArgument, match="writable"):
        binding.bind_output("c", np.ones(4, np.float32)[::2])
    binding.clear_binding_inputs()
    with pytest.raises(nxrt.InvalidArgument, match="'a'"):
        session.run_with_iobinding(binding)


def test_a_fixed_capacity_cache_is_written_in_place():
    options = nxrt.SessionOptions()
    options.add_session_config_entry("nxrt.fixed_capacity_kv", "1")
    session = nxrt.InferenceSession(model_path("decoder_fixed_kv256.onnx"), options)
    pasts = {value.name: np.zeros((1, 2, 256, 32), np.float32)
             for value in session.get_inputs() if value.name.startswith("past_key_values")}
    mask = np.zeros((1, 256), np.int64)
    mask[0, :3] = 1
    binding = session.io_binding()
    binding.bind_input("input_ids", np.array([[5, 6, 7]], np.int64))
    binding.bind_input("attention_mask", mask)
    for name, past in pasts.items():
        binding.bind_input(name, past)
    binding.bind_output("logits")
    session.run_with_iobinding(binding)
    for past in pasts.values():
        assert np.abs(past[0, :, :3]).sum() > 0, "the prompt's rows were not written in place"
        assert not past[0, :, 3:].any()


def cli_tokens(model, prompt, steps, kv):
    if not shutil.which(NXRT_CLI):
        pytest.skip(f"no nxrt command at {NXRT_CLI}")
    completed = subprocess.run(
        [NXRT_CLI, "generate", str(model), "--prompt", ",".join(map(str, prompt)),
         "--steps", str(steps), "--kv", kv, "--json"], check=True, capture_output=True, text=True)
    return json.loads(completed.stdout)["tokens"]


@pytest.mark.parametrize("model", ["decoder_fixed_kv256.onnx", "decoder.onnx"])
def test_the_generator_gives_the_tokens_of_nxrt_generate(model):
    path = model_path(model)
    generator = nxrt.Generator(path)
    prompt = [3, 1, 4, 1, 5, 9, 2, 6]
    tokens = generator.generate(prompt, steps=24)
    assert tokens == cli_tokens(path, prompt, 24, "fixed" if generator.capacity else "growing")
    assert len(generator.step_seconds) == 24
    # A second generation starts over from an empty cache.
    assert generator.generate(prompt, steps=24) == tokens


def test_the_generator_stops_at_a_stop_token_and_at_the_capacity():
    generator = nxrt.Generator(model_path("decoder_fixed_kv256.onnx"))
    tokens = generator.generate([1, 2, 3], steps=40)
    stop = tokens[5]
    assert generator.generate([1, 2, 3], steps=40, stop_tokens=[stop]) == tokens[:tokens.index(stop) + 1]
    assert len(generator.generate(list(range(250)), steps=40)) == 256 - 250
    with pytest.raises(nxrt.InvalidArgument, match="holds 256 tokens"):
        generator.generate(list(range(300)))


@pytest.mark.parametrize("name", ["llama_gqa_dynamo", "gpt2_torchscript", "opt_dynamo"])
def test_the_generator_drives_exported_decoders_by_role(name):
    # transformers' dynamo names, Optimum's names with position ids, and OPT
    # without them: each fed by role, as `nxrt generate` feeds it.
    path = corpus_model_path(name)
    prompt = [17, 5, 300, 42, 8, 99]
    assert nxrt.Generator(path).generate(prompt, steps=12) == cli_tokens(path, prompt, 12, "growing")


def test_a_model_that_is_not_a_decoder_is_refused_by_what_it_lacks():
    with pytest.raises(nxrt.InvalidArgument, match="no integer input of rank 2 carries the token ids"):
        nxrt.Generator(add_model())


def test_a_run_on_the_primary_slot_gives_the_eager_results():
    session = nxrt.InferenceSession(model_path("mlp.onnx"))
    x = np.random.default_rng(2).standard_normal((1, 1024)).astype(np.float32)
    eager = session.run(None, {"x": x})[0]
    options = nxrt.RunOptions()
    options.device_graph_slot = "primary"
    assert options.device_graph_slot == "primary"
    for _ in range(3):  # warm, captured, replayed
        np.testing.assert_array_equal(session.run(None, {"x": x}, options)[0], eager)
    options.device_graph_slot = None
    assert options.device_graph_slot is None
    with pytest.raises(nxrt.InvalidArgument, match="primary, verify"):
        options.device_graph_slot = "secondary"


def test_two_open_streams_interleave_and_each_gives_its_own_tokens():
    generator = nxrt.Generator(model_path("decoder.onnx"))
    first, second = [5, 6, 7], [9, 8]
    expected = (generator.generate(first, steps=10), generator.generate(second, steps=10))
    streams = (generator.stream(first, steps=10), generator.stream(second, steps=10))
    got = ([], [])
    for _ in range(11):
        for stream, tokens in zip(streams, got):
            tokens.append(next(stream))
    assert got == expected
