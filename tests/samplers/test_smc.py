"""smc: one particle is masked sampling; Ẑ is unbiased; TV to p* falls as particles grow; answers are valid."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from structbench.bench.strategies import compile_constraint
from structbench.bench.tasks import Task, age_task, person_task
from structbench.errors import SettingsError
from structbench.lm.sampling import sample_answer
from structbench.lm.toy_model import ToyModel
from structbench.lm.vocab import toy_vocabulary
from structbench.samplers import smc
from structbench.samplers.particles import effective_sample_size, resample_indices

VOCAB = toy_vocabulary()


def _tv(counts, law):
    n = sum(counts.values())
    return 0.5 * sum(abs(counts.get(k, 0) / n - law.get(k, 0.0)) for k in set(counts) | set(law))


@pytest.mark.parametrize("task", [age_task(), person_task()], ids=["age", "person"])
def test_one_particle_draws_what_masked_sampling_draws(task):
    model, constraint = ToyModel(task.reference, VOCAB), compile_constraint(task, VOCAB, "smc")
    a, b = np.random.default_rng(3), np.random.default_rng(3)
    for _ in range(15):
        masked, one = sample_answer(model, a, constraint), smc(model, b, constraint, particles=1)
        assert (one.text, one.token_ids, one.finished) == (masked.text, masked.token_ids, masked.finished)
        assert one.removed_mass == pytest.approx(masked.removed_mass, abs=1e-12)
        assert one.resamples == 0 and one.particles == 1


@pytest.mark.parametrize("resampling,threshold", [("systematic", 0.5), ("multinomial", 1.0), ("systematic", 0.0)])
def test_z_hat_is_unbiased_on_the_two_token_example(two_token, resampling, threshold):
    rng, constraint = np.random.default_rng(11), two_token.constraint("smc")
    z = np.array([math.exp(smc(two_token.model, rng, constraint, particles=4, ess_threshold=threshold,
                               resampling=resampling, max_tokens=two_token.max_tokens).log_z) for _ in range(1500)])
    se = z.std(ddof=1) / math.sqrt(len(z))
    assert abs(z.mean() - two_token.z) < 4 * se, (z.mean(), two_token.z, se)
    assert se < 0.05 * two_token.z  # the check has teeth: the CI is within 5% of Z


def test_z_hat_is_unbiased_on_a_toy_pattern(three_ages):
    rng, constraint = np.random.default_rng(5), three_ages.constraint("smc")
    z = np.array([math.exp(smc(three_ages.model, rng, constraint, particles=4, max_tokens=three_ages.max_tokens).log_z)
                  for _ in range(300)])
    se = z.std(ddof=1) / math.sqrt(len(z))
    assert abs(z.mean() - three_ages.z) < 4 * se and se < 0.2 * three_ages.z, (z.mean(), three_ages.z, se)


def test_total_variation_to_p_star_falls_as_particles_grow(three_ages):
    constraint = three_ages.constraint("smc")
    tv = {}
    for n in (1, 4, 16):
        rng = np.random.default_rng(n)
        counts = Counter(smc(three_ages.model, rng, constraint, particles=n, max_tokens=three_ages.max_tokens).text
                         for _ in range(200))
        tv[n] = _tv(counts, three_ages.p_star)
    # N = 1 is masking: its TV to p* is masking's, 0.81; 200 draws put the noise floor near 0.05 (N = 64 reaches
    # it: 0.03 over 100 draws, too slow for a unit test).
    masking = _tv({k: round(v * 10**6) for k, v in three_ages.q.items()}, three_ages.p_star)
    assert abs(tv[1] - masking) < 0.1, tv
    assert tv[1] > tv[4] > tv[16] and tv[16] < 0.25, tv


def test_every_answer_is_valid_and_counted():
    for task in (age_task(), person_task()):
        model, constraint, referee = ToyModel(task.reference, VOCAB), compile_constraint(task, VOCAB, "smc"), task.referee()
        rng = np.random.default_rng(2)
        for _ in range(5):
            answer = smc(model, rng, constraint, particles=8)
            assert answer.finished and referee(answer.text) and math.isfinite(answer.log_z)
            assert answer.model_calls >= answer.n_tokens + 1 and answer.tokens_drawn == answer.model_calls
            assert answer.constraint_checks == answer.model_calls * len(VOCAB)  # one full mask per particle step
            assert len(answer.ess) >= len(answer.removed_mass) and 0 < answer.final_ess <= 8 and answer.wall_ms > 0


def test_cost_counts_every_particle_step(two_token):
    answer = smc(two_token.model, np.random.default_rng(0), two_token.constraint("smc"), particles=4,
                 ess_threshold=0.0, max_tokens=3)
    # Every particle writes A or B, then y, then ends: 3 steps each, one model call, one mask, one token per step.
    assert (answer.model_calls, answer.tokens_drawn, answer.constraint_checks) == (12, 12, 12 * 5)
    assert len(answer.ess) == 3 and answer.resamples == 0 and answer.text in ("Ay", "By")


def test_no_valid_answer_gives_z_zero_and_an_unfinished_answer(two_token):
    constraint = compile_constraint(Task("dead", "pattern", "Az", "Az"), two_token.model.vocab, "smc")
    answer = smc(two_token.model, np.random.default_rng(0), constraint, particles=3, max_tokens=3)
    assert answer.log_z == -math.inf and not answer.finished and answer.final_ess == 0.0
    cut = smc(two_token.model, np.random.default_rng(0), two_token.constraint("smc"), particles=3, max_tokens=2)
    assert cut.log_z == -math.inf and not cut.finished  # "By" needs a third step to end


def test_resampling_and_ess():
    assert effective_sample_size(np.zeros(5)) == pytest.approx(5)
    assert effective_sample_size(np.array([0.0, -np.inf, -np.inf])) == pytest.approx(1)
    assert effective_sample_size(np.full(3, -np.inf)) == 0
    rng = np.random.default_rng(0)
    w = np.array([0.1, 0.6, 0.3])
    for scheme in ("systematic", "multinomial"):
        counts = np.bincount(np.concatenate([resample_indices(w, rng, scheme) for _ in range(4000)]), minlength=3)
        assert counts / counts.sum() == pytest.approx(w, abs=0.02)
    # Systematic: every ancestor gets floor(N w) or ceil(N w) children.
    for _ in range(20):
        children = np.bincount(resample_indices(w, rng, "systematic"), minlength=3)
        assert (np.floor(3 * w) <= children).all() and (children <= np.ceil(3 * w)).all()


@pytest.mark.parametrize("kwargs,match", [({"particles": 0}, "particles"), ({"particles": 2.5}, "particles"),
                                          ({"ess_threshold": 1.5}, "ess_threshold"),
                                          ({"resampling": "stratified"}, "resampling"),
                                          ({"max_tokens": 0}, "max_tokens")])
def test_bad_settings_are_named(two_token, kwargs, match):
    with pytest.raises(ValueError, match=match):
        smc(two_token.model, np.random.default_rng(0), two_token.constraint("smc"), **kwargs)


def test_a_constraint_for_another_vocabulary_is_refused(two_token):
    with pytest.raises(SettingsError, match="compiled for"):
        smc(ToyModel("{}", VOCAB), np.random.default_rng(0), two_token.constraint("smc"))
