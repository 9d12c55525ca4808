"""Masks shared between states no token tells apart (structbench.masking.shared_masks): states with equal
mask keys must allow the same tokens, each mask computed on its own."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
from helpers import CORPUS, checker_verdicts, corpus_schemas, require_llama3
from test_lazy import SCHEMAS, reached_states, walk_like_tabled

from structbench.bench.tasks import nested_reference, nested_schema
from structbench.jsonschema.checker import SchemaChecker
from structbench.jsonschema.frames import AFTER_VALUE
from structbench.limits import current as limits
from structbench.limits import using
from structbench.lm.vocab import EOS, Vocabulary
from structbench.masking import LazyDense, machine_boundaries
from structbench.masking.shared_masks import KeyTexts, TokenReach, token_reach

OBJECTS = {
    "free object, required": ({"type": "object", "required": ["id", "name"], "properties": {
        "id": {"type": "integer"}, "name": {"type": "string"}, "note": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}}}},
        {"id": 7, "note": "x", "name": "Ada", "tags": ["a", "b"], "more": 1, "other": "y"}),
    "strict nested objects": ({"type": "object", "additionalProperties": False, "properties": {
        "a": {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}}},
        "b": {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}}},
        "c": {"type": "string"}}},
        {"a": {"x": 1, "y": 2}, "b": {"y": 3, "x": 4}, "c": "z"}),
    # One object node at several places (an array's items; JSON mode's objects at every depth, below other
    # objects): in a key, and after a comma before one, the frames below the object are no part of the key
    # (TokenReach.member_pops).
    "array of objects": ({"type": "array", "items": {"type": "object", "properties": {
        "id": {"type": "integer"}, "name": {"type": "string"}}, "required": ["id"]}},
        [{"id": 1, "name": "a"}, {"name": "bb", "id": 2}, {"id": 3}, {"id": 4, "name": "d", "x": [{"id": 5}]}]),
    "JSON mode, nested": ({}, {"a": {"b": {"c": 1, "d": [{"e": "f"}]}, "g": 2}, "h": {"i": {"j": True}}}),
    # One node at every depth, deeper than a token closes containers and reads on: the frames below are left out
    "recursive tree, six deep": ({"$defs": {"n": {"type": "object", "properties": {
        "v": {"type": "integer"}, "s": {"type": "string"}, "c": {"type": "array", "items": {"$ref": "#/$defs/n"}}}}},
        "$ref": "#/$defs/n"},
        {"v": 1, "c": [{"s": "a", "c": [{"v": 2, "c": [{"c": [{"s": "b]}", "c": [{"v": 3, "c": [{"s": "c"}]}]}]},
                                                        {"v": 4}]}]}], "s": "d"}),
    # Strict keys whose names share their starts: a key, and the place after a comma, read the names that may
    # come only as far as a token can write them (`_names_as_read`)
    "strict, names sharing starts": ({"type": "object", "additionalProperties": False, "required": ["id"],
                                      "properties": {
        "id": {"type": "integer"}, "identity": {"type": "string"}, "description": {"type": "string"},
        "descriptor": {"type": "string"}, "desk": {"type": "integer"}, "name": {"type": "string"},
        "names": {"type": "array", "items": {"type": "string"}}, "zeta": {"type": "integer"},
        "zulu": {"type": "integer"}}},
        {"desk": 1, "zulu": 0, "name": "a", "id": 2, "description": "d", "names": ["x"], "identity": "i",
         "descriptor": "e", "zeta": 5}),
    # Strings whose length only is checked: counts far from both bounds read alike (`_length_as_read`)
    "length-counted strings": ({"type": "object", "properties": {
        "s": {"type": "string", "maxLength": 160}, "t": {"type": "string", "minLength": 140, "maxLength": 400},
        "u": {"type": ["string", "null"], "minLength": 3}}},
        {"s": "word " * 31, "t": "a long text, " * 23, "u": "x" * 200, "v": "free " * 40}),
    # Free keys of two object nodes: a key's text and node are read only as far as a token closes it
    "free keys of two nodes": ({"type": "object", "properties": {
        "a": {"type": "object", "properties": {"id": {"type": "integer"}, "x": {"type": "string"}}},
        "b": {"type": "object", "properties": {"id": {"type": "integer"}, "y": {"type": "string"}}}}},
        {"a": {"x": "1", "id": 2, "other": 3}, "b": {"y": "2", "id": 3, "more": [1]}, "c": {"id": 1}}),
}


# Unions whose branches each read their top alone (a key, the place after a comma, a value still to open): the
# union's key is its branches' keys together (`_union_as_read`), so unions of objects whose names or used keys
# differ share masks, and one whose branches read alike shares the lone branch's
UNIONS = {
    "anyOf of objects, names apart": ({"type": "object", "properties": {"d": {"anyOf": [
        {"type": "object", "properties": {"base": {"type": "number"}, "height": {"type": "number"}},
         "required": ["base"]},
        {"type": "object", "properties": {"length": {"type": "number"}, "width": {"type": "integer"}},
         "required": ["length"]}]}, "n": {"type": "string"}}},
        {"d": {"base": 1, "height": 2.5, "length": 3, "x": "y"}, "n": "a"}),
    "anyOf of strict objects and scalars in an array": ({"type": "array", "items": {"anyOf": [
        {"type": "object", "additionalProperties": False, "properties": {
            "kind": {"const": "a"}, "id": {"type": "integer"}, "tags": {"type": "array", "items": {"type": "string"}}}},
        {"type": "object", "additionalProperties": False, "properties": {
            "kind": {"const": "b"}, "id": {"type": "string"}, "note": {"type": ["string", "null"]}}},
        {"type": ["string", "null"]}]}},
        [{"kind": "a", "id": 1, "tags": ["x"]}, {"kind": "b", "id": "2", "note": None}, "s", None, {"id": 3}]),
    "nested unions of objects": ({"anyOf": [
        {"anyOf": [{"type": "object", "properties": {"year": {"type": "integer"}, "month": {"type": "integer"}}},
                   {"type": "object", "properties": {"year": {"type": "integer"}, "day": {"type": "integer"}}}]},
        {"type": "object", "properties": {"year": {"type": "string"}}, "required": ["year"]}]},
        {"year": 2022, "month": 12, "day": 3}),
}
OBJECTS.update(UNIONS)
# Values of different nodes that a token closing a key reads alike as far as it goes (Llama 3's texts after a
# key's colon: `"`, `""`, `[{"`, `{"`, `-`...) or not (a minimum that refuses `-`, a pattern that refuses `"/`, a
# string that may not be empty, a value that cannot be written at all, whose key may not close): a key that read
# them alike by those texts alone shared a mask with the unwritable one's (tried, and caught by the corpus A/B)
OBJECTS["values read alike at a key's end"] = ({"type": "object", "properties": {
    "z": {"type": "object", "enum": ["a"]}, "t": {"type": "boolean"},
    "a": {"type": "string", "maxLength": 100}, "b": {"type": "string", "maxLength": 200},
    "c": {"type": "object", "properties": {"x": {"type": "integer"}}},
    "d": {"type": "object", "properties": {"y": {"type": "string"}}, "required": ["y"]},
    "e": {"type": "integer", "minimum": 0}, "f": {"type": "integer"}, "g": {"type": "string", "minLength": 1},
    "h": {"type": "string", "pattern": "^[a-z]+$"}, "i": {"type": "array", "items": {"type": "object"}},
    "j": {"type": "array", "items": {"type": "integer"}}}},
    {"a": "x", "b": "yy", "c": {"x": 1}, "d": {"y": "z"}, "e": 3, "f": -4, "g": "q", "h": "abc", "i": [{}],
     "j": [-1, 2]})


# In schema order (strict objects, instances in their properties' order): a strict object's frame is read by its
# place, whatever its node (`_place_as_read`), and below one that may not close by nothing (`_unclosable_below`)
ORDERED = {
    "nested, three levels": (nested_schema(3), json.loads(nested_reference(3))),
    "strict, names sharing starts, in order": (OBJECTS["strict, names sharing starts"][0],
                                               {"id": 2, "description": "d", "desk": 1, "names": ["x"], "zulu": 0}),
    # Deeper than a token closes containers and reads on (Llama 3: 3, from a string 2): the levels' pets share
    # their masks below them (_depth_cut), each level's frame below its child read by its place alone
    "nested, five levels": (nested_schema(5), json.loads(nested_reference(5))),
    "one strict object under a key and in an array": ({"type": "object", "additionalProperties": False, "$defs": {
        "o": {"type": "object", "additionalProperties": False, "required": ["id", "name"], "properties": {
            "id": {"type": "integer"}, "name": {"type": "string"}, "tags": {"type": "array", "items": {
                "type": "string"}}}}}, "properties": {"a": {"$ref": "#/$defs/o"}, "l": {"type": "array", "items": {
                    "$ref": "#/$defs/o"}}}},
        {"a": {"id": 1, "name": "a"}, "l": [{"id": 22, "name": "bb", "tags": ["x", "y"]}, {"id": 3, "name": "c"}]}),
}


def _groups(checker, dense, states, reach) -> dict:
    groups: dict = {}
    for i in states:
        groups.setdefault(checker.mask_key(dense.states[i], reach), set()).add(i)
    return groups


# test_lazy's schemas along whose instance and detours no two states have one mask key (each key is one state's):
# nothing to compare there
NO_SHARED_KEYS = {"a number at the root", "pattern keys only", "pattern keys, non-ASCII",
                  "pattern keys, other keys taken", "union and numbers"}


@pytest.mark.parametrize("name", sorted(set(SCHEMAS) - NO_SHARED_KEYS) + sorted(OBJECTS) + sorted(ORDERED))
def test_equal_mask_keys_allow_the_same_tokens(vocab, name):  # noqa: F811
    """Along an instance and random detours of allowed tokens, states with one mask key have one mask, each
    walked on its own (LazyDense's vectorised walk, no sharing); keys in any order, or in schema order (ORDERED).
    Every case has states that share a key (else it would compare nothing)."""
    require_llama3(vocab)
    schema, value = {**SCHEMAS, **OBJECTS, **ORDERED}[name]
    checker = SchemaChecker(schema, "schema" if name in ORDERED else "any", "lesson")
    dense = LazyDense(checker, machine_boundaries(checker.special_chars()), vocab)
    states = reached_states(checker, dense, vocab, value, np.random.default_rng(3), branches=16)
    merged, groups = 0, _groups(checker, dense, set(states), token_reach(vocab))
    for group in groups.values():
        first, *rest = sorted(group)
        for other in rest:
            assert np.array_equal(dense.mask(first)[0], dense.mask(other)[0]), (dense.states[first],
                                                                                dense.states[other])
            merged += 1
    assert merged > 0
    if name in UNIONS:  # unions whose branches read their tops alone are keyed by them
        assert any(key[0] == "union alone" for key in groups)
        if name == "anyOf of objects, names apart":  # (keys of unions whose branches' used keys differ: shared)
            assert any(key[0] == "union alone" and len(group) > 1 for key, group in groups.items())
    if name == "JSON mode, nested":  # keys of one node at different depths share
        assert any(len({dense.states[i][:-1] for i in group}) > 1
                   for key, group in _groups(checker, dense, set(states), token_reach(vocab)).items()
                   if key[0] == "top alone")


def test_corpus_states_with_one_key_have_one_mask(vocab):  # noqa: F811
    """The same over corpus schemas, along their first valid instance."""
    if not CORPUS.is_dir() or vocab.name != "llama3":
        pytest.skip("needs the MaskBench corpus ($STRUCTBENCH_DATA or ../shared/data) and Llama 3's vocabulary")
    merged, rng = 0, np.random.default_rng(5)
    for path, _, checker, valid in corpus_schemas(97, 40):
        dense = LazyDense(checker, machine_boundaries(checker.special_chars()), vocab)
        states = reached_states(checker, dense, vocab, valid[0][0], rng, branches=4)
        for group in _groups(checker, dense, set(states), token_reach(vocab)).values():
            first, *rest = sorted(group)
            for other in rest:
                assert np.array_equal(dense.mask(first)[0], dense.mask(other)[0]), path.name
                merged += 1
    assert merged > 0


def test_the_lazy_strategy_shares_masks_and_walks_like_tabled(vocab):  # noqa: F811
    """End to end: lazy reads some masks back from states with its key, and its masks stay tabled's."""
    require_llama3(vocab)
    lazy = walk_like_tabled(vocab, *OBJECTS["free object, required"])
    assert lazy.work.masks_shared > 0


def test_the_nested_tasks_levels_share_masks_in_schema_order(vocab):  # noqa: F811
    """End to end, keys in schema order (the speed sweep's): along the nested task's answer at depth 4, lazy reads
    back more masks than it builds (each level a node of its own: `_place_as_read`), and its masks stay tabled's.
    The checker's constraint (a regular schema is one DFA by default in schema order: regular_schema), which
    schemas that are no regular ones still meet."""
    require_llama3(vocab)
    with using(replace(limits(), max_schema_dfa_states=0)):
        lazy = walk_like_tabled(vocab, nested_schema(4), json.loads(nested_reference(4)), "schema")
    assert lazy.work.masks_shared > lazy.work.masks_built, lazy.work


def test_the_nested_tasks_levels_share_masks_in_any_order(vocab):  # noqa: F811
    """The same in any key order: an object below a value, or after one, is read by what a token finds out of it
    (`_seen_as_read`), not by its node, and the frames below one that may not close are left out
    (`_unclosable_below`), so the levels' names, strings and numbers read each other's masks back (before, each
    level's node kept them apart: 59 built and 43 read back at depth 5, now 45 and 57)."""
    require_llama3(vocab)
    lazy = walk_like_tabled(vocab, nested_schema(4), json.loads(nested_reference(4)))
    assert lazy.work.masks_shared > lazy.work.masks_built, lazy.work
    checker, reach = SchemaChecker(nested_schema(3), "any", "lesson"), token_reach(vocab)
    text = nested_reference(3)
    # each level's name after its opening quote: one key for the three levels (none of them may close yet)
    at = [i + len('"name": "') for i in range(len(text)) if text.startswith('"name": "', i)]
    assert len(at) == 3
    keys = {checker.mask_key(_after(checker, text[:i]), reach) for i in at}
    assert len(keys) == 1, keys


# --- the keys themselves, with a reach given -------------------------------------------------------------

REACH = TokenReach(openings=(',"', ',"a'), closings=frozenset({"", "id"}))


def _after(checker, text: str):
    return checker.feed(checker.start(), text)


# Two objects of different nodes, alike but for whether key "id" (or "", which Llama 3's tokens close after a comma)
# can be closed: its value cannot be written in the second (false), so the second refuses what the first allows
# (each with a required key still to come after "v", so no token closes it and the frames below are left out)
_CLOSABLE_APART = {"type": "object", "properties": {
    "a": {"type": "object", "required": ["w"], "properties": {
        "v": {"type": "string"}, "w": {"type": "integer"}, "id": {"type": "integer"}, "": {"type": "integer"}}},
    "b": {"type": "object", "required": ["w"], "properties": {
        "v": {"type": "string"}, "w": {"type": "integer"}, "id": False, "": False}}}}


def test_objects_of_different_nodes_that_close_an_openings_key_apart_have_two_keys():
    """An object below a value is read without its node (`with_seen`), so what it reads must tell every object apart
    that a token tells apart: where any key may be written, the keys the openings close that the object refuses
    (a used property, or one whose value cannot be written), not only which of them are used."""
    checker = SchemaChecker(_CLOSABLE_APART, "any", "lesson")
    reach = TokenReach(openings=(',"', ',"id"'), closings=frozenset({"", "id"}), opening_keys=frozenset({"id"}))
    a, b = _after(checker, '{"a": {"v": "x"'), _after(checker, '{"b": {"v": "x"')
    assert checker.feed(a, ', "id": 1') is not None and checker.feed(b, ', "id"') is None
    assert checker._seen_as_read(a[-1], reach) != checker._seen_as_read(b[-1], reach)
    assert checker.mask_key(a, reach) != checker.mask_key(b, reach)
    # the same object after another of its keys is used reads as before: only a used property is refused
    used = _after(checker, '{"a": {"id": 1, "": 2, "v": "x"')
    assert checker._seen_as_read(used[-1], reach) == checker._seen_as_read(b[-1], reach)


def test_objects_that_close_an_openings_key_apart_keep_their_own_masks():
    """End to end, over a vocabulary whose tokens close key "id" after a comma and stop there (`, "id"`: Llama 3's
    that close a key after a comma all read on past its quote, so none tells these objects apart): lazy's masks stay
    tabled's where one object may write "id" and an object of another node, alike but for that, may not."""
    small = Vocabulary([chr(c) for c in range(32, 127)] + [', "id"', ',"id"', "<eos>"], eos="<eos>", name="ids")
    assert token_reach(small).opening_keys == frozenset({"id"})
    for value in ({"a": {"v": "x", "id": 1, "w": 1}, "b": {"v": "x", "w": 2}},
                  {"b": {"v": "x", "w": 2}, "a": {"v": "x", "id": 1, "w": 1}}):
        walk_like_tabled(small, _CLOSABLE_APART, value)


# Strict objects whose names to come differ only in whether their next character may be escaped: "b" may not be
# (no escape spells a printable ASCII letter), "/b" may (`\\/b`). A token that ends on a backslash after a comma and
# a quote (`,"\\`, a Llama 3 token) is allowed by the second, not the first (found in review, 2026-12-07).
_ESCAPABLE_APART = {"type": "object", "additionalProperties": False, "properties": {
    node: {"type": "object", "additionalProperties": False, "required": ["w"], "properties": {
        "v": {"type": "string"}, "w": {"type": "integer"}, name: {"type": "integer"}}}
    for node, name in (("p", "b"), ("q", "/b"))}}
_ESCAPABLE_ITEMS = {"type": "array", "items": {"type": "object", "additionalProperties": False, "properties": {
    "v": {"type": "string"}, "b": {"type": "integer"}, "/b": {"type": "integer"}}}}
_ENDS_ON_A_BACKSLASH = ',"\\'


def test_names_whose_next_character_escapes_apart_have_two_keys():
    """After a value, a strict object reads the names that may come as far as the openings write them
    (KeyTexts.as_far_as): an opening that ends on a backslash tells whether the name's next character may be
    escaped, so these states, in one node or two, have keys of their own."""
    small = Vocabulary([chr(c) for c in range(32, 127)] + [_ENDS_ON_A_BACKSLASH, "<eos>"], eos="<eos>", name="bs")
    reach = token_reach(small)
    for schema, first, second in ((_ESCAPABLE_APART, '{"p": {"w": 1, "v": "x"', '{"q": {"w": 1, "v": "x"'),
                                  (_ESCAPABLE_ITEMS, '[{"b": 1, "v": "x"', '[{"/b": 1, "v": "x"')):
        checker = SchemaChecker(schema, "any", "lesson")
        a, b = _after(checker, first), _after(checker, second)
        assert (checker.feed(a, _ENDS_ON_A_BACKSLASH) is None) != (checker.feed(b, _ENDS_ON_A_BACKSLASH) is None)
        assert checker.mask_key(a, reach) != checker.mask_key(b, reach)
    walk_like_tabled(small, _ESCAPABLE_APART, {"p": {"w": 1, "v": "x", "b": 2}, "q": {"w": 1, "v": "x", "/b": 2}})


def test_names_whose_next_character_escapes_apart_keep_their_masks_on_llama3(vocab):  # noqa: F811
    """End to end over Llama 3 (whose `,"\\` and `","\\` end on a backslash): lazy's masks stay tabled's along items
    that use "b" and "/b" in turn (each item's state after "v" read back the other's mask before)."""
    require_llama3(vocab)
    walk_like_tabled(vocab, _ESCAPABLE_ITEMS, [{"b": 1, "v": "x", "/b": 2}, {"/b": 1, "v": "x", "b": 2}])


def test_used_keys_a_token_cannot_reach_are_one_key():
    """After a value, the used keys a token cannot find out about give one key; whether the object may close,
    or a key a token can open (`"a` here), gives another."""
    checker = SchemaChecker({"type": "object", "required": ["id"], "properties": {
        "id": {"type": "integer"}, "bb": {"type": "integer"}, "cc": {"type": "integer"}, "ab": {"type": "integer"}}},
        "any", "lesson")
    key = lambda text: checker.mask_key(_after(checker, text), REACH)  # noqa: E731
    assert key('{"id": 1, "bb": 2') == key('{"cc": 3, "id": 1, "bb": 2') == key('{"id": 1, "cc": 3, "bb": 2')
    assert key('{"bb": 2') != key('{"id": 1, "bb": 2')  # may close or not
    assert _after(checker, '{"bb": 2') != _after(checker, '{"cc": 3, "bb": 2')
    assert key('{"bb": 2') == key('{"cc": 3, "bb": 2')


def test_inside_a_key_only_names_a_token_can_close_count():
    """In a key any key may be, a used property name is told apart only where a token can close the key as it
    (closings: "" and "id" here)."""
    checker = SchemaChecker({"type": "object", "properties": {
        "id": {"type": "integer"}, "name": {"type": "string"}, "nick": {"type": "string"}}}, "any", "lesson")
    key = lambda text: checker.mask_key(_after(checker, text), REACH)  # noqa: E731
    assert key('{"name": "x", "') == key('{"nick": "x", "')  # neither name closes from ""
    assert key('{"id": 1, "') != key('{"nick": "x", "')  # "id" does
    assert key('{"name": "x", "n') == key('{"nick": "x", "n')


def test_a_strict_key_reads_the_names_that_continue_it():
    """A strict object's key reads the names that may still come and continue its text (a used one no longer
    does), whichever keys are used."""
    strict = SchemaChecker({"type": "object", "additionalProperties": False, "properties": {
        "id": {"type": "integer"}, "name": {"type": "string"}, "nick": {"type": "string"}}}, "any", "lesson")
    key = lambda text: strict.mask_key(_after(strict, text), REACH)  # noqa: E731
    assert key('{"name": "x", "') != key('{"nick": "x", "')
    assert key('{"id": 1, "n') == key('{"n')  # "id" does not continue "n"
    assert key('{"name": "x", "n') != key('{"n')
    assert key('{"nick": "x", "na') == key('{"na')


def test_schema_order_reads_an_objects_place_not_its_node():
    """In schema order a strict object's frame is read by its place where another object node has that place: the
    properties that may still come, as far as a token reads them. The nested task's levels (each a node of its own)
    have one key at a key, after a comma, at a value and inside one (below an object that may not close yet); a key
    at another place has another."""
    reach = TokenReach(openings=REACH.openings, closings=REACH.closings, member_pops=False)
    checker = SchemaChecker(nested_schema(3), "schema", "lesson")
    key = lambda text: checker.mask_key(_after(checker, text), reach)  # noqa: E731
    level_two = '{"name": "Ada", "age": 36, "child": '
    for inner in ('{"', '{"na', '{"name', '{"name": ', '{"name": "B', '{"name": "Bo", ', '{"name": "Bo", "age": 7'):
        assert key(inner) == key(level_two + inner), inner
        one, two = ([f.node for f in _after(checker, text) if f.kind == "object"][-1]
                    for text in (inner, level_two + inner))
        assert one != two  # (the innermost objects are different nodes)
    assert key('{"name": "Bo", "') != key('{"')  # "age" may come, not "name"
    # An object whose places no other object has (one level: the person task's) is its own frame, but for its count,
    # which no rule reads: one place reached with one key or two reads alike.
    other = SchemaChecker({"type": "object", "additionalProperties": False, "required": ["b"], "properties": {
        "a": {"type": "integer"}, "b": {"type": "integer"}, "c": {"type": "integer"}}}, "schema", "lesson")
    frame = _after(other, '{"b": 2, "')[-1]
    assert other._key_as_read(frame, reach) is None and other._mask_frame(frame, reach) == frame._replace(count=0)
    assert checker._key_as_read(_after(checker, '{"na')[-1], reach) is not None  # (the nested levels' places)
    for inner in ('', '"', '"c'):
        assert (other.mask_key(_after(other, '{"a": 1, "b": 2, ' + inner), reach)
                == other.mask_key(_after(other, '{"b": 2, ' + inner), reach)), inner
    assert other.mask_key(_after(other, '{"a": 1, "'), reach) != other.mask_key(_after(other, '{"b": 2, "'), reach)


def test_below_an_object_that_may_not_close_no_token_reads(vocab):  # noqa: F811
    """On Llama 3 (no token holds a quote, a colon and then a closing bracket), in schema order: inside a value of
    an object whose required key is still to come, the frames below the object are no part of the key, and its
    states under a key and in an array have one mask; once the key is in, `1}]` is allowed in the array only, and
    their keys differ. Where a token could write the key and close the object (member_pops), they differ too."""
    require_llama3(vocab)
    checker = SchemaChecker({"type": "object", "additionalProperties": False, "$defs": {"o": {
        "type": "object", "additionalProperties": False, "required": ["id", "n"], "properties": {
            "id": {"type": "integer"}, "name": {"type": "string"}, "n": {"type": "integer"}}}}, "properties": {
        "a": {"$ref": "#/$defs/o"}, "l": {"type": "array", "items": {"$ref": "#/$defs/o"}}}}, "schema", "lesson")
    reach = token_reach(vocab)
    pops = TokenReach(reach.openings, reach.closings, reach.opening_keys, True, reach.front_keys, reach.front_texts,
                      reach.value_tails, reach.opening_texts, reach.close_texts, reach.closes_read_on)
    dense = LazyDense(checker, machine_boundaries(checker.special_chars()), vocab)
    for inner, alike in (('"id": 1', True), ('"id": 1, "name": "x', True), ('"id": 1, "name": "x"', True),
                         ('"id": 1, "n": 2', False)):
        stacks = [_after(checker, outer + inner) for outer in ('{"a": {', '{"l": [{')]
        one, two = map(dense.id_of, stacks)
        same_key = checker.mask_key(stacks[0], reach) == checker.mask_key(stacks[1], reach)
        same_mask = np.array_equal(dense.mask(one)[0], dense.mask(two)[0])
        assert same_key == same_mask == alike, inner
        assert checker.mask_key(stacks[0], pops) != checker.mask_key(stacks[1], pops), inner


def test_a_free_keys_text_and_node_are_read_only_as_far_as_a_token_closes_it():
    """Where any key may be written, keys of two object nodes, at different texts, have one key where the names
    a token closes from them (their text and one of the closings, "" and "id" here) are alike: the value's node
    and the used keys after it (no token reaches below the object here: member_pops)."""
    checker = SchemaChecker({"type": "object", "properties": {
        "a": {"type": "object", "properties": {"id": {"type": "integer"}, "x": {"type": "string"}}},
        "b": {"type": "object", "properties": {"id": {"type": "integer"}, "y": {"type": "string"}, "z": {
            "type": "integer"}}}}}, "any", "lesson")
    reach = TokenReach(openings=REACH.openings, closings=REACH.closings, member_pops=False)  # (the top alone)
    key = lambda text: checker.mask_key(_after(checker, text), reach)  # noqa: E731
    assert _after(checker, '{"a": {"x')[-1].node != _after(checker, '{"b": {"y')[-1].node
    assert key('{"a": {"x') == key('{"b": {"y')  # "x" and "y" close as strings
    assert key('{"a": {"x') != key('{"b": {"z')  # "z" as an integer
    assert key('{"a": {"x') != key('{"a": {"')  # from "", a token closes "id" too
    assert key('{"a": {"q') == key('{"b": {"qq') == key('{"a": {"i')  # other keys, no name closed ("iid" none)
    assert key('{"a": {"id": 1, "') != key('{"a": {"')  # "id" used: refused


def test_after_a_comma_a_strict_object_reads_its_names_as_far_as_a_token_writes_them():
    """After a strict object's comma, the names that may come are read as far as a token opening a key writes
    them (front_texts "n", "no"; front_keys "id"): zeta and zulu alike (no token writes "ze" or "zu"), name and
    nick too, note not."""
    reach = TokenReach(openings=(',"',), closings=frozenset({""}), member_pops=False, front_keys=frozenset({"id"}),
                       front_texts=KeyTexts(frozenset({"n", "no"})))
    checker = SchemaChecker({"type": "object", "additionalProperties": False, "properties": {
        name: {"type": "integer"} for name in ("id", "name", "nick", "note", "zeta", "zulu")}}, "any", "lesson")
    key = lambda text: checker.mask_key(_after(checker, text), reach)  # noqa: E731
    assert key('{"zeta": 1, ') == key('{"zulu": 1, ')
    assert key('{"name": 1, ') == key('{"nick": 1, ')  # no token writes "na" or "ni"
    assert key('{"note": 1, ') != key('{"nick": 1, ')  # one writes "no"
    assert key('{"zeta": 1, ') != key('{"id": 1, ')  # a token closes "id"
    assert key('{"zeta": 1, "zulu": 2, ') == key('{"zeta": 1, ')  # no token writes a key a "z" starts
    assert key('{"zeta": 1, "note": 2, ') != key('{"zeta": 1, ')  # nor "no" any more


def test_token_reach_reads_the_vocabulary():
    """Openings: each token's text from a comma and a quote on; closings: what a token holds before its first
    unescaped quote, decoded (escapes read, invalid ones and raw control characters left out)."""
    tokens = ['ab"', '\\u0041"', 'x\\"y"', '\\q"', 'a\x01"', '},"', ', "id', 'no quote', '","",']
    small = Vocabulary(tokens + ["<eos>"], eos="<eos>", name="reach")
    reach = token_reach(small)
    assert reach.openings == tuple(sorted({',"', ', "id', ',"",'}))
    assert reach.closings == frozenset({"ab", "A", 'x"y', "},", ", ", ""})
    assert reach.member_pops is False  # no token holds a quote, a colon, then a closing bracket
    assert reach.front_keys == frozenset({","}) and reach.front_texts == KeyTexts()  # `","",` opens a key ","
    assert token_reach(Vocabulary(tokens + ['":1}', "<eos>"], eos="<eos>", name="pops")).member_pops is True
    assert token_reach(Vocabulary(tokens + ['" : [\n]', "<eos>"], eos="<eos>", name="pops2")).member_pops is True


def test_below_an_objects_key_only_a_token_that_closes_it_reaches():
    """In a key, and after an object's comma, the frames below the object are left out of the key unless some
    token can close the object from there (member_pops, as a token `":1}` would, read in a key)."""
    checker = SchemaChecker({"type": "object", "$defs": {"o": {"type": "object"}}, "properties": {
        "a": {"$ref": "#/$defs/o"}, "l": {"type": "array", "items": {"$ref": "#/$defs/o"}}}}, "any", "lesson")
    key = lambda text, reach: checker.mask_key(_after(checker, text), reach)  # noqa: E731
    # (`},` and `1},` close an object and read on: frames below a value are read, container_reach)
    none = TokenReach(openings=(',"',), closings=frozenset({""}), member_pops=False, close_texts=("1},", "},"))
    some = TokenReach(openings=(',"',), closings=frozenset({""}), member_pops=True, close_texts=("1},", "},"))
    # One object node under a key and in an array, in its key and after its comma: alike but for what is below
    for inner in ('"b', '"b": 1, ', '"b": 1, "c'):
        assert _after(checker, '{"a": {' + inner)[-1] == _after(checker, '{"l": [{' + inner)[-1]
        assert key('{"a": {' + inner, none) == key('{"l": [{' + inner, none)
        assert key('{"a": {' + inner, some) != key('{"l": [{' + inner, some)
    # After a value, below it: a token reads on to `}` and then the frames below
    assert key('{"a": {"b": 1', none) != key('{"l": [{"b": 1', none)
    assert key('{"a": {"b": 1, "c": ', none) != key('{"l": [{"b": 1, "c": ', none)
    assert key('{"a": {"b": "x"', none) != key('{"l": [{"b": "x"', none)


def test_keys_of_one_object_node_share_masks_where_no_token_reaches_below(vocab):  # noqa: F811
    """On Llama 3 (no token closes an object from its key): the inner object's key states under a key and in an
    array have one mask key and one mask; after its value they have two masks (`}]` is allowed in the array
    only), so their keys differ."""
    require_llama3(vocab)
    checker = SchemaChecker({"type": "object", "$defs": {"o": {"type": "object"}}, "properties": {
        "a": {"$ref": "#/$defs/o"}, "l": {"type": "array", "items": {"$ref": "#/$defs/o"}}}}, "any", "lesson")
    dense = LazyDense(checker, machine_boundaries(checker.special_chars()), vocab)
    reach = token_reach(vocab)
    assert reach.member_pops is False
    for inner, alike in (('"b', True), ('"b": 1, ', True), ('"b": 1, "cd', True), ('"b": "x"', False)):
        one, two = (dense.id_of(_after(checker, outer + inner)) for outer in ('{"a": {', '{"l": [{'))
        same_key = checker.mask_key(dense.states[one], reach) == checker.mask_key(dense.states[two], reach)
        same_mask = np.array_equal(dense.mask(one)[0], dense.mask(two)[0])
        assert same_key == same_mask == alike, inner


def test_in_a_key_whether_the_object_may_close_counts_only_where_a_token_reaches_its_bracket(vocab):  # noqa: F811
    """In a key, and after an object's comma, whether the object may close is told apart only where some token
    reads from there to its closing bracket (a quote, a colon, then the bracket: member_pops). With no such token
    (Llama 3), a key before the last required one and a key after it have one mask key and one mask; after a
    value, where `}` is read at once, two."""
    require_llama3(vocab)
    checker = SchemaChecker({"type": "object", "required": ["id", "name"], "properties": {
        "id": {"type": "integer"}, "name": {"type": "string"}, "note": {"type": "string"}}}, "any", "lesson")
    dense = LazyDense(checker, machine_boundaries(checker.special_chars()), vocab)
    reach = token_reach(vocab)
    pops = TokenReach(reach.openings, reach.closings, reach.opening_keys, True, reach.front_keys, reach.front_texts,
                      reach.value_tails, reach.opening_texts)
    for inner, alike in (('"no', True), ('"', True), ('', True), ('"note": "x"', False)):
        before, after = (_after(checker, '{' + used + ', ' + inner) for used in ('"id": 1', '"id": 1, "name": "a"'))
        one, two = dense.id_of(before), dense.id_of(after)
        same_key = checker.mask_key(before, reach) == checker.mask_key(after, reach)
        same_mask = np.array_equal(dense.mask(one)[0], dense.mask(two)[0])
        assert same_key == same_mask == alike, inner
        assert checker.mask_key(before, pops) != checker.mask_key(after, pops), inner  # a token could close it


def test_tails_of_a_comma_are_read_once_per_answer_of_whether_a_key_may_come(vocab):  # noqa: F811
    """A key's tails (Llama 3: `,\\n` and `,"`) are read per object node and whether a key may come, not per set of
    used keys (`_tails_read`): the same as stepping them from each set's own frame, for free and strict objects,
    with and without required keys, every name used or not."""
    require_llama3(vocab)
    reach = token_reach(vocab)
    assert set(reach.value_tails) == {',\n', ',"'}
    names = ["id", "name", "note", "tags"]
    for extra in ({}, {"additionalProperties": False}, {"required": ["id", "note"]},
                  {"additionalProperties": False, "required": ["name"]}, {"minProperties": 3}):
        checker = SchemaChecker({"type": "object", "properties": {n: {"type": "integer"} for n in names}, **extra},
                                "any", "lesson")
        frame = _after(checker, '{"')[-1]
        for k in range(1 << len(names)):
            seen = frozenset(n for j, n in enumerate(names) if k >> j & 1)
            after = frame._replace(phase=AFTER_VALUE, text="", ks=(), seen=seen)
            assert checker._tails_read(frame, seen, reach) == checker._reads_of_openings(after, reach.value_tails), \
                (extra, seen)


def test_where_any_key_may_come_only_the_keys_openings_close_count():
    """Where any key may be written, an object's used keys are told apart, below a value, only by the keys the
    vocabulary's openings close (here the empty key, as Llama 3's `,""` does) and whether it may close."""
    reach = TokenReach(openings=(',"', ',""'), closings=frozenset({""}), opening_keys=frozenset({""}))
    checker = SchemaChecker({"type": "object", "required": ["b"], "properties": {
        "": {"type": "integer"}, "a": {"type": "integer"}, "b": {"type": "integer"}}}, "any", "lesson")
    key = lambda text: checker.mask_key(_after(checker, text), reach)  # noqa: E731
    assert key('{"a": 1, "b": 2') == key('{"b": 2')
    assert key('{"": 0, "b": 2') != key('{"b": 2')  # a token can write `,""` and find "" used
    assert key('{"b": 2, "a": 1') != key('{"a": 1')  # may close, or not yet


def test_token_reach_reads_the_keys_tokens_open():
    """front_keys: the key a token opening one (whitespace, a quote) closes, decoded; front_texts: as far as it
    writes one it does not close, an escape it leaves unfinished set apart with what of it is written after its
    backslash (escaped backslashes kept); tokens that are no string content, left out."""
    tokens = ['"id"', ' "name":', '\n"desc', '"x\\u00', '"y\\\\', '"z\\\\\\', '"\\q', '"a\x01', '"\\u0041b',
              'no', ',"c', '"']
    reach = token_reach(Vocabulary(tokens + ["<eos>"], eos="<eos>", name="fronts"))
    assert reach.front_keys == frozenset({"id", "name"})
    assert reach.front_texts == KeyTexts(frozenset({"desc", "y\\", "Ab", ""}), frozenset({("x", "u00"), ("z\\", "")}))
    assert reach.value_tails == ()  # no token reads on after a key's value


def test_token_reach_reads_what_tokens_closing_a_key_read_after_its_value():
    """value_tails: the rest of each token holding a quote and later a colon, from every comma or closing bracket
    after them (where its value may end and the object read on: `":[1],"` ends the array first); a key's
    reading of the used keys after its value reads only those (_tails_as_read)."""
    tokens = ['":"",\n', '":[1],"', 'a":1}', '":x', ',"', '"}', ':1,']
    reach = token_reach(Vocabulary(tokens + ["<eos>"], eos="<eos>", name="tails"))
    assert reach.value_tails == tuple(sorted({',\n', '],"', ',"', '}'}))
    checker = SchemaChecker({"type": "object", "additionalProperties": False, "properties": {
        name: {"type": "string"} for name in ("a", "b", "c")}}, "any", "lesson")
    none = TokenReach(openings=(), closings=frozenset({""}), member_pops=False)
    some = TokenReach(openings=(), closings=frozenset({""}), member_pops=False, value_tails=(',"',))
    key = lambda text, reach: checker.mask_key(_after(checker, text), reach)  # noqa: E731
    # Closing "a" from its text: after its value, b and c may still come (`,"` read), or no key may (c used)
    assert key('{"b": "", "a', none) == key('{"b": "", "c": "", "a', none)
    assert key('{"b": "", "a', some) != key('{"b": "", "c": "", "a', some)


def test_key_texts_tell_names_apart_only_as_far_as_a_token_writes_them():
    """A name's rest is cut at its longest start a token writes; where an unfinished escape follows that start,
    the next character (its digits ask for it), or whether such an escape may stand for it (a backslash alone:
    `"`, `/`, a backslash or what `\\u` may spell; `\\u` alone: no printable ASCII character)."""
    texts = KeyTexts(frozenset({"n", "no"}), frozenset({("", ""), ("de", "u00"), ("x", "u")}))
    assert texts.as_far_as("name") == texts.as_far_as("nick") == "n"
    assert texts.as_far_as("note") == "no"
    assert texts.as_far_as("zeta") == texts.as_far_as("zulu") == ("", False, False) != texts.as_far_as("")
    assert texts.as_far_as("/b") == texts.as_far_as('"b') == ("", True, False) != texts.as_far_as("b")
    assert texts.as_far_as("\u00e9") == texts.as_far_as("/") == ("", True, False)  # (`\\u00e9`, `\\/`)
    assert texts.as_far_as("desk") == "des" != texts.as_far_as("dew") and texts.as_far_as("de") == "de"
    assert texts.as_far_as("xy") == ("x", False, False) != texts.as_far_as("x\u00e9") == ("x", False, True)
    assert KeyTexts().as_far_as("name") == ""
    # what an escape tells is never a name's text, whatever the name spells
    odd = KeyTexts(frozenset({"\x00\x02goes on"}), frozenset({("", "")}))
    assert odd.as_far_as("\x00\x02goes on") == "\x00\x02goes on" != odd.as_far_as("b")


def test_a_wide_strict_object_keeps_its_key_frames_whole():
    """A strict object with more names than _names_as_read reads per key (256) keeps its key's frame, and its frame
    after a comma, whole: read per key, its names would cost a wide object's answer time squared in its names."""
    checker = SchemaChecker({"type": "object", "additionalProperties": False, "properties": {
        f"f{i}": {"type": "integer"} for i in range(1000)}}, "any", "lesson")
    for text in ('{"f1": 1, ', '{"f1": 1, "f'):  # (1,000 names, 999 that may come)
        stack = _after(checker, text)
        assert checker._mask_frame(stack[-1], REACH) == stack[-1], text  # (mask_key numbers each frame's part)
    narrow = _after(checker, '{"f1": 1, "f2')  # (111 names continue it: read)
    assert checker._mask_frame(narrow[-1], REACH) != narrow[-1]


# --- below the innermost container (structbench.jsonschema.container_reach) ------------------------------------


def test_below_a_container_no_token_closes_and_reads_on_is_left_out():
    """Frames below the innermost object or array are left out of the key where no token closes it and reads on
    (close_texts: the tokens with a closing bracket before their last character): one that cannot close it from
    there (`}x` after a colon, `1},` inside a string) or whose rest after the bracket no parent reads (`1}x`) tells
    nothing; one that closes it and goes on as some parent reads (`1},`, `""}}`, `"},`) does."""
    checker = SchemaChecker({}, "any", "lesson")
    plain = TokenReach(openings=(',"',), closings=frozenset({""}), member_pops=False, close_texts=())
    key = lambda text, reach: checker.mask_key(_after(checker, text), reach)  # noqa: E731
    deep, shallow = '{"a": [{"b": {"c": ', '{"c": '
    assert key(deep, plain) == key(shallow, plain)
    unknown = TokenReach(openings=(',"',), closings=frozenset({""}), member_pops=False)  # (close_texts None)
    assert key(deep, unknown) != key(shallow, unknown)  # not known: nothing left out
    assert key(deep + "1", plain) == key(shallow + "1", plain)  # a number's frames too
    assert key(deep + '"x', plain) == key(shallow + '"x', plain)
    # (texts, alike after the colon, alike inside a string value)
    for texts, value_alike, string_alike in ((("}x",), True, True), (("1}x", "]]"), True, True),
                                             (("1},",), False, True), (('"},',), True, False),
                                             (('""}}',), False, True)):
        reach = TokenReach(openings=plain.openings, closings=plain.closings, member_pops=False, close_texts=texts)
        assert (key(deep, reach) == key(shallow, reach)) is value_alike, texts
        assert (key(deep + '"x', reach) == key(shallow + '"x', reach)) is string_alike, texts
    # Escapes, unions and a top-level value keep every frame
    reach = plain
    assert key(deep + '"x\\', reach) != key(shallow + '"x\\', reach)
    union = SchemaChecker({"type": "object", "$defs": {"o": {"type": "object", "properties": {"u": {"anyOf": [
        {"type": "integer", "maximum": 100}, {"type": "integer", "minimum": 50}]}}}}, "properties": {
        "a": {"$ref": "#/$defs/o"}, "l": {"type": "array", "items": {"$ref": "#/$defs/o"}}}}, "any", "lesson")
    key = lambda text: union.mask_key(_after(union, text), reach)  # noqa: E731
    assert key('{"a": {"u": ') == key('{"l": [{"u": ')  # one object node, below a key and in an array
    assert _after(union, '{"a": {"u": 7')[-1].kind == "union"  # both branches live: a union frame on top
    assert key('{"a": {"u": 7') != key('{"l": [{"u": 7')
    assert key('{"a": {"u": 7') == key('{"a": {"u": 8')  # (its frames as they are)
    assert checker.mask_key(_after(checker, '"x'), reach)[0] != "below unread"  # a top-level value: no container


def test_closes_and_reads_on_asks_a_twin_of_any_json_value():
    """container_reach's question, per whitespace policy: after an object's colon, Llama 3's ` ""},\n` closes
    the object and reads `,\n`, which no parent reads under the lesson's whitespace (one space after a comma) and
    an object reads under flexible whitespace; from inside a string value `"},` reads on under both."""
    from structbench.jsonschema.container_reach import closes_and_reads_on, container_config

    texts = (' ""},\n', "}x")
    for whitespace, after_colon in (("lesson", False), ("flexible", True)):
        checker = SchemaChecker({}, "any", whitespace)
        kept = {}
        config = container_config(_after(checker, '{"a": {"b":'))
        assert config[0] == 2
        assert closes_and_reads_on(whitespace, config[1], texts, kept) is after_colon
        string = container_config(_after(checker, '{"a": {"b": "x'))
        assert closes_and_reads_on(whitespace, string[1], texts, kept) is False
        assert closes_and_reads_on(whitespace, string[1], ('"},',), {}) is True
        assert closes_and_reads_on(whitespace, string[1], ('"},',), kept) is False  # kept: one vocabulary's texts
        assert {(whitespace, config[1]), (whitespace, string[1])} <= kept.keys()
    checker = SchemaChecker({}, "any", "lesson")
    assert container_config(_after(checker, '"x')) is None  # no container
    assert container_config(_after(checker, '{"a": "x\\')) is None  # in an escape
    assert container_config(_after(checker, '{"a": {"b')) is None  # a key: member_pops' rule


@pytest.mark.parametrize("whitespace", ["lesson", "compact", "flexible"])
def test_json_modes_values_at_every_depth_share_a_mask(vocab, whitespace):  # noqa: F811
    """On Llama 3: JSON mode's states at different depths with one key have one mask (each walked on its own),
    and an object's value, after its colon, at depth 2 and 3 have one key under the lesson's whitespace (the only
    token that closes the object from there and reads on, ` ""},\n`, reads on as no parent does)."""
    require_llama3(vocab)
    checker = SchemaChecker({}, "any", whitespace)
    dense = LazyDense(checker, machine_boundaries(checker.special_chars()), vocab)
    separators = {"lesson": (", ", ": "), "compact": (",", ":"), "flexible": (", ", ": ")}[whitespace]
    value = {"a": {"b": {"c": [1, {"d": "x"}], "e": None}, "f": [[2.5, True]]}, "g": {"h": "y"}}
    states = reached_states(checker, dense, vocab, value, np.random.default_rng(11), branches=16,
                            separators=separators)
    reach, cut = token_reach(vocab), 0
    for key, group in _groups(checker, dense, set(states), reach).items():
        first, *rest = sorted(group)
        for other in rest:
            assert np.array_equal(dense.mask(first)[0], dense.mask(other)[0]), (dense.states[first],
                                                                                dense.states[other])
        cut += key[0] == "below unread" and len({len(dense.states[i]) for i in group}) > 1
    if whitespace == "lesson":  # (which states are cut depends on the policy: each is checked sound above)
        assert cut > 0  # some states at different depths share their key
        one, two = (checker.mask_key(_after(checker, text), reach) for text in ('{"a":', '{"a": {"b":'))
        assert one == two


def test_container_reach_is_learnt_for_every_config_at_the_vocabularys_setup(vocab):  # noqa: F811
    """learn answers every config container_config can make, under each policy (so no mask computes one), and
    names the tops where none is cut: on Llama 3 a string's and a number's in a value, and an object after a value
    (`},` reads on); an object's value after its colon is cut under the lesson's whitespace."""
    require_llama3(vocab)
    from structbench.jsonschema.container_reach import _all_configs, learn, never_cut
    from structbench.jsonschema.frames import NUMBER, OBJECT, STRING, VALUE, Phase

    reach = token_reach(vocab)
    learn(reach.close_texts, reach.closes_read_on)  # (index_vocabulary has: nothing new)
    for whitespace in ("lesson", "compact", "flexible"):
        assert all((whitespace, config) in reach.closes_read_on for _, config in _all_configs())
        never = never_cut(whitespace, reach.closes_read_on)
        assert {(STRING, Phase.NONE), (NUMBER, Phase.NONE), (OBJECT, AFTER_VALUE)} <= never
        assert ((OBJECT, VALUE) in never) is (whitespace == "flexible")
    checker = SchemaChecker({}, "any", "lesson")
    for text in ('{"a": [{"b": "x', '{"a": {"b": 1', '{"a": {"b": 1}', '{"a": [1, ', '{"a": {"b":', '{"a": {"b": t'):
        stack = _after(checker, text)  # each config as container_config makes it is one learnt
        assert ("lesson", container_config_of(stack)) in reach.closes_read_on, text


def container_config_of(stack):
    from structbench.jsonschema.container_reach import container_config

    found = container_config(stack)
    return None if found is None else found[1]


def _one_mask_per_key(checker, vocab, prefixes) -> dict:
    """The prefixes' stacks grouped by mask key, each group's masks (every token fed whole to the checker, the end
    token by can_end) asserted equal; returns the keys."""
    reach, groups = token_reach(vocab), {}
    for prefix in prefixes:
        stack = _after(checker, prefix)
        assert stack is not None, prefix
        groups.setdefault(checker.mask_key(stack, reach), []).append((prefix, stack))

    def mask(stack):
        return [checker.can_end(stack) if t == "<eos>" else checker.feed(stack, t) is not None for t in vocab.tokens]

    for group in groups.values():
        first = mask(group[0][1])
        for prefix, stack in group[1:]:
            assert mask(stack) == first, (group[0][0], prefix)
    return {prefix: key for key, group in groups.items() for prefix, _ in group}


def test_closes_read_on_counts_closing_brackets_outside_strings_with_a_character_after():
    from structbench.masking.shared_masks import _closes_read_on

    assert _closes_read_on("}}},\n", False, False) == 3
    assert _closes_read_on("}}}", False, False) == 2  # (the last closes, and reads nothing on)
    assert _closes_read_on('"}},\n', True, False) == 2  # the string's quote, then two brackets
    assert _closes_read_on('"}},\n', False, False) == 0  # the quote opens a string: its brackets are text
    assert _closes_read_on('x]}"', True, False) == 0  # inside the string
    assert _closes_read_on('\\"]]x', True, False) == 0  # an escaped quote does not close it
    assert _closes_read_on('"]]x', True, True) == 0  # just after a backslash: the quote is escaped
    assert _closes_read_on('\\"]]x', True, True) == 2  # the backslash escaped, the quote closes
    assert _closes_read_on("[]],", False, False) == 2  # (one it opened itself: counted too, a bound)


def test_token_reach_counts_the_closes_a_llama3_token_reads_on_past(vocab):  # noqa: F811
    require_llama3(vocab)
    reach = token_reach(vocab)
    assert (reach.pops_read_on, reach.string_pops_read_on) == (3, 2)  # `}}},\n`; `"}},\n`


@pytest.mark.parametrize("extra, apart", [
    ([], []),
    (["]],", '"]],'], []),  # two closes read on past, from outside a string and from inside one: as deep as that
    (["]]],"], ["[[[", "[[[1"]),  # three: the stack one level less deep is read to its root
    (['"]]],'], ['[[["x']),  # three from inside a string
])
def test_below_the_containers_a_token_can_close_no_frame_is_read(extra, apart):
    """A stack one array deeper than another shares its key where no token closes more arrays than both hold
    and reads on (each key's masks asserted equal, every token fed whole); with one that does, they differ."""
    checker = SchemaChecker({}, "any", "lesson")
    vocab = Vocabulary(list('{}[]",:1x ') + extra + ["<eos>"], eos="<eos>", name=f"depth {extra}")
    pairs = [("[[[", "[[[["), ("[[[1", "[[[[1"), ('[[["x', '[[[["x')]
    keys = _one_mask_per_key(checker, vocab, [prefix for pair in pairs for prefix in pair])
    for shallow, deep in pairs:
        assert (keys[shallow] != keys[deep]) is (shallow in apart), (shallow, extra)


def test_the_nested_tasks_pets_share_a_key_below_the_containers_a_token_closes(vocab):  # noqa: F811
    """In schema order, inside each level's pet (a string, in an array, in that level's object), levels 5 to 2
    share one key: below the level's parent no Llama 3 token reads (`"}},\\n` closes two and reads on), and the
    parent's frame is read by its place, not by its child's node (`below_value`). Level 1's parent is the root:
    its own key. Each key's masks are equal."""
    require_llama3(vocab)
    checker = SchemaChecker(nested_schema(5), "schema", "lesson")
    text, reach = nested_reference(5), token_reach(vocab)
    prefixes = [text[:k + len('"pets": ["')] for k in range(len(text)) if text.startswith('"pets": [', k)]
    dense = LazyDense(checker, machine_boundaries(checker.special_chars()), vocab)
    states = [dense.id_of(_after(checker, prefix)) for prefix in prefixes]  # level 5 first
    keys = [checker.mask_key(dense.states[i], reach) for i in states]
    assert len(set(keys[:4])) == 1 and keys[4] != keys[0]
    for i in states[1:4]:
        assert np.array_equal(dense.mask(states[0])[0], dense.mask(i)[0])


@pytest.mark.parametrize("token, deep, shallow", [
    # closes the object and then the array below it, and reads on: only the twin's parent that closes too tells it
    ("1}],", '{"x": [{"b":', '[{"b":'),
    # reads on from a number's exponent: only the twin's number at every state of its syntax tells it
    ("+5},", '{"x": {"b": 1e', '{"b": 1e'),
])
def test_crafted_tokens_keep_apart_what_they_read(token, deep, shallow):
    """On vocabularies where one token alone reads below the container, and only one of the twin's rules finds it,
    the two stacks keep their keys apart and every key has one mask; without that token they share a key."""
    characters = list('{}[]",:1ae+5 ')
    checker = SchemaChecker({}, "any", "lesson")
    with_token = Vocabulary(characters + [token, "<eos>"], eos="<eos>", name=f"crafted {token}")
    keys = _one_mask_per_key(checker, with_token, [deep, shallow, deep + "1", shallow + "1"])
    assert keys[deep] != keys[shallow]
    assert (checker.feed(_after(checker, deep), token) is None) != (checker.feed(_after(checker, shallow), token)
                                                                    is None)
    without = Vocabulary(characters + ["<eos>"], eos="<eos>", name=f"crafted without {token}")
    keys = _one_mask_per_key(checker, without, [deep, shallow])
    assert keys[deep] == keys[shallow]


def test_container_reach_holds_under_any_whitespace_limit(monkeypatch):
    """The answers are kept for the process, whatever limits a trial sets: learnt under a flexible whitespace run
    of 1, a checker under the default limit (64) still keeps `[` and `[[` apart where `]  ,` reads on."""
    from structbench.jsonschema import container_reach
    from structbench.jsonschema.container_reach import learn
    from structbench.limits import Limits, using

    monkeypatch.setattr(container_reach, "_twins", {})  # (the twin made now, under the small limit)

    vocab = Vocabulary(list('[]{}":,1a ') + [']  ,', "<eos>"], eos="<eos>", name="whitespace run")
    reach = token_reach(vocab)
    with using(Limits.from_settings({"max_flexible_whitespace": 1})):
        learn(reach.close_texts, reach.closes_read_on)
    checker = SchemaChecker({}, "any", "flexible")
    keys = _one_mask_per_key(checker, vocab, ["[", "[[", '{"a": [', '[1, ['])
    assert keys["["] != keys["[["]


@pytest.mark.parametrize("key_order, numbers, whitespace", [("schema", "lesson", "lesson"), ("any", "lesson", "compact"),
                                                             ("schema", "json", "flexible")])
def test_one_object_node_below_a_key_and_in_an_array_under_every_setting(key_order, numbers, whitespace):
    """One object node below a key and in an array's items, at its value after the colon: one key (and one mask)
    where no token closes it and reads on; apart where `1}],` (closing it, then the array) does."""
    schema = {"type": "object", "additionalProperties": False, "$defs": {"o": {
        "type": "object", "additionalProperties": False, "properties": {"b": {"type": "integer"}}}},
        "properties": {"a": {"$ref": "#/$defs/o"}, "l": {"type": "array", "items": {"$ref": "#/$defs/o"}}}}
    checker = SchemaChecker(schema, key_order, whitespace, numbers)
    colon = ":" if whitespace == "compact" else ": "
    below_key, in_array = '{"a"' + colon + '{"b"' + colon, '{"l"' + colon + '[{"b"' + colon
    characters = list('{}[]",:1ab ')
    for extra, alike in (([], True), (["1}],"], False)):
        vocab = Vocabulary(characters + extra + ["<eos>"], eos="<eos>", name=f"one node {extra}")
        keys = _one_mask_per_key(checker, vocab, [below_key, in_array])
        assert (keys[below_key] == keys[in_array]) is alike


# --- an object's value still to open, read alone (SchemaChecker._value_reads_past) ---------------------------

def test_token_reach_reads_the_values_tokens_finish_and_read_past():
    """value_texts: from a value's first character (after JSON whitespace), up to the last comma or closing brace,
    for values other than strings; string_values: the strings a token finishes and follows with a comma, a
    closing brace or whitespace, decoded."""
    tokens = [' "",', '"a"}', '"b"x', '"\\u0041" ', '"c', '1,', ' -2}', '[],', '{}', 'true,', 'x,', ',', '"\\q",',
              '-,', '[]),', '1.5e,', '{} ,']
    reach = token_reach(Vocabulary(tokens + ["<eos>"], eos="<eos>", name="values"))
    # (`{}`: nothing after it; `-,`, `1.5e,`, `x,`: no JSON value; `[]),`: a parenthesis after the value)
    assert reach.value_texts == ("-2}", "1,", "[],", "true,", "{} ,")
    assert reach.string_values == ("", "A", "a")  # (`"b"x`: no comma after; `"\q"`: no string content)
    assert reach.value_tree == {"-": {"2": {"}": {}}}, "1": {",": {}}, "[": {"]": {",": {}}},
                                "t": {"r": {"u": {"e": {",": {}}}}}, "{": {"}": {" ": {",": {}}}}}


def test_token_reach_reads_the_values_llama3_tokens_finish(vocab):  # noqa: F811
    require_llama3(vocab)
    reach = token_reach(vocab)
    assert reach.string_values == ("", "'", ")", "*", ",", "-", ".", "/", "=")  # ` "",` and its like
    assert reach.value_texts == ("[],", "[]}", "{},")  # no number, no literal: only empty containers


VALUES = {"type": "object", "required": ["n", "s", "e", "l"], "properties": {
    "n": {"type": "integer"}, "s": {"type": "string"}, "e": {"type": "string", "minLength": 2},
    "l": {"type": "array", "items": {"type": "integer"}}, "m": {"type": "number"}, "t": {"type": "string"},
    "f": {"type": "string", "minLength": 2}, "b": {"type": "boolean"}, "a": {"type": "array"},
    "u": {"anyOf": [{"type": "integer"}, {"type": "string", "pattern": "^x+$"}]}}}


def _one_dense_mask_per_key(checker, vocab, prefixes) -> dict:
    """_one_mask_per_key on a large vocabulary: each group's masks walked on their own by LazyDense."""
    reach, groups = token_reach(vocab), {}
    dense = LazyDense(checker, machine_boundaries(checker.special_chars()), vocab)
    for prefix in prefixes:
        stack = _after(checker, prefix)
        assert stack is not None, prefix
        groups.setdefault(checker.mask_key(stack, reach), []).append((prefix, dense.id_of(stack)))
    for group in groups.values():
        first = dense.mask(group[0][1])[0]
        for prefix, i in group[1:]:
            assert np.array_equal(dense.mask(i)[0], first), (group[0][0], prefix)
    return {prefix: key for key, group in groups.items() for prefix, _ in group}


def test_an_objects_value_no_token_finishes_is_read_alone(vocab):  # noqa: F811
    """After a key's colon, where no Llama 3 token finishes the value and reads on (a number, a boolean, a string
    of at least two characters, a union of an integer and a string of x's), the object's used keys and the frames
    below it are no part of the key: the value of an object that may close once it is written, of one that may
    not, and of the next item's object share it. A string that may be empty, or an array (` ""}`, `[]}`), keeps
    them. Each key's masks are equal, each walked on its own."""
    require_llama3(vocab)
    checker = SchemaChecker({"type": "array", "items": VALUES}, "any", "lesson")
    prefixes = {name: [f'[{{"{name}": ', f'[{{"n": 1, "s": "", "e": "ab", "l": [], "{name}": ',
                       f'[{{"n": 2, "s": "", "e": "ab", "l": []}}, {{"x": 1, "{name}": ']
                for name in ("m", "f", "b", "u", "t", "a")}
    keys = _one_dense_mask_per_key(checker, vocab, [p for group in prefixes.values() for p in group])
    for name, group in prefixes.items():
        assert (len({keys[p] for p in group}) == 1) is (name in "mfbu"), name
        assert (keys[group[0]][0] == "value alone") is (name in "mfbu"), name


@pytest.mark.parametrize("token", ["1}", "1 }", '"ab"}', "[1]}", "-1}", "true}"])
def test_a_token_that_finishes_the_value_and_reads_on_keeps_the_object(token):
    """On vocabularies where one token finishes the value and reads on (after whitespace too), the object's frame
    stays in the key: an object that may close once the value is written and one that may not keep their keys
    apart, and every key has one mask; without the token they share a key."""
    value = {"anyOf": [{"type": "integer"}, {"type": "string", "minLength": 2}, {"type": "array"},
                       {"type": "boolean"}]}
    checker = SchemaChecker({"type": "object", "required": ["a", "b"], "properties": {"a": value, "b": value}},
                            "any", "flexible")
    characters = list('{}[]",:1ab-tru ')
    before, after = '{"a": ', '{"b": 1, "a": '  # (after: the object may close once the value is written)
    with_token = Vocabulary(characters + [token, "<eos>"], eos="<eos>", name=f"finishes {token}")
    keys = _one_mask_per_key(checker, with_token, [before, after])
    assert keys[before] != keys[after]
    assert (checker.feed(_after(checker, before), token) is None) != (checker.feed(_after(checker, after), token)
                                                                      is None)
    without = Vocabulary(characters + ["<eos>"], eos="<eos>", name="finishes nothing")
    keys = _one_mask_per_key(checker, without, [before, after])
    assert keys[before] == keys[after] and keys[before][0] == "value alone"


def test_the_nested_tasks_innermost_age_shares_the_outer_levels_key(vocab):  # noqa: F811
    """In schema order, after `"age": ` the innermost level (an object with no child to come) shares its key
    with the outer levels': no Llama 3 token finishes an integer and reads on."""
    require_llama3(vocab)
    checker = SchemaChecker(nested_schema(5), "schema", "lesson")
    text, reach = nested_reference(5), token_reach(vocab)
    prefixes = [text[:k + len('"age": ')] for k in range(len(text)) if text.startswith('"age": ', k)]
    keys = {checker.mask_key(_after(checker, prefix), reach) for prefix in prefixes}
    assert len(prefixes) == 5 and len(keys) == 1


# --- strings whose length only is checked (SchemaChecker._length_as_read) -------------------------------------

def test_token_reach_knows_the_longest_token(vocab):  # noqa: F811
    require_llama3(vocab)
    assert token_reach(vocab).longest == 128
    assert token_reach(Vocabulary(["ab", "abcd", "<eos>"], eos="<eos>", name="longest")).longest == 4  # (not <eos>)


@pytest.mark.parametrize("tokens, alike", [
    (["a", "aa", "aaa"], {5, 6, 7, 8}),  # at most 3 characters a token, and one more as a margin
    (["a", "aa", "aaa", "aaaaa"], {5, 6}),
    (["a", "\\u0061"], set()),  # a token of six characters: no count is far enough from both bounds
    (["a", "aa", "aaa", "\\n", "a\\", "\\na"], {5, 6, 7, 8}),  # escapes: one character each, or left open
])
def test_counts_far_from_both_bounds_share_a_key(tokens, alike):
    """A string of 5 to 12 characters: the counts at least minLength and at least the longest token and one more
    below maxLength share a key, the rest keep theirs; every key's masks equal, every token fed whole."""
    checker = SchemaChecker({"type": "object", "properties": {"s": {"type": "string", "minLength": 5,
                                                                      "maxLength": 12}}}, "any", "lesson")
    vocab = Vocabulary(list('{}[]",: x') + tokens + ["<eos>"], eos="<eos>", name=f"counts {tokens}")
    prefixes = {n: '{"s": "' + "a" * n for n in range(13)}
    keys = _one_mask_per_key(checker, vocab, list(prefixes.values()))
    shared = {n for n in prefixes if any(keys[prefixes[n]] == keys[prefixes[m]] for m in prefixes if m != n)}
    assert shared == (alike if len(alike) > 1 else set())


def test_far_below_min_length_counts_share_a_key():
    """Where no token reaches minLength, no closing quote is taken at any such count: they share a key."""
    checker = SchemaChecker({"type": "string", "minLength": 10}, "any", "lesson")
    vocab = Vocabulary(list('"ab') + ["ab", 'ab"', "<eos>"], eos="<eos>", name="below min")
    prefixes = ['"' + "a" * n for n in range(11)]
    keys = _one_mask_per_key(checker, vocab, prefixes)  # the longest token 3 characters: counts 0 to 5 are 3 + 1
    assert len({keys[p] for p in prefixes[:6]}) == 1  # and more below 10; 6 to 10 each their own
    assert len({keys[p] for p in prefixes[5:]}) == 6


def test_contradictory_length_bounds_keep_every_count():
    """minLength above maxLength: no count may close, and each moves on differently (three, two, one more
    character, then none): no count shares a key."""
    checker = SchemaChecker({"type": "string", "minLength": 10, "maxLength": 3}, "any", "lesson")
    vocab = Vocabulary(['"', "a", "aa", "<eos>"], eos="<eos>", name="contradictory")
    prefixes = ['"' + "a" * n for n in range(4)]
    keys = _one_mask_per_key(checker, vocab, prefixes)
    assert len({keys[p] for p in prefixes}) == 4


def test_token_reach_reads_a_number_longer_than_python_reads_as_an_int():
    """A token of more digits than Python converts to an int still finishes a number: its text is kept."""
    digits = "1" * 5000
    reach = token_reach(Vocabulary([digits + ",", "<eos>"], eos="<eos>", name="long number"))
    assert reach.value_texts == (digits + ",",)


@pytest.mark.parametrize("schema, whitespace, text", [
    ({"type": "array", "items": {"anyOf": [
        {"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": False},
        {"type": "object", "properties": {"name": {"type": ["string", "null"]}}, "required": ["name"],
         "additionalProperties": False, "maxProperties": 3}]}}, "compact", '[{"'),
    ({"anyOf": [{"type": "object", "properties": {"b": {"type": "object"}, "id": {"type": "string"}},
                 "required": ["id", "b"], "additionalProperties": False},
                {"type": "object", "properties": {"id": {"type": "null"}}, "required": ["id"]}]},
     "flexible", '{"id":"x",\n"b')])
def test_a_token_that_closes_the_object_after_a_keys_value_is_read_as_its_end(schema, whitespace, text):
    """A token that closes a key, writes its value and closes the object (`":null}`): reading what it tells of the
    used keys stepped the object alone, and its closing bracket popped to a parent that was not there (IndexError
    in the mask key). Found by review; every mask bit is the checker's own."""
    from structbench.masking.lazy import lazy_constraint

    tokens = [EOS] + [chr(c) for c in range(0x20, 0x7F)] + ["\t", "\n", '":null}', '"}']
    vocab = Vocabulary(tokens, name="closes-after-value")
    assert token_reach(vocab).value_tails == ("}",)  # (a closing bracket read after a key's value)
    checker, constraint = SchemaChecker(schema, "any", whitespace), lazy_constraint(
        SchemaChecker(schema, "any", whitespace), vocab)
    state = constraint.start()
    for ch in text:
        state = constraint.advance(state, vocab.index[ch])
    assert constraint.mask(state).tolist() == checker_verdicts(checker, constraint.dense.states[state], vocab)
