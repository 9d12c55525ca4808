"""Tabled's budgets: tabling ahead stops at its budget with the same masks; one mask stops at `mask_steps`; a
constraint's table stops growing at `max_table_cells`."""

from __future__ import annotations

import numpy as np
import pytest

from structbench.errors import LimitExceeded
from structbench.jsonschema.checker import SchemaChecker
from structbench.limits import Limits, using
from structbench.lm.vocab import synthetic_vocabulary, toy_vocabulary
from structbench.masking import schema_constraint, trie_mask

VOCAB = synthetic_vocabulary(2000, seed=3)


def _object(n: int) -> dict:
    return {"type": "object", "properties": {f"f{i}": {"type": "string"} for i in range(n)},
            "required": ["f1"], "additionalProperties": False}


def _masks_along(constraint, vocab, text: str) -> list[np.ndarray]:
    state, out = constraint.start(), []
    for tid in vocab.encode_greedy(text):
        out.append(constraint.mask(state).copy())
        state = constraint.advance(state, tid)
    out.append(constraint.mask(state).copy())
    return out


@pytest.mark.parametrize("n", [5, 40])
def test_tabling_ahead_past_its_budget_gives_the_same_masks(n):
    text = '{"f3": "ab", "f1": "c"}'
    full = _masks_along(schema_constraint(SchemaChecker(_object(n)), VOCAB), VOCAB, text)
    with using(Limits(precompute_steps=1, precompute_token_chars=1)):
        lazy_constraint = schema_constraint(SchemaChecker(_object(n)), VOCAB)
        lazy = _masks_along(lazy_constraint, VOCAB, text)
    assert len(full) == len(lazy) and all((a == b).all() for a, b in zip(full, lazy))
    # ... and they are the right masks: the plain trie walk of the checker agrees at the start.
    checker = SchemaChecker(_object(n))
    assert (lazy[0] == trie_mask(checker, VOCAB, checker.start())[0]).all()


def test_a_thousand_properties_compile_within_the_tabling_budget():
    with using(Limits(precompute_steps=20_000)):
        constraint = schema_constraint(SchemaChecker(_object(1000)), toy_vocabulary())
        masks = _masks_along(constraint, toy_vocabulary(), '{"f999": "x", "f1": "y"}')
    assert masks[-1][toy_vocabulary().eos_id]  # the answer may end there: the required key is written


def test_one_mask_past_mask_steps_is_a_named_error():
    with using(Limits(mask_steps=10, precompute_steps=1)):
        constraint = schema_constraint(SchemaChecker(_object(5)), VOCAB)
        with pytest.raises(LimitExceeded, match=r"one mask took more than 10 steps \(limits.mask_steps = 10"):
            constraint.mask(constraint.start())


@pytest.mark.parametrize("strategy", ["lazy", "tabled"])
def test_a_table_past_max_table_cells_is_a_named_error_and_the_states_before_it_still_work(strategy):
    """JSON mode nested deeper and deeper: each depth is new states; the table stops at its cap with the limit named,
    and the states numbered before still mask and advance."""
    from structbench.masking.lazy import lazy_constraint

    vocab = toy_vocabulary()
    make = lazy_constraint if strategy == "lazy" else schema_constraint
    with using(Limits(max_table_cells=4096)):
        constraint = make(SchemaChecker({}), vocab)
        state, opened = constraint.start(), vocab.index["["]
        with pytest.raises(LimitExceeded, match=r"full at [\d,]+ states x \d+ character classes, and twice that is past the limit .limits.max_table_cells"):
            for _ in range(1000):
                constraint.mask(state)
                state = constraint.advance(state, opened)
        assert constraint.mask(constraint.start())[opened]
        assert constraint.advance(constraint.start(), opened) >= 0
