"""A tiny random Qwen2 causal LM and its tokenizer, built here from a config (nothing downloaded):
the trainer tests train it, the model-server tests serve it with `transformers serve`."""

from __future__ import annotations

import string
from pathlib import Path
from typing import Any

#: Whole Python tokens of the test tokenizer (beside single characters).
PYTHON_TOKENS = [
    "import sys\n",
    "print(",
    "def ",
    "sys.stdin",
    "return ",
    "    ",
    "for ",
    " in ",
    "):\n",
]

#: A chat template small enough to read: the messages, then the assistant's turn.
CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


def build_tokenizer() -> Any:
    """A Unigram tokenizer over printable ASCII plus a few whole Python tokens ('def ', 'print(',
    'import sys'...): a random model sampling from it writes text that sometimes looks like a
    program, so a GRPO group's garbage spreads over the failure ladder (NX, NC, NR) instead of
    all being NX, and its advantages are not all zero."""
    from tokenizers import Tokenizer, decoders, models
    from transformers import PreTrainedTokenizerFast

    specials = ["<|pad|>", "<|endoftext|>", "<|unk|>"]
    chars = sorted(set(string.printable) - set("\x0b\x0c"))
    vocab = [(s, 0.0) for s in specials] + [(c, -5.0) for c in chars]
    vocab += [(w, -1.0) for w in PYTHON_TOKENS]
    tk = Tokenizer(models.Unigram(vocab, unk_id=2, byte_fallback=False))
    tk.decoder = decoders.Fuse()
    tok = PreTrainedTokenizerFast(tokenizer_object=tk, pad_token="<|pad|>", unk_token="<|unk|>",
                                  eos_token="<|endoftext|>", padding_side="left")  # fmt: skip
    tok.chat_template = CHAT_TEMPLATE
    return tok


def qwen2_config(tokenizer: Any, **overrides: Any) -> Any:
    """A two-layer, 32-wide Qwen2 config over `tokenizer`'s vocabulary."""
    from transformers import Qwen2Config

    fields: dict[str, Any] = dict(
        vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=4096,
        pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id,
        tie_word_embeddings=True,
    )  # fmt: skip
    fields.update(overrides)
    return Qwen2Config(**fields)


def build_model(config: Any, seed: int = 0) -> Any:
    """A fresh random causal LM of `config`, seeded."""
    import torch
    from transformers import AutoModelForCausalLM

    torch.manual_seed(seed)
    return AutoModelForCausalLM.from_config(config)


def save_servable(folder: Path) -> Path:
    """A model folder any server loads: weights, tokenizer, chat template and a generation
    config that samples (as real chat models ship: `transformers serve` applies a request's
    temperature and seed only then). Near-uniform next-token odds (tiny initial weights) make
    each seed's garbage differ; the first 8 tokens cannot end the answer, so none is empty."""
    from transformers import GenerationConfig

    tok = build_tokenizer()
    # Prompts of perfgym's templates are a few thousand characters (one token each here).
    model = build_model(qwen2_config(tok, max_position_embeddings=32768, initializer_range=1e-3))
    model.generation_config = GenerationConfig(
        do_sample=True, temperature=1.0, top_k=0, top_p=1.0, min_new_tokens=8,
        suppress_tokens=[tok.pad_token_id, tok.unk_token_id],
        eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id,
    )  # fmt: skip
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder
