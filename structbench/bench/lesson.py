"""The lesson's experiments, reproduced with the package: seed 0 gives the lesson's numbers."""

from __future__ import annotations

from collections import Counter

import numpy as np

from structbench.bench.referees import CATEGORIES, categorize
from structbench.bench.strategies import compile_constraint, generate
from structbench.bench.tasks import (
    age_task,
    json_mode_task,
    person_task,
    strict_no_age_task,
)
from structbench.lm.toy_model import ToyModel
from structbench.lm.vocab import toy_vocabulary

# The section-4 status table: prefix -> status under the person schema.
PERSON_STATUS_TABLE = {
    '{"na': "open",
    '{"nx': "dead",
    '{"name": "Ada"}': "dead",
    '{"age": 3.': "dead",
    '{"age": 01': "dead",
    '{"name": "Ada", "age": 36}': "complete",
}


def run_trial(task, strategy: str, n: int, seed: int = 0, max_tokens: int = 40, max_attempts: int = 1,
              vocab=None, **model_settings) -> list[dict]:
    """n answers from a fresh generator seeded `seed`, each categorised by the referee."""
    vocab = vocab or toy_vocabulary()
    rng = np.random.default_rng(seed)
    model = ToyModel(task.reference, vocab, **model_settings)
    constraint = compile_constraint(task, vocab, strategy)
    referee = task.referee()
    rows = []
    for _ in range(n):
        answer = generate(model, rng, strategy, constraint, referee, max_tokens, max_attempts)
        valid = referee(answer.text)
        rows.append({"answer": answer, "category": categorize(answer.text, answer.finished, valid, task.opening)})
    return rows


def validity_table(n: int = 200, seed: int = 0, strategy: str = "tabled") -> list[dict]:
    """The lesson's validity bars: age pattern and person schema, unconstrained and constrained."""
    out = []
    for task in (age_task(), person_task()):
        for strat in ("none", strategy):
            counts = Counter(r["category"] for r in run_trial(task, strat, n, seed))
            out.append({"task": task.name, "strategy": strat,
                        **{c: counts.get(c, 0) for c in CATEGORIES}})
    return out


def json_mode_vs_strict(n: int = 50, seed: int = 0, strategy: str = "tabled") -> dict[str, Counter]:
    """Section 6: the model that leaves out the age, under schema {} and under the strict person schema.
    Returns, per task, a Counter of the finished texts (and how many were cut off under key None)."""
    out = {}
    for task in (json_mode_task(), strict_no_age_task()):
        rows = run_trial(task, strategy, n, seed)
        counts = Counter(r["answer"].text if r["answer"].finished else None for r in rows)
        out[task.name] = counts
    return out
