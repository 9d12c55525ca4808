"""Tiny cases whose exact conditional p* and Z are enumerated here, for the samplers' tests.

`two_token`: the lesson's worked example 2 (valid answers end in "y"; p*(By) = 0.909, masking gives 0.1).
`three_ages`: the toy model at noise 0 (its law is then plain softmax) asked for an age of 4, 17 or 20 while
it wants to write 42: masking takes the tempting "4" (q = 0.83), after which the model wants "2" and must end;
the model itself, given validity, prefers 17 and 20 (p* = 0.49 each). A real pattern on the lesson's
vocabulary, tokenised several ways ("17" or "1" "7"), with Z = 4.2e-6.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest

from structbench.bench.strategies import compile_constraint
from structbench.bench.tasks import Task
from structbench.lm.toy_model import ToyModel
from structbench.lm.vocab import EOS, Vocabulary, toy_vocabulary


class TableModel:
    """A model whose next-token probabilities are a table keyed by the text so far (the state)."""

    def __init__(self, vocab: Vocabulary, table: dict[str, dict[str, float]]):
        self.vocab, self.table = vocab, table

    def start(self) -> str:
        return ""

    def advance(self, text: str, token_id: int) -> str:
        return text + self.vocab.text_of(token_id)

    def logits(self, text: str, rng) -> np.ndarray:
        z = np.full(len(self.vocab), -np.inf)
        for token, p in self.table[text].items():
            z[self.vocab.index[token] if token != EOS else self.vocab.eos_id] = math.log(p)
        return z


@dataclass
class Case:
    model: object
    task: Task
    p_star: dict[str, float]  # text -> probability given valid (and ended within max_tokens)
    z: float
    q: dict[str, float]       # masked sampling's law (texts it ends with validly)
    max_tokens: int

    def constraint(self, strategy: str = "tabled"):
        return compile_constraint(self.task, self.model.vocab, strategy)


def enumerate_laws(model, constraint, max_tokens: int):
    """p* and Z by walking every allowed path (the model is deterministic), and masking's law q."""
    rng = np.random.default_rng(0)  # the toy model at noise 0 still draws (zeros)
    vocab = model.vocab
    joint, masked = {}, {}

    def walk(model_state, state, text, p, q, steps):
        if steps == max_tokens:
            return
        logits = model.logits(model_state, rng)
        probs = np.exp(logits - logits.max())
        probs /= probs.sum()
        allowed = constraint.mask(state)
        kept = probs[allowed].sum()
        for tid in np.flatnonzero(allowed):
            if probs[tid] == 0:
                continue
            if tid == vocab.eos_id:
                joint[text] = joint.get(text, 0.0) + p * probs[tid]
                masked[text] = masked.get(text, 0.0) + q * probs[tid] / kept
                continue
            walk(model.advance(model_state, tid), constraint.advance(state, tid), text + vocab.text_of(tid),
                 p * probs[tid], q * probs[tid] / kept, steps + 1)

    walk(model.start(), constraint.start(), "", 1.0, 1.0, 0)
    z = sum(joint.values())
    return {t: v / z for t, v in joint.items()}, z, masked


def _case(model, task, max_tokens):
    constraint = compile_constraint(task, model.vocab, "tabled")
    p_star, z, q = enumerate_laws(model, constraint, max_tokens)
    return Case(model, task, p_star, z, q, max_tokens)


@pytest.fixture(scope="session")
def two_token() -> Case:
    vocab = Vocabulary(["A", "B", "x", "y", EOS], name="two-token")
    done = {EOS: 1.0}
    table = {"": {"A": 0.9, "B": 0.1}, "A": {"x": 0.99, "y": 0.01}, "B": {"x": 0.1, "y": 0.9},
             "Ax": done, "Ay": done, "Bx": done, "By": done}
    return _case(TableModel(vocab, table), Task("two_token", "pattern", "[AB]y", "By"), 3)


@pytest.fixture(scope="session")
def three_ages() -> Case:
    task = Task("three_ages", "pattern", r'\{"age": (4|17|20)\}', '{"age": 42}')
    return _case(ToyModel(task.reference, toy_vocabulary(), skill=3.0, noise=0.0), task, 12)


def total_variation(counts: dict[str, int], law: dict[str, float]) -> float:
    n = sum(counts.values())
    keys = set(counts) | set(law)
    return 0.5 * sum(abs(counts.get(k, 0) / n - law.get(k, 0.0)) for k in keys)
