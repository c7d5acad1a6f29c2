"""Training fixtures, session-scoped: a tiny random Qwen2 model and a tokenizer built here
(nothing downloaded), perfgym-core, one local batch reward and one `perfgym serve` on loopback."""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

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
    """The tiny tokenizer of tests/helpers/tiny_lm.py (printable ASCII plus whole Python tokens,
    so a random model's garbage spreads over the failure ladder)."""
    pytest.importorskip("transformers")
    from tiny_lm import build_tokenizer

    return build_tokenizer()


@pytest.fixture(scope="session")
def tiny_model_factory(tokenizer):
    """Builds a fresh tiny random Qwen2 causal LM (seeded), one per caller that trains it."""
    pytest.importorskip("torch")
    from tiny_lm import build_model, qwen2_config

    config = qwen2_config(tokenizer)
    return lambda: build_model(config)


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
