"""Decoder-only language models with a KV cache, as Optimum exports them with
the TorchScript exporter (input_ids, attention_mask, position_ids,
past_key_values.N.key/value -> logits, present.N.key/value), as
transformers' own exporter writes them with torch.export
(past_key_values.layers.N.keys/values), and GPT-2 in the legacy form of
ONNX Runtime's GPT-2 tools, one stacked past_N [2, batch, heads, past,
head_size] per layer -> present_N."""
import torch
import transformers
from transformers import DynamicCache

from corpus_export.spec import Spec, seeded

VOCAB = 1000
SMALL = dict(vocab_size=VOCAB, hidden_size=128, intermediate_size=256, num_hidden_layers=2,
             num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256)

CONFIGS = {
    "llama_gqa": ("LlamaForCausalLM", transformers.LlamaConfig, dict(SMALL)),
    "qwen2": ("Qwen2ForCausalLM", transformers.Qwen2Config, dict(SMALL)),
    "mistral": ("MistralForCausalLM", transformers.MistralConfig, dict(SMALL, sliding_window=None)),
    "phi3": ("Phi3ForCausalLM", transformers.Phi3Config, dict(SMALL, pad_token_id=0)),
    "gemma": ("GemmaForCausalLM", transformers.GemmaConfig, dict(SMALL, head_dim=32)),
    "gpt2": ("GPT2LMHeadModel", transformers.GPT2Config,
             dict(vocab_size=VOCAB, n_embd=128, n_layer=2, n_head=4, n_positions=256)),
    "opt": ("OPTForCausalLM", transformers.OPTConfig,
            dict(vocab_size=VOCAB, hidden_size=128, ffn_dim=256, num_hidden_layers=2,
                 num_attention_heads=4, max_position_embeddings=256, word_embed_proj_dim=128)),
}
LENGTHS = [7, 12]


class CacheAsTensors(torch.nn.Module):
    """A causal LM called with its cache as flat past tensors, returning the
    logits and the present tensors flat, key before value per layer."""

    def __init__(self, model, takes_positions):
        super().__init__()
        self.model = model
        self.takes_positions = takes_positions

    def forward(self, input_ids, attention_mask, *rest):
        positions, past = (rest[0], rest[1:]) if self.takes_positions else (None, rest)
        pairs = [(past[k], past[k + 1]) for k in range(0, len(past), 2)]
        cache = DynamicCache(ddp_cache_data=pairs, config=self.model.config)
        extra = {"position_ids": positions} if self.takes_positions else {}
        out = self.model(input_ids=input_ids, attention_mask=attention_mask, past_key_values=cache,
                         use_cache=True, **extra)
        flat = []
        for layer in out.past_key_values.layers:
            flat += [layer.keys, layer.values]
        return (out.logits, *flat)


class StackedCache(torch.nn.Module):
    """GPT-2 called with each layer's key and value stacked in one past
    tensor, returning the logits and each layer's stacked present."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask, position_ids, *past):
        cache = DynamicCache(ddp_cache_data=[(p[0], p[1]) for p in past], config=self.model.config)
        out = self.model(input_ids=input_ids, attention_mask=attention_mask,
                         position_ids=position_ids, past_key_values=cache, use_cache=True)
        presents = [torch.stack([layer.keys, layer.values]) for layer in out.past_key_values.layers]
        return (out.logits, *presents)


def _legacy_gpt2_spec():
    class_name, config_class, fields = CONFIGS["gpt2"]
    layers = fields["n_layer"]

    def build():
        seeded(1)
        config = config_class(**fields)
        model = getattr(transformers, class_name)(config).eval()
        example = _example(config, True)
        stacked = {k: v for k, v in example.items() if not k.startswith("past_key_values")}
        for n in range(layers):
            stacked[f"past_{n}"] = torch.stack([example[f"past_key_values.{n}.key"],
                                                example[f"past_key_values.{n}.value"]])
        return StackedCache(model).eval(), stacked

    dynamic = {"input_ids": {0: "batch_size", 1: "sequence_length"},
               "attention_mask": {0: "batch_size", 1: "total_sequence_length"},
               "position_ids": {0: "batch_size", 1: "sequence_length"},
               "logits": {0: "batch_size", 1: "sequence_length"}}
    for n in range(layers):
        dynamic[f"past_{n}"] = {1: "batch_size", 3: "past_sequence_length"}
        dynamic[f"present_{n}"] = {1: "batch_size", 3: "total_sequence_length"}
    outputs = ["logits"] + [f"present_{n}" for n in range(layers)]
    source = f"transformers {class_name}({config_class.__name__}({fields})), stacked past_N"
    return Spec("gpt2_legacy", source,
                {"kind": "decoder", "vocab": VOCAB, "lengths": LENGTHS, "pad_id": 0},
                build, outputs, dynamic, exporters=("torchscript",))


def _kv_shape(config, batch, length):
    heads = getattr(config, "num_key_value_heads", None) or config.num_attention_heads
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    return (batch, heads, length, head_dim)


def _example(config, takes_positions, batch=2, length=5, past=3):
    example = {"input_ids": torch.randint(2, VOCAB, (batch, length)),
               "attention_mask": torch.ones(batch, past + length, dtype=torch.int64)}
    if takes_positions:
        example["position_ids"] = torch.arange(past, past + length).expand(batch, length).contiguous()
    for layer in range(config.num_hidden_layers):
        for part in ("key", "value"):
            example[f"past_key_values.{layer}.{part}"] = torch.randn(_kv_shape(config, batch, past))
    return example


def _spec(name, class_name, config_class, fields):
    takes_positions = name != "opt"

    def make():
        seeded(1)
        config = config_class(**fields)
        return getattr(transformers, class_name)(config).eval(), config

    def build():
        model, config = make()
        return CacheAsTensors(model, takes_positions).eval(), _example(config, takes_positions)

    def dynamo():
        model, config = make()
        example = _example(config, takes_positions)
        past = [v for k, v in example.items() if k.startswith("past_key_values")]
        kwargs = {k: v for k, v in example.items() if not k.startswith("past_key_values")}
        kwargs["past_key_values"] = DynamicCache(
            ddp_cache_data=[(past[k], past[k + 1]) for k in range(0, len(past), 2)], config=config)
        kwargs["use_cache"] = True
        return model, kwargs

    layers = fields.get("num_hidden_layers", fields.get("n_layer"))
    outputs = ["logits"] + [f"present.{n}.{p}" for n in range(layers) for p in ("key", "value")]
    dynamic = {"input_ids": {0: "batch_size", 1: "sequence_length"},
               "attention_mask": {0: "batch_size", 1: "total_sequence_length"},
               "logits": {0: "batch_size", 1: "sequence_length"}}
    if takes_positions:
        dynamic["position_ids"] = {0: "batch_size", 1: "sequence_length"}
    for n in range(layers):
        for p in ("key", "value"):
            dynamic[f"past_key_values.{n}.{p}"] = {0: "batch_size", 2: "past_sequence_length"}
            dynamic[f"present.{n}.{p}"] = {0: "batch_size", 2: "total_sequence_length"}
    source = f"transformers {class_name}({config_class.__name__}({fields}))"
    return Spec(name, source, {"kind": "decoder", "vocab": VOCAB, "lengths": LENGTHS, "pad_id": 0},
                build, outputs, dynamic, dynamo)


def specs():
    for name, (class_name, config_class, fields) in CONFIGS.items():
        yield _spec(name, class_name, config_class, fields)
    yield _legacy_gpt2_spec()
