"""The vectorised tables (structbench/masking/tabled.py) and the context split give exactly the masks of a plain
walk of every token through the machine, at every step."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from structbench.bench.tasks import (
    AGE_PATTERN,
    JSON_MODE_WALK,
    PERSON_REFERENCE,
    nested_reference,
    nested_schema,
)
from structbench.jsonschema.checker import SchemaChecker
from structbench.lm.vocab import synthetic_vocabulary, toy_vocabulary
from structbench.masking import PatternMachine, pattern_constraint, schema_constraint, trie_mask
from structbench.regular import compile_pattern

VOCABS = {"toy": toy_vocabulary(), "synthetic2000": synthetic_vocabulary(2000, seed=3)}


def check_walk(constraint, machine, vocab, text):
    """Walk `text` token by token (greedy spelling) and compare every mask with the plain trie walk."""
    state, reference = constraint.start(), machine.start()
    for tid in vocab.encode_greedy(text) + [vocab.eos_id]:
        expected, _ = trie_mask(machine, vocab, reference)
        got = constraint.mask(state)
        assert (got == expected).all(), f"masks differ after {text!r}: {np.flatnonzero(got != expected)[:5]}"
        if tid == vocab.eos_id:
            assert got[tid]
            break
        state = constraint.advance(state, tid)
        for ch in vocab.tokens[tid]:
            reference = machine.step(reference, ch)


@pytest.mark.parametrize("vocab_name", list(VOCABS))
def test_pattern_table_equals_plain_walk(vocab_name):
    vocab = VOCABS[vocab_name]
    dfa = compile_pattern(AGE_PATTERN)
    check_walk(pattern_constraint(dfa, vocab), PatternMachine(dfa), vocab, '{"age": 42}')


@pytest.mark.parametrize("vocab_name", list(VOCABS))
@pytest.mark.parametrize("key_order", ["any", "schema"])
@pytest.mark.parametrize("depth", [1, 3])
def test_finite_schema_table_equals_plain_walk(vocab_name, key_order, depth):
    vocab = VOCABS[vocab_name]
    checker = SchemaChecker(nested_schema(depth), key_order)
    constraint = schema_constraint(checker, vocab)
    # Keys in any order multiply the states level by level: past the cap they are tabled when met.
    assert constraint.eager == (key_order == "schema" or depth == 1)
    check_walk(constraint, checker, vocab, nested_reference(depth))


@pytest.mark.parametrize("vocab_name", list(VOCABS))
def test_json_mode_context_split_equals_plain_walk(vocab_name):
    vocab = VOCABS[vocab_name]
    checker = SchemaChecker({})
    constraint = schema_constraint(checker, vocab)
    assert not constraint.eager and constraint.split is not None
    for text in (JSON_MODE_WALK, PERSON_REFERENCE, '[[[1, [2]], {"a": {"b": [true, null]}}], -0.5, "x"]', "42"):
        check_walk(constraint, checker, vocab, text)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.text("abcxyz ADE-.!'0123", max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text("abc", max_size=3), inner, max_size=3),
    max_leaves=12,
)


@settings(max_examples=40, deadline=None)
@given(value=json_values, spaced=st.booleans())
def test_json_mode_split_on_random_documents(value, spaced):
    vocab = VOCABS["synthetic2000"]
    checker = SchemaChecker({})
    text = json.dumps(value, ensure_ascii=False, separators=(", ", ": ") if spaced else (",", ":"))
    check_walk(schema_constraint(checker, vocab), checker, vocab, text)
