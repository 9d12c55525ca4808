"""The lazy strategy over a regular schema's DFA (structbench.jsonschema.regular_schema) gives the masks the checker
gives: the same bits at every state of the speed tasks' answers and of random walks, on a real vocabulary."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from helpers import require_llama3

from structbench.bench.tasks import nested_reference, nested_schema
from structbench.jsonschema.checker import SchemaChecker
from structbench.limits import current as limits
from structbench.limits import using
from structbench.masking import lazy_constraint
from structbench.masking.lazy import WholeTableConstraint

STRICT = {"additionalProperties": False}
SCHEMAS = {
    "nested 2": nested_schema(2),
    "enum with escapes, numbers, literals": {"type": "object", "properties": {
        "e": {"enum": ["a/b", 'q"x', "c\\d"]}, "n": {"type": "number"}, "i": {"type": "integer", "maximum": 99},
        "b": {"type": ["boolean", "null"]}, "s": {"type": "string"}}, "required": ["n"], **STRICT},
    "array of objects": {"type": "array", "items": {"type": "object", "properties": {
        "id": {"type": "integer"}, "tags": {"type": "array", "items": {"type": "string"}}}, "required": ["id"],
        **STRICT}},
    "a number alone": {"type": "number"},
    "unions that open apart": {"type": "array", "items": {"anyOf": [
        {"type": "integer"}, {"type": "string", "format": "date"}, {"type": "null"},
        {"type": "object", "properties": {"k": {"type": "boolean"}}, **STRICT}]}},
}


def both(schema, vocab, whitespace: str = "lesson"):
    """The lazy constraint over the schema's DFA, and over its checker (the DFA turned off)."""
    regular = lazy_constraint(SchemaChecker(schema, "schema", whitespace), vocab)
    with using(replace(limits(), max_schema_dfa_states=0)):
        checked = lazy_constraint(SchemaChecker(schema, "schema", whitespace), vocab)
    assert isinstance(regular, WholeTableConstraint) and not isinstance(checked, WholeTableConstraint)
    return regular, checked


def walk_both(regular, checked, token_ids, eos: int) -> None:
    """Walk both along the tokens (the last the end token), every mask compared."""
    a, b = regular.start(), checked.start()
    for k, tid in enumerate(token_ids):
        bits = regular.mask_bits(a)
        assert np.array_equal(bits, checked.mask_bits(b)), f"step {k}"
        assert bits.view(np.uint8)[tid >> 3] >> (tid & 7) & 1, f"step {k}: the answer's token is refused"
        if tid == eos:
            return
        a, b = regular.advance(a, tid), checked.advance(b, tid)


@pytest.mark.parametrize("depth", [1, 3, 5])
def test_the_nested_answers_masks_are_the_checkers(vocab, depth):
    require_llama3(vocab)
    regular, checked = both(nested_schema(depth), vocab)
    walk_both(regular, checked, vocab.encode(nested_reference(depth)) + [vocab.eos_id], vocab.eos_id)


@pytest.mark.parametrize("whitespace", ["lesson", "compact"])
@pytest.mark.parametrize("name", list(SCHEMAS))
def test_random_walks_meet_the_checkers_masks(vocab, name, whitespace):
    """Tokens drawn from the masks (the same on both sides, or the test fails there), seeded, until the end
    token or 40 steps, eight walks a schema: tokens of every kind the masks allow, not only an answer's."""
    regular, checked = both(SCHEMAS[name], vocab, whitespace)
    rng = np.random.default_rng(7)
    steps = 0
    for _ in range(8):
        a, b = regular.start(), checked.start()
        for _ in range(40):
            bits = regular.mask_bits(a)
            assert np.array_equal(bits, checked.mask_bits(b))
            allowed = np.flatnonzero(np.unpackbits(bits.view(np.uint8), bitorder="little")[:len(vocab)])
            tid = int(rng.choice(allowed))
            steps += 1
            if tid == vocab.eos_id:
                break
            a, b = regular.advance(a, tid), checked.advance(b, tid)
    assert steps >= 40
