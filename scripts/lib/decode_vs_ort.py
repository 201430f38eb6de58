"""Checks `nxrt generate` against ONNX Runtime, step by step.

For each generated decoder (decoder.onnx with a growing KV cache,
decoder_fixed_kv256.onnx with a fixed-capacity one, and both with int4
weights through MatMulNBits, one with int8 activations) this runs
`nxrt generate --ep cpu --json --output-dir D` (one thread, or `--threads`),
then the same greedy decode of the same prompt in onnxruntime
(CPUExecutionProvider, one thread). A
fixed-capacity cache is bound as one OrtValue for past and present and fed
the capacity-wide attention mask (ones over the valid prefix), as decoding
loops over such models do. Every run's last-position logits must agree
(rtol 1e-3, atol 1e-5) and so must the generated tokens. Prints the worst
difference per step; exits 1 on a mismatch, 77 (a skip for ctest) when the
models are not there.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper

SKIP_EXIT_CODE = 77
RTOL, ATOL = 1e-3, 1e-5
# int8 activations (MatMulNBits at accuracy_level 4) round each block of a
# product's input to 1/127 of its largest value; inputs that differ in the
# last bit between the engines can round a code the other way, one
# quantisation step, which the following layers carry into the logits. So
# their logits may differ by up to this share of the step's largest logit.
INT8_LOGIT_SHARE = 2e-2
INT8_MODELS = {"decoder_int4_b32_int8.onnx"}
MODELS = (("decoder.onnx", "growing"), ("decoder_fixed_kv256.onnx", "fixed"),
          ("decoder_int4_b32.onnx", "growing"), ("decoder_int4_b32_int8.onnx", "growing"),
          ("decoder_int4_b128.onnx", "growing"),
          ("decoder_fixed_kv256_int4_b32.onnx", "fixed"))


def run_nxrt(nxrt, model_path, kv, prompt_tokens, steps, threads, output_dir):
    command = [nxrt, "generate", model_path, "--ep", "cpu", "--kv", kv,
               "--prompt-tokens", str(prompt_tokens), "--steps", str(steps),
               "--threads", str(threads), "--output-dir", output_dir, "--json"]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise SystemExit(f"decode_vs_ort: {' '.join(command)} failed: {result.stderr.strip()}")
    report = json.loads(result.stdout)
    logits = []
    for run in range(len(report["tokens"])):
        tensor = onnx.load_tensor(os.path.join(output_dir, f"step_{run:03d}.pb"))
        logits.append(numpy_helper.to_array(tensor).reshape(-1))
    return report, logits


class OrtDecoder:
    """Greedy decoding with an onnxruntime session, one run per call."""

    def __init__(self, model_path):
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.log_severity_level = 3
        self.session = ort.InferenceSession(model_path, options, providers=["CPUExecutionProvider"])
        self.pasts = [i for i in self.session.get_inputs() if i.name.startswith("past_key_values.")]
        _, kv_heads, capacity, head_dim = self.pasts[0].shape
        self.capacity = capacity if isinstance(capacity, int) else None
        rows = self.capacity or 0
        self.cache = {i.name: ort.OrtValue.ortvalue_from_numpy(
            np.zeros([1, kv_heads, rows, head_dim], np.float32)) for i in self.pasts}
        self.length = 0

    def run(self, ids):
        """Feeds `ids` after the cached tokens; answers the last position's logits."""
        total = self.length + len(ids)
        if self.capacity:
            mask = np.zeros([1, self.capacity], np.int64)
            mask[0, :total] = 1
        else:
            mask = np.ones([1, total], np.int64)
        binding = self.session.io_binding()
        binding.bind_cpu_input("input_ids", np.array([ids], np.int64))
        binding.bind_cpu_input("attention_mask", mask)
        for name, value in self.cache.items():
            binding.bind_ortvalue_input(name, value)
            present = name.replace("past_key_values.", "present.")
            if self.capacity:
                binding.bind_ortvalue_output(present, value)
            else:
                binding.bind_output(present)
        binding.bind_output("logits")
        self.session.run_with_iobinding(binding)
        *presents, logits = binding.get_outputs()  # in the order bound
        if not self.capacity:
            self.cache = dict(zip(self.cache, presents))
        self.length = total
        return logits.numpy()[0, -1].copy()


def check_model(nxrt, models_dir, file_name, kv, prompt_tokens, steps, threads):
    model_path = os.path.join(models_dir, file_name)
    with tempfile.TemporaryDirectory(prefix="decode_vs_ort_") as output_dir:
        report, nxrt_logits = run_nxrt(nxrt, model_path, kv, prompt_tokens, steps, threads, output_dir)
    print(f"{file_name} (kv {kv}, nxrt on {threads} thread(s)): prompt {report['prompt']}")
    if report["steps"] != steps:
        print(f"  nxrt ran {report['steps']} of {steps} steps")
        return False
    decoder = OrtDecoder(model_path)
    ids = report["prompt"]
    ok = True
    ort_tokens = []
    for run, logits in enumerate(nxrt_logits):
        expected = decoder.run(ids)
        ort_tokens.append(int(np.argmax(expected)))
        ids = [ort_tokens[-1]]
        difference = np.abs(logits - expected)
        worst = int(np.argmax(difference - RTOL * np.abs(expected)))
        atol = INT8_LOGIT_SHARE * np.abs(expected).max() if file_name in INT8_MODELS else ATOL
        close = np.allclose(logits, expected, rtol=RTOL, atol=atol)
        ok &= close
        print(f"  step {run:3d}: worst |nxrt - ort| {difference.max():.3g} "
              f"(at {worst}: {logits[worst]:.6g} vs {expected[worst]:.6g})"
              f"{'' if close else '  MISMATCH'}")
    if ort_tokens != report["tokens"]:
        print(f"  tokens differ:\n    nxrt {report['tokens']}\n    ort  {ort_tokens}")
        ok = False
    print(f"  {'same' if ok else 'DIFFERENT'}: {len(nxrt_logits)} runs, tokens {report['tokens']}")
    print(f"  nxrt decode step median {report['median_us']:.1f} us, "
          f"{report['tokens_per_s']:.1f} tokens/s, device graphs {report['device_graphs']}")
    return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nxrt", required=True, help="the nxrt binary")
    parser.add_argument("--models", required=True, help="folder of the generated models")
    parser.add_argument("--prompt-tokens", type=int, default=16)
    parser.add_argument("--steps", type=int, default=32)
    parser.add_argument("--threads", type=int, default=1, help="the cpu EP's threads in nxrt (default 1)")
    args = parser.parse_args()
    missing = [f for f, _ in MODELS if not os.path.exists(os.path.join(args.models, f))]
    if missing:
        print(f"decode_vs_ort: {', '.join(missing)} not in {args.models}; build the 'models' target")
        return SKIP_EXIT_CODE
    results = [check_model(args.nxrt, args.models, file_name, kv, args.prompt_tokens, args.steps, args.threads)
               for file_name, kv in MODELS]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
