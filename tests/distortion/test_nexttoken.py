"""The exact next-token law: softmax at noise 0, self-convergent quadrature, and simulation under noise."""

import numpy as np
import pytest

from structbench.distortion import nexttoken
from structbench.distortion.nexttoken import NoisyArgmax, TableLaw, ToyLaw
from structbench.errors import QuadratureError
from structbench.lm.sampling import masked_softmax
from structbench.lm.toy_model import ToyModel
from structbench.lm.vocab import Vocabulary, toy_vocabulary

PERSON = '{"name": "Ada", "age": 36, "pets": ["cat"]}'


def test_base_logits_are_the_logits_without_their_noise():
    model = ToyModel(PERSON, noise=1.3)
    for text in ("", "Sure", '{"na', PERSON, PERSON + "xyz"):
        drawn = model.logits(text, np.random.default_rng(5))
        noise = np.random.default_rng(5).normal(0.0, 1.3, len(model.vocab))
        assert np.array_equal(drawn, noise + model.base_logits(text))


@pytest.mark.parametrize("text", ["", "Sure", '{"name": "A', PERSON])
def test_at_noise_zero_the_law_is_the_masked_softmax(text):
    model = ToyModel(PERSON, noise=0.0)
    law, rng = ToyLaw(model), np.random.default_rng(0)
    state = law.start()
    for token in model.vocab.encode_greedy(text) if text else []:
        state = law.advance(state, token)
    base = model.base_logits(text)
    for _ in range(5):
        allowed = rng.random(len(model.vocab)) < 0.4
        allowed[int(np.argmax(base))] = True
        assert np.abs(law.probs(state, allowed) - masked_softmax(base, allowed)).max() < 1e-12


@pytest.mark.parametrize("sigma", [0.3, 1.0, 4.0])
def test_quadrature_agrees_with_itself_at_half_the_steps(sigma, monkeypatch):
    values, counts = [0.0, 6.0, 8.0, 8.5, 9.0], [70, 1, 2, 1, 1]
    coarse = NoisyArgmax(sigma).group_probs(values, counts)
    monkeypatch.setattr(nexttoken, "X_STEP", nexttoken.X_STEP / 2)
    monkeypatch.setattr(nexttoken, "NOISE_STEP", nexttoken.NOISE_STEP / 2)
    fine = NoisyArgmax(sigma).group_probs(values, counts)
    assert np.abs(coarse - fine).max() < 1e-11


def test_masked_law_under_noise_matches_simulation_and_is_not_a_renormalisation():
    model = ToyModel(PERSON, noise=1.5)
    law = ToyLaw(model)
    state = law.advance(law.start(), model.vocab.index["{"])
    allowed = np.zeros(len(model.vocab), dtype=bool)
    allowed[[model.vocab.index[t] for t in ('"', '"name"', "}", " ", "a")]] = True
    exact = law.probs(state, allowed)
    rng, n = np.random.default_rng(1), 40_000
    base = model.base_logits("{")
    draws = [int(rng.choice(len(base), p=masked_softmax(base + rng.normal(0, 1.5, len(base)), allowed)))
             for _ in range(n)]
    counts = np.bincount(draws, minlength=len(base))
    se = np.sqrt(exact * (1 - exact) / n) + 1e-12
    assert (np.abs(counts / n - exact) < 5 * se).all()
    # Renormalising the unmasked law gives another answer: masking changes the set the argmax runs over.
    everything = law.probs(state, np.ones(len(base), dtype=bool))
    renormalised = np.where(allowed, everything, 0) / everything[allowed].sum()
    assert np.abs(renormalised - exact).max() > 1e-4  # far above the quadrature's 1e-12


def test_a_failed_quadrature_is_an_error():
    argmax = NoisyArgmax(1.0)
    argmax.below = 0.0  # cut the integral's range: the law no longer sums to 1
    with pytest.raises(QuadratureError, match="sums to"):
        argmax.group_probs([0.0, 3.0], [5, 1])


def test_bad_noise_and_tables_are_refused():
    with pytest.raises(ValueError, match="noise"):
        NoisyArgmax(-1.0)
    vocab = Vocabulary(["A", "B", "<eos>"])
    with pytest.raises(ValueError, match="sums to"):
        TableLaw(vocab, {(): {"A": 0.5}})
    with pytest.raises(ValueError, match="not in the vocabulary"):
        TableLaw(vocab, {(): {"C": 1.0}})


def test_toy_law_states_follow_the_anchor_and_offset():
    model = ToyModel(PERSON, vocab=toy_vocabulary())
    law = ToyLaw(model)
    ids = model.vocab.index
    sure = law.advance(law.start(), ids["Sure"])
    assert sure == ToyLaw.NO_ANCHOR
    opened = law.advance(sure, ids["{"])
    assert law.advance(opened, ids['"name"']) == 1 + 7  # "{" then '"name"': 7 characters since the anchor
    assert np.array_equal(law.base_logits(opened), model.base_logits("Sure{"))
