"""Sequence-to-sequence models as Optimum splits them: T5 and Whisper, each
as an encoder and a decoder that reads the encoder's hidden states.

Each exporter takes what it can: torch 2.15's dynamo exporter fails to
decompose T5's graphs, and the TorchScript exporter has no aten::diff for
Whisper's decoder."""
import torch
import transformers

from corpus_export.spec import Spec, seeded

VOCAB = 1000
T5 = dict(vocab_size=VOCAB, d_model=128, d_kv=32, d_ff=256, num_layers=2, num_heads=4,
          decoder_start_token_id=0, pad_token_id=0)
WHISPER = dict(vocab_size=VOCAB, d_model=128, encoder_layers=2, decoder_layers=2,
               encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=256,
               decoder_ffn_dim=256, num_mel_bins=80, max_source_positions=150,
               max_target_positions=64, pad_token_id=0, decoder_start_token_id=1,
               bos_token_id=1, eos_token_id=2)
MEL_FRAMES = 300  # 3 s of audio: twice the encoder's positions


class T5Encoder(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.encoder = model.get_encoder()

    def forward(self, input_ids, attention_mask):
        return self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state


class T5Decoder(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, encoder_attention_mask, encoder_hidden_states):
        out = self.model.get_decoder()(input_ids=input_ids, encoder_hidden_states=encoder_hidden_states,
                                       encoder_attention_mask=encoder_attention_mask, use_cache=False)
        states = out.last_hidden_state * (self.model.model_dim ** -0.5)
        return self.model.lm_head(states)


class WhisperEncoder(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.encoder = model.get_encoder()

    def forward(self, input_features):
        return self.encoder(input_features).last_hidden_state


class WhisperDecoder(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, encoder_hidden_states):
        out = self.model.model.decoder(input_ids=input_ids, encoder_hidden_states=encoder_hidden_states,
                                       use_cache=False)
        return self.model.proj_out(out.last_hidden_state)


def _t5():
    seeded(3)
    return transformers.T5ForConditionalGeneration(transformers.T5Config(**T5)).eval()


def _whisper():
    seeded(4)
    return transformers.WhisperForConditionalGeneration(transformers.WhisperConfig(**WHISPER)).eval()


def specs():
    text = {0: "batch_size", 1: "sequence_length"}
    yield Spec("t5_encoder", f"transformers T5ForConditionalGeneration(T5Config({T5})) encoder",
               {"kind": "text", "vocab": VOCAB, "lengths": [14, 8]},
               lambda: (T5Encoder(_t5()).eval(),
                        {"input_ids": torch.randint(2, VOCAB, (2, 9)),
                         "attention_mask": torch.ones(2, 9, dtype=torch.int64)}),
               ["last_hidden_state"],
               {"input_ids": text, "attention_mask": text, "last_hidden_state": text},
               exporters=("torchscript",))
    encoded = {0: "batch_size", 1: "encoder_sequence_length"}
    yield Spec("t5_decoder", f"transformers T5ForConditionalGeneration(T5Config({T5})) decoder",
               {"kind": "seq2seq_decoder", "vocab": VOCAB, "lengths": [6, 4], "encoder_length": 14,
                "hidden": T5["d_model"]},
               lambda: (T5Decoder(_t5()).eval(),
                        {"input_ids": torch.randint(2, VOCAB, (2, 5)),
                         "encoder_attention_mask": torch.ones(2, 9, dtype=torch.int64),
                         "encoder_hidden_states": torch.randn(2, 9, T5["d_model"])}),
               ["logits"],
               {"input_ids": text, "encoder_attention_mask": encoded,
                "encoder_hidden_states": encoded, "logits": text}, exporters=("torchscript",))
    yield Spec("whisper_encoder", f"transformers WhisperForConditionalGeneration(WhisperConfig({WHISPER})) encoder",
               {"kind": "log_mel", "mels": WHISPER["num_mel_bins"], "frames": MEL_FRAMES, "sets": 1},
               lambda: (WhisperEncoder(_whisper()).eval(),
                        {"input_features": torch.randn(1, WHISPER["num_mel_bins"], MEL_FRAMES)}),
               ["last_hidden_state"], {"input_features": {0: "batch_size"},
                                       "last_hidden_state": {0: "batch_size"}})
    yield Spec("whisper_decoder", f"transformers WhisperForConditionalGeneration(WhisperConfig({WHISPER})) decoder",
               {"kind": "seq2seq_decoder", "vocab": VOCAB, "lengths": [5, 5], "first_id": 1,
                "encoder_length": MEL_FRAMES // 2, "hidden": WHISPER["d_model"]},
               lambda: (WhisperDecoder(_whisper()).eval(),
                        {"input_ids": torch.randint(2, VOCAB, (2, 5)),
                         "encoder_hidden_states": torch.randn(2, MEL_FRAMES // 2, WHISPER["d_model"])}),
               ["logits"], {"input_ids": text, "encoder_hidden_states": encoded, "logits": text},
               exporters=("dynamo",))
