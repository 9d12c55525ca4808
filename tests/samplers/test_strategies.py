"""smc, awrs and asap as strategies: chosen by name, their options read from the settings, run by the validity
experiment, refused clearly where they cannot run."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import settings_of

from structbench.bench.runner import run_trial
from structbench.bench.settings import Settings
from structbench.bench.store import read_results
from structbench.bench.strategies import STRATEGIES, Strategy, compile_constraint, generate
from structbench.bench.tasks import age_task
from structbench.errors import SettingsError
from structbench.lm.toy_model import ToyModel
from structbench.lm.vocab import toy_vocabulary
from structbench.masking import NaiveConstraint, TabledConstraint
from structbench.samplers import SAMPLERS, SampledAnswer

VOCAB = toy_vocabulary()


def test_the_samplers_are_built_in_strategies_with_their_constraints():
    assert set(SAMPLERS) <= set(STRATEGIES)
    task = age_task()
    assert isinstance(compile_constraint(task, VOCAB, "smc"), TabledConstraint)
    assert isinstance(compile_constraint(task, VOCAB, "asap"), TabledConstraint)
    assert isinstance(compile_constraint(task, VOCAB, "awrs"), NaiveConstraint)  # checks tokens, builds no mask


def test_generate_dispatches_with_the_samplers_settings():
    task = age_task()
    model = ToyModel(task.reference, VOCAB)
    for strategy in SAMPLERS:
        answer = generate(model, np.random.default_rng(0), strategy, compile_constraint(task, VOCAB, strategy),
                          particles=3, ess_threshold=1.0, resampling="multinomial")
        assert isinstance(answer, SampledAnswer) and answer.sampler == strategy and task.referee()(answer.text)
        assert answer.particles == (1 if strategy == "asap" else 3)
    with pytest.raises(SettingsError, match="temperature 1 only"):
        generate(model, np.random.default_rng(0), "smc", compile_constraint(task, VOCAB, "smc"), temperature=0.0)
    with pytest.raises(SettingsError, match="needs its constraint"):
        generate(model, np.random.default_rng(0), "awrs")


def test_options_are_read_and_checked():
    assert Strategy.from_settings({"name": "smc", "particles": 4}).sampling == {"particles": 4}
    assert Strategy.from_settings({"name": "tabled"}).sampling == {}
    with pytest.raises(SettingsError, match="strategy.depth: strategy 'awrs' takes particles"):
        Strategy.from_settings({"name": "awrs", "depth": 3})
    with pytest.raises(SettingsError, match="'asap' takes no options"):
        Strategy.from_settings({"name": "asap", "particles": 4})
    with pytest.raises(SettingsError, match="particles"):
        Strategy.from_settings({"name": "smc", "particles": 0})


def test_validity_runs_a_sampler_with_its_options(compose, tmp_path):
    overrides = ["strategy=smc", "strategy.particles=4", "n=4", "experiment=t", f"results_dir={tmp_path}",
                 "progress=false", "max_tokens=20"]
    settings = Settings.from_dict(settings_of(compose(overrides)))
    assert settings.strategy.sampling == {"particles": 4, "ess_threshold": 0.5, "resampling": "systematic"}
    run_trial(settings)
    df = read_results(tmp_path, "t")
    assert len(df) == 4 and (df["strategy"] == "smc").all() and (df["category"] == "valid").all()
    other = Settings.from_dict(settings_of(compose([*overrides[:1], "strategy.particles=8", *overrides[2:]])))
    assert other.trial_id != settings.trial_id  # the particles are part of what a trial computes


def test_the_speed_experiment_refuses_a_sampler(compose, tmp_path):
    settings = Settings.from_dict(settings_of(compose(["kind=speed", "strategy=awrs", "n=1", f"results_dir={tmp_path}",
                                                       "progress=false"])))
    with pytest.raises(ValueError, match="'awrs' is a sampler"):
        run_trial(settings)
