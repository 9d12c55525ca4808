"""Masks shared between states no token tells apart (structbench.masking.shared_masks): states with equal
mask keys must allow the same tokens, each mask computed on its own."""

from __future__ import annotations

import json

import numpy as np
import pytest
from helpers import CORPUS, require_llama3
from test_lazy import SCHEMAS, reached_states, walk_like_tabled

from structbench.jsonschema.checker import SchemaChecker
from structbench.lm.vocab import Vocabulary
from structbench.masking import LazyDense, machine_boundaries
from structbench.masking.shared_masks import TokenReach, token_reach

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
}


def _groups(checker, dense, states, reach) -> dict:
    groups: dict = {}
    for i in states:
        groups.setdefault(checker.mask_key(dense.states[i], reach), set()).add(i)
    return groups


@pytest.mark.parametrize("name", sorted(SCHEMAS) + sorted(OBJECTS))
def test_equal_mask_keys_allow_the_same_tokens(vocab, name):  # noqa: F811
    """Along an instance and random detours of allowed tokens, states with one mask key have one mask, each
    walked on its own (LazyDense's vectorised walk, no sharing)."""
    require_llama3(vocab)
    schema, value = {**SCHEMAS, **OBJECTS}[name]
    checker = SchemaChecker(schema, "any", "lesson")
    dense = LazyDense(checker, machine_boundaries(checker.special_chars()), vocab)
    states = reached_states(checker, dense, vocab, value, np.random.default_rng(3), branches=16)
    merged = 0
    for group in _groups(checker, dense, set(states), token_reach(vocab)).values():
        first, *rest = sorted(group)
        for other in rest:
            assert np.array_equal(dense.mask(first)[0], dense.mask(other)[0]), (dense.states[first],
                                                                                dense.states[other])
            merged += 1
    if name in OBJECTS:  # objects whose used keys change as the answer goes on: some states must share
        assert merged > 0
    if name == "JSON mode, nested":  # keys of one node at different depths share
        assert any(len({dense.states[i][:-1] for i in group}) > 1
                   for key, group in _groups(checker, dense, set(states), token_reach(vocab)).items()
                   if key[0] == "top alone")


def test_corpus_states_with_one_key_have_one_mask(vocab):  # noqa: F811
    """The same over corpus schemas, along their first valid instance."""
    if not CORPUS.is_dir() or vocab.name != "llama3":
        pytest.skip("needs the MaskBench corpus ($STRUCTBENCH_DATA or ../shared/data) and Llama 3's vocabulary")
    merged, rng = 0, np.random.default_rng(5)
    for path in sorted(CORPUS.glob("*.json"))[::97][:40]:
        doc = json.loads(path.read_text())
        try:
            checker = SchemaChecker(doc["schema"], "any", "lesson")
        except Exception:  # noqa: BLE001 - unsupported schemas are the coverage experiment's business
            continue
        valid = [t["data"] for t in doc.get("tests", []) if t.get("valid", True)
                 and checker.can_end(checker.feed(checker.start(), json.dumps(t["data"], ensure_ascii=False,
                                                                               separators=(", ", ": "))))]
        if not valid:
            continue
        dense = LazyDense(checker, machine_boundaries(checker.special_chars()), vocab)
        states = reached_states(checker, dense, vocab, valid[0], rng, branches=4)
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


# --- the keys themselves, with a reach given -------------------------------------------------------------

REACH = TokenReach(openings=(',"', ',"a'), closings=frozenset({"", "id"}))


def _after(checker, text: str):
    return checker.feed(checker.start(), text)


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


def test_strict_objects_and_schema_order_keep_their_used_keys():
    """A strict object's key reads its used keys at every character, and keys in schema order are told by
    their place: no key there drops them."""
    strict = SchemaChecker({"type": "object", "additionalProperties": False, "properties": {
        "id": {"type": "integer"}, "name": {"type": "string"}, "nick": {"type": "string"}}}, "any", "lesson")
    assert strict.mask_key(_after(strict, '{"name": "x", "'), REACH) != \
        strict.mask_key(_after(strict, '{"nick": "x", "'), REACH)
    ordered = SchemaChecker({"type": "object", "additionalProperties": False, "properties": {
        "a": {"type": "integer"}, "b": {"type": "integer"}}}, "schema", "lesson")
    stack = _after(ordered, '{"a": 1')
    assert ordered.mask_key(stack, REACH) == stack


def test_token_reach_reads_the_vocabulary():
    """Openings: each token's text from a comma and a quote on; closings: what a token holds before its first
    unescaped quote, decoded (escapes read, invalid ones and raw control characters left out)."""
    tokens = ['ab"', '\\u0041"', 'x\\"y"', '\\q"', 'a\x01"', '},"', ', "id', 'no quote', '","",']
    small = Vocabulary(tokens + ["<eos>"], eos="<eos>", name="reach")
    reach = token_reach(small)
    assert reach.openings == tuple(sorted({',"', ', "id', ',"",'}))
    assert reach.closings == frozenset({"ab", "A", 'x"y', "},", ", ", ""})
    assert reach.member_pops is False  # no token holds a quote, a colon, then a closing bracket
    assert token_reach(Vocabulary(tokens + ['":1}', "<eos>"], eos="<eos>", name="pops")).member_pops is True
    assert token_reach(Vocabulary(tokens + ['" : [\n]', "<eos>"], eos="<eos>", name="pops2")).member_pops is True


def test_below_an_objects_key_only_a_token_that_closes_it_reaches():
    """In a key, and after an object's comma, the frames below the object are left out of the key unless some
    token can close the object from there (member_pops, as a token `":1}` would, read in a key)."""
    checker = SchemaChecker({"type": "object", "$defs": {"o": {"type": "object"}}, "properties": {
        "a": {"$ref": "#/$defs/o"}, "l": {"type": "array", "items": {"$ref": "#/$defs/o"}}}}, "any", "lesson")
    key = lambda text, reach: checker.mask_key(_after(checker, text), reach)  # noqa: E731
    none = TokenReach(openings=(',"',), closings=frozenset({""}), member_pops=False)
    some = TokenReach(openings=(',"',), closings=frozenset({""}), member_pops=True)
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
