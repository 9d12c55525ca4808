"""A key context's live name prefixes (keys._context_dfa): found by walking up each name that may come in Python (a
few prefixes) or by one NumPy pass over the name tree's subtrees (_live_by_subtrees); both must give the same DFA."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from structbench.jsonschema import keys as keys_module
from structbench.jsonschema.checker import SchemaChecker
from structbench.jsonschema.frames import Frame, Kind, Phase

SCHEMAS = [
    # strict objects (no other key): names sharing prefixes, one a prefix of another
    {"type": "object", "properties": {n: {"type": "integer"} for n in ["a", "ab", "abc", "b", "ba", "name", "nam"]},
     "additionalProperties": False},
    # other keys checked by a pattern (live past the name prefixes), and propertyNames
    {"type": "object", "properties": {"id": {"type": "string"}, "idx": {"type": "integer"}, "x": {}},
     "patternProperties": {"^x-[a-z]+$": {"type": "string"}}, "additionalProperties": False},
    {"type": "object", "properties": {"alpha": {}, "alp": {}, "beta": {}}, "propertyNames": {"pattern": "^[a-z]+$"}},
    {"type": "object", "properties": {"k1": {}, "k2": {}, "k10": {}}, "additionalProperties": {"type": "integer"},
     "propertyNames": {"maxLength": 3}},
]


def _contexts(checker: SchemaChecker, node_id: int):
    """(shared DFA, others) of the object's key product, or None where it has none."""
    top = checker._key_open(Frame(Kind.OBJECT, node_id, Phase.OPEN))
    if checker.key_trie(top) is None:
        return None
    shared = checker._key_states.get(node_id)
    return None if shared in (None, False) else shared


@pytest.mark.parametrize("schema", SCHEMAS)
def test_a_context_reads_the_same_live_prefixes_in_python_as_by_subtrees(schema, monkeypatch):
    checker = SchemaChecker(schema, "any", "lesson")
    objects = [i for i, node in checker.nodes.items() if "object" in node.kinds]
    tried, compared = 0, 0
    for node_id in objects:
        shared = _contexts(checker, node_id)
        if shared is None:
            continue
        names = sorted(shared.states.name_end)
        subsets = [c for k in range(len(names) + 1) for c in itertools.combinations(names, k)]
        for others, chosen in itertools.product((False, True), subsets):
            monkeypatch.setattr(keys_module, "_FEW_PREFIXES", 10 ** 9)  # the Python walk
            checker._key_by_names.clear()
            checker._key_contexts.clear()
            by_python = checker._context_dfa(shared, others, chosen)
            monkeypatch.setattr(keys_module, "_FEW_PREFIXES", -1)  # the subtrees' pass
            checker._key_contexts.clear()
            by_subtrees = checker._context_dfa(shared, others, chosen)
            assert (by_python is None) == (by_subtrees is None), (chosen, others)
            compared += 1
            if by_python is None:
                continue
            assert (by_python is shared) == (by_subtrees is shared), (chosen, others)
            assert np.array_equal(by_python.live, by_subtrees.live), (chosen, others)
            tried += 1
    assert compared >= 16 and tried > 0  # (a check that ran, on DFAs, not only on None)


def test_random_wide_objects_read_alike_both_ways(monkeypatch):
    """Many names drawn at random from a small alphabet (deep, shared prefixes), contexts drawn at random."""
    rng = random.Random(7)
    for _ in range(5):
        names = sorted({"".join(rng.choice("ab_") for _ in range(rng.randint(1, 6))) for _ in range(40)})
        schema = {"type": "object", "properties": {n: {"type": "integer"} for n in names},
                  "additionalProperties": False}
        checker = SchemaChecker(schema, "any", "lesson")
        shared = _contexts(checker, checker.root)
        assert shared is not None
        for _ in range(60):
            chosen = tuple(sorted(rng.sample(names, rng.randint(0, len(names)))))
            others = rng.random() < 0.5
            monkeypatch.setattr(keys_module, "_FEW_PREFIXES", 10 ** 9)
            checker._key_contexts.clear()
            a = checker._context_dfa(shared, others, chosen)
            monkeypatch.setattr(keys_module, "_FEW_PREFIXES", -1)
            checker._key_contexts.clear()
            b = checker._context_dfa(shared, others, chosen)
            assert (a is shared) == (b is shared)
            assert (a is None) == (b is None)
            if a is not None:
                assert np.array_equal(a.live, b.live)
