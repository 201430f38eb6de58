"""Speech models: wav2vec2's convolutional front end and encoder on a raw
waveform, and keyword spotters of the torch.nn recurrent layers (a Conv1d
front end into a bidirectional LSTM, and a GRU) on log-mel features."""
import torch
import transformers

from corpus_export.spec import Positional, Spec, seeded

WAV2VEC2 = dict(hidden_size=128, num_hidden_layers=2, num_attention_heads=4, intermediate_size=256,
                conv_dim=(64,) * 7, num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4,
                vocab_size=32)
SAMPLES = 16000
MELS, FRAMES = 40, 98


class LstmSpotter(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.front = torch.nn.Sequential(torch.nn.Conv1d(MELS, 64, 5, padding=2), torch.nn.ReLU(),
                                         torch.nn.Conv1d(64, 64, 3, stride=2, padding=1), torch.nn.ReLU())
        self.lstm = torch.nn.LSTM(64, 96, num_layers=2, batch_first=True, bidirectional=True)
        self.head = torch.nn.Linear(192, 12)

    def forward(self, features):
        hidden, _ = self.lstm(self.front(features).transpose(1, 2))
        return self.head(hidden[:, -1])


class GruSpotter(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = torch.nn.GRU(MELS, 128, num_layers=2, batch_first=True)
        self.head = torch.nn.Linear(128, 12)

    def forward(self, features):
        hidden, _ = self.gru(features.transpose(1, 2))
        return self.head(hidden).log_softmax(-1)


def _recurrent(cls, seed):
    seeded(seed)
    return cls().eval()


def specs():
    def wav2vec2():
        seeded(10)
        return transformers.Wav2Vec2ForCTC(transformers.Wav2Vec2Config(**WAV2VEC2)).eval()

    yield Spec("wav2vec2", f"transformers Wav2Vec2ForCTC(Wav2Vec2Config({WAV2VEC2}))",
               {"kind": "audio", "samples": SAMPLES},
               lambda: (Positional(wav2vec2(), ["input_values"]).eval(),
                        {"input_values": torch.randn(1, SAMPLES)}),
               ["logits"], {"input_values": {0: "batch_size", 1: "samples"},
                            "logits": {0: "batch_size", 1: "frames"}},
               lambda: (wav2vec2(), {"input_values": torch.randn(1, SAMPLES)}))
    features = {"features": {0: "batch_size", 2: "frames"}}
    for name, cls, seed, source in (("lstm_keyword_spotter", LstmSpotter, 11,
                                     "torch.nn Conv1d x2 + LSTM(64, 96, 2 layers, bidirectional) + Linear"),
                                    ("gru_keyword_spotter", GruSpotter, 12,
                                     "torch.nn GRU(40, 128, 2 layers) + Linear + LogSoftmax")):
        yield Spec(name, source, {"kind": "log_mel", "mels": MELS, "frames": FRAMES},
                   lambda cls=cls, seed=seed: (_recurrent(cls, seed),
                                               {"features": torch.randn(1, MELS, FRAMES)}),
                   ["logits"], features)
