"""python -m nxrt.serve MODEL... : serve models until Ctrl-C.

A MODEL is a path, or NAME=PATH; the name defaults to the file's stem.
Without --address it starts a Ray instance of its own on this machine.
"""

import argparse
import os
import signal
import sys
import threading


def _models(arguments):
    from nxrt.serve import ModelConfig  # noqa: PLC0415 (after the usage check)
    models = []
    for spec in arguments.models:
        name, _, path = spec.rpartition("=") if "=" in spec else ("", "", spec)
        name = name or os.path.splitext(os.path.basename(path))[0]
        models.append(ModelConfig(
            name=name, model=path, runtime=arguments.runtime,
            providers=arguments.provider or None, threads=arguments.threads,
            memory_limit_bytes=arguments.memory_limit_bytes, replicas=arguments.replicas,
            max_batch_size=arguments.max_batch_size,
            batch_wait_timeout_s=arguments.batch_wait_ms / 1000.0))
    return models


def _parser():
    parser = argparse.ArgumentParser(prog="nxrt serve", description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="+", metavar="MODEL", help="PATH or NAME=PATH")
    parser.add_argument("--address", help="join this Ray cluster (default: start one here)")
    parser.add_argument("--host", default="127.0.0.1", help="listen here (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--replicas", type=int, default=1, help="replicas per model")
    parser.add_argument("--threads", type=int, default=1, help="threads per replica")
    parser.add_argument("--provider", action="append", help="a provider, in priority order")
    parser.add_argument("--runtime", default="nxrt", choices=["nxrt", "onnxruntime"])
    parser.add_argument("--memory-limit-bytes", type=int, default=0)
    parser.add_argument("--max-batch-size", type=int, default=1)
    parser.add_argument("--batch-wait-ms", type=float, default=10.0)
    return parser


def main(argv=None):
    arguments = _parser().parse_args(argv)
    try:
        models = _models(arguments)
        for model in models:
            model.check()
    except ValueError as error:
        print(f"nxrt serve: {error}", file=sys.stderr)
        return 2
    import ray  # noqa: PLC0415 (slow to import; only once the arguments are good)
    from ray import serve  # noqa: PLC0415

    from nxrt.serve import deploy  # noqa: PLC0415

    stop = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    ray.init(address=arguments.address, log_to_driver=False, logging_level="error")
    try:
        url = deploy(models, host=arguments.host, port=arguments.port)
        names = ", ".join(model.name for model in models)
        print(f"nxrt serve: {names} at {url}/v2/models/<name> (Ctrl-C stops)", flush=True)
        stop.wait()
        print("nxrt serve: stopping", flush=True)
        return 0
    except (RuntimeError, ValueError) as error:
        print(f"nxrt serve: {error}", file=sys.stderr)
        return 1
    finally:
        serve.shutdown()
        ray.shutdown()


if __name__ == "__main__":
    sys.exit(main())
