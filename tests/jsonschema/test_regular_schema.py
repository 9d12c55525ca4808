"""A regular schema as one DFA (structbench.jsonschema.regular_schema): it reads exactly what the checker reads,
character by character, at every state either can reach; and schemas outside what it mirrors are left to the
checker."""

from __future__ import annotations

import json
from collections import deque
from dataclasses import replace

import pytest
from helpers import CORPUS

from structbench.bench.tasks import nested_schema
from structbench.jsonschema.checker import SchemaChecker
from structbench.jsonschema.regular_schema import schema_dfa
from structbench.limits import current as limits
from structbench.limits import using
from structbench.regular import DFA

# Every class of character the checker and the DFA tell apart: printable ASCII (JSON's syntax, names, digits,
# escapes' letters), whitespace and other control characters, DEL, characters past ASCII, a surrogate.
ALPHABET = [chr(c) for c in range(0x20, 0x7F)] + ["\t", "\n", "\r", "\x00", "\x1f", "\x7f", "é", "\u2028", "😀",
                                                  "\ud800"]


def first_difference(checker, dfa, max_pairs: int = 200_000) -> str | None:
    """The first text (breadth first) after which the checker and the DFA disagree on a character or on whether
    the answer may end, over the pairs of states both reach; None where they agree everywhere (or on the first
    `max_pairs` pairs)."""
    start = (checker.start(), dfa.start)
    seen, todo = {start}, deque([(start, "")])
    while todo:
        (stack, state), text = todo.popleft()
        if checker.can_end(stack) != dfa.can_end(state):
            return f"after {text!r}: may end, checker {checker.can_end(stack)}, DFA {dfa.can_end(state)}"
        for ch in ALPHABET:
            a, b = checker.step(stack, ch), dfa.step(state, ch)
            if (a is None) != (b is None):
                return f"after {text!r}, {ch!r}: checker {'refuses' if a is None else 'reads'} it, DFA " \
                       f"{'refuses' if b is None else 'reads'} it"
            if a is not None and (a, b) not in seen:
                if len(seen) >= max_pairs:
                    return None
                seen.add((a, b))
                todo.append(((a, b), text + ch))
    return None


STRICT = {"additionalProperties": False}
SCHEMAS = {
    "person": nested_schema(1),
    "nested 3": nested_schema(3),
    "integer": {"type": "integer"},
    "bounded integer": {"type": "integer", "minimum": -5, "maximum": 170},
    "number": {"type": "number"},
    "free string": {"type": "string"},
    "literals": {"type": ["boolean", "null"]},
    "string or null": {"type": ["string", "null"]},
    "enum spelled with escapes": {"enum": ["a/b", 'q"x', "c\\d", "plain"]},
    "const": {"const": "fixed"},
    "patterns ending in $ (a final newline)": {"type": "array", "items": {"type": "string",
                                                                        "pattern": "^[a-z][a-z0-9_]*$"}},
    "control characters and DEL, escaped": {"enum": ["tab\there", "nl\n", "bell\x07", "del\x7f", "nul\x00x"]},
    "names with control characters": {"type": "object", "properties": {"a\tb": {"type": "integer"},
                                                                       "c\u001fd": {"type": "null"}}, **STRICT},
    "unions that open apart": {"type": "object", "properties": {
        "n": {"anyOf": [{"type": "integer"}, {"type": "array", "items": {"type": "integer"}}]},
        "o": {"oneOf": [{"type": "string", "enum": ["x", "y"]}, {"type": "null"},
                        {"anyOf": [{"type": "boolean"}, {"type": "object", **STRICT}]}]}}, **STRICT},
    "formats over ASCII": {"type": "object", "properties": {"d": {"type": "string", "format": "date-time"},
                                                            "u": {"type": "string", "format": "uuid"},
                                                            "e": {"type": "string", "format": "email"}}, **STRICT},
    "array of arrays": {"type": "array", "items": {"type": "array", "items": {"type": "integer"}}},
    "array of nothing": {"type": "array", "items": False},
    "empty strict object": {"type": "object", **STRICT},
    "optional then required": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"},
                                                                "ab": {"type": "boolean"}, "c": {"type": "null"}},
                               "required": ["c"], **STRICT},
    "all optional, shared prefixes": {"type": "object", "properties": {"n": {"type": "integer"},
                                                                       "na": {"type": "integer"},
                                                                       "name": {"type": "string"}}, **STRICT},
    "names with escapes": {"type": "object", "properties": {'q"': {"type": "integer"}, "b\\s": {"type": "integer"},
                                                            "s/l": {"type": "integer"}, " ": {"type": "null"}},
                           "required": ["s/l"], **STRICT},
    "a property no value satisfies": {"type": "object", "properties": {"x": False, "y": {"type": "integer"}},
                                      **STRICT},
    "objects in arrays in objects": {"type": "object", "properties": {"rows": {"type": "array", "items": {
        "type": "object", "properties": {"k": {"type": "string"}, "v": {"type": "number"}}, "required": ["k"],
        **STRICT}}}, "required": ["rows"], **STRICT},
}


@pytest.mark.parametrize("whitespace", ["lesson", "compact"])
@pytest.mark.parametrize("numbers", ["json", "lesson"])
@pytest.mark.parametrize("name", list(SCHEMAS))
def test_the_dfa_reads_what_the_checker_reads(name, numbers, whitespace):
    checker = SchemaChecker(SCHEMAS[name], "schema", whitespace, numbers)
    dfa = schema_dfa(checker)
    assert dfa is not None, f"{name}: expected a DFA"
    DFA(dfa.moves, dfa.accepting)  # its moves sorted, disjoint and within its states (the DFA's own check)
    assert first_difference(checker, dfa) is None


def test_the_nested_task_reads_as_its_checker_at_depth_five():
    checker = SchemaChecker(nested_schema(5), "schema", "lesson")
    dfa = schema_dfa(checker)
    assert dfa is not None and first_difference(checker, dfa, max_pairs=20_000) is None
    reference = ('{"name": "Ada", "age": 36, "child": {"name": "Bo", "age": 7, "child": {"name": "Dee", "age": 3, '
                 '"child": {"name": "Eve", "age": 20, "child": {"name": "Gus", "age": 17, "pets": ["cat"]}, '
                 '"pets": ["dog"]}, "pets": ["cat"]}, "pets": ["dog"]}, "pets": ["cat"]}')
    assert dfa.accepts(reference) and not dfa.accepts(reference[:-1]) and not dfa.accepts(reference + " ")


NOT_TAKEN = {
    "keys in any order": ({"type": "object", "properties": {"a": {"type": "integer"}}, **STRICT}, "any", "lesson"),
    "flexible whitespace": ({"type": "integer"}, "schema", "flexible"),
    "a union whose branches open alike": ({"anyOf": [
        {"type": "object", "properties": {"a": {"type": "integer"}}, **STRICT},
        {"type": "object", "properties": {"b": {"type": "integer"}}, **STRICT}]}, "schema", "lesson"),
    "recursion": ({"$defs": {"t": {"type": "array", "items": {"$ref": "#/$defs/t"}}}, "$ref": "#/$defs/t"},
                  "schema", "lesson"),
    "a pattern past ASCII": ({"type": "string", "pattern": "^[a-zé]+$"}, "schema", "lesson"),
    "maxLength": ({"type": "string", "maxLength": 3}, "schema", "lesson"),
    "a counted array": ({"type": "array", "items": {"type": "integer"}, "minItems": 1}, "schema", "lesson"),
    "prefixItems": ({"type": "array", "prefixItems": [{"type": "integer"}]}, "schema", "lesson"),
    "a name past ASCII": ({"type": "object", "properties": {"é": {"type": "integer"}}, **STRICT}, "schema",
                          "lesson"),
    "an enum word past ASCII": ({"enum": ["café"]}, "schema", "lesson"),
    "any value": ({}, "schema", "lesson"),
}


@pytest.mark.parametrize("name", list(NOT_TAKEN))
def test_what_it_does_not_mirror_is_left_to_the_checker(name):
    schema, key_order, whitespace = NOT_TAKEN[name]
    assert schema_dfa(SchemaChecker(schema, key_order, whitespace)) is None


def test_the_state_cap_and_zero_turn_it_off():
    checker = SchemaChecker(nested_schema(5), "schema", "lesson")
    n = schema_dfa(checker).n_states
    with using(replace(limits(), max_schema_dfa_states=n)):
        assert schema_dfa(checker).n_states == n
    for cap in (n - 1, 10, 0):
        with using(replace(limits(), max_schema_dfa_states=cap)):
            assert schema_dfa(checker) is None


def test_a_wide_object_is_built_without_deep_recursion():
    # Every other property required: each place's names are at most two, so the DFA grows with the properties
    props = {f"p{i:03d}": {"type": "integer"} for i in range(200)}
    required = [name for i, name in enumerate(props) if i % 2]
    checker = SchemaChecker({"type": "object", "properties": props, "required": required, **STRICT}, "schema")
    dfa = schema_dfa(checker)
    assert dfa is not None
    text = "{" + ", ".join(f'"{name}": {i}' for i, name in enumerate(props) if i % 2 or i % 3 == 0) + "}"
    assert dfa.accepts(text) and checker.can_end(checker.feed(checker.start(), text))
    assert not dfa.accepts(text.replace('"p001": 1, ', ""))  # (a required one left out)


def test_many_optional_properties_pass_the_cap_before_their_tries_are_built():
    # Each place's trie holds every later name: their square passes the cap, which is found before building them
    props = {f"p{i:03d}": {"type": "integer"} for i in range(300)}
    checker = SchemaChecker({"type": "object", "properties": props, **STRICT}, "schema")
    assert schema_dfa(checker) is None


@pytest.mark.slow
def test_every_tenth_corpus_schema_it_takes_reads_as_its_checker():
    if not CORPUS.is_dir():
        pytest.skip("the shared MaskBench corpus is not here")
    taken = 0
    for path in sorted(CORPUS.glob("*.json"))[::10]:
        schema = json.loads(path.read_text())["schema"]
        for whitespace in ("lesson", "compact"):
            try:
                checker = SchemaChecker(schema, "schema", whitespace)
            except Exception:  # noqa: BLE001 - what schema order cannot compile is the coverage experiment's business
                continue
            dfa = schema_dfa(checker)
            if dfa is None:
                continue
            taken += 1
            assert first_difference(checker, dfa, max_pairs=20_000) is None, f"{path.name}, {whitespace}"
    assert taken >= 80  # (98 on 2026-12-07)
