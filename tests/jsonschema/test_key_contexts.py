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


def test_a_contexts_own_rows_are_the_shared_rows_with_its_dead_names_refused():
    """KeyPatternDFA.overrides (trie_walk.context_rows: compiled, and the same function run in Python): the live parents
    of the name prefixes dead in the context, each with its shared row's moves to them refused; no other row. (A
    prefix that ends with an escapable character is reached by an escape row too: overrides' second part.)"""
    from structbench.masking import trie_walk
    from structbench.masking.tabled import machine_boundaries

    codes = np.asarray(machine_boundaries(), dtype=np.int64)
    rng = random.Random(11)
    names = sorted({"".join(rng.choice("ab_\\") for _ in range(rng.randint(1, 5))) for _ in range(30)})
    schemas = SCHEMAS + [{"type": "object", "properties": {n: {"type": "integer"} for n in names},
                          "additionalProperties": False}]
    checked = 0
    for schema in schemas:
        checker = SchemaChecker(schema, "any", "lesson")
        for node_id in [i for i, node in checker.nodes.items() if "object" in node.kinds]:
            shared = _contexts(checker, node_id)
            if shared is None:
                continue
            lex = shared.string_table(codes, trie_walk.CLOSE, trie_walk.EXIT)
            n = len(shared.live)
            for _ in range(20):
                all_names = sorted(shared.states.name_end)
                chosen = tuple(sorted(rng.sample(all_names, rng.randint(0, len(all_names)))))
                context = checker._context_dfa(shared, rng.random() < 0.5, chosen)
                if context is None or context is shared:
                    continue
                dead = shared.live & ~context.live
                moves = lex[:n]
                to_dead = (moves >= 0) & (moves < n)
                to_dead[to_dead] = dead[moves[to_dead]]
                parents = np.zeros(n, dtype=bool)
                parents[shared.states.parent[np.flatnonzero(dead)]] = True  # (the root has no parent: never dead)
                expected = np.flatnonzero(parents & context.live)
                for rows_of in (trie_walk.context_rows, _in_python):
                    ds, rows = context.overrides(lex, codes, trie_walk.EXIT, rows_of)
                    first = ds < n
                    assert np.array_equal(ds[first], expected), (schema, chosen)
                    # (where escape rows follow, the backslash's column is overrides' second part's to set)
                    cols = np.arange(lex.shape[1]) != (ord("\\") if len(lex) > n else -1)
                    want = np.where(to_dead[expected], -1, moves[expected])
                    assert np.array_equal(rows[first][:, cols], want[:, cols]), (schema, chosen)
                checked += 1
    assert checked >= 20


def _in_python(shared_live, live, parent, lex):
    """trie_walk.context_rows without numba: the same function, run by Python."""
    n = len(live)
    ds, rows = np.empty(n, dtype=np.int64), np.empty((n, lex.shape[1]), dtype=lex.dtype)
    from structbench.masking import trie_walk

    k = trie_walk._context_rows(shared_live, live, parent, lex, ds, rows)
    return ds[:k], rows[:k]


ONE_DFA = [
    {"type": "object", "patternProperties": {"^[0-9a-zA-Z_-]{1,40}$": {"type": "string"}},
     "additionalProperties": False},
    {"type": "object", "properties": {"id": {}, "idx": {}}, "patternProperties": {"^x-(a|bc)+[0-9]?$": {}},
     "additionalProperties": False},
    {"type": "object", "properties": {"alpha": {}, "beta": {}}, "propertyNames": {"maxLength": 12}},
    {"type": "object", "propertyNames": {"enum": ["red", "green", "blue"]}},
]


@pytest.mark.parametrize("schema", ONE_DFA)
def test_one_key_dfas_other_states_are_the_products_search(schema):
    """Where one DFA checks keys, the states a key no name continues reaches are searched over its moves in Python
    (KeyPatternStates._one_dfa_others); the same as the product's NumPy search, and cut off at the same limit."""
    checker = SchemaChecker(schema, "any", "lesson")
    shared = _contexts(checker, checker.root)
    assert shared is not None and len(shared.states.dfas) == 1
    states, n = shared.states, len(shared.states.texts)
    by_numpy = states._product_others(10 ** 6, n)
    assert np.array_equal(states._other_codes, by_numpy)
    assert np.array_equal(states._one_dfa_others(10 ** 6, n), by_numpy)
    for limit in (len(by_numpy) - 1, len(by_numpy)):
        fits = len(states._product_others(limit, n)) <= limit
        assert (len(states._one_dfa_others(limit, n)) <= limit) == fits
