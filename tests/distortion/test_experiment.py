"""The distortion experiment: its rows are reproducible, its exact rows are the exact solver's numbers, SMC's
sampled TV falls to the noise floor as particles grow, and its figures draw from stored rows."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pytest
from helpers import settings_of
from structbench.experiments import distortion

from structbench.bench.rows import Kind, names_of
from structbench.bench.runner import run_trial
from structbench.bench.store import read_results
from structbench.bench.strategies import compile_constraint
from structbench.bench.tasks import age_task
from structbench.distortion.exact import ExactSolver, retry_law
from structbench.distortion.nexttoken import ToyLaw
from structbench.errors import SettingsError
from structbench.lm.toy_model import ToyModel
from structbench.lm.vocab import toy_vocabulary
from structbench.report.figures.exact_distortion import fig_distortion_cost, fig_distortion_vs_z


def trial(compose, tmp_path, strategy, *extra, experiment="t"):
    overrides = ["kind=distortion", f"strategy={strategy}", f"results_dir={tmp_path}", f"experiment={experiment}",
                 "progress=false", *extra]
    return run_trial(settings_of(compose(overrides)))


def stable(df):
    return df[[c for c in df.columns if c not in names_of(Kind.TIMING) + names_of(Kind.PROVENANCE)]]


def test_same_settings_same_rows_apart_from_timing(compose, tmp_path):
    extra = ("task=age", "model.noise=2.0", "n=40", "+particle_grid=[1,4]")
    trial(compose, tmp_path / "a", "smc", *extra)
    distortion._SOLVES.clear()  # the second run solves afresh: the cache is no part of the result
    trial(compose, tmp_path / "b", "smc", *extra)
    a, b = (read_results(tmp_path / d, "t") for d in ("a", "b"))
    assert len(a) == 2 and list(a["particles"]) == [1, 4]
    assert stable(a).equals(stable(b))


def test_retry_is_pstar_and_tabled_is_the_exact_computation(compose, tmp_path):
    trial(compose, tmp_path, "retry", "task=age", "max_attempts=1000")
    trial(compose, tmp_path, "tabled", "task=age")
    df = read_results(tmp_path, "t").set_index("strategy")
    vocab, task = toy_vocabulary(), age_task()
    exact = ExactSolver(ToyLaw(ToyModel(task.reference, vocab, noise=1.0)), compile_constraint(task, vocab, "tabled"),
                        40)
    s = exact.summary
    retry, tabled = df.loc["retry"], df.loc["tabled"]
    assert retry["tv"] == 0.0 and retry["kl_q_pstar"] == 0.0 and retry["kl_pstar_q"] == 0.0
    assert retry["valid_share"] == 1.0 and retry["values_from"] == "exact"
    assert retry["model_calls"] == pytest.approx(s.p_expected_tokens / s.z, rel=1e-12)  # 1/Z runs
    assert retry_law(s.z, 1000)[0] == 1.0
    lo, hi = exact.tv_bounds(1e-6, 50_000)
    assert hi - lo < 1e-3 and tabled["tv"] == pytest.approx((lo + hi) / 2, abs=1e-15)
    assert tabled["tv_error"] == pytest.approx((hi - lo) / 2, abs=1e-15) and tabled["tv"] > 0.01
    for column, value in (("kl_q_pstar", s.kl_q_pstar), ("kl_pstar_q", s.kl_pstar_q), ("exact_z", s.z),
                          ("valid_share", s.q_valid_mass), ("dead_end_mass", s.q_dead_end_mass)):
        assert tabled[column] == pytest.approx(value, rel=1e-12), column


def test_the_two_token_example_gives_the_lessons_numbers(compose, tmp_path):
    trial(compose, tmp_path, "tabled", "+example=two_token")
    row = read_results(tmp_path, "t").iloc[0]
    assert row["task"] == "two_token" and row["vocab"] == "two_token" and math.isnan(row["noise"])
    assert row["exact_z"] == pytest.approx(0.099, abs=1e-15)
    assert row["tv"] == pytest.approx(0.9 - 0.9 * 0.01 / 0.099, abs=1e-12)  # |q(Ay) - p*(Ay)| = 0.809
    assert row["tv_error"] == 0.0
    # a renormalising mask with no dead ends: the kept masses give KL(q‖p*) exactly
    assert row["kl_identity"] == pytest.approx(row["kl_q_pstar"], rel=1e-12)


def test_smc_falls_to_the_noise_floor_as_particles_grow(compose, tmp_path):
    trial(compose, tmp_path, "smc", "+example=two_token", "n=300", "+particle_grid=[1,4,16,64]")
    df = read_results(tmp_path, "t").set_index("particles")
    floor, sd = df["noise_floor"].iloc[0], df["noise_floor_sd"].iloc[0]
    assert df.loc[1, "tv"] > 0.7  # one particle is masked decoding: 0.809 away
    # Few particles rarely hold a B (0.9^16 = 0.19 that none of 16 does), so the self-normalised weights stay
    # biased toward masking's answer; at 64 the bias is below what 300 runs resolve.
    assert df.loc[1, "tv"] > df.loc[4, "tv"] > df.loc[16, "tv"] > df.loc[64, "tv"]
    assert df.loc[64, "tv"] < floor + 3 * sd
    assert abs(df.loc[64, "z_bias"]) < 4 * df.loc[64, "z_sd"] / math.sqrt(300)  # Ẑ unbiased
    assert (df["model_calls"].diff().dropna() > 0).all()  # more particles, more model calls


def test_bad_experiment_keys_are_refused(compose, tmp_path):
    with pytest.raises(SettingsError, match="particle_grid"):
        trial(compose, tmp_path, "smc", "+particle_grid=[0]")
    with pytest.raises(SettingsError, match="example"):
        trial(compose, tmp_path, "tabled", "+example=three_token")
    with pytest.raises(SettingsError, match="kind=distortion measures"):
        trial(compose, tmp_path, "none")


def test_the_figures_draw_from_stored_rows(compose, tmp_path):
    for strategy in ("tabled", "retry", "smc", "asap"):
        trial(compose, tmp_path, strategy, "+example=two_token", "n=60", "+particle_grid=[1,4]")
        trial(compose, tmp_path, strategy, "task=age", "model.noise=2.0", "n=60", "+particle_grid=[1,4]")
    df = read_results(tmp_path, "t")
    for draw in (fig_distortion_cost, fig_distortion_vs_z):
        fig = draw(df)
        drawn = [ax for ax in fig.axes if ax.axison]
        assert drawn and all(ax.lines for ax in drawn)
        titles = [ax.get_title() for ax in drawn]
        plt.close(fig)
        if draw is fig_distortion_cost:
            assert titles[0].startswith("two-token example") and len(drawn) == 2
    points = np.array(fig_distortion_vs_z(df).axes[0].lines[0].get_xydata())
    assert len(points) == 2 and points[:, 0].min() == pytest.approx(0.099)
    plt.close("all")
