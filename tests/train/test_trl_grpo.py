"""TRL's GRPOTrainer end to end on CPU: a tiny random Qwen2, 2 optimisation steps on 4
perfgym-core prompts (RLPF's), rewards from real sandboxed runs through the local backend and
through a real `perfgym serve`; a third reward through a service that is down gives None."""

import math

import pytest
from train_helpers import TASK_IDS

pytest.importorskip("trl")
pytest.importorskip("datasets")

from perfgym.service.server.process import free_port  # noqa: E402
from perfgym.train.batch import BatchReward, training_judge_config  # noqa: E402
from perfgym.train.prompt import rlpf_messages  # noqa: E402
from perfgym.train.trl import reward_funcs  # noqa: E402

#: RLPF's failure ladder (Eq. 5, the paper's values): all a random model's text can earn.
FAILURE_REWARDS = {-0.05, 0.0, 0.05, 0.10}


@pytest.fixture(scope="module")
def trained(core, reward_service, tokenizer, tiny_model_factory, tmp_path_factory):
    import torch
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    tasks = [core.get(t) for t in TASK_IDS]
    data = Dataset.from_dict({"prompt": [rlpf_messages(t) for t in tasks],
                              "task_id": [t.id for t in tasks],
                              "family": [t.family for t in tasks]})  # fmt: skip
    # As the service judges: runtime measured once, no noise band (it would be measured per task).
    local_scorer = BatchReward(core, judge_config=training_judge_config(noise_rounds=0))
    local = reward_funcs(core, scorer=local_scorer, name="perfgym_local")
    served = reward_funcs(core, backend="service", url=reward_service.url, asynchronous=True,
                          name="perfgym_service", timeout_s=120)  # fmt: skip
    down = reward_funcs(core, backend="service", url=f"http://127.0.0.1:{free_port()}",
                        retry_for_s=0.5, timeout_s=20, name="perfgym_down")  # fmt: skip
    model = tiny_model_factory()
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    args = GRPOConfig(output_dir=str(tmp_path_factory.mktemp("grpo")), per_device_train_batch_size=4,
                      num_generations=2, max_completion_length=24, max_steps=2, logging_steps=1,
                      learning_rate=1e-2, report_to="none", save_strategy="no", use_cpu=True,
                      bf16=False, gradient_checkpointing=False, scale_rewards="none",
                      seed=0)  # fmt: skip
    trainer = GRPOTrainer(model=model, processing_class=tokenizer, args=args, train_dataset=data,
                          reward_funcs=local + served + down)  # fmt: skip
    try:
        trainer.train()
    finally:
        for fn in local + served + down:
            fn.scorer.close()
    changed = [n for n, p in model.named_parameters() if not torch.equal(before[n], p.detach())]
    return trainer, changed


def test_rewards_flowed_per_function_with_components(trained):
    trainer, _ = trained
    steps = [h for h in trainer.state.log_history if "rewards/perfgym_local/mean" in h]
    assert len(steps) == 2
    for h in steps:
        assert h["rewards/perfgym_local/mean"] == pytest.approx(h["rewards/perfgym_service/mean"])
        for fn in ("perfgym_local", "perfgym_service"):
            assert h[f"{fn}/none_frac"] == 0 and h[f"{fn}/stage_OK"] == 0
            ladder = sum(h[f"{fn}/stage_{s}"] for s in ("NX", "NC", "NR", "WO"))
            assert ladder == pytest.approx(1.0)
        # The service that is down: every reward None (TRL logs no mean), never 0.0.
        assert h["perfgym_down/none_frac"] == 1.0
        down = h["rewards/perfgym_down/mean"]
        assert down is None or math.isnan(down)


def test_garbage_earns_the_failure_ladder(trained):
    trainer, _ = trained
    last = trainer._logs  # the last batch's completions, rewards per function and extra columns
    local = list(last["rewards"]["perfgym_local"])
    assert len(local) == 4 and {round(r, 6) for r in local} <= FAILURE_REWARDS
    assert list(last["rewards"]["perfgym_service"]) == pytest.approx(local)
    assert all(math.isnan(r) for r in last["rewards"]["perfgym_down"])
    assert set(last["extra"]["perfgym_local_stage"]) <= {"NX", "NC", "NR", "WO"}
    assert any("ServiceUnavailable" in r for r in last["extra"]["perfgym_down_reason"])


def test_parameters_changed(trained):
    _, changed = trained
    assert changed
