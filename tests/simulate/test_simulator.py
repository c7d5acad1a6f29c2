"""Scoring the ladder with real rewards: values, normalisation, sweeps, files, bad input."""

import pytest
from sim_data import task, verdict

from perfgym.errors import ConfigError
from perfgym.rewards import get_reward
from perfgym.simulate import (
    SimulatorConfig,
    build_ladder,
    parse_params,
    parse_sweep,
    rank,
    read_simulations,
    simulate,
    sweep,
    write_simulations,
)

# Tb = 1.0, Tr = 0.25; the pool closes 20 % and 60 % of the gap; the reference reaches Tr.
TIMES = {"baseline": 1.0, "pool-1": 0.85, "pool-2": 0.55, "reference": 0.25}


def ladder(n_tasks=3, **cfg):
    tasks, vs = [], []
    for k in range(n_tasks):
        tid = f"t{k}"
        tasks.append(task(tid, {"pool-1": 1.0, "pool-2": 2.0}))
        vs += [verdict(tid, lab, tc) for lab, tc in TIMES.items()]
    return build_ladder(tasks, vs, SimulatorConfig(**cfg), suite="s")


def test_rlpf_values_on_every_rung_and_normalisation():
    sim = simulate(ladder(), get_reward("rlpf"))
    by = {p.label: p for p in sim.points if p.task_id == "t0"}
    # RLPF Eqs. 1–7: ladder −0.05/0/0.05/0.10; Tc = Tb is not faster: floor 0.15;
    # pool-1 CGRE 0.2 + αF 0.16; pool-2 0.6 + 0.16; reference 1 + 0.16 + 0.10.
    expected = {"NX": -0.05, "NC": 0.0, "NR": 0.05, "WO": 0.10, "baseline": 0.15,
                "pool-1": 0.36, "pool-2": 0.76, "reference": 1.26}  # fmt: skip
    for label, value in expected.items():
        assert by[label].value == pytest.approx(value), label
        assert by[label].signal == pytest.approx((value + 0.05) / 1.31), label
    assert sim.bounds == (-0.05, 1.26)
    assert sim.diagnostics.spearman == pytest.approx(1.0)
    assert sim.diagnostics.monotonicity == 1.0
    assert [s.label for s in sim.staircase][:5] == ["NX", "NC", "NR", "WO", "baseline"]
    assert sim.staircase[-1].mean_value == pytest.approx(1.26) and sim.staircase[-1].n == 3


def test_rlpf_orders_better_than_runtime_only_and_rlvr():
    lad = ladder()
    rho = {n: simulate(lad, get_reward(n)).diagnostics.spearman
           for n in ("rlpf", "runtime_only", "rlvr")}  # fmt: skip
    # runtime-only ties every failure with the baseline at 0; RLVR ties every correct one at 1.
    assert rho["rlpf"] > max(rho["runtime_only"], rho["rlvr"])
    runtime = simulate(lad, get_reward("runtime_only"))
    assert {p.value for p in runtime.points if p.level <= 4} == {0.0}
    ranked = sweep(lad, ["rlvr", "runtime_only", "rlpf"])
    assert ranked[0].reward == "rlpf"


def test_pass_signal_thresholds_the_normalised_reward():
    sim = simulate(ladder(signal="pass", pass_level=0.5), get_reward("rlpf"))
    passed = {p.label: p.signal for p in sim.points if p.task_id == "t0"}
    # (0.76 + 0.05)/1.31 = 0.62 passes, (0.36 + 0.05)/1.31 = 0.31 does not.
    assert passed == {"NX": 0, "NC": 0, "NR": 0, "WO": 0, "baseline": 0, "pool-1": 0,
                      "pool-2": 1, "reference": 1}  # fmt: skip


def test_percentile_rewards_read_the_leave_one_out_pool():
    lad = ladder()
    sim = simulate(lad, get_reward("percentile_qar"))
    by = {p.label: p.value for p in sim.points if p.task_id == "t0"}
    # QAR: 1 − (percent of the other three solutions strictly faster)/100, per workload.
    assert by["reference"] == pytest.approx(1.0)
    assert by["pool-2"] == pytest.approx(2 / 3)
    assert by["pool-1"] == pytest.approx(1 / 3)
    assert by["baseline"] == pytest.approx(0.0)
    assert by["WO"] == 0.0


def test_sweep_ranks_a_grid_and_records_what_varied():
    lad = ladder()
    sims = sweep(lad, ["percentile"], grid_spec={"tau": [10, 50, 100]}, rank_by="spearman")
    assert sorted(s.varied for s in sims) == ["tau=10", "tau=100", "tau=50"]
    assert all(s.params["tau"] in (10, 50, 100) for s in sims)
    by_tau = {s.params["tau"]: s.diagnostics for s in sims}
    # tau=100 gates on correctness alone; tau=10 passes the reference only (latest activation).
    assert by_tau[100].auc > by_tau[50].auc > by_tau[10].auc
    assert by_tau[10].diagonal_bias < by_tau[100].diagonal_bias
    steep = rank(sims, "steepness")
    assert steep[0].diagnostics.steepness == max(d.steepness for d in by_tau.values())
    seen = []
    sweep(lad, ["rlvr"], grid_spec={}, progress=lambda d, n: seen.append((d, n)))
    assert seen == [(1, 1)]


def test_unscored_points_are_left_out_and_counted():
    tasks = [task("t0", {"pool-1": 1.0})]
    vs = [verdict("t0", "baseline", 1.0), verdict("t0", "pool-1", 0.6),
          verdict("t0", "reference", 0.3)]  # fmt: skip
    vs[1] = verdict("t0", "pool-1", 0.6, tr=None)
    lad = build_ladder(tasks, vs, suite="s")
    sim = simulate(lad, get_reward("rlpf"))
    assert [p.value is None for p in sim.points].count(True) == 1
    assert sim.diagnostics.n_points == len(sim.points) - 1
    assert any("unscored" in n for n in sim.notes)


def test_a_reward_that_scores_nothing_is_a_config_error():
    tasks = [task("t0")]
    vs = [verdict("t0", "baseline", 1.0, tr=None), verdict("t0", "reference", 0.3, tr=None)]
    lad = build_ladder(tasks, vs, SimulatorConfig(failures=[]), suite="s")
    with pytest.raises(ConfigError, match="scored none"):
        simulate(lad, get_reward("rlpf"))


def test_parameters_from_the_command_line():
    assert parse_params(["tau=30", "ranking=leaderboard", "calibrate=[0.6, 0.05]"]) == {
        "tau": 30, "ranking": "leaderboard", "calibrate": [0.6, 0.05],
    }  # fmt: skip
    assert parse_sweep(["tau=10, 30,50", "quality=none,qar"]) == {
        "tau": [10, 30, 50], "quality": ["none", "qar"],
    }  # fmt: skip
    for bad in (["tau"], ["=3"], ["tau="]):
        with pytest.raises(ConfigError):
            parse_params(bad)
    with pytest.raises(ConfigError):
        parse_params(["tau=1", "tau=2"])
    with pytest.raises(ConfigError):
        parse_sweep(["tau=,"])
    with pytest.raises(ConfigError, match="no reward named"):
        sweep(ladder(1), ["no-such-reward"])
    with pytest.raises(ConfigError, match="tau"):
        sweep(ladder(1), ["percentile"], {"tau": 0})
    with pytest.raises(ConfigError, match="ranking"):
        sweep(ladder(1), ["rlvr"], rank_by="auc")


def test_simulation_file_round_trip(tmp_path):
    sims = sweep(ladder(), ["rlpf", "rlvr"])
    path = tmp_path / "sim.json"
    write_simulations(path, sims, rank_by="spearman", suite="s")
    doc = read_simulations(path)
    assert doc.rank_by == "spearman" and doc.header["suite"] == "s"
    assert [s.reward for s in doc.simulations] == ["rlpf", "rlvr"]
    assert doc.simulations[0].diagnostics == sims[0].diagnostics
    bad = tmp_path / "bad.json"
    bad.write_text('{"something": 1}')
    with pytest.raises(ConfigError, match="not a simulation file"):
        read_simulations(bad)
    bad.write_text("{nope")
    with pytest.raises(ConfigError, match="not JSON"):
        read_simulations(bad)
