"""TRL's asynchronous GRPO (`trl.experimental.async_grpo`, TRL 1.16) with perfgym's reward: the
real `AsyncRolloutWorker` (the spawned process `AsyncGRPOTrainer` generates and scores in)
unpickles perfgym's async reward function and judges step k's group while step k+1's
completions arrive. Generation is a scripted loopback server speaking vLLM's token
`/v1/completions` (TRL's worker only talks HTTP to vLLM; no vLLM, no GPU here)."""

import json
import pickle
import queue
import threading
import time

import pytest

pytest.importorskip("trl")
pytest.importorskip("aiohttp")
pytest.importorskip("datasets")

from completions_server import Scripted, TokenCompletionsServer  # noqa: E402

from perfgym.errors import ConfigError  # noqa: E402
from perfgym.train.batch import BatchReward  # noqa: E402
from perfgym.train.trl import AsyncTrlReward, reward_funcs  # noqa: E402

#: the dataset's two rows (step k's prompt and step k+1's): one task, each row's programs its own
TASKS = ("py-lis-dp", "py-lis-dp")
KINDS = ("fast", "slow", "wrong", "nx")
G = len(KINDS)
STAGE = {"fast": "OK", "slow": "OK", "wrong": "WO", "nx": "NX"}


def _texts(core) -> dict[tuple[int, str], str]:
    out = {}
    for row, tid in enumerate(TASKS):
        task = core.get(tid)
        for kind, src in (("fast", task.references[0].source), ("slow", task.baseline.source),
                          ("wrong", "print(0)\n")):  # fmt: skip
            out[row, kind] = f"Faster ({kind}):\n```python\n{src}\n_row = {row}\n```\n"
        out[row, "nx"] = "I cannot improve this (nx)."
    return out


def _tokenizer():
    """tiny_lm's tokenizer with a chat template TRL's worker knows how to parse answers of
    (Qwen2.5's: a real chat model ships one; tiny_lm's own is unknown to TRL)."""
    from tiny_lm import build_tokenizer
    from trl.chat_template_utils import qwen2_5_chat_template

    tok = build_tokenizer()
    tok.chat_template = qwen2_5_chat_template
    return tok


def test_the_reward_function_pickles_as_its_recipe(core, local_reward):
    """AsyncGRPOTrainer sends reward functions to a spawned process: perfgym's arrive unopened
    (the process builds its own judge); one holding a ready judge says why it cannot go."""
    (fn,) = reward_funcs("perfgym-core", asynchronous=True, name="perfgym_async")
    try:
        back = pickle.loads(pickle.dumps(fn))
        assert isinstance(back, AsyncTrlReward) and back.__name__ == "perfgym_async"
        assert back.scorer is not fn.scorer and back.scorer._judge is None
        assert back.scorer.suite.name == "perfgym-core" and back.scorer.config == fn.scorer.config
        back.scorer.close()
    finally:
        fn.scorer.close()
    (held,) = reward_funcs(core, scorer=BatchReward(core, judge=local_reward.judge))
    with pytest.raises(ConfigError, match="cannot be sent to another process"):
        pickle.dumps(held)


@pytest.mark.slow  # a spawned worker imports torch, transformers and TRL; two groups judged
@pytest.mark.timeout(900)  # a hang guard, not a speed bound
# Its rewards order fast above slow: beside the Ray cluster's 1,024-completion verl test (full82)
# step 1's reference, its speed-up 14.5x in the records, was paid the correct program's floor
# (0.15, as the baseline); the records kept no flags then, and do now (the message shows them).
@pytest.mark.alone
def test_step_k_is_judged_while_step_k_plus_1_arrives(core, monkeypatch, tmp_path):
    from accelerate.state import PartialState
    from datasets import Dataset
    from trl.experimental.async_grpo import async_rollout_worker as arw

    PartialState()  # as the trainer's Accelerator does: TRL's worker logs through accelerate
    # The worker refuses to start without the vllm package, which it never imports: it speaks
    # HTTP to a vLLM server, here the scripted one.
    monkeypatch.setattr(arw, "is_vllm_available", lambda: True)
    tok = _tokenizer()
    texts = _texts(core)
    step_k_rewarded = threading.Event()

    def script(row: int, nth: int) -> Scripted:
        if nth >= G:  # later steps: held until the test ends (nothing more to judge)
            return Scripted("No code.", hold=threading.Event())
        # step k+1's last completion waits until step k's rewards are in: it cannot come
        # before them, so "step k judged while step k+1 arrives" is observable on any machine
        # (or the test fails at the hold's deadline: step k was not judged meanwhile)
        hold = step_k_rewarded if (row, nth) == (1, G - 1) else None
        return Scripted(texts[row, KINDS[nth]], hold=hold)

    records = tmp_path / "records.jsonl"
    funcs = reward_funcs("perfgym-core", asynchronous=True, records=records)
    data = Dataset.from_dict({
        "prompt": [[{"role": "user", "content": f"[row {r}] Make {tid} faster."}]
                   for r, tid in enumerate(TASKS)],
        "task_id": list(TASKS)})  # fmt: skip
    got: dict[int, list[tuple[float, object]]] = {}
    with TokenCompletionsServer(tok, script) as server:
        # as AsyncGRPOTrainer builds it, one generation in flight: each request is sent only
        # once the previous completion has arrived and been handled
        worker = arw.AsyncRolloutWorker(
            model_name="tiny", dataset=data, reward_funcs=funcs, processing_class=tok,
            eos_token_ids=[tok.eos_token_id], num_generations=G, max_inflight_tasks=1,
            vllm_server_url=server.url, max_tokens=4096, request_timeout=600,
            child_ready_timeout=600)  # fmt: skip
        try:
            worker.start()
            deadline = time.monotonic() + 800
            while len(got.get(1, [])) < G and time.monotonic() < deadline:
                worker.check_health(stale_after_s=600)
                try:
                    sample = worker.rollout_buffer.get(timeout=0.5)
                except queue.Empty:
                    continue
                got.setdefault(sample.group_id, []).append((time.time(), sample))
                if len(got.get(0, [])) == G:
                    step_k_rewarded.set()
        finally:
            server.release()
            worker.stop()
        k1 = server.stamps(1)[:G]
    assert sorted(got) == [0, 1] and all(len(got[g]) == G for g in (0, 1))

    # perfgym's records (written in the worker): one batch per step, with when it was judged
    lines = [json.loads(x) for x in records.read_text().splitlines()[1:]]
    # every completion's reward, from perfgym's reward under its TRL name, ordered by kind
    for group in (0, 1):
        by_kind = {}
        for _, s in got[group]:
            content = s.completion[-1]["content"]
            kind = next(k for k in KINDS if f"({k})" in content)
            by_kind[kind] = s.metrics["rewards/perfgym_rlpf"]
        assert set(by_kind) == set(KINDS)
        assert by_kind["fast"] > by_kind["slow"] > by_kind["wrong"] > by_kind["nx"], (
            by_kind,
            [
                (r["step"], r["reward"], r["stage"], r["speedup"], r["flags"], r["reason"])
                for r in lines
            ],
        )

    # step k+1's cannot be judged before its last completion, held until step k's rewards
    steps: dict[int, list[dict]] = {}
    for r in lines:
        steps.setdefault(r["step"], []).append(r)
    # (a later step may be in: the test answers what it held as it stops the worker)
    assert sorted(steps)[:2] == [0, 1] and all(len(steps[k]) == G for k in (0, 1))
    for rows in (steps[0], steps[1]):
        assert sorted(r["stage"] for r in rows) == sorted(STAGE.values())
        assert len({(r["judged_from"], r["judged_to"]) for r in rows}) == 1
    began, ended = steps[0][0]["judged_from"], steps[0][0]["judged_to"]

    # step k was judged while step k+1's completions arrived: the worker asked for step k+1's
    # last completion (so it had received and handled the three before it) before step k's
    # judging ended, and that completion arrived after it
    assert began < ended
    assert k1[0].went is not None and k1[0].went < ended
    assert k1[-1].came < ended < k1[-1].went
    # step k's rewards reached the trainer's side first, then step k+1 was complete and judged
    assert max(t for t, _ in got[0]) <= k1[-1].went <= steps[1][0]["judged_from"]
