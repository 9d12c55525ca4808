"""The lesson's two-token example as a model the exact solver and the samplers both run on.

The model writes A (0.9) or B (0.1), then x or y (after A: 0.99 / 0.01, after B: 0.1 / 0.9), then ends; a
valid answer ends in y (the pattern [AB]y). Given validity the model prefers By (p* = 0.909), while masking
token by token writes Ay nine times in ten (q = 0.9): the lesson's 0.091 -> 0.9. The tables are the lesson's
own (structbench.bench.formulas.TWO_STEP_FIRST / TWO_STEP_SECOND), so the numbers cannot drift apart.
"""

from __future__ import annotations

import numpy as np

from structbench.bench.formulas import TWO_STEP_FIRST, TWO_STEP_SECOND
from structbench.bench.tasks import Task
from structbench.distortion.nexttoken import TableLaw
from structbench.lm.vocab import EOS, Vocabulary

MAX_TOKENS = 3  # two tokens and the end token


class TableModel:
    """A :class:`TableLaw` behind the samplers' model protocol (vocab, start, logits, advance): its logits are
    the log of the table's probabilities (-inf where a token has none), the same every call."""

    def __init__(self, law: TableLaw):
        self.law, self.vocab = law, law.vocab
        self.noise = self.skill = self.chatter = None  # not the toy model: its settings do not apply
        self._everything = np.ones(len(law.vocab), dtype=bool)

    def start(self) -> tuple:
        return self.law.start()

    def advance(self, state: tuple, token_id: int) -> tuple:
        return self.law.advance(state, token_id)

    def logits(self, state: tuple, rng: np.random.Generator) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return np.log(self.law.probs(state, self._everything))


def two_token_example() -> tuple[Task, TableLaw, TableModel]:
    """The task (pattern [AB]y), the exact law and the same model for the samplers."""
    vocab = Vocabulary(["A", "B", "x", "y", EOS], name="two_token")
    tables = {(): dict(TWO_STEP_FIRST), **{(a,): dict(second) for a, second in TWO_STEP_SECOND.items()}}
    law = TableLaw(vocab, tables)
    return Task("two_token", "pattern", "[AB]y", "By"), law, TableModel(law)
