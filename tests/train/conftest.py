"""Training fixtures, session-scoped: a tiny random Qwen2 model and a tokenizer built here
(nothing downloaded), perfgym-core, one local batch reward and one `perfgym serve` on loopback."""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from train_helpers import CHAT_TEMPLATE  # noqa: E402

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
    pytest.importorskip("transformers")
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tk = Tokenizer(models.BPE(unk_token=None))
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300,
        special_tokens=["<|pad|>", "<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    corpus = ["def solve():\n    print(sum(map(int, input().split())))\n",
              "```python\nimport sys\n```", "Optimize the following implementation"]  # fmt: skip
    tk.train_from_iterator(corpus, trainer=trainer)
    tok = PreTrainedTokenizerFast(tokenizer_object=tk, pad_token="<|pad|>",
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
                         max_position_embeddings=1024, pad_token_id=tokenizer.pad_token_id,
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
    judge = training_judge_config().model_dump(mode="json")
    cfg = ServiceConfig(port=0, state_dir=str(state), judge=judge)
    with ServiceProcess(cfg, log=state / "service.log") as svc:
        yield svc
