"""Random unions of objects, arrays and scalars, walked on a vocabulary of tokens that close keys and read into
values and past them: every mask bit of the lazy strategy is the checker's own verdict, though masks are read back
by mask key (a union's key is its branches': SchemaChecker._union_as_read) within a schema and across the schemas
compiled before it in the process, and a union's mask is made of its branches' (TabledConstraint._by_branches). A review fuzzed the same over about 900 schemas and all three whitespace
policies (2026-12-06); this keeps a seeded sample of it."""

from __future__ import annotations

import random

import numpy as np
import pytest
from helpers import walk_against_checker

from structbench.errors import StructbenchError
from structbench.jsonschema.checker import SchemaChecker
from structbench.lm.vocab import EOS, Vocabulary
from structbench.masking.lazy import lazy_constraint

NAMES = ["a", "b", "x", "id", "name", "ab", "kind"]
TOKENS = ['":{"a', '"},{"', '":1,"b":', '"}]', ',"x":[', '{"', '":', ',"', '"}', '"]', '}]', '}}', '},', '":"',
          '":[', '":{', '":1', '1,"', '1}', '1},{"', 'null', 'true', '[{"', '{"a":', '"a"', '"id"', '"name":',
          'name', 'id', ', "', '": ', '":1}', '"}}', '":null,"', '":null}', '", "', '": {"', '"},', '":1},{"',
          'kind', '"kind":"a"', '":"a"}', '"ab":', '":[{"', '":[]', '[]', '{}', '":{}', '":{},"', ']}', ':1', '-3']


def _scalar(r: random.Random) -> dict:
    return r.choice([{"type": "integer"}, {"type": "string"}, {"type": "boolean"}, {"type": "null"},
                     {"enum": ["p", "q"]}, {"type": ["string", "null"]}])


def _object(r: random.Random, depth: int) -> dict:
    names = r.sample(NAMES, r.randint(0, 3))
    schema = {"type": "object", "properties": {n: _value(r, depth + 1) for n in names}}
    if names and r.random() < 0.5:
        schema["required"] = r.sample(names, r.randint(1, len(names)))
    if r.random() < 0.4:
        schema["additionalProperties"] = False
    if r.random() < 0.2:
        schema["minProperties"] = r.randint(1, 2)
    return schema


def _union(r: random.Random, depth: int) -> dict:
    branches = [_object(r, depth + 1) if r.random() < 0.7 else
                _union(r, depth + 1) if depth < 2 and r.random() < 0.5 else
                {"type": "array", "items": _value(r, depth + 1)} if r.random() < 0.5 else _scalar(r)
                for _ in range(r.randint(2, 3))]
    return {"anyOf": branches}


def _value(r: random.Random, depth: int) -> dict:
    if depth >= 3:
        return _scalar(r)
    pick = r.random()
    return _union(r, depth) if pick < 0.35 else _object(r, depth) if pick < 0.55 else \
        {"type": "array", "items": _value(r, depth + 1)} if pick < 0.7 else _scalar(r)


def _schema(r: random.Random) -> dict:
    pick = r.random()
    if pick < 0.4:
        return _union(r, 0)
    if pick < 0.7:
        return {"type": "array", "items": _union(r, 1)}
    return {"type": "object", "properties": {"u": _union(r, 1), "v": _value(r, 1)}, "required": ["u"]}


@pytest.mark.parametrize("whitespace", ["lesson", "flexible"])
def test_random_unions_mask_as_the_checker_steps(whitespace):
    r, rng = random.Random(11), np.random.default_rng(11)
    vocab = Vocabulary(list(dict.fromkeys([EOS] + [chr(c) for c in range(0x20, 0x7F)] + ["\n"] + TOKENS)),
                       name="union-keys")
    multi = np.array([t is not None and len(t) > 1 for t in vocab.tokens])
    walked = read_back = branches = 0
    for _ in range(40):
        schema = _schema(r)
        try:
            checker = SchemaChecker(schema, "any", whitespace)
            constraint = lazy_constraint(SchemaChecker(schema, "any", whitespace), vocab)
        except StructbenchError:
            continue  # (a schema the checker declares unsupported or unsatisfiable)
        walked += walk_against_checker(constraint, checker, vocab, rng, walks=3, steps=25, prefer=multi)
        read_back += constraint.work.masks_shared
        branches += sum(1 for stack in constraint.dense.states if stack[0].kind == "alt")
    assert walked > 1000 and read_back > 50  # (masks were read back by key, from this schema or an earlier one)
    assert branches > 20  # (unions' masks made of their branches' masks: TabledConstraint._by_branches)
