"""The TRL adapter called exactly as GRPOTrainer calls it (keyword arguments, chat-form
completions, extra dataset columns, log_metric/log_extra), on real solutions of real tasks."""

import asyncio
import logging
import threading
import time

import pytest
from test_batch import FILE_READER
from train_helpers import fence

from perfgym.errors import ConfigError
from perfgym.train.prompt import rlpf_messages
from perfgym.train.trl import reward_funcs


class Recorder:
    """What a reward function sent to TRL's log_metric and log_extra."""

    def __init__(self):
        self.metrics, self.extra = {}, {}

    def log_metric(self, name, value):
        self.metrics[name] = value

    def log_extra(self, column, values):
        self.extra[column] = list(values)


def trl_call(core, rows, recorder=None):
    """The keywords TRL 1.16 passes: prompts, completions (chat form), completion_ids, every
    dataset column but `prompt`, trainer_state, log_extra, log_metric."""
    kwargs = {
        "prompts": [rlpf_messages(core.get(t)) for t, _ in rows],
        "completions": [[{"role": "assistant", "content": text}] for _, text in rows],
        "completion_ids": [[1, 2, 3] for _ in rows],
        "task_id": [t for t, _ in rows],
        "family": [core.get(t).family for t, _ in rows],
        "trainer_state": None,
    }
    if recorder is not None:
        kwargs.update(log_metric=recorder.log_metric, log_extra=recorder.log_extra)
    return kwargs


@pytest.fixture(scope="module")
def solutions(core):
    a, b = core.get("py-topk-words"), core.get("py-prefix-range-sums")
    return [
        (a.id, fence(a.references[0].source)),
        (a.id, fence(a.baseline.source)),
        (a.id, fence(FILE_READER)),
        (a.id, fence("print('a 1')\n")),  # prints one test's answer without reading anything
        (b.id, fence(b.references[0].source)),
        (b.id, "I would use prefix sums."),
    ]


def test_called_as_trl_calls_it(core, local_reward, solutions):
    (fn,) = reward_funcs(core, scorer=local_reward)
    assert fn.__name__ == "perfgym_rlpf"
    rec = Recorder()
    got = fn(**trl_call(core, solutions, rec))
    assert len(got) == len(solutions) and all(isinstance(r, float) for r in got)
    ref, base, reader, printer, ref_b, prose = got
    assert ref > base > printer and base == pytest.approx(0.15)
    assert reader < ref and printer < ref and prose == pytest.approx(-0.05)  # NX
    assert ref_b > 0.15
    assert rec.metrics["perfgym_rlpf/stage_OK"] == pytest.approx(3 / 6)
    assert rec.metrics["perfgym_rlpf/none_frac"] == 0
    assert rec.metrics["perfgym_rlpf/speedup_geomean"] > 0 and "perfgym_rlpf/cgre" in rec.metrics
    assert rec.extra["perfgym_rlpf_stage"][:3] == ["OK", "OK", "NR"]
    assert all(len(v) == len(solutions) for v in rec.extra.values())
    assert rec.extra["perfgym_rlpf_cgre"][0] == pytest.approx(1.0)


def test_text_completions_and_another_id_column(core, local_reward):
    (fn,) = reward_funcs(core, scorer=local_reward, task_id_column="problem")
    got = fn(
        prompts=["p"], completions=["nothing"], completion_ids=[[1]], problem=["py-topk-words"]
    )
    assert got == [pytest.approx(-0.05)]


def test_missing_column_and_unknown_task_are_named(core, local_reward):
    (fn,) = reward_funcs(core, scorer=local_reward)
    with pytest.raises(ConfigError, match="no 'task_id' column.*columns: family"):
        fn(prompts=["p"], completions=["x"], completion_ids=[[1]], family=["f"])
    with pytest.raises(ConfigError, match="no task 'py-missing'"):
        fn(prompts=["p"], completions=["x"], completion_ids=[[1]], task_id=["py-missing"])


def test_async_through_the_service_and_a_crash_mid_batch(core, reward_service, caplog):
    (fn,) = reward_funcs(core, backend="service", url=reward_service.url, asynchronous=True,
                         retry_for_s=2.0, timeout_s=60)  # fmt: skip
    try:
        t = core.get("py-topk-words")
        rows = [(t.id, fence(t.references[0].source)), (t.id, "no code")]
        got = asyncio.run(fn(**trl_call(core, rows)))
        assert got[0] is not None and got[0] >= 0.15 and got[1] == pytest.approx(-0.05)
        # The service dies while it judges a batch: None, with a warning, within the retry bound.
        slow = [(t.id, fence(t.baseline.source))] * 4
        killer = threading.Timer(0.3, reward_service.kill)
        killer.start()
        start = time.monotonic()
        with caplog.at_level(logging.WARNING, logger="perfgym.train"):
            got = asyncio.run(fn(**trl_call(core, slow)))
        killer.join()
        assert got == [None] * 4 and time.monotonic() - start < 30
        assert "rewards are None" in caplog.text
    finally:
        fn.scorer.close()
        reward_service.restart()


def test_afterburner_reads_the_completions_trl_passes(core):
    """red team helper-82: through this adapter `afterburner` raised "needs the column
    'completions' or 'format_ok'" (the adapter kept TRL's completions from the reward)."""
    (fn,) = reward_funcs(core, "afterburner")
    try:
        a = core.get("py-topk-words")
        tagged = (f"<thinking>a heap</thinking>\n<solution>\n{fence(a.baseline.source)}\n"
                  "</solution>")  # fmt: skip
        got = fn(**trl_call(core, [(a.id, tagged), (a.id, fence(a.baseline.source))]))
    finally:
        fn.scorer.close()
    assert all(isinstance(x, float) for x in got), got
    assert got[0] == pytest.approx(got[1] + 0.2, abs=0.05)  # the format term, and only it
