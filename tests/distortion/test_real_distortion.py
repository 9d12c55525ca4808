"""Distortion on a real model (kind=realdistortion): the estimate of KL(q̃‖p*) from SMC's Ẑ and the masked runs'
kept masses covers the exact value where it is known (the toy model at noise 0), the summary computes what it
says from rows made by hand, the rows are reproducible, and one tiny SmolLM2 trial runs end to end."""

from __future__ import annotations

import json
import math

import matplotlib.pyplot as plt
import numpy as np
import pytest
from helpers import settings_of

from structbench.bench.rows import Kind, names_of
from structbench.bench.runner import run_trial
from structbench.bench.store import read_results, write_part
from structbench.bench.strategies import compile_constraint
from structbench.bench.tasks import age_task
from structbench.distortion.exact import ExactSolver
from structbench.distortion.nexttoken import ToyLaw
from structbench.errors import MissingRows, SettingsError
from structbench.extras import install_line
from structbench.lm import real_model
from structbench.lm.toy_model import ToyModel
from structbench.lm.vocab import toy_vocabulary
from structbench.report.figures.real_distortion import fig_real_distortion
from structbench.report.real_distortion import (
    NO_ANSWER,
    answer_value,
    estimate_kl,
    report,
    shift,
    summarize,
    z_from_runs,
)
from structbench.report.summary import Z95


def trial(compose, root, strategy, *extra, experiment="t"):
    overrides = ["kind=realdistortion", f"strategy={strategy}", f"results_dir={root}", f"experiment={experiment}",
                 "progress=false", *extra]
    return run_trial(settings_of(compose(overrides)))


def stable(df):
    return df[[c for c in df.columns if c not in names_of(Kind.TIMING) + names_of(Kind.PROVENANCE)]]


def covers(term, truth) -> bool:
    return abs(term.value - truth) <= Z95 * term.se


# --- the estimate where the truth is known --------------------------------------------------------------------

# The toy model at noise 0 has logits fixed by the prefix, so q(y) = p(y) / Π Z_t(y) holds. At skill 4 the age task
# has Z = 0.0035 and KL(q̃‖p*) = 4.7 nats, and LCD leaves 1.8% of its runs unfinished at the budget (log Q matters).
TOY = ("task=age", "model.noise=0", "model.skill=4")


@pytest.fixture(scope="module")
def toy_exact():
    vocab, task = toy_vocabulary(), age_task()
    solver = ExactSolver(ToyLaw(ToyModel(task.reference, vocab, skill=4.0, noise=0.0)),
                         compile_constraint(task, vocab, "tabled"), 40)
    return solver.summary


def test_the_estimate_covers_the_exact_kl_on_the_toy_model(compose, tmp_path, toy_exact):
    trial(compose, tmp_path, "tabled", *TOY, "n=400")
    trial(compose, tmp_path, "smc", *TOY, "n=200", "strategy.particles=8")
    df = read_results(tmp_path, "t")
    (summary,) = summarize(df)
    e = summary.estimate
    s = toy_exact
    assert s.q_dead_end_mass == 0 and 0.95 < s.q_valid_mass < 0.99  # what makes this case a test of log Q
    log_q = math.log(s.q_valid_mass)
    assert covers(e.z, s.z) and covers(e.log_z, math.log(s.z))
    assert covers(e.z_from_lcd, s.z)  # the masked runs' own weights: SMC with one particle
    assert covers(e.mean_log_w, math.log(s.z) - log_q - s.kl_q_pstar)  # E_q̃[Σ log Z_t], from the exact terms
    lo, hi = e.interval
    assert lo <= s.kl_q_pstar <= hi and lo > 1.0, (e.kl, e.interval, s.kl_q_pstar)
    # The form without the budget's correction, log Z - E_q[Σ log Z_t], is a different number here.
    assert abs((math.log(s.z) - s.q_expected_log_kept) - s.kl_q_pstar) > 1.0


def test_same_settings_same_rows_apart_from_timing(compose, tmp_path):
    for folder in ("a", "b"):
        for strategy in ("none", "tabled", "smc"):
            trial(compose, tmp_path / folder, strategy, *TOY, "n=6", "seed=3")
    a, b = (read_results(tmp_path / f, "t") for f in ("a", "b"))
    assert len(a) == 18 and stable(a).equals(stable(b))
    smc = a[a["strategy"] == "smc"]
    assert smc["log_z_hat"].notna().all() and (smc["particles"] == 16).all()
    assert a[a["strategy"] != "smc"]["log_z_hat"].isna().all()
    # Each strategy draws from its own stream: SMC's first run is not masking's first answer replayed.
    assert list(a[a["strategy"] == "tabled"]["removed_mass"].iloc[0]) != list(smc["removed_mass"].iloc[0])


@pytest.mark.parametrize("extra,message", [
    (("model.noise=1.0",), "noise"),
    (("temperature=0",), "temperature 1"),
])
def test_refuses_what_the_identity_does_not_hold_for(compose, tmp_path, extra, message):
    with pytest.raises(SettingsError, match=message):
        trial(compose, tmp_path, "tabled", "task=age", *extra)
    assert not list(tmp_path.rglob("part-*"))


def test_refuses_other_strategies(compose, tmp_path):
    with pytest.raises(SettingsError, match="runs the strategies none, tabled, naive, smc, awrs, not 'retry'"):
        trial(compose, tmp_path, "retry", *TOY)


# --- the summary from rows made by hand -------------------------------------------------------------------------


def hand_rows() -> list[dict]:
    """age: four masked runs (one cut off), two SMC runs with Ẑ = 0.2 and 0.4, two unconstrained answers."""
    config = json.dumps({"key_order": "schema"})
    common = {"experiment": "h", "kind": "realdistortion", "task": "age", "schema_depth": 0, "model": "smollm2",
              "max_tokens": 8, "whitespace": "lesson", "config_json": config, "seed": 0}
    lcd = [('{"age": 1}', True, [0.5]), ('{"age": 1}', True, [0.5, 0.5]), ('{"age": 2}', True, [0.75]),
           ('{"age": ', False, [0.0, 0.5])]
    rows = [dict(common, trial_id="l", strategy="tabled", sample=i, text=t, finished=f, removed_mass=m,
                 category="valid" if f else "cut_off", n_tokens=len(m), model_calls=float(len(m)))
            for i, (t, f, m) in enumerate(lcd)]
    rows += [dict(common, trial_id="s", strategy="smc", sample=i, text='{"age": 1}', finished=True,
                  removed_mass=[0.1], category="valid", n_tokens=5, particles=4, log_z_hat=math.log(z),
                  model_calls=20.0) for i, z in enumerate((0.2, 0.4))]
    rows += [dict(common, trial_id="n", strategy="none", sample=i, text=t, finished=True, removed_mass=[0.0],
                  category=c, n_tokens=3, model_calls=3.0)
             for i, (t, c) in enumerate((('{"age": 1}', "valid"), ("Sure", "chatter")))]
    return rows


def test_the_summary_from_hand_made_rows(tmp_path):
    rows = hand_rows()
    (tmp_path / "h").mkdir()
    for trial_id in ("l", "s", "n"):
        write_part([r for r in rows if r["trial_id"] == trial_id], tmp_path / "h" / f"part-{trial_id}.parquet")
    df = read_results(tmp_path, "h")
    (s,) = summarize(df)
    e = s.estimate
    assert e.z.value == pytest.approx(0.3) and e.z.se == pytest.approx(0.1)  # sd of (0.2, 0.4) / √2
    assert e.log_z.value == pytest.approx(math.log(0.3)) and e.log_z.se == pytest.approx(0.1 / 0.3)
    assert (e.finished.value, e.finished.runs) == (0.75, 4) and e.log_q.se == pytest.approx(math.sqrt(0.25 / 3))
    logs = [math.log(0.5), 2 * math.log(0.5), math.log(0.25)]
    assert e.mean_log_w.value == pytest.approx(np.mean(logs)) and e.mean_log_w.runs == 3
    assert e.mean_log_w.se == pytest.approx(np.std(logs, ddof=1) / math.sqrt(3))
    assert e.kl == pytest.approx(math.log(0.3) - math.log(0.75) - np.mean(logs))
    assert e.kl_se == pytest.approx(math.sqrt((1 / 3) ** 2 + 0.25 / 3 + np.var(logs, ddof=1) / 3))
    assert e.z_from_lcd.value == pytest.approx((0.5 + 0.25 + 0.25 + 0) / 4)
    assert s.values["tabled"] == ["1", "1", "2", NO_ANSWER] and s.values["smc"] == ["1", "1"]
    assert s.field_shift.value == pytest.approx(0.5)  # (|0.5 - 1| + 0.25 + 0.25) / 2
    assert 0 < s.field_shift.p_value <= 1 and 0 < s.field_shift.null_mean < 1
    assert s.token_shift.value == pytest.approx(5 - np.mean([1, 2, 1, 2]))  # n_tokens: 5 for SMC, the steps for LCD
    assert s.valid_share == {"tabled": (3, 4), "smc": (2, 2), "none": (1, 2)} and s.particles == 4
    text = report(df)
    assert "| age | 0.3 ± 0.1 (2) | -1.20 ± 0.33 | 3/4 |" in text
    assert f"**{e.kl:.2f}**" in text and "| 1/2 |" in text
    assert "1 50%, 2 25%, no valid answer 25%" in text and "| 1 100% |" in text
    fig = fig_real_distortion(df)
    assert all(ax.patches or ax.lines or ax.collections for ax in fig.axes)
    assert "TV(LCD, SMC) = 0.50" in fig.axes[0].get_title() and "by chance alone" in fig.axes[0].get_title()
    plt.close(fig)


def test_pieces_of_the_summary():
    assert answer_value('{"age": 36, "name": "Ada"}', "valid") == "36"
    assert answer_value('{"name": "Ada"}', "valid") == "(no age)"
    assert answer_value('{"age": 36}', "broken") == NO_ANSWER
    assert answer_value('{"age": 36}', "valid", "text") == '{"age": 36}'
    z, log_z = z_from_runs([-math.inf, math.log(0.5)])  # a run whose particles all died counts as Ẑ = 0
    assert z.value == pytest.approx(0.25) and log_z.value == pytest.approx(math.log(0.25))
    z, log_z = z_from_runs([-800.0, -801.0])  # far below float's smallest: the log is still exact
    assert log_z.value == pytest.approx(-800 + math.log((1 + math.exp(-1)) / 2))
    same = shift(["a"] * 10, ["a"] * 10)
    assert same.value == 0 and same.p_value == 1
    far = shift(["a"] * 20, ["b"] * 20)
    assert far.value == 1 and far.p_value < 0.01 and far.null_mean < 0.5
    assert math.isnan(estimate_kl(hand_frame(finished=False), hand_frame(log_z=[0.0])).kl)  # no finished masked run


def hand_frame(finished=True, log_z=()):
    import pandas as pd

    if log_z:
        return pd.DataFrame({"log_z_hat": list(log_z)})
    return pd.DataFrame({"finished": [finished], "removed_mass": [[0.5]]})


def test_no_rows_says_which_sweep_to_run():
    import pandas as pd

    with pytest.raises(MissingRows, match=r"\+sweep=realdistortion"):
        summarize(pd.DataFrame({"kind": pd.Series(dtype=object)}))


# --- the real model (slow: needs the realmodel extra) -----------------------------------------------------------


@pytest.mark.slow
def test_one_tiny_smollm2_trial_end_to_end(compose, tmp_path):
    missing = real_model.missing_packages()
    if missing:
        pytest.skip(f"not installed: {', '.join(missing)}; {install_line('realmodel')}")
    args = ("model=smollm2", "task=age", "max_tokens=16", "key_order=schema", "n=2")
    trial(compose, tmp_path, "tabled", *args)
    trial(compose, tmp_path, "smc", *args, "strategy.particles=2")
    trial(compose, tmp_path / "again", "smc", *args, "strategy.particles=2")
    df = read_results(tmp_path, "t")
    assert (df["model"] == "smollm2").all() and df["prompt"].str.contains("Ada is 42.", regex=False).all()
    assert (df["category"] == "valid").all() and df["finished"].all()
    smc = df[df["strategy"] == "smc"]
    assert np.isfinite(smc["log_z_hat"]).all() and (smc["log_z_hat"] < 0).all()
    assert (smc["model_calls"] > df[df["strategy"] == "tabled"]["model_calls"].max()).all()
    again = read_results(tmp_path / "again", "t")
    assert list(again["text"]) == list(smc["text"]) and list(again["log_z_hat"]) == list(smc["log_z_hat"])
    (s,) = summarize(df)
    assert math.isfinite(s.estimate.kl) and s.estimate.finished.value == 1.0
    assert "| age |" in report(df)
