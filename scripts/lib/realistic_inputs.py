"""Inputs that look like what the corpus models see in use, drawn with numpy
from a seeded generator so that the export script and the case writer make
the same ones.

- photo: an RGB scene (sky gradient, ground, lit and shaded shapes, grain),
  normalised per channel as torchvision and transformers do;
- tokens: text ids from a Zipf-like law over the vocabulary, with a padding
  mask (right padding for encoders, left padding for decoders) and the
  position ids Hugging Face derives from the mask;
- speech: voiced syllables at a speaker's pitch with breath noise;
- log_mel: Whisper's log-mel features of a waveform.
"""
import numpy as np

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


def photo(generator, height, width, mean=IMAGENET_MEAN, std=IMAGENET_STD):
    """[1, 3, height, width] float32: a scene, 0..1, normalised by mean and std."""
    y, x = np.mgrid[0:height, 0:width] / np.array([height, width])[:, None, None]
    sky = np.stack([0.45 + 0.2 * y, 0.6 + 0.2 * y, 0.9 - 0.1 * y], -1)
    horizon = 0.55 + 0.1 * generator.random()
    ground = np.stack([0.35 + 0.1 * y, 0.3 + 0.15 * y, 0.2 + 0.05 * y], -1)
    image = np.where((y > horizon)[..., None], ground, sky)
    for _ in range(int(generator.integers(3, 7))):
        cy, cx = generator.random(2)
        ry, rx = 0.05 + 0.25 * generator.random(2)
        inside = ((y - cy) / ry) ** 2 + ((x - cx) / rx) ** 2 < 1
        colour = generator.random(3)
        shade = 0.6 + 0.4 * np.clip(1 - (y - cy + ry) / (2 * ry), 0, 1)
        image = np.where(inside[..., None], colour * shade[..., None], image)
    image = np.clip(image + generator.normal(0, 0.02, image.shape), 0, 1)
    normalised = (image - np.asarray(mean)) / np.asarray(std)
    return np.ascontiguousarray(normalised.transpose(2, 0, 1)[None]).astype(np.float32)


def tokens(generator, vocab, lengths, pad_id=0, first_id=None, left_padding=False):
    """(ids, mask, position_ids), each [len(lengths), max(lengths)] int64.

    Row k holds lengths[k] tokens drawn from a Zipf-like law over
    [2, vocab), after `first_id` when given; the rest is `pad_id` with a
    mask of 0, on the right or (left_padding) on the left. Position ids
    count the real tokens from 0 and are 1 on padding, as Hugging Face
    computes them from the mask."""
    width = max(lengths)
    ids = np.full((len(lengths), width), pad_id, np.int64)
    mask = np.zeros((len(lengths), width), np.int64)
    for row, length in enumerate(lengths):
        ranks = np.minimum(generator.zipf(1.3, length), vocab - 2)
        words = (2 + (ranks * 7919) % (vocab - 2)).astype(np.int64)
        if first_id is not None:
            words[0] = first_id
        span = slice(width - length, width) if left_padding else slice(0, length)
        ids[row, span] = words
        mask[row, span] = 1
    positions = np.cumsum(mask, axis=1) - 1
    positions[mask == 0] = 1
    return ids, mask, positions


def speech(generator, samples, rate=16000):
    """[samples] float32: syllables of a voice with harmonics and breath noise."""
    t = np.arange(samples) / rate
    pitch = 110 + 60 * generator.random()
    glide = 1 + 0.1 * np.sin(2 * np.pi * 3 * t)
    voice = sum(np.sin(2 * np.pi * pitch * k * glide * t + generator.random() * 6) / k
                for k in range(1, 16))
    syllable = 0.2 + generator.random() * 0.1
    envelope = np.clip(np.sin(np.pi * t / syllable) ** 2, 0, 1)
    noise = generator.normal(0, 0.01, samples)
    return (0.3 * voice * envelope + noise).astype(np.float32)


def _mel_filters(rate, fft_size, mels):
    def to_mel(hz):
        return 2595 * np.log10(1 + hz / 700)

    edges = 700 * (10 ** (np.linspace(to_mel(0), to_mel(rate / 2), mels + 2) / 2595) - 1)
    bins = np.linspace(0, rate / 2, fft_size // 2 + 1)
    filters = np.zeros((mels, bins.size))
    for m in range(mels):
        low, centre, high = edges[m:m + 3]
        filters[m] = np.clip(np.minimum((bins - low) / (centre - low), (high - bins) / (high - centre)), 0, None)
    return filters


def log_mel(audio, mels, frames, rate=16000, fft_size=400, hop=160):
    """[1, mels, frames] float32 as Whisper's feature extractor makes them:
    a Hann-windowed STFT's power on a mel scale, log10, floored 8 below the
    peak, then (x + 4) / 4. The audio is zero-padded or cut to `frames`."""
    audio = np.pad(audio, (0, max(0, frames * hop + fft_size - audio.size)))
    window = np.hanning(fft_size + 1)[:-1]
    starts = np.arange(frames) * hop
    spectrum = np.abs(np.fft.rfft(np.stack([audio[s:s + fft_size] * window for s in starts]), axis=1)) ** 2
    mel = np.log10(np.maximum(_mel_filters(rate, fft_size, mels) @ spectrum.T, 1e-10))
    mel = np.maximum(mel, mel.max() - 8.0)
    return ((mel + 4.0) / 4.0)[None].astype(np.float32)
