"""The batch core: one judge call per batch, real sandboxed runs, None (never 0.0) for
infrastructure failures, and no cheaper program out-scoring the reference."""

import asyncio
import logging
import os

import pytest
from train_helpers import ADD, add_task, fence

from perfgym.errors import ConfigError
from perfgym.tasks.suite_model import Suite
from perfgym.train.batch import BatchReward, completion_text, training_judge_config

SUITE_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "suites", "perfgym-core")

#: Reads the task's tests from every place it might see them and prints the stored answer.
FILE_READER = """import glob, json, sys
data = sys.stdin.read()
for path in glob.glob("/**/py-topk-words/tests.jsonl", recursive=True) + [{path!r}]:
    try:
        for line in open(path):
            case = json.loads(line)
            if case["stdin"] == data:
                sys.stdout.write(case["expected"]); sys.exit(0)
    except OSError:
        pass
sys.exit(1)
""".replace(
    "{path!r}", repr(os.path.abspath(os.path.join(SUITE_DIR, "py-topk-words", "tests.jsonl")))
)


@pytest.fixture(scope="module")
def mixed(core, local_reward):
    """One batch of one task: reference, pool, baseline verbatim, wrong, garbage."""
    a = core.get("py-topk-words")
    items = [
        (a.id, fence(a.references[0].source)),
        (a.id, [{"role": "assistant", "content": fence(a.pool[0].source)}]),
        (a.id, fence(a.baseline.source)),
        (a.id, fence("import sys\nprint(sys.stdin.read()[:3])\n")),
        (a.id, "no program here at all"),
        (a.id, fence(a.references[0].source)),  # the same text again: judged once
    ]
    scored = local_reward.score(items)
    _BANDS[:] = [local_reward.last_verdicts[0].baseline]
    return scored


#: The baseline's timing of `mixed`'s batch (its noise band), for `_skip_if_the_band_swallowed`.
_BANDS: list = []


def _skip_if_the_band_swallowed(ref) -> None:  # type: ignore[no-untyped-def]
    """RLPF's training setting decides on one run per variant and the task's noise band; on a
    machine loaded enough that the band is wider than the reference's own gain (full91: the
    reference 4.5x a tie), "faster" is the band's to refuse, not this test's to assert."""
    base = _BANDS[0] if _BANDS else None
    band = getattr(base, "noise_band", None)
    if ref.components.get("fbr") or band is None or not ref.speedup:
        return
    if ref.speedup < 1 + band:
        pytest.skip(f"the baseline's noise band at this batch was {band:.2f}: the reference's "
                    f"{ref.speedup:.1f}x is within it (a loaded machine)")  # fmt: skip


def test_staircase_and_components(mixed):
    ref, pool, base, wrong, garbage, again = mixed
    assert [s.stage for s in mixed] == ["OK", "OK", "OK", "WO", "NX", "OK"]
    assert again == ref  # identical programs, identical rewards (no second noisy measurement)
    assert ref.value is not None and pool.value is not None and base.value is not None
    _skip_if_the_band_swallowed(ref)
    # RLPF Eq. 6 with αF = 0.16, αR = 0.10: the reference closes the whole gap.
    # The pool program is faster than the baseline, but whether significantly so at this
    # machine's load is up to the load: it earns the floor at least, never less; and never
    # more than the reference (both earn the cap, 1.26, when the pool program's measured ratio
    # reaches the reference's: once in a quiet full run).
    assert ref.value >= pool.value >= base.value >= 0.15 > wrong.value > garbage.value
    assert ref.value > base.value
    assert ref.components["fbr"] and ref.cgre is not None and ref.cgre > 0.5
    assert ref.speedup is not None and ref.speedup > 1.5 and ref.timing_status == "ok"
    assert all(s.value is not None and not s.infra_error for s in mixed)


def test_the_baseline_verbatim_gets_the_floor(mixed):
    # It ties with itself: the correctness floor, no speed credit, below the reference.
    ref, _pool, base, _wrong, _garbage, _again = mixed
    assert base.components["fbr"] is False and base.value == pytest.approx(0.15)
    _skip_if_the_band_swallowed(ref)
    assert ref.value is not None and base.value < ref.value


def test_unknown_task_id_is_named(local_reward):
    with pytest.raises(ConfigError, match="no task 'nope'"):
        local_reward.score([("py-topk-words", "x"), ("nope", "y")])


def test_chat_completion_text():
    chat = [{"role": "assistant", "content": [{"type": "text", "text": "a"}, {"text": "b"}]}]
    assert completion_text(chat) == "ab"
    with pytest.raises(ConfigError, match="content"):
        completion_text([{"role": "assistant"}])


def test_down_service_gives_none_with_a_warning(core, caplog):
    from perfgym.service.server.process import free_port

    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    down = BatchReward(core, backend="service", url=url, retry_for_s=1.0, timeout_s=30)
    with down, caplog.at_level(logging.WARNING, logger="perfgym.train"):
        got = down.score([("py-topk-words", fence("print(1)\n"))] * 2)
    assert [s.value for s in got] == [None, None] and all(s.infra_error for s in got)
    assert "ServiceUnavailable" in got[0].reason and "rewards are None" in caplog.text
    # Its configuration was asked once, without retrying, and is not known: the batches' own
    # retries report the service down, and every later batch is sent as before.
    assert down._service_asked and down._service_hides is None


def test_a_batch_past_its_timeout_gives_none(caplog):
    # A one-function task (cheap to finish: close() waits for the batch still being judged).
    tiny = Suite(name="tiny", tasks=[add_task()], source="test")
    slow = BatchReward(tiny, judge_config=training_judge_config(), timeout_s=0.05)
    with slow, caplog.at_level(logging.WARNING, logger="perfgym.train"):
        got = asyncio.run(slow.ascore([("add", fence(ADD))]))
    assert got[0].value is None and "within 0.05 s" in got[0].reason


class _RaisesOnMarker:
    """The real local judge, which raises (as an unforeseen decoding error would) whenever a
    batch holds a completion carrying MARKER: fault injection at the backend's edge."""

    MARKER = "# makes-the-judge-raise"

    def __init__(self, judge):
        self.inner = judge

    def judge_many(self, candidates):
        if any(self.MARKER in (c.completion or "") for c in candidates):
            raise OverflowError("int too large to convert to float")
        return self.inner.judge_many(candidates)

    def close(self):
        pass


def test_one_completion_that_makes_the_judge_raise_loses_only_its_own_reward(core, local_reward):
    """Red team round 4: one program whose output made `judge_many` raise dropped every reward of
    its batch (the correct twin's too). Now the batch is judged again one by one: the raiser
    alone is an infrastructure error (None), its twins keep their verdicts."""
    a = core.get("py-topk-words")
    judge = _RaisesOnMarker(local_reward.judge)
    with BatchReward(core, "rlpf", judge=judge, judge_config=training_judge_config()) as reward:
        ref, wrong, raiser = reward.score([
            (a.id, fence(a.references[0].source)),
            (a.id, fence("import sys\nprint(sys.stdin.read()[:3])\n")),
            (a.id, fence("import sys\nprint(1)\n" + _RaisesOnMarker.MARKER + "\n")),
        ])  # fmt: skip
        why = reward.last_verdicts[2].reason
    assert ref.value is not None and ref.stage == "OK" and not ref.infra_error
    assert wrong.value is not None and wrong.stage == "WO" and not wrong.infra_error
    assert raiser.value is None and raiser.infra_error and "OverflowError" in why


def test_a_backend_that_raises_on_everything_still_drops_the_whole_batch(core):
    """The backend itself down: every completion None, none scored 0 (one warning, no retries
    beyond one per completion)."""

    class Down:
        def judge_many(self, candidates):
            raise ConnectionError("refused")

        def close(self):
            pass

    a = core.get("py-topk-words")
    with BatchReward(core, "rlpf", judge=Down()) as reward:
        out = reward.score([(a.id, fence(a.references[0].source)), (a.id, fence("print(1)\n"))])
    assert [s.value for s in out] == [None, None] and all(s.infra_error for s in out)
    assert "ConnectionError" in out[0].reason
