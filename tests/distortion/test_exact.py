"""The exact p*, Z and q: against the lesson's two-token numbers, Monte Carlo, brute force and each other."""

import math

import numpy as np
import pytest

from structbench.bench.formulas import TWO_STEP_FIRST, TWO_STEP_SECOND, tokenizations
from structbench.bench.strategies import compile_constraint, generate
from structbench.bench.tasks import Task, age_task, nested_task, person_task
from structbench.distortion.exact import ExactSolver, retry_law
from structbench.distortion.metrics import Bucket, empirical, tv_to_exact
from structbench.distortion.nexttoken import TableLaw, ToyLaw
from structbench.errors import TokenRejected
from structbench.lm.toy_model import ToyModel
from structbench.lm.vocab import Vocabulary, toy_vocabulary

VOCAB = toy_vocabulary()


def solver(task, noise, max_tokens, strategy="tabled", **model):
    law = ToyLaw(ToyModel(task.reference, VOCAB, noise=noise, **model))
    return ExactSolver(law, compile_constraint(task, VOCAB, strategy), max_tokens)


def two_token():
    """The lesson's two-token model: A or B, then x or y, then the end; valid answers end in y."""
    vocab = Vocabulary(["A", "B", "x", "y", "<eos>"], name="two_token")
    tables = {(): TWO_STEP_FIRST, **{(a,): second for a, second in TWO_STEP_SECOND.items()}}
    task = Task("two_token", "pattern", "[AB]y", "By")
    return ExactSolver(TableLaw(vocab, tables), compile_constraint(task, vocab, "tabled"), 3)


def test_the_lessons_two_token_numbers_come_out_of_the_exact_machinery():
    exact = two_token()
    ay, by = exact.score("Ay"), exact.score("By")
    assert exact.summary.z == pytest.approx(0.099, abs=1e-15)
    assert round(ay.pstar, 3) == 0.091 and round(by.pstar, 3) == 0.909
    assert ay.q == pytest.approx(0.9, abs=1e-15) and by.q == pytest.approx(0.1, abs=1e-15)
    assert exact.score("Ax").pstar == 0.0 and not exact.score("Ax").valid
    # KL between the two laws, and the identity for a renormalising mask: KL(q‖p*) = log Z - E_q[Σ log Z_t].
    kl_q_pstar = 0.9 * math.log(0.9 / ay.pstar) + 0.1 * math.log(0.1 / by.pstar)
    assert exact.summary.kl_q_pstar == pytest.approx(kl_q_pstar, rel=1e-12)
    assert exact.summary.kl_q_pstar == pytest.approx(math.log(0.099) - exact.summary.q_expected_log_kept, rel=1e-12)
    assert exact.summary.kl_pstar_q == pytest.approx(ay.pstar * math.log(ay.pstar / 0.9)
                                                     + by.pstar * math.log(by.pstar / 0.1), rel=1e-12)


def test_masses_add_up():
    for exact in (solver(age_task(), 1.0, 40), solver(person_task(), 0.5, 40)):
        s = exact.summary
        assert s.z + s.invalid_mass + s.truncated_mass == pytest.approx(1.0, abs=1e-12)
        assert s.q_valid_mass + s.q_dead_end_mass + s.q_truncated_mass == pytest.approx(1.0, abs=1e-9 + s.pruned_mass)
        assert s.pruned_mass < 1e-10 and s.kl_pstar_q > 0 and s.kl_q_pstar > 0


def test_naive_and_tabled_give_the_identical_q():
    """Walk both constraints side by side over every token sequence within the budget: their masks agree
    at every reachable pair of states, so q (the model's law over the mask) is the same law: KL 0."""
    task = person_task()
    naive, tabled = (compile_constraint(task, VOCAB, s) for s in ("naive", "tabled"))
    frontier, seen = {(naive.start(), tabled.start())}, set()
    while frontier:
        pair = frontier.pop()
        seen.add(pair)
        mask = naive.mask(pair[0])
        assert np.array_equal(mask, tabled.mask(pair[1]))
        for token in np.flatnonzero(mask).tolist():
            if token != VOCAB.eos_id:
                nxt = (naive.advance(pair[0], token), tabled.advance(pair[1], token))
                if nxt not in seen:
                    frontier.add(nxt)
    assert len(seen) > 100
    a, b = solver(task, 1.0, 40, "naive").summary, solver(task, 1.0, 40, "tabled").summary
    for field in ("z", "q_valid_mass", "q_truncated_mass", "kl_pstar_q", "kl_q_pstar"):
        assert getattr(a, field) == pytest.approx(getattr(b, field), rel=1e-12)


def accepted(constraint, answer) -> bool:
    state = constraint.start()
    try:
        for token in answer.token_ids:
            state = constraint.advance(state, token)
    except TokenRejected:
        return False
    return answer.finished and constraint.can_end(state)


@pytest.mark.parametrize("task,noise", [(age_task(), 1.0), (person_task(), 1.0), (nested_task(1), 0.5)])
def test_z_matches_monte_carlo_validity(task, noise):
    exact = solver(task, noise, 40)
    model = ToyModel(task.reference, VOCAB, noise=noise)
    constraint = compile_constraint(task, VOCAB, "tabled")
    rng, n = np.random.default_rng(11), 1500
    hits = sum(accepted(constraint, generate(model, rng, "none", max_tokens=40)) for _ in range(n))
    z = exact.summary.z
    assert abs(hits / n - z) < 4 * math.sqrt(z * (1 - z) / n)


def test_masked_sampling_matches_q():
    """Answers drawn by masked sampling (tabled) at noise 1: the reference's share and the unfinished share
    match the exact q (the argmax over the allowed set, not the renormalised law)."""
    task = person_task()
    exact = solver(task, 1.0, 40)
    model, constraint = ToyModel(task.reference, VOCAB, noise=1.0), compile_constraint(task, VOCAB, "tabled")
    rng, n = np.random.default_rng(3), 1500
    answers = [generate(model, rng, "tabled", constraint, max_tokens=40) for _ in range(n)]
    for share, expected in ((sum(a.finished and a.text == task.reference for a in answers) / n,
                             exact.score(task.reference).q),
                            (sum(not a.finished for a in answers) / n, exact.summary.q_truncated_mass)):
        assert abs(share - expected) < 4 * math.sqrt(expected * (1 - expected) / n) + 1e-3


def test_scoring_sums_every_spelling():
    """A text's p is the sum over its tokenizations of the product of the law's step probabilities."""
    task = age_task()
    exact = solver(task, 0.7, 40)
    law = exact.graph.law
    everything = np.ones(len(VOCAB), dtype=bool)
    for text in ('{"age": 42}', '{"age": 4}', '{"age": 420}'):
        total = 0.0
        for spelling in tokenizations(text, VOCAB.tokens):
            state, p = law.start(), 1.0
            for token in spelling + [VOCAB.eos]:
                p *= law.probs(state, everything)[VOCAB.index[token]]
                state = law.advance(state, VOCAB.index[token])
            total += p
        assert len(tokenizations(text, VOCAB.tokens)) > 1
        assert exact.score(text).p == pytest.approx(total, rel=1e-12)
        assert exact.score(text).pstar == pytest.approx(total / exact.summary.z, rel=1e-12)


def test_exact_draws_follow_pstar_and_the_noise_floor_shrinks():
    exact = solver(age_task(), 1.0, 40)
    rng = np.random.default_rng(0)
    draws = exact.sample(rng, 3000)
    share = draws.count('{"age": 42}') / len(draws)
    pstar = exact.score('{"age": 42}').pstar
    assert abs(share - pstar) < 4 * math.sqrt(pstar * (1 - pstar) / len(draws))
    assert all(isinstance(y, str) and exact.score(y).valid for y in draws)
    small, _ = exact.noise_floor(rng, 10, 20)
    large, _ = exact.noise_floor(rng, 300, 20)
    assert 0 < large < small < 1


def test_importance_tv_of_masked_decoding_agrees_with_its_samples():
    exact = solver(person_task(), 1.0, 40)
    tv, se = exact.tv_lcd(np.random.default_rng(0), 400)
    assert 0 < tv < 1 and se < 0.05
    # The empirical TV of many q draws sits near it (above: the empirical one carries sampling noise).
    sample = empirical(exact.sample(np.random.default_rng(1), 2000, "q"))
    assert tv - 4 * se < tv_to_exact(sample, exact.exact_pstar)


def test_retry_law():
    assert retry_law(0.25) == (1.0, 4.0)
    success, runs = retry_law(0.5, 3)
    assert success == pytest.approx(0.875) and runs == pytest.approx(1.75)
    with pytest.raises(ValueError, match="max_attempts"):
        retry_law(0.5, 0)


@pytest.mark.parametrize("depth,max_tokens", [(1, 32)])  # depth 2 needs ~80 tokens: ~40 s, see the experiment
def test_nested_tasks(depth, max_tokens):
    task = nested_task(depth)
    law = ToyLaw(ToyModel(task.reference, VOCAB, noise=0.3))
    exact = ExactSolver(law, compile_constraint(task, VOCAB, "tabled"), max_tokens, prune=1e-8)
    s = exact.summary
    assert abs(s.z + s.invalid_mass + s.truncated_mass - 1.0) <= s.pruned_mass + 1e-12  # pruning: the error bound
    assert 0 < s.z < 1 and s.pruned_mass < 1e-5
    assert exact.score(task.reference).pstar > 0.5  # the model's own answer is the conditional's favourite


def test_buckets_are_outcomes_with_no_pstar():
    exact = two_token()
    assert exact.exact_pstar(Bucket.UNFINISHED) == 0.0
    with pytest.raises(ValueError, match="text"):
        exact.score(3)
