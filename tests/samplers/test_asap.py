"""asap: its first answer follows masking, and as answers accrue its law and its estimate of Z reach p* and Z."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from structbench.bench.strategies import compile_constraint, generate
from structbench.bench.tasks import age_task, person_task
from structbench.errors import SettingsError
from structbench.lm.toy_model import ToyModel
from structbench.lm.vocab import toy_vocabulary
from structbench.samplers import AsapGuide, asap, guide_for

VOCAB = toy_vocabulary()


def _tv(texts, law):
    counts, n = Counter(texts), len(texts)
    return 0.5 * sum(abs(counts.get(k, 0) / n - law.get(k, 0.0)) for k in set(counts) | set(law))


def test_the_first_answer_is_maskings_then_the_guide_learns_p_star(two_token):
    constraint = two_token.constraint("asap")
    rng = np.random.default_rng(0)
    firsts = [asap(two_token.model, rng, constraint, AsapGuide(two_token.model, constraint, 3), 3).text
              for _ in range(400)]
    assert _tv(firsts, two_token.q) < 0.05  # a fresh guide is the mask: Ay 90% of the time
    guide = AsapGuide(two_token.model, constraint, 3)
    texts = [asap(two_token.model, rng, constraint, guide, 3).text for _ in range(800)]
    # Once both branches were tried the EFGs are exact, so Z is exact and the answers are p*'s.
    assert math.exp(guide.log_z) == pytest.approx(two_token.z, rel=1e-9)
    assert _tv(texts[100:], two_token.p_star) < 0.04
    assert guide.runs == 800 and guide.nodes == 5  # the root, A, B, Ay, By: "x" was never allowed


def test_asap_converges_to_p_star_on_a_toy_pattern(three_ages):
    constraint = three_ages.constraint("asap")
    guide, rng = AsapGuide(three_ages.model, constraint, three_ages.max_tokens), np.random.default_rng(1)
    texts = [asap(three_ages.model, rng, constraint, guide, three_ages.max_tokens).text for _ in range(1000)]
    assert _tv(texts[:30], three_ages.p_star) > _tv(texts[400:], three_ages.p_star)
    assert _tv(texts[400:], three_ages.p_star) < 0.06  # masking's TV is 0.81; 600 draws' noise floor about 0.03
    # The estimate of Z comes down from the mask's over-estimate to within 1% of the exact Z.
    assert math.exp(guide.log_z) == pytest.approx(three_ages.z, rel=0.01)


def test_the_guide_persists_with_the_constraint_through_generate():
    task = age_task()
    model = ToyModel(task.reference, VOCAB)
    constraint, rng = compile_constraint(task, VOCAB, "asap"), np.random.default_rng(0)
    for _ in range(3):
        generate(model, rng, "asap", constraint, max_tokens=20)
    assert guide_for(constraint, model, 20).runs == 3
    assert guide_for(compile_constraint(task, VOCAB, "asap"), model, 20).runs == 0  # a new trial starts afresh
    assert guide_for(constraint, ToyModel(task.reference, VOCAB), 20).runs == 0    # so does another model
    with pytest.raises(SettingsError, match="another model"):
        guide_for(constraint, model, 20).sample(ToyModel(task.reference, VOCAB), rng)


def test_noisy_toy_answers_are_valid_and_counted():
    for task in (age_task(), person_task()):
        model, constraint, referee = ToyModel(task.reference, VOCAB), compile_constraint(task, VOCAB, "asap"), task.referee()
        rng, finished = np.random.default_rng(2), 0
        for _ in range(20):
            answer = asap(model, rng, constraint)
            finished += answer.finished
            # Early answers may still run out of tokens (ASAp starts as masking); every finished one is valid.
            assert referee(answer.text) if answer.finished else answer.model_calls == 40
            assert answer.model_calls == answer.n_tokens + 1 == answer.tokens_drawn + (not answer.finished)
            assert math.isfinite(answer.log_z)
            assert answer.constraint_checks == answer.model_calls * len(VOCAB)
            assert answer.ess == [] and answer.particles == 1
        assert finished >= 15
