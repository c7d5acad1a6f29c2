"""verl's Ray reward loop (`RewardLoopManager`, its Ray `RewardLoopWorker`s and `naive` manager,
real verl 0.9.1 code) driving perfgym's reward on perfgym-core completions, on the session's
two-node Ray cluster: the same scores as the local backend, nothing lost or duplicated."""

from __future__ import annotations

import importlib.util
import math
import random
import time
from pathlib import Path

import pytest

from perfgym.train import verl as adapter

pytestmark = [
    pytest.mark.skipif(importlib.util.find_spec("verl") is None,
                       reason="verl is not installed (pip install -e '.[verl]')"),
    # a hang guard, not a speed bound: two Ray workers import verl and torch (setup 167 s and
    # the 31-sample call 133 s at load 16 on 2 cores; 16 s in all idle)
    pytest.mark.timeout(1200),
]  # fmt: skip

SRC = Path(adapter.__file__).parents[2]
TASKS = ("py-lis-dp",)
KINDS = ("fast", "slow", "wrong", "loop", "nx")
STAGE = {"fast": 4.0, "slow": 4.0, "wrong": 3.0, "loop": 2.0, "nx": 0.0}


def _programs(core) -> dict[tuple[str, str], str]:
    """(task, kind) -> completion: the reference (fast), the baseline (slow), a wrong answer, a
    program that never ends, and a reply without code."""
    out = {}
    for tid in TASKS:
        task = core.get(tid)
        for kind, src in (("fast", task.references[0].source), ("slow", task.baseline.source),
                          ("wrong", "print(0)\n"), ("loop", "while True:\n    pass\n")):  # fmt: skip
            out[tid, kind] = f"Faster:\n```python\n{src}```\n"
        out[tid, "nx"] = "I cannot improve this."
    return out


def _tokenizer_dir(texts: list[str], where: Path) -> str:
    """A byte-level BPE tokenizer trained here on the completions (nothing downloaded), saved
    where verl's workers load it from (`actor_rollout_ref.model.path`)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(texts, trainers.BpeTrainer(vocab_size=400, special_tokens=["<pad>", "</s>"],
                            initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))  # fmt: skip
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="</s>")
    fast.save_pretrained(where)
    return str(where)


def rollout_batch(tok, suite: str, rows: list[tuple[str, str]]):
    """A verl DataProto as the rollout hands it to the reward loop: left-padded prompts,
    right-padded responses, one attention mask, and each sample's task in its ground truth."""
    import numpy as np
    import torch
    from verl import DataProto

    ids = [tok(c)["input_ids"] for _, c in rows]
    width = max(map(len, ids))
    responses = torch.tensor([r + [tok.pad_token_id] * (width - len(r)) for r in ids])
    prompts = tok("optimise", return_tensors="pt")["input_ids"][0].repeat(len(rows), 1)
    mask = torch.cat([torch.ones_like(prompts),
                      torch.tensor([[1] * len(r) + [0] * (width - len(r)) for r in ids])], dim=1)  # fmt: skip
    return DataProto.from_dict(
        tensors={"prompts": prompts, "responses": responses, "attention_mask": mask},
        non_tensors={"data_source": np.array([suite] * len(rows), dtype=object),
                     "reward_model": np.array([{"ground_truth": t, "style": "perfgym"}
                                               for t, _ in rows], dtype=object),
                     "extra_info": np.array([{"index": i, "task_id": t}
                                             for i, (t, _) in enumerate(rows)], dtype=object)},
    )  # fmt: skip


def loop_config(tokenizer_path: str, num_workers: int, reward_kwargs: dict):
    """The smallest config verl's RewardLoopManager reads: the tokenizer, the workers, no reward
    model, the `naive` manager, and perfgym's compute_score by file path."""
    from omegaconf import OmegaConf

    return OmegaConf.create({
        "actor_rollout_ref": {"model": {"path": tokenizer_path, "tokenizer_path": None}},
        "reward": {"num_workers": num_workers,
                   "reward_model": {"enable": False, "enable_resource_pool": False},
                   "reward_manager": {"source": "register", "name": "naive"},
                   "custom_reward_function": {"path": str(Path(adapter.__file__)),
                                              "name": "compute_score",
                                              "reward_kwargs": reward_kwargs}}})  # fmt: skip


@pytest.fixture(scope="module")
def core():
    from perfgym.tasks.suite import load_suite

    return load_suite("perfgym-core")


PARAMS = {"alpha_f": 0.16, "alpha_r": 0.10}


@pytest.fixture(scope="module")
def loop(ray_cluster, core, tmp_path_factory):
    """verl's RewardLoopManager with two Ray workers (one per node) scoring with perfgym's
    compute_score, and the tokenizer its workers decode with."""
    import ray
    from transformers import AutoTokenizer
    from verl.experimental.reward_loop.reward_loop import RewardLoopManager

    programs = _programs(core)
    tok_dir = _tokenizer_dir(list(programs.values()), tmp_path_factory.mktemp("verl") / "tok")
    kwargs = {"suite": "perfgym-core", "reward": "rlpf", "backend": "local", "window_s": 0.5,
              "reward_params": PARAMS}  # fmt: skip
    manager = RewardLoopManager(loop_config(tok_dir, 2, kwargs))
    try:
        yield manager, AutoTokenizer.from_pretrained(tok_dir), programs
    finally:
        for worker in manager.reward_loop_workers:
            ray.kill(worker)


@pytest.mark.slow  # ~30 s on a loaded 2-core machine: two Ray workers import verl and torch
def test_verl_reward_loop_manager_scores_as_the_local_backend(loop, core):
    import ray

    from perfgym.train.batch import BatchReward, training_judge_config

    # the workers import this checkout's perfgym (the cluster inherited our PYTHONPATH)
    where = ray.get(ray.remote(lambda: __import__("perfgym").__file__).remote())
    assert Path(where).is_relative_to(SRC)

    manager, tok, programs = loop
    # 31 samples (verl pads to a multiple of its workers, then drops the padding), in an order
    # with no period, so a lost, repeated or shifted sample changes the stages seen
    keys = sorted(programs) * 7
    random.Random(31).shuffle(keys)
    keys = keys[:31]
    rows = [(tid, programs[tid, kind]) for tid, kind in keys]
    assert len(manager.reward_loop_worker_handles) == 2  # rule-based: overlappable workers
    out = manager.compute_rm_score(rollout_batch(tok, "perfgym-core", rows))

    got = out.non_tensor_batch
    assert list(out.meta_info["reward_extra_keys"]) == list(adapter.SCORE_KEYS)
    assert out.batch["rm_scores"].shape[0] == len(rows) == len(got["score"])
    # every sample's score sits at its last response token: the row sums are the scores
    assert out.batch["rm_scores"].sum(dim=1).tolist() == pytest.approx(list(got["score"]), abs=1e-6)
    assert not any(got["infra_error"])
    # nothing lost, repeated or moved: each position shows its own completion's stage
    assert list(got["stage"]) == [STAGE[kind] for _, kind in keys]
    # a cheaper program never scores higher: wrong, endless and code-less below the baseline
    by_kind: dict[str, list[float]] = {}
    for (_, kind), score in zip(keys, got["score"], strict=True):
        by_kind.setdefault(kind, []).append(float(score))
    assert min(by_kind["fast"]) > max(by_kind["slow"]) > max(by_kind["wrong"])
    assert max(by_kind["wrong"]) > max(by_kind["loop"]) > max(by_kind["nx"])
    # each worker judged its half as one micro-batch (16 + 15 and the padding sample)
    assert sorted(set(got["batch_size"])) == [16.0]

    distinct = sorted(programs)
    with BatchReward(core, "rlpf", reward_params=PARAMS,
                     judge_config=training_judge_config()) as local:  # fmt: skip
        ref = dict(zip(distinct, local.score([(t, programs[t, k]) for t, k in distinct]),
                       strict=True))  # fmt: skip
    for i, key in enumerate(keys):
        want = ref[key]
        assert got["stage"][i] == STAGE[key[1]] and want.stage == {4.0: "OK", 3.0: "WO",
                                                                   2.0: "NR", 0.0: "NX"}[STAGE[key[1]]]  # fmt: skip
        if want.speedup is None:
            assert math.isnan(got["speedup"][i]) and got["score"][i] == pytest.approx(want.value)
        else:  # measured twice, on different cores: the same side of the reward's thresholds
            assert got["score"][i] == pytest.approx(want.value), (key, got["speedup"][i], want)
            assert 1 / 3 < got["speedup"][i] / want.speedup < 3


def test_reward_of_step_k_lands_while_step_k_plus_1_arrives(loop):
    """verl's async path (the agent loop sends each finished rollout to a reward worker's
    `compute_score` and goes on generating): a scripted generator streams step k's completions,
    then step k+1's one by one; step k's rewards come back while step k+1's are still arriving,
    step k+1's calls being sent while step k's are judged."""
    import ray

    manager, tok, programs = loop
    workers = manager.reward_loop_worker_handles
    kinds = ("fast", "slow", "wrong", "nx")
    steps = [[(TASKS[0], programs[TASKS[0], k]) for k in kinds] for _ in range(2)]
    sent: list[tuple[float, int]] = []
    pending: dict[object, tuple[int, int]] = {}

    def send(step: int, i: int) -> None:  # one finished rollout to a reward worker, not awaited
        one = rollout_batch(tok, "perfgym-core", [steps[step][i]])
        pending[workers[i % 2].compute_score.remote(one)] = (step, i)
        sent.append((time.monotonic(), step))

    for i in range(len(kinds)):  # step k: every rollout sent as it finishes
        send(0, i)
    done: dict[tuple[int, int], tuple[float, dict]] = {}

    def collect(timeout: float) -> None:
        ready, _ = ray.wait(list(pending), num_returns=len(pending), timeout=timeout)
        for ref in ready:
            done[pending.pop(ref)] = (time.monotonic(), ray.get(ref))

    deadline = time.monotonic() + 900  # a hang guard: nothing here asserts a duration
    last = len(kinds) - 1
    for i in range(len(kinds)):  # step k+1 arrives one rollout at a time
        # the generator never waits on a reward; it holds step k+1's last rollout until a reward
        # of step k is in, so "before the step ended" is observable on any machine (or fails
        # at the deadline: step k's reward was not computed while k+1 was generated)
        while i == last and not any(s == 0 for s, _ in done) and time.monotonic() < deadline:
            collect(0.2)
        send(1, i)
        collect(0.0)
    while pending and time.monotonic() < deadline:
        collect(1.0)
    assert not pending and len(done) == 8  # every rollout's reward, once
    first_k1_sent = min(t for t, s in sent if s == 1)
    last_k1_sent = max(t for t, s in sent if s == 1)
    k_done = [t for (s, _), (t, _) in done.items() if s == 0]
    # step k's reward was being computed while step k+1's completions arrived
    assert min(k_done) < last_k1_sent and max(k_done) > first_k1_sent
    for (s, i), (_, result) in done.items():
        assert result["reward_extra_info"]["stage"] == STAGE[kinds[i]], (s, i, result)
