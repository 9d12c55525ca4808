"""The samplers on SmolLM2: its states are used once, so particles copied at resampling must get their own
key-value caches; every resampling here copies (ess_threshold=1)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from structbench.bench.prompts import Prompts
from structbench.bench.strategies import compile_constraint
from structbench.bench.tasks import age_task
from structbench.extras import install_line
from structbench.lm import real_model
from structbench.samplers import asap, awrs, smc


@pytest.fixture(scope="module")
def smollm2():
    missing = real_model.missing_packages()
    if missing:
        pytest.skip(f"not installed: {', '.join(missing)}; {install_line('realmodel')}")
    return real_model.SmolLM2Model(Prompts(age_task(), 0))


@pytest.mark.slow
def test_smc_and_awrs_copy_the_real_models_states(smollm2):
    task = age_task()
    for sampler in (smc, awrs):
        constraint = compile_constraint(task, smollm2.vocab, sampler.__name__)
        answer = sampler(smollm2, np.random.default_rng(0), constraint, particles=3, ess_threshold=1.0, max_tokens=12)
        assert answer.finished and task.referee()(answer.text) and math.isfinite(answer.log_z)
        assert answer.resamples >= 1 and answer.log_z < 0


@pytest.mark.slow
def test_asap_with_the_real_model(smollm2):
    task = age_task()
    constraint = compile_constraint(task, smollm2.vocab, "asap")
    answers = [asap(smollm2.for_sample(0), np.random.default_rng(i), constraint, max_tokens=12) for i in range(3)]
    assert all(a.finished and task.referee()(a.text) for a in answers)
    assert answers[-1].log_z <= answers[0].log_z  # one guide for the prompt: its estimate only tightens here
