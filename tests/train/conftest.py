"""Training fixtures, session-scoped: a tiny random Qwen2 model and a tokenizer built here
(nothing downloaded), perfgym-core, one local batch reward and one `perfgym serve` on loopback."""

import os
import string
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from train_helpers import CHAT_TEMPLATE, PYTHON_TOKENS  # noqa: E402

from perfgym.tasks.suite import load_suite  # noqa: E402
from perfgym.train.batch import BatchReward, training_judge_config  # noqa: E402


@pytest.fixture(scope="session")
def core():
    return load_suite("perfgym-core")


@pytest.fixture(scope="session")
def local_reward(core):
    with BatchReward(core, "rlpf", reward_params={"alpha_f": 0.16, "alpha_r": 0.10},
                     judge_config=training_judge_config()) as reward:  # fmt: skip
        yield reward


@pytest.fixture(scope="session")
def tokenizer():
    """A Unigram tokenizer over printable ASCII plus a few whole Python tokens ('def ', 'print(',
    'import sys'...): a random model sampling from it writes text that sometimes looks like a
    program, so a GRPO group's garbage spreads over the failure ladder (NX, NC, NR) instead of
    all being NX, and its advantages are not all zero."""
    pytest.importorskip("transformers")
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


@pytest.fixture(scope="session")
def tiny_model_factory(tokenizer):
    """Builds a fresh tiny random Qwen2 causal LM (seeded), one per caller that trains it."""
    torch = pytest.importorskip("torch")
    from transformers import AutoModelForCausalLM, Qwen2Config

    config = Qwen2Config(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64,
                         num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1,
                         max_position_embeddings=4096, pad_token_id=tokenizer.pad_token_id,
                         eos_token_id=tokenizer.eos_token_id,
                         tie_word_embeddings=True)  # fmt: skip

    def build():
        torch.manual_seed(0)
        return AutoModelForCausalLM.from_config(config)

    return build


@pytest.fixture(scope="session")
def reward_service(tmp_path_factory):
    """One real `perfgym serve` on loopback, judging as training does (runtime measured once)."""
    from perfgym.service.config import ServiceConfig
    from perfgym.service.server.process import ServiceProcess

    state = tmp_path_factory.mktemp("train-service")
    # No noise band (noise_rounds=0): the service's tests show rewards flowing, not speed calls.
    judge = training_judge_config(noise_rounds=0).model_dump(mode="json")
    cfg = ServiceConfig(port=0, state_dir=str(state), judge=judge)
    with ServiceProcess(cfg, log=state / "service.log") as svc:
        yield svc


@pytest.fixture(scope="session")
def train_suite(tmp_path_factory):
    """Path of a small tasks.jsonl suite (sum-a, sum-b train; sum-c test): see train_tasks."""
    from train_tasks import write_suite

    return str(write_suite(tmp_path_factory.mktemp("train-suite")))
