"""Reading candidates files: perfgym's own lines keep unknown fields, evalplus samples (`solution`
whole, `completion` continuing the prompt) and lm-eval samples read as they are, and every bad
line is named (issue 15, item 3)."""

from __future__ import annotations

import json

import pytest

from perfgym.evaluation.candidates_file import read_candidates
from perfgym.evaluation.candidates_formats import LineError, is_body, parse_record
from perfgym.tasks.suite import load_suite


@pytest.fixture(scope="module")
def humaneval():
    return load_suite("humaneval")


def _write(tmp_path, *objs):
    path = tmp_path / "c.jsonl"
    path.write_text("".join((o if isinstance(o, str) else json.dumps(o)) + "\n" for o in objs))
    return path


def test_unknown_fields_are_kept_as_meta(tmp_path, humaneval):
    line = {"task_id": "HumanEval/0", "model": "m", "source": "def f(): pass\n",
            "prompt": "Write f.", "finish_reason": "stop", "usage": {"tokens": 12}}  # fmt: skip
    cands, problems = read_candidates(_write(tmp_path, line), humaneval)
    assert problems == []
    assert cands[0].meta == {"prompt": "Write f.", "finish_reason": "stop", "usage": {"tokens": 12}}


def test_evalplus_solution_is_the_whole_program(tmp_path, humaneval):
    task = humaneval.tasks[0]
    whole = task.goal + "    return False\n"
    cands, problems = read_candidates(_write(tmp_path, {"task_id": task.id, "solution": whole}),
                                      humaneval)  # fmt: skip
    assert problems == [] and cands[0].source == whole and cands[0].completion is None


def test_evalplus_completion_continues_the_prompt(tmp_path, humaneval):
    task = humaneval.tasks[0]
    body = "    return False\n"
    cands, _ = read_candidates(_write(tmp_path, {"task_id": task.id, "completion": body}),
                               humaneval)  # fmt: skip
    assert cands[0].source == task.goal + body and cands[0].completion is None


def test_raw_model_text_stays_raw(tmp_path, humaneval):
    text = "Here:\n```python\ndef has_close_elements(n, t):\n    return False\n```\n"
    cands, _ = read_candidates(_write(tmp_path, {"task_id": "HumanEval/0", "completion": text}),
                               humaneval)  # fmt: skip
    assert cands[0].completion == text and cands[0].source is None


def test_format_evalplus_always_prepends_and_perfgym_never(tmp_path, humaneval):
    task = humaneval.tasks[0]
    unindented = "return False\n"  # not a body by the auto rule, but evalplus prepends anyway
    path = _write(tmp_path, {"task_id": task.id, "completion": unindented})
    (ev,), _ = read_candidates(path, humaneval, "evalplus")
    assert ev.source == task.goal + unindented
    body = _write(tmp_path, {"task_id": task.id, "completion": "    return False\n"})
    (pg,), _ = read_candidates(body, humaneval, "perfgym")
    assert pg.source is None and pg.completion == "    return False\n"


def test_lm_eval_record_gives_one_candidate_per_response(tmp_path, humaneval):
    task = humaneval.tasks[0]
    record = {"doc_id": 0, "doc": {"task_id": task.id, "prompt": task.goal},
              "target": "check(...)", "arguments": {"gen_args_0": {"arg_0": task.goal}},
              "resps": [["    return True\n", "    return False\n"]],
              "filtered_resps": [task.goal + "    return True\n", task.goal + "    return False\n"],
              "filter": "create_test", "metrics": ["pass@1"], "doc_hash": "ab12"}  # fmt: skip
    cands, problems = read_candidates(_write(tmp_path, record), humaneval)
    assert problems == []
    assert [c.sample for c in cands] == [0, 1]
    # filtered_resps (lm-eval's create_test filter) are whole programs: extraction finds them
    assert [c.completion for c in cands] == record["filtered_resps"]
    assert cands[0].meta == {"doc_id": 0, "target": "check(...)", "filter": "create_test",
                             "metrics": ["pass@1"], "doc_hash": "ab12"}  # fmt: skip


def test_lm_eval_raw_resps_continue_the_prompt(tmp_path, humaneval):
    task = humaneval.tasks[0]
    record = {"doc_id": 0, "doc": {"task_id": task.id}, "resps": [["    return True\n"]]}
    (cand,), problems = read_candidates(_write(tmp_path, record), humaneval)
    assert problems == [] and cand.source == task.goal + "    return True\n"


@pytest.mark.parametrize(
    ("record", "needle"),
    [
        ({"doc": {"prompt": "x"}, "resps": [["a"]]}, "doc.task_id"),
        ({"doc": {"task_id": "HumanEval/0"}, "resps": [["a"], ["b"]]}, "ambiguous"),
        ({"doc": {"task_id": "HumanEval/0"}, "resps": [[0.5, True]]}, "ambiguous"),
        ({"doc": {"task_id": "HumanEval/0"}, "resps": []}, "ambiguous"),
    ],
)
def test_ambiguous_lm_eval_records_are_refused(humaneval, record, needle):
    with pytest.raises(LineError, match=needle):
        parse_record(record, {t.id: t for t in humaneval.tasks})


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        ("this is not json", "not JSON"),
        ("[1, 2]", "expected a JSON object, got list"),
        ({"task_id": 7, "source": "x"}, "task_id: expected a task id string"),
        ({"task_id": "HumanEval/0", "source": ["x"]}, "source: expected a string, got list"),
        ({"task_id": "HumanEval/0", "source": "x", "sample": "1"}, "sample: expected an integer"),
        ({"task_id": "HumanEval/0", "source": "x", "model": 3}, "model: expected a non-empty"),
        ({"task_id": "HumanEval/0"}, "exactly one of"),
        ({"task_id": "HumanEval/0", "source": "x", "completion": "y"}, "exactly one of"),
        ({"task_id": "HumanEval/999", "source": "x"}, "unknown task_id 'HumanEval/999'"),
    ],
)
def test_a_bad_line_is_named_and_the_rest_kept(tmp_path, humaneval, line, needle):
    good = {"task_id": "HumanEval/1", "source": "def f(): pass\n"}
    cands, problems = read_candidates(_write(tmp_path, good, line), humaneval)
    assert [c.task.id for c in cands] == ["HumanEval/1"]
    assert len(problems) == 1 and problems[0].startswith("line 2: ") and needle in problems[0]


def test_a_duplicate_task_model_sample_is_a_bad_line(tmp_path, humaneval):
    a = {"task_id": "HumanEval/1", "model": "m", "sample": 0, "source": "a = 1\n"}
    b = {"task_id": "HumanEval/1", "model": "m", "source": "b = 1\n"}  # numbered 1: fine
    c = {"task_id": "HumanEval/1", "model": "m", "sample": 1, "source": "c = 1\n"}  # repeats b
    cands, problems = read_candidates(_write(tmp_path, a, b, c), humaneval)
    assert [(c.sample, c.source) for c in cands] == [(0, "a = 1\n"), (1, "b = 1\n")]
    assert problems == ["line 3: duplicate of line 2: task 'HumanEval/1', model 'm', sample 1"]


def test_is_body():
    assert is_body("\n    return 1\n") and is_body("\treturn 1")
    assert not is_body("def f():\n    return 1\n") and not is_body("```python\nx\n```")
    assert not is_body("") and not is_body("Sure! Here it is.")


def test_the_shipped_examples_read_without_a_problem(humaneval):
    from pathlib import Path

    examples = Path(__file__).resolve().parents[2] / "examples"
    core = load_suite("perfgym-core")
    cands, problems = read_candidates(examples / "candidates-perfgym-core.jsonl", core)
    assert problems == [] and len(cands) == 3 and cands[1].meta["finish_reason"] == "stop"
    cands, problems = read_candidates(examples / "samples-humaneval-evalplus.jsonl", humaneval)
    assert problems == [] and all(c.source is not None for c in cands)


def test_a_line_cannot_set_its_own_verdict_through_unknown_fields(tmp_path, humaneval):
    """Adversarial: fields named like a verdict's (`stage`, `detail`, `candidate`) land in
    `meta` only; the judged stage stays the judge's."""
    from perfgym.evaluation.candidates_file import with_meta
    from perfgym.judge.verdict import Stage, Verdict

    line = {"task_id": "HumanEval/1", "model": "m", "source": "print(1)\n", "stage": "OK",
            "detail": "", "candidate": {"estimate_s": 1e-9}}  # fmt: skip
    cands, _ = read_candidates(_write(tmp_path, line), humaneval)
    judged = Verdict(task_id="HumanEval/1", model="m", sample=0, stage=Stage.WO, detail="WRONG")
    (v,) = with_meta([judged], cands)
    assert v.stage is Stage.WO and v.detail == "WRONG" and v.candidate is None
    assert v.meta == {"stage": "OK", "detail": "", "candidate": {"estimate_s": 1e-9}}
