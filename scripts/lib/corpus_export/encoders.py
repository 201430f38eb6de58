"""Text encoders from transformers: a batch of two right-padded texts with
their attention mask (and token types where the model takes them)."""
import torch
import transformers

from corpus_export.spec import Positional, Spec, seeded

VOCAB = 1000
SMALL = dict(vocab_size=VOCAB, hidden_size=128, num_hidden_layers=2, num_attention_heads=4,
             intermediate_size=256, max_position_embeddings=256)

CONFIGS = {
    "bert": ("BertModel", transformers.BertConfig, dict(SMALL), True),
    "roberta": ("RobertaModel", transformers.RobertaConfig, dict(SMALL, pad_token_id=1), False),
    "distilbert": ("DistilBertModel", transformers.DistilBertConfig,
                   dict(vocab_size=VOCAB, dim=128, n_layers=2, n_heads=4, hidden_dim=256,
                        max_position_embeddings=256), False),
    "deberta_v2": ("DebertaV2Model", transformers.DebertaV2Config,
                   dict(SMALL, relative_attention=True, position_buckets=32,
                        pos_att_type=["p2c", "c2p"], max_relative_positions=-1), True),
    "albert": ("AlbertModel", transformers.AlbertConfig, dict(SMALL, embedding_size=64), True),
    "electra": ("ElectraModel", transformers.ElectraConfig, dict(SMALL, embedding_size=64), True),
}
LENGTHS = [16, 9]


def _spec(name, class_name, config_class, fields, token_types):
    names = ["input_ids", "attention_mask"] + (["token_type_ids"] if token_types else [])

    def make():
        seeded(2)
        return getattr(transformers, class_name)(config_class(**fields)).eval()

    def example():
        batch, length = 2, 11
        tensors = {"input_ids": torch.randint(2, VOCAB, (batch, length)),
                   "attention_mask": torch.ones(batch, length, dtype=torch.int64),
                   "token_type_ids": torch.zeros(batch, length, dtype=torch.int64)}
        return {n: tensors[n] for n in names}

    def build():
        return Positional(make(), names).eval(), example()

    def dynamo():
        return make(), example()

    dynamic = {n: {0: "batch_size", 1: "sequence_length"} for n in names}
    dynamic["last_hidden_state"] = {0: "batch_size", 1: "sequence_length"}
    pooled = class_name in ("BertModel", "RobertaModel", "AlbertModel")
    outputs = ["last_hidden_state"] + (["pooler_output"] if pooled else [])
    if pooled:
        dynamic["pooler_output"] = {0: "batch_size"}
    source = f"transformers {class_name}({config_class.__name__}({fields}))"
    return Spec(name, source, {"kind": "text", "vocab": VOCAB, "lengths": LENGTHS,
                               "pad_id": fields.get("pad_token_id", 0)},
                build, outputs, dynamic, dynamo)


def specs():
    for name, (class_name, config_class, fields, token_types) in CONFIGS.items():
        yield _spec(name, class_name, config_class, fields, token_types)
