"""The lazy strategy's cold path: the compiled prefix-tree walk and the checker's hints it relies on.

Every shortcut is checked against the plain computation it replaces: the hints (`may_read`, `plain_default`)
against the checker's own step on every class, and the masks (the compiled walk with its string mode and loop
skips, and the no-numba fallback) against LazyDense's vectorised token walk, on states reached by real
instances and by random allowed tokens, on Llama 3's vocabulary."""

import json

import numpy as np
import pytest
from helpers import CORPUS, require_llama3
from hypothesis import given, settings
from hypothesis import strategies as st

from structbench.bench.strategies import compile_constraint
from structbench.bench.tasks import Task
from structbench.jsonschema.checker import SchemaChecker
from structbench.jsonschema.free_text import FREE_STRING
from structbench.jsonschema.lexemes import literal_lexeme, number_lexeme
from structbench.jsonschema.scalars import INTEGER
from structbench.lm.vocab import EOS, Vocabulary
from structbench.masking import (
    LazyDense,
    PatternMachine,
    TrieDense,
    index_vocabulary,
    machine_boundaries,
    string_mode,
    trie_walk,
    unpack_bits,
)
from structbench.masking.cold_start import cold_start
from structbench.masking.tabled import pattern_boundaries
from structbench.regular import compile_pattern, trim
from structbench.regular.dfa import next_states

SCHEMAS = {
    "free object": ({"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}}},
                    {"name": "Ada Lovelace", "age": 36, "extra key": [1, 2.5, "x"]}),
    "strict object, maxLength": ({"type": "object", "additionalProperties": False, "required": ["id"],
                                  "properties": {"id": {"type": "string", "maxLength": 8},
                                                 "idle": {"type": "boolean"}, "tags": {"type": "array",
                                                 "items": {"type": "string", "maxLength": 3}}}},
                                 {"id": "abc12345", "idle": False, "tags": ["a", "bc", "def"]}),
    # Checked strings whose tokens hold escapes (\\n, \\", \\\\, \\u0001): the machine reads them.
    "checked strings with escapes": ({"type": "object", "properties": {
        "note": {"type": "string", "maxLength": 40}, "path": {"type": "string", "pattern": "^[a-z\\\\/\n\t]+$"}}},
        {"note": "a\"b\\c\n\td\u0001 \u00e9", "path": "a/b\\c\nd\t"}),
    "pattern and format": ({"type": "object", "properties": {
        "code": {"type": "string", "pattern": "^[A-Z]{2}-[0-9]{1,4}$"}, "day": {"type": "string", "format": "date"},
        "kind": {"enum": ["alpha", "beta", "alphabet"]}}},
        {"code": "AB-123", "day": "2024-02-29", "kind": "alphabet"}),
    # Numbers read by their DFAs in string mode (number_lexeme): unbounded (shared by every schema), bounded, with
    # exponents and signs, in arrays, ended by a comma, a bracket or a brace.
    "numbers: bounds, exponents, arrays": ({"type": "object", "properties": {
        "n": {"type": "number"}, "i": {"type": "integer", "minimum": -5, "maximum": 1200},
        "xs": {"type": "array", "items": {"type": "number", "maximum": 10}}, "m": {"type": "number", "multipleOf": 0.1}}},
        {"n": 1e+20, "i": 1199, "xs": [0, 9.75, -0.125, -3], "m": -2.5, "z": -12.5e-3}),
    "a number at the root": ({"type": "number"}, 3.25e-7),
    "union and numbers": ({"anyOf": [{"type": "number", "minimum": 0}, {"type": "array", "items": {"type": "null"}},
                                     {"type": "string", "minLength": 2}]}, [None, None]),
    "unions in an object": ({"type": "object", "$defs": {"either": {"anyOf": [
        {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"], "additionalProperties": False},
        {"type": "object", "properties": {"b": {"type": "string"}}, "required": ["b"], "additionalProperties": False},
        {"type": "integer"}, {"type": "number", "minimum": 2}]}}, "properties": {
        "v": {"anyOf": [{"type": "integer"}, {"type": "boolean"}, {"enum": ["x", "y"]}]},
        "w": {"oneOf": [{"type": "null"}, {"type": "number", "maximum": 5}]},
        "u": {"$ref": "#/$defs/either"}, "n": {"$ref": "#/$defs/either"}}},
        {"v": 12, "w": 3.5, "u": {"a": 3}, "n": 2.5}),
    # A union of objects writing one property: a checked string in one branch, free in another (an additional
    # property), read by one DFA in string mode (structbench.jsonschema.string_unions); the long value outlives the
    # checked branch (maxLength), the escaped one moves it by the character the escape stands for.
    "a checked string against free ones in a union": ({"type": "object", "properties": {"ctx": {"anyOf": [
        {"type": "object", "properties": {"a": {"type": "string", "maxLength": 5}, "b": {"type": "number"}}},
        {"type": "object", "properties": {"id": {"type": "string", "pattern": "^[a-f0-9]{4}$"}}}]},
        "more": {"type": "array", "items": {"$ref": "#/properties/ctx"}}}},
        {"ctx": {"a": "ab\nc", "b": 2}, "more": [{"a": "abcdefgh"}, {"id": "beef"}, {"id": "not hex"}]}),
    # The same past string_unions.MAX_STATES: a maxLength alone (a length counter, Github o9961's 32,767), whose
    # or_free DFA is made at once, however long
    "a long maxLength against free ones in a union": ({"type": "object", "properties": {"ctx": {"anyOf": [
        {"type": "object", "properties": {"a": {"type": "string", "maxLength": 5000}}},
        {"type": "object", "properties": {"b": {"type": "integer"}}}]}}},
        {"ctx": {"a": "ab\ncd ef", "b": 2}}),
    "pattern keys, non-ASCII": ({"type": "object", "patternProperties": {"^x-[a-z]+$": {"type": "string"}},
                                 "properties": {"café": {"type": "string", "maxLength": 40}},
                                 "additionalProperties": False},
                                {"café": "naïve crème brûlée", "x-note": "q\"uote\\d \u00e9"}),
    # Keys checked by patterns or propertyNames: read by their product with the name tree (key_patterns), whose
    # contexts differ in the names used so far (the instance uses names that share prefixes with others).
    "pattern keys and used names": ({"type": "object", "additionalProperties": False, "properties": {
        "abc": {"type": "integer"}, "abd": {"type": "integer"}, "ab_fixed": {"type": "null"}, "x1": {"type": "boolean"}},
        "patternProperties": {"^ab_[a-z]{2}$": {"type": "integer"}, "^x[0-9]{2,}$": {"type": "string"}}},
        {"abc": 1, "ab_zz": 3, "x12": "s", "abd": 2, "x1": True, "ab_fixed": None}),
    "pattern keys only": ({"type": "object", "additionalProperties": False,
                           "patternProperties": {"^[a-c]+$": {"type": "integer"}, "^c": {"type": "number"}}},
                          {"abc": 1, "cab": 2, "c": 3, "caé": 0.5}),
    "pattern keys, other keys taken": ({"type": "object", "properties": {"name": {"type": "string"}},
                                        "patternProperties": {"^n_": {"type": "integer"}},
                                        "additionalProperties": {"type": "string"}},
                                       {"name": "a", "n_x": 1, "other": "o", "n": "p"}),
    "property names": ({"type": "object", "propertyNames": {"pattern": "^[a-z]+$", "maxLength": 6},
                        "properties": {"alpha": {"type": "integer"}, "alphabet": {"type": "integer"}},
                        "additionalProperties": {"type": "string"}},
                       {"alpha": 1, "beta": "b", "zeta": "z"}),
    "keys: prefixes, escaped, counted": ({"type": "object", "maxProperties": 5, "additionalProperties": {"type": "integer"},
                                         "properties": {"naïve": {"type": "integer"}, "name": {"type": "string"},
                                                        "nam": {"type": "null"}, "a\"b": {"type": "boolean"}}},
                                        {"nam": None, "a\"b": True, "naïve": 1, "zz": 3, "name": "x"}),
    "unions of free keys and strings": ({"type": "object", "oneOf": [{"required": ["side"]}, {"required": ["radius"]}],
                                        "properties": {"side": {"type": "integer"}, "radius": {"type": "integer"},
                                                       "label": {"anyOf": [{"type": "string"},
                                                                           {"type": ["string", "null"]}]}}},
                                       {"radius": 2, "label": "tiny \"ring\"", "extra key": "x"}),
    # A union's key read in string mode by the tree of all its branches' names (each branch's text the union's where
    # it continues one of its own names: `rad` is one branch's name and another's prefix; an object of no names goes
    # along unchanged), and a union's string
    # value where every branch reads it by one DFA (the free string's: a property's and another branch's free value)
    "unions of open objects with other names": ({"type": "object", "properties": {"n": {"type": "integer"},
                                                                                 "item": {"anyOf": [
        {"type": "object", "properties": {"shape": {"const": "circle"}, "radius": {"type": "number"},
                                          "note": {"type": "string"}}, "required": ["shape", "radius"]},
        {"type": "object", "properties": {"shape": {"const": "rect"}, "width": {"type": "number"},
                                          "note": {"type": "string"}}, "required": ["shape", "width"]},
        {"type": "object", "properties": {"shape": {"const": "tri"}, "rad": {"type": "integer"},
                                          "nota": {"type": "string", "maxLength": 4}}, "required": ["shape"]},
        {"type": "object", "additionalProperties": {"type": "integer"}}]}}},
        {"n": 1, "item": {"note": "a \"b\" \u00e9", "radi": 1, "rad": 2, "zz": None, "nota": "xy", "shape": "tri"}}),
    # JSON mode: keys whose text is not kept, read in string mode as a free string (escapes, an empty key, a
    # character past ASCII, an escaped control character and quote), at several depths and in arrays
    "JSON mode, keys with escapes": ({}, {"a\nb": {"k\"ey": [1, {"\u00e9\u0001": "x", "": {}}], "q\\": None},
                                          "plain": [{"x": True}]}),
    # Unions of checked strings with a free one, and of strict objects with a free one, in a key: every branch
    # promises plain_default (a checked DFA sends the characters past ASCII one way; a strict key refuses what no
    # name continues), so the union does; and a pattern whose non-ASCII ranges differ, which promises nothing.
    "unions of checked strings and strict keys": ({"type": "object", "properties": {
        "mode": {"anyOf": [{"const": "PassThrough"}, {"const": "RemoveFrom"}, {"type": "string", "maxLength": 12}]},
        "tag": {"anyOf": [{"type": "string", "pattern": "^[a-z\u00e9-\u00ff]+$"}, {"enum": ["\u00c9t\u00e9", "x"]}]},
        "obj": {"anyOf": [{"type": "object", "additionalProperties": False,
                           "properties": {"ne": {"type": "integer"}, "tne": {"type": "null"}}},
                          {"type": "object", "properties": {"nre": {"type": "boolean"}}}]}}},
        {"mode": "RemoveFrom", "tag": "\u00e9t\u00e9", "obj": {"tne": None, "zz": 1}}),
}


def reached_states(checker, dense, vocab, value, rng, branches=12, separators=(", ", ": ")):
    """Machine states along the instance's tokens, and along `branches` random detours of allowed tokens."""
    text = json.dumps(value, ensure_ascii=False, separators=separators)
    states, state = [], dense.start
    for tid in vocab.encode(text):
        states.append(state)
        for ch in vocab.tokens[tid]:
            state = dense.step(state, ch)
        assert state is not None, f"the instance {text!r} is refused"
    states.append(state)
    for start in rng.choice(states, size=min(branches, len(states)), replace=False).tolist():
        state = start
        for _ in range(6):
            allowed, _ = dense.mask(state)
            choices = [t for t in np.flatnonzero(allowed).tolist() if t != vocab.eos_id]
            if not choices:
                break
            for ch in vocab.tokens[int(rng.choice(choices))]:
                state = dense.step(state, ch)
            states.append(state)
    return states


@pytest.mark.parametrize("whitespace", ["lesson", "compact", "flexible"])
@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_hints_are_sound(vocab, name, whitespace):
    """may_read is a superset of what a stack reads (whitespace included, which each policy allows in its own
    places), plain_default's characters all step alike, and so does each of alike's with the one it names; and
    where the top has read whitespace, every other character steps it as its `ws_twin`, and of the whitespace it
    reads those the twin says, refusing the rest."""
    require_llama3(vocab)
    schema, value = SCHEMAS[name]
    checker = SchemaChecker(schema, "any", whitespace)
    reps = [chr(int(b)) for b in machine_boundaries(checker.special_chars())]
    dense = LazyDense(checker, machine_boundaries(checker.special_chars()), vocab)
    hinted, twins = 0, 0
    separators = (",", ":") if whitespace == "compact" else (", ", ": ")
    stacks = [dense.states[i] for i in reached_states(checker, dense, vocab, value, np.random.default_rng(0),
                                                      separators=separators)]
    stacks += [s for s in (checker.step(stack, " ") for stack in stacks) if s is not None]  # (after a space too)
    for stack in stacks:
        may, plain, alike = checker.may_read(stack), checker.plain_default(stack), checker.alike(stack)
        steps = {ch: checker.step(stack, ch) for ch in reps}
        twin = checker.ws_twin(stack)
        if twin is not None:
            twins += 1
            twin, ws, reads = twin
            assert twin != stack and set(reads) <= set(ws)
            for ch, nxt in steps.items():
                if ch not in ws:
                    assert nxt == checker.step(twin, ch), (stack[-1], ch)
                else:
                    assert (nxt is not None) == (ch in reads), (stack[-1], ch)
        if alike is not None:
            hinted += 1
            assert all(checker.step(stack, ch) == checker.step(stack, like) for ch, like in alike.items()), stack[-1]
        if may is not None:
            hinted += 1
            assert all(ch in may for ch, nxt in steps.items() if nxt is not None), (stack[-1], may)
        if plain is not None:
            hinted += 1
            rep, special = plain
            alike = checker.step(stack, rep)
            for ch, nxt in steps.items():
                if ch >= " " and ch not in '"\\' and ch not in special:
                    assert nxt == alike, (stack[-1], ch)
                if ch < " ":
                    assert nxt is None, (stack[-1], ch)
    assert hinted, "no state of this schema got a hint: the test would check nothing"
    # (a number at the root has no place for whitespace in the lesson's policy)
    assert twins or whitespace == "compact" or (name, whitespace) == ("a number at the root", "lesson"), \
        "no state after whitespace was reached: ws_twin went unchecked"


KEY_SCHEMAS = {  # keys whose escapes step alike (free) and keys whose decoded characters still matter
    "free keys": {"type": "object"},
    "named keys, others free": {"type": "object", "properties": {"aXb": {"type": "integer"}, "a\n": {}}},
    "named keys only": {"type": "object", "properties": {"aX\n": {}, "\u00e9": {}}, "additionalProperties": False},
    "pattern keys": {"type": "object", "patternProperties": {"^a[X-Z]": {}}, "additionalProperties": False},
    "counted keys": {"type": "object", "maxProperties": 2},
}


@pytest.mark.parametrize("name", sorted(KEY_SCHEMAS))
def test_key_escapes_step_alike(name):
    """Inside a key's escape, alike's characters step the stack as the one they name: where the key's text no
    longer matters (free keys, an escape collapsed to its syntax) they are grouped; where the decoded character
    may still pick a property, match a pattern or be counted, they are not merged."""
    checker = SchemaChecker(KEY_SCHEMAS[name], "any", "compact")
    grouped = reached = 0
    for prefix in ["", "a", "aX"]:
        for escape in ["\\", "\\u", "\\u0", "\\u00", "\\u005", "\\u00e"]:
            stack = checker.feed(checker.start(), '{"' + prefix + escape)
            if stack is None:
                continue
            reached += 1
            alike = checker.alike(stack)
            if alike is None:
                continue
            grouped += 1
            for ch, like in alike.items():
                assert checker.step(stack, ch) == checker.step(stack, like), (prefix + escape, ch, like)
    assert reached, "no key escape reached: the test would check nothing"
    if name == "free keys":
        assert grouped == reached == 18, "a free key's escapes should all be grouped"
    if name == "named keys, others free":  # a tracked key: the simple escapes no name continues with, grouped
        for prefix, continuing in [("", None), ("a", "n"), ("aX", None)]:
            alike = checker.alike(checker.feed(checker.start(), '{"' + prefix + "\\"))
            assert alike is not None and continuing not in alike and len(alike) == 8 - (continuing is not None)


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "fallback"])
@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_masks_equal_the_token_walk(vocab, name, compiled):
    """The prefix-tree walk (string mode, loop skips, hints) gives LazyDense's masks; so does the fallback."""
    require_llama3(vocab)
    if compiled and not trie_walk.compiled():
        pytest.skip("numba is not installed")
    schema, value = SCHEMAS[name]
    checker = SchemaChecker(schema, "any", "lesson")
    bounds = machine_boundaries(checker.special_chars())
    trie, plain = TrieDense(checker, bounds, vocab), LazyDense(SchemaChecker(schema, "any", "lesson"), bounds, vocab)
    trie.compiled = compiled
    states = reached_states(checker, plain, vocab, value, np.random.default_rng(1))
    for i in states:
        expected, _ = plain.mask(i)
        got, _ = trie.mask(trie.id_of(plain.states[i]))
        assert np.array_equal(got, expected), (plain.states[i][-1], np.flatnonzero(got != expected)[:10])


# A length counter's product with a format's or a pattern's DFA: its loops are read with the count (string_mode's
# count_targets), a subtree of them taken whole while the count has room (`near`: a few characters left), its table
# whole up to 2^18 cells (e64, code, near) and made by rows beyond (e1700: 18,661 states, a level at a time). And a
# pattern's counted repetitions, a chain of states found in its table (string_mode._chain_steps: `key`, `zip`).
COUNTED = ({"type": "object", "properties": {
    "e64": {"type": "string", "format": "email", "maxLength": 64},
    "e1700": {"type": "string", "format": "email", "maxLength": 1700},
    "code": {"type": "string", "pattern": "^[a-z0-9]+$", "maxLength": 12},
    "near": {"type": "string", "format": "email", "minLength": 6, "maxLength": 9},
    "key": {"type": "string", "pattern": "^[0-9a-zA-Z_-]{1,40}$"},
    "zip": {"type": "string", "pattern": "^\\d{5}(-\\d{4})?$"}}},
    {"e64": "ada.lovelace@example.com", "e1700": "grace.hopper.research@computers.example.org", "code": "abc123def",
     "near": "ab@cd.ef", "key": "example-key_0123456789-abcdefghij-ABCDEF", "zip": "12345-6789"})


# Keys checked by a counted pattern, read as a count in string mode (KeyPatternDFA.counted_from: the other keys'
# states alone, beside names whose prefixes a context refuses once used)
COUNTED_KEYS = [({"type": "object", "patternProperties": {"^[0-9a-zA-Z_-]{1,12}$": {"type": "integer"}},
                  "additionalProperties": False},
                 {"key-1": 1, "abcdefghijkl": 2, "Z": 3}),
                ({"type": "object", "properties": {"id": {"type": "integer"}, "ids": {"type": "integer"}},
                  "patternProperties": {"^[0-9a-zA-Z_-]{1,12}$": {"type": "integer"}}, "additionalProperties": False},
                 {"id": 1, "key-1_ab": 2, "ids": 5, "abcdefghijkl": 3, "i": 4}),
                ({"type": "object", "properties": {"aaaa": {"type": "integer"}, "aaab": {"type": "integer"}},
                  "patternProperties": {"^[ab]{1,12}$": {"type": "integer"}}, "additionalProperties": False},
                 {"aaaa": 1, "ab": 2, "aaab": 3, "b": 4, "aaaaaaaa": 5})]


@pytest.mark.parametrize("case", [0, 1, 2])
def test_keys_of_a_counted_pattern_masks_equal_the_token_walk(vocab, case):
    """A key checked by a counted pattern: string mode takes a subtree of its classes whole while the chain has room
    (its other keys' states; not its names' prefixes, whose rows a context refuses once a name is used), and its
    masks, along the instance and random detours, are LazyDense's token walk's."""
    schema, value = COUNTED_KEYS[case]
    checker, trie, plain = one_checker_beside_token_walk(vocab, schema)
    assert_masks_as_token_walk(trie, plain, checker, vocab, value, seed=3, branches=24)
    keyed = [dfa for dfa in trie._strings._kept if getattr(dfa, "counted_from", None) is not None]
    steps = [dfa.__dict__.get("count_steps") for dfa in keyed]
    assert any(s is not None and (s > np.arange(len(s))).sum() >= 10 for s in steps)  # (the chain was read)


@pytest.mark.parametrize("pattern", [r"^[0-9a-zA-Z_-]{1,255}$", r"^[A-Z]{2}-\d+$", r"^\d{5}(-\d{4})?$",
                                     r"^(?:ab|[0-9]+x)*$", r"^[a-f]{3,8}[0-9]{2}$", "email", "uri", "date-time"])
def test_a_patterns_chain_steps_read_every_run_their_room_allows(pattern):
    """A DFA's count steps found in its table (trie_walk.chain_steps; compiled, it finds what the same function finds
    run in Python): from every state with a step, every run of the classes that step it on is read by the DFA for as
    many characters as its room (count_room) says, which is what lets string mode take such a subtree whole; a
    counted repetition's room is exact."""
    from structbench.masking import string_mode
    from structbench.regular.dfa import compile_pattern
    from structbench.regular.formats import format_dfa

    dfa = compile_pattern(pattern, True) if pattern.startswith("^") else format_dfa(pattern)
    codes = machine_boundaries().astype(np.int64)
    plain = string_mode.json_classes(codes)[0]
    lex = string_mode._dfa_lex_table(dfa, codes, plain, None)[:dfa.n_states]
    steps = trie_walk.chain_steps(lex[:, plain])
    rows = np.ascontiguousarray(lex[:, plain], dtype=np.int32)
    in_python = np.full(len(rows), -1, dtype=np.int64)
    assert trie_walk._chain_steps(rows, np.zeros(len(rows), dtype=np.int64), in_python) == (steps is not None)
    assert steps is None or np.array_equal(steps, in_python)
    assert steps is not None and (steps > np.arange(dfa.n_states)).any()
    room = trie_walk.count_room(steps)
    rng = np.random.default_rng(5)
    for d in np.flatnonzero(steps >= 0).tolist():
        classes = np.flatnonzero(plain & (lex[d] == steps[d]))
        assert len(classes)
        for length in range(1, min(int(room[d]), 12) + 1):
            for _ in range(8):
                text = "".join(chr(codes[c]) for c in rng.choice(classes, length))
                assert dfa.walk(d, text) is not None, (d, text, room[d])
    if pattern == r"^[0-9a-zA-Z_-]{1,255}$":
        assert room[0] == 255 and room[254] == 1 and steps[255] == -1


def one_checker_beside_token_walk(vocab, schema: dict) -> tuple:
    """(a checker of `schema`, a TrieDense and a LazyDense over it): one checker for both, as a schema's big DFAs are
    numbered by identity (two checkers' states differ); the test skipped without Llama 3 or numba."""
    require_llama3(vocab)
    if not trie_walk.compiled():
        pytest.skip("numba is not installed")
    checker = SchemaChecker(schema, "any", "lesson")
    bounds = machine_boundaries(checker.special_chars())
    return checker, TrieDense(checker, bounds, vocab), LazyDense(checker, bounds, vocab)


@pytest.mark.parametrize("seed", [1, 2])
def test_counted_strings_masks_equal_the_token_walk(vocab, seed):
    """Strings under a maxLength over a format or pattern: the walk's masks, which take a subtree of the DFA's own
    loop characters whole while the count has room, are LazyDense's token walk's, along the instance and random
    detours (one checker for both: a schema's big DFAs are numbered by identity, so two checkers' states differ)."""
    schema, value = COUNTED
    checker, trie, plain = one_checker_beside_token_walk(vocab, schema)
    dfas = [n.string_dfa for n in checker.nodes.values() if n.string_dfa is not None]
    assert sum("count_levels" in dfa.__dict__ for dfa in dfas) == 4  # (four strings are a count's product)
    assert_masks_as_token_walk(trie, plain, checker, vocab, value, seed=seed, branches=24)
    assert sum(dfa.__dict__.get("count_steps") is not None for dfa in dfas) == 6  # (and the patterns' chains, found)
    room = trie._strings.room[:trie._strings._lex_used]
    assert (room < trie_walk.UNBOUNDED_ROOM).any() and (room > 0).any()  # (rows with a count's room were read)


def walked_under(vocab, name: str, whitespace: str, seed: int, watched: str):
    """A TrieDense over SCHEMAS[name] under the whitespace policy, its masks checked against LazyDense's token walk
    at states that answers with the policy's separators reach; returns it, and the arguments of every call its method
    `watched` received meanwhile."""
    require_llama3(vocab)
    if not trie_walk.compiled():
        pytest.skip("numba is not installed")
    schema, value = SCHEMAS[name]
    checker = SchemaChecker(schema, "any", whitespace)
    bounds = machine_boundaries(checker.special_chars())
    trie, plain = TrieDense(checker, bounds, vocab), LazyDense(SchemaChecker(schema, "any", whitespace), bounds, vocab)
    separators = (" , ", " :  ") if whitespace == "flexible" else (", ", ": ")
    states = reached_states(checker, plain, vocab, value, np.random.default_rng(seed), separators=separators)
    calls, method = [], getattr(trie, watched)
    setattr(trie, watched, lambda *args: (calls.append(args), method(*args)))
    for i in states:
        expected, _ = plain.mask(i)
        got, _ = trie.mask(trie.id_of(plain.states[i]))
        assert np.array_equal(got, expected), (plain.states[i][-1], np.flatnonzero(got != expected)[:10])
    return trie, calls


@pytest.mark.parametrize("whitespace", ["lesson", "flexible"])
@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_rows_of_few_characters_are_known_not_to_loop_only_where_they_do_not(vocab, name, whitespace):
    """A row of few characters (LazyDense._expand's short branch) is marked as leading back nowhere without the
    kernel's pass over it (_no_loop): after the walks, every row whose loops are known has the loop bits the kernel
    finds in it, and the masks are LazyDense's."""
    trie, marked = walked_under(vocab, name, whitespace, 3, "_no_loop")
    assert marked, "no row of few characters was computed: the claim went unchecked"
    for i in range(len(trie.states)):
        if trie._expanded[i] and trie._loops_known[i]:
            assert bool(trie._loops[i].any()) == trie_walk.loops_back(trie._trans, i), trie.states[i][-1]
    assert all(not trie_walk.loops_back(trie._trans, i) for (i,) in marked)


@pytest.mark.parametrize("whitespace", ["lesson", "flexible"])
def test_a_value_done_is_masked_without_its_row(vocab, whitespace):
    """Where the whole value is written and the policy lets no whitespace follow, the state reads no character
    (may_read ""): its mask, the end token alone, is set without computing its row or walking the tree. Where
    whitespace may follow, it is walked. Either way the mask is the token walk's."""
    require_llama3(vocab)
    if not trie_walk.compiled():
        pytest.skip("numba is not installed")
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    checker = SchemaChecker(schema, "any", whitespace)
    bounds = machine_boundaries(checker.special_chars())
    trie, plain = TrieDense(checker, bounds, vocab), LazyDense(SchemaChecker(schema, "any", whitespace), bounds, vocab)
    done = checker.feed(checker.start(), '{"a": 1}')
    i = trie.id_of(done)
    bits, _ = trie.mask_packed(i)
    got = unpack_bits(bits, len(vocab))
    expected, _ = plain.mask(plain.id_of(done))
    assert np.array_equal(got, expected)
    assert got[vocab.eos_id]
    if whitespace == "lesson":
        assert np.flatnonzero(got).tolist() == [vocab.eos_id] and not trie._expanded[i]
    else:
        assert np.count_nonzero(got) > 1 and trie._expanded[i]


@pytest.mark.parametrize("whitespace", ["lesson", "flexible"])
def test_an_answers_last_mask_is_the_end_token_read_at_once(vocab, whitespace):
    """The constraint's mask at a value done that reads no character is the vocabulary's one end-token array, set
    without the stored masks' lookup (nothing is stored for it, and the store is not asked) and counted as built;
    where whitespace may follow, the state is walked as any other. Either way the mask is the token walk's."""
    require_llama3(vocab)
    if not trie_walk.compiled():
        pytest.skip("numba is not installed")
    from structbench.masking.tabled import vocab_codes

    cold_start(vocab)
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    constraint = compile_constraint(Task("end", "schema", schema, "{}"), vocab, "lazy", "any", whitespace)
    state = constraint.start()
    for token in vocab.encode('{"a": 1}'):
        constraint.mask_bits(state)
        state = constraint.advance(state, token)
    asked = []
    store = constraint._store
    store_get = store.get
    store.get = lambda key: asked.append(key) or store_get(key)  # (an instance attribute: this store alone)
    built = constraint.work.masks_built
    bits = constraint.mask_bits(state)
    end_only = constraint.dense.end_only(state)
    plain = LazyDense(SchemaChecker(schema, "any", whitespace), machine_boundaries(), vocab)
    expected, _ = plain.mask(plain.id_of(constraint.dense.states[state]))
    assert np.array_equal(unpack_bits(bits, len(vocab)), expected) and expected[vocab.eos_id]
    assert constraint.work.masks_built == built + 1
    if whitespace == "lesson":
        assert bits is end_only is vocab_codes(vocab).end_only_bits and not asked
    else:  # (a space may follow: walked, and its mask looked up among the stored ones first)
        assert end_only is None and np.count_nonzero(expected) > 1 and asked


@pytest.mark.parametrize("compiled", [True, False])
def test_an_advance_numbers_no_state_it_only_passes_through(vocab, compiled):
    """A token's advance through cells not known yet steps the machine on and numbers only the states it stops at:
    one inside a string or key (string mode reads on there), one numbered already, and where the token ends; the
    states between (an object's colon, the space after it) are not numbered, and their cells are left unknown. The
    state reached is the machine's, and a refused character refuses the token, at any point of it."""
    require_llama3(vocab)
    if compiled and not trie_walk.compiled():
        pytest.skip("numba is not installed")
    schema = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
              "additionalProperties": False}
    checker = SchemaChecker(schema, "any", "lesson")
    trie = TrieDense(checker, machine_boundaries(checker.special_chars()), vocab)
    trie.compiled = trie.compiled and compiled
    start = trie.id_of(checker.start())
    for text in ['{"a": "xy', '{"a": "xy", "b": 12', '{"b": 7}', '{"b"', '{"a": ']:
        got = trie.step_text(start, text)
        assert trie.states[got] == checker.feed(checker.start(), text), text
    passed = [st for st in trie.states if st[-1].kind == "object" and st[-1].phase in ("colon", "value")]
    assert passed == [checker.feed(checker.start(), t) for t in ('{"b"', '{"a": ')]  # where a token ended
    assert trie.step_text(start, '{"a": x') is None and trie.step_text(start, '{"a": "x", "b') is not None
    assert trie.step_text(start, '{"a": "x", "a') is None and trie.step_text(start, '{"c') is None


@pytest.mark.parametrize("whitespace", ["lesson", "flexible"])
@pytest.mark.parametrize("name", ["free object", "strict object, maxLength", "unions in an object"])
def test_rows_copied_from_a_whitespace_twin_give_the_token_walks_masks(vocab, name, whitespace):
    """After whitespace a state's row is its twin's (ws_twin), copied whole where it may read no more whitespace
    (lesson: one space) and but for the whitespace where it may (flexible): masks as LazyDense's token walk."""
    trie, copied = walked_under(vocab, name, whitespace, 2, "_copy_twin")
    assert copied, "no row was copied from a twin: the test would check nothing"
    whole = [i for i, _, _, reads in copied if not reads]  # rows copied whole (lesson: one space, then no more)
    assert whole or whitespace == "flexible", "no row was copied whole: the loop claim went unchecked"
    for i in whole:  # a row copied whole is known not to loop, unasked: none of its cells is itself
        assert trie._loops_known[i] and not trie._loops[i].any() and not trie_walk.loops_back(trie._trans, i)


def string_mask_against_checker(vocab, schema: dict, prefix: str) -> tuple[int, int]:
    """The compiled mask inside a string value after `prefix` checked token by token against the checker's own
    feed; returns its lookups and the tree's size."""
    if not trie_walk.compiled():
        pytest.skip("numba is not installed")
    checker = SchemaChecker(schema, "any", "lesson")
    dense = TrieDense(checker, machine_boundaries(checker.special_chars()), vocab)
    state = dense.start
    for ch in prefix:
        state = dense.step(state, ch)
    allowed, steps = dense.mask(state)
    before = checker.feed(checker.start(), prefix)
    expected = [t for t, text in enumerate(vocab.tokens) if text is not None and t != vocab.eos_id and
                checker.feed(before, text) is not None]
    assert np.flatnonzero(allowed).tolist() == expected
    return steps, dense._token_index(vocab.__dict__["_codes"]).trie.size


@pytest.mark.parametrize("max_length, written", [(4, 0), (64, 0), (5000, 8), (5000, 4950)])
def test_string_mode_reads_a_counted_string(vocab, max_length, written):
    """Inside a maxLength string exactly the tokens that fit are allowed, in far fewer lookups than the tree has
    nodes: long, every plain token at once and the rest's plain subtrees skipped; short (a counter whose plain
    tokens are those short enough), the same for those. A counter too big to table whole (5,000 states) is built
    by rows: far from its end it reads every plain run as well, and near it (50 left) its runs are exact."""
    require_llama3(vocab)
    steps, size = string_mask_against_checker(vocab, {"type": "string", "maxLength": max_length}, '"' + "a" * written)
    assert steps < size / 100, f"{steps} lookups for {size} nodes: the string mode did not skip"


@pytest.mark.parametrize("pattern", ["^[a-z0-9_]+$", "^[a-z]{2,}@[a-z]+$"])
def test_string_mode_takes_a_pattern_loop_whole(vocab, pattern):
    """Inside a pattern whose DFA state loops on a class (`[a-z0-9_]+`), a subtree holding only characters it
    loops on is taken whole: exactly the checker's tokens, in far fewer lookups than the tree has nodes."""
    require_llama3(vocab)
    steps, size = string_mask_against_checker(vocab, {"type": "string", "pattern": pattern}, '"a')
    assert steps < size / 20, f"{steps} lookups for {size} nodes: the loop was walked node by node"


@pytest.mark.parametrize("pattern", ["[a-f0-9]{24}", "[a-zA-Z0-9_-]{162}", "x[0-9]+y"])
def test_string_mode_skips_plain_tokens_of_a_searched_pattern(vocab, pattern):
    """Inside a pattern searched for (unanchored: no plain character is ever refused, each moves its progress), every
    plain token is allowed at once and only tokens holding a quote, a backslash or a control character are walked:
    exactly the checker's tokens, in far fewer lookups than the tree has nodes (it walked the whole tree before)."""
    require_llama3(vocab)
    steps, size = string_mask_against_checker(vocab, {"type": "string", "pattern": pattern}, '"ab1')
    assert steps < size / 20, f"{steps} lookups for {size} nodes: plain tokens were walked"


@pytest.mark.parametrize("name", ["free object", "strict object, maxLength", "pattern and format",
                                  "pattern keys, non-ASCII", "keys: prefixes, escaped, counted",
                                  "pattern keys and used names", "pattern keys only", "pattern keys, other keys taken",
                                  "property names", "numbers: bounds, exponents, arrays", "a number at the root"])
def test_checked_string_rows_are_the_checkers_steps(vocab, name):
    """A row inside a checked string or a key comes from its DFA (one machine state per next DFA state, the quote
    only where the DFA accepts; a key's DFA is the prefix tree of the names it may become): on every class it is
    what the checker's own step gives."""
    require_llama3(vocab)
    schema, value = SCHEMAS[name]
    checker = SchemaChecker(schema, "any", "lesson")
    dense = TrieDense(checker, machine_boundaries(checker.special_chars()), vocab)
    plain = LazyDense(SchemaChecker(schema, "any", "lesson"), dense.boundaries, vocab)
    inside = [i for i in reached_states(checker, plain, vocab, value, np.random.default_rng(2))
              if checker.string_content(plain.states[i]) is not None]
    assert inside, "the instance meets no checked string or key"
    for i in inside:
        j = dense.id_of(plain.states[i])
        dense._expand([j])
        for c, rep in enumerate(dense.reps):
            want = checker.step(plain.states[i], rep)
            got = int(dense._trans[j, c])
            assert (got == -1) if want is None else dense.states[got] == want, (plain.states[i][-1], repr(rep))


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "fallback"])
def test_pattern_keys_refuse_what_only_a_used_name_continues(vocab, compiled):
    """A key checked by patterns is read by the product of its names and patterns, one table for the object's keys;
    a later key's context has rows of its own where only a used name went on: after "abc" is used, "abc" is refused
    in the next key while "abd" and "ab_..." (a pattern) are not, in the rows and in the masks (against
    LazyDense's token walk), and the state is read in string mode."""
    require_llama3(vocab)
    if compiled and not trie_walk.compiled():
        pytest.skip("numba is not installed")
    schema, _ = SCHEMAS["pattern keys and used names"]
    checker = SchemaChecker(schema, "any", "compact")
    bounds = machine_boundaries(checker.special_chars())
    trie, plain = TrieDense(checker, bounds, vocab), LazyDense(SchemaChecker(schema, "any", "compact"), bounds, vocab)
    trie.compiled = compiled
    for prefix, refused, allowed in [('{"ab', "", "cd_"), ('{"abc":1,"ab', "c", "d_"), ('{"abc":1,"abd":2,"ab', "cd", "_"),
                                     ('{"x1":true,"x', "", "12"), ('{"x1":true,"x1', "", "2")]:
        stack = checker.feed(checker.start(), prefix)
        content = checker.string_content(stack)
        assert content is not None and type(content[0]).__name__ == "KeyPatternDFA", prefix
        i = trie.id_of(stack)
        for ch in refused:
            assert checker.step(stack, ch) is None, (prefix, ch)
        for ch in allowed:
            assert checker.step(stack, ch) is not None, (prefix, ch)
        trie._expand([i])
        for c, rep in enumerate(trie.reps):
            want = checker.step(stack, rep)
            got = int(trie._trans[i, c])
            assert (got == -1) if want is None else trie.states[got] == want, (prefix, repr(rep))
        expected, _ = plain.mask(plain.id_of(stack))
        got, _ = trie.mask(i)
        assert np.array_equal(got, expected), (prefix, np.flatnonzero(got != expected)[:10])
        assert {vocab.tokens[t] for t in np.flatnonzero(expected)} >= {ch for ch in allowed}


@pytest.mark.parametrize("name, prefix", [("free object", '{"'), ("keys: prefixes, escaped, counted", '{"'),
                                          ("free object", '{"name": "')])
def test_escape_rows_are_the_checkers_steps(name, prefix):
    """Free text reads its escapes in its own DFA (structbench.jsonschema.free_text: escape states after the DFA's
    own): a key where other keys may come, from `other` and every state no name goes on from by a character an
    escape may stand for, and a free string (FreeString). From every state whose backslash leads there, each
    character of an escape is read where the checker's own steps read it, and a finished escape is where the
    checker's state after it is. A key's states where a name goes on by such a character (the quote of a"b, the ï of
    naïve) leave the backslash to the checker."""
    schema, _ = SCHEMAS[name]
    checker = SchemaChecker(schema, "any", "lesson")
    bounds = machine_boundaries(checker.special_chars())
    inside = checker.feed(checker.start(), prefix)
    dfa, _ = checker.string_content(inside)
    lex, _, total = dfa.string_tables(bounds, trie_walk.CLOSE, trie_walk.EXIT, 16)
    n = dfa.content_states
    back = getattr(dfa, "other", 0)  # where a finished escape leaves the text: some other key, or the string
    assert lex.shape[0] == dfa.n_states > n and not total[n:].any()
    cls = {ch: int(np.searchsorted(bounds, ord(ch), side="right") - 1) for ch in '\\"/nux0123456789abcdefgDG'}
    read_here, left = [], []
    for d in range(n):
        (read_here if lex[d, cls["\\"]] >= n else left).append(d)
        if lex[d, cls["\\"]] < n:
            assert lex[d, cls["\\"]] == trie_walk.EXIT
            continue
        for escape in ["\\n", '\\"', "\\\\", "\\/", "\\u00e9", "\\uD83D", "\\ude00", "\\x", "\\u12g", "\\"]:
            row, state = d, checker.with_string_state(inside, d)
            for ch in escape:
                state = None if state is None else checker.step(state, ch)
                row = int(lex[row, cls[ch]]) if row >= 0 else -1
                assert (row >= 0) == (state is not None), (d, escape, ch)
            if state is not None and row < n:  # finished: back in the text
                assert row == back, (d, escape)
                assert state == checker.with_string_state(inside, back), (d, escape)
    assert back in read_here and 0 in read_here
    if name == "keys: prefixes, escaped, counted":
        assert {dfa.state_of["a"], dfa.state_of["na"]} <= set(left)  # a"b's quote and naïve's ï may come escaped


def test_lazy_coverage_verdicts_are_the_checkers_on_corpus_instances(vocab):
    """The coverage experiment's verdicts under lazy (its masks allow each token, then the end) are tabled's (its
    checker reads the characters) on every test instance, valid and invalid, of every 40th corpus schema."""
    from structbench.experiments.coverage import schema_rows

    if not CORPUS.is_dir() or vocab.name != "llama3":
        pytest.skip("needs the MaskBench corpus ($STRUCTBENCH_DATA or ../shared/data) and Llama 3's vocabulary")
    seen = set()
    for path in sorted(CORPUS.glob("*.json"))[::40]:
        tabled, lazy = (schema_rows(path, strategy, vocab, "lesson", 10, 0) for strategy in ("tabled", "lazy"))
        assert [(r["instance"], r["outcome"], r.get("category")) for r in lazy] == \
            [(r["instance"], r["outcome"], r.get("category")) for r in tabled], path.name
        seen |= {r.get("category") for r in lazy}
    assert {"valid_accepted", "invalid_rejected"} <= seen


def test_corpus_walks_match(vocab):
    """Twenty corpus schemas from every subset: the lazy strategy's masks along the first instance it accepts
    are LazyDense's."""
    if not CORPUS.is_dir() or vocab.name != "llama3":
        pytest.skip("needs the MaskBench corpus ($STRUCTBENCH_DATA or ../shared/data) and Llama 3's vocabulary")
    files = sorted(CORPUS.glob("*.json"))[::237][:20]
    walked = 0
    for path in files:
        doc = json.loads(path.read_text())
        try:
            checker = SchemaChecker(doc["schema"], "any", "lesson")
        except Exception:  # noqa: BLE001 - unsupported schemas are the coverage experiment's business
            continue
        bounds = machine_boundaries(checker.special_chars())
        trie, plain = TrieDense(checker, bounds, vocab), LazyDense(checker, bounds, vocab)
        for test in doc.get("tests", []):
            text = json.dumps(test["data"], ensure_ascii=False, separators=(", ", ": "))
            if checker.feed(checker.start(), text) is None or not checker.can_end(checker.feed(checker.start(), text)):
                continue
            state = plain.start
            for tid in vocab.encode(text):
                expected, _ = plain.mask(state)
                got, _ = trie.mask(trie.id_of(plain.states[state]))
                assert np.array_equal(got, expected), path.name
                for ch in vocab.tokens[tid]:
                    state = plain.step(state, ch)
            walked += 1
            break
    assert walked >= 10


def compiled_beside_token_walk(vocab, name: str) -> tuple:
    """(checker, value, a TrieDense over it, a LazyDense over another checker of the schema) for SCHEMAS[name]; the
    test skipped without Llama 3 or numba."""
    require_llama3(vocab)
    if not trie_walk.compiled():
        pytest.skip("numba is not installed")
    schema, value = SCHEMAS[name]
    checker = SchemaChecker(schema, "any", "lesson")
    bounds = machine_boundaries(checker.special_chars())
    return checker, value, TrieDense(checker, bounds, vocab), LazyDense(SchemaChecker(schema, "any", "lesson"),
                                                                          bounds, vocab)


def assert_masks_as_token_walk(trie, plain, checker, vocab, value, seed: int, **reach) -> None:
    """The TrieDense's masks are the LazyDense's (the vectorised token walk) at every state reached along the value
    and random detours from it (`reach`: reached_states' options)."""
    for i in reached_states(checker, plain, vocab, value, np.random.default_rng(seed), **reach):
        expected, _ = plain.mask(i)
        got, _ = trie.mask(trie.id_of(plain.states[i]))
        assert np.array_equal(got, expected), (plain.states[i][-1], np.flatnonzero(got != expected)[:10])


@pytest.mark.parametrize("name", ["pattern and format", "pattern keys and used names", "unions of open objects with "
                                  "other names", "keys: prefixes, escaped, counted", "strict object, maxLength"])
def test_tables_made_ahead_give_the_same_masks(vocab, name):
    """The lazy strategy makes the tables of the schema's strings and keys at compile time (string_dfas, each
    once): they are all in string mode's rows before any mask, and the masks are LazyDense's."""
    checker, value, trie, plain = compiled_beside_token_walk(vocab, name)
    dfas = checker.string_dfas()
    assert dfas and len({id(dfa) for dfa in dfas}) == len(dfas)
    trie.tables_ahead(dfas)
    assert all(id(dfa) in trie._strings._dfas for dfa in dfas)
    assert_masks_as_token_walk(trie, plain, checker, vocab, value, seed=2)


def test_a_table_too_big_to_make_whole_is_registered_ahead_to_be_built_by_rows(vocab, monkeypatch):
    """A checked string whose DFA's table is too big to make whole (maxLength 5,000: one state per length) is
    registered by tables_ahead as built by rows (no row stacked ahead), beside a key whose table another's shares;
    the masks are LazyDense's."""
    require_llama3(vocab)
    if not trie_walk.compiled():
        pytest.skip("numba is not installed")
    schema = {"type": "object", "properties": {"s": {"type": "string", "maxLength": 5000},
                                               "m": SCHEMAS["property names"][0]}}
    value = {"s": "a long text", "m": {"alpha": 1, "ab": "c"}}
    checker = SchemaChecker(schema, "any", "lesson")
    bounds = machine_boundaries(checker.special_chars())
    trie, plain = TrieDense(checker, bounds, vocab), LazyDense(SchemaChecker(schema, "any", "lesson"), bounds, vocab)
    dfas = checker.string_dfas()
    made = []  # (each DFA's tables made once: one too big to be whole is kept on no DFA, so it was made twice)
    real = string_mode.StringContent
    monkeypatch.setattr(string_mode, "StringContent", lambda dfa, *args: made.append(id(dfa)) or real(dfa, *args))
    trie.tables_ahead(dfas)
    assert len(made) == len(set(made))
    firsts = [trie._strings._dfas[id(dfa)][1] for dfa in dfas]
    assert -1 in firsts and any(first >= 0 for first in firsts)  # (one built by rows, one stacked whole)
    assert any(getattr(dfa, "shared", None) is not None for dfa in dfas)
    assert_masks_as_token_walk(trie, plain, checker, vocab, value, seed=3)


def test_the_lazy_strategy_makes_the_tables_when_it_compiles(vocab):
    """lazy_constraint makes string mode's tables of the checker's string_dfas at compile time, before any mask."""
    require_llama3(vocab)
    if not trie_walk.compiled():
        pytest.skip("numba is not installed")
    schema = SCHEMAS["pattern keys and used names"][0]
    constraint = compile_constraint(Task("t", "schema", schema, "{}"), vocab, "lazy", "any", "lesson")
    dfas = constraint.dense.machine.string_dfas()
    assert dfas and all(id(dfa) in constraint.dense._strings._dfas for dfa in dfas)
    assert not constraint._bits  # (no mask made yet)


# A union of an object that remembers its keys whole (minProperties above its required keys: a repeated key counts
# once) and an open one: its keys are no single DFA's, and are left to the union's own step. (Not in SCHEMAS: the token
# walk those are checked against makes a state per token prefix of such a key, minutes a mask.)
_REMEMBERED_BESIDE_OPEN = {"type": "object", "properties": {"u": {"anyOf": [
    {"type": "object", "properties": {"a": {"type": "integer"}}, "minProperties": 2},
    {"type": "object", "properties": {"b": {"type": "integer"}}}]}}}


@pytest.mark.parametrize("name, text, reads", [
    ("unions of open objects with other names", '{"n": 1, "item": {"ra', "union tree"),
    ("unions of open objects with other names", '{"n": 1, "item": {"note": "a', "free string"),
    ("a key remembered whole beside an open object", '{"u": {"xy": 1, "x', None)])
def test_a_union_reads_in_string_mode_where_its_branches_agree(name, text, reads):
    """A union's key is read by the tree of all its branches' names where each branch's is a name tree (the checker's
    _union_content; string mode then reads it compiled), its string value by the DFA every branch reads it by, and
    nothing where a branch remembers its keys whole (left to the union's own step); each table's move is the
    checker's step."""
    checker = SchemaChecker(SCHEMAS.get(name, [_REMEMBERED_BESIDE_OPEN])[0], "any", "lesson")
    stack = checker.feed(checker.start(), text)
    assert stack[-1].kind == "union"
    found = checker.string_content(stack)
    if reads is None:
        assert found is None
        return
    dfa, at = found
    if reads == "union tree":
        assert any(dfa is trie for trie in checker._union_tries.values())
    else:
        assert dfa is FREE_STRING and at == 0
    content = string_mode.string_content(dfa, machine_boundaries(checker.special_chars()), 64)
    bounds = machine_boundaries(checker.special_chars())
    for ch in "adius xé":
        d = int(content.row(at)[int(np.searchsorted(bounds, ord(ch), side="right")) - 1])
        if 0 <= d < content.content_states:
            assert checker.with_string_state(stack, d, dfa) == checker.step(stack, ch), ch


def test_a_key_whose_text_is_not_kept_reads_as_a_free_string():
    """A key of an object that tracks no names (JSON mode's) is read in string mode by the free string's DFA, whose
    one content state leaves its frame as it is, as the checker's step does; an object with names keeps its name
    tree, and a key in an escape reads nothing."""
    checker = SchemaChecker({}, "any", "lesson")
    stack = checker.feed(checker.start(), '{"a": {"k')
    assert checker.string_content(stack) == (FREE_STRING, 0)
    assert checker.with_string_state(stack, 0) == stack == checker.step(stack, "x")
    assert checker.with_string_state(stack, 0, FREE_STRING) == stack
    assert checker.string_content(checker.feed(checker.start(), '{"a": {"k\\')) is None
    named = SchemaChecker(SCHEMAS["free object"][0], "any", "lesson")
    dfa, _ = named.string_content(named.feed(named.start(), '{"na'))
    assert dfa is not FREE_STRING


def walk_like_tabled(vocab, schema, value, key_order="any"):
    """Lazy's and tabled's masks along the answer, compared (bits, and the boolean rows after them); returns lazy's
    constraint."""
    task = Task("t", "schema", schema, json.dumps(value, separators=(", ", ": ")))
    lazy, tabled = (compile_constraint(task, vocab, s, key_order, "lesson") for s in ("lazy", "tabled"))
    a, b = lazy.start(), tabled.start()
    for tid in vocab.encode(task.reference) + [vocab.eos_id]:
        assert np.array_equal(lazy.mask_bits(a), tabled.mask_bits(b))
        assert np.array_equal(lazy.mask(a), tabled.mask(b))
        if tid != vocab.eos_id:
            a, b = lazy.advance(a, tid), tabled.advance(b, tid)
    assert lazy.can_end(a) and tabled.can_end(b)
    return lazy


def test_lazy_strategy_walks_like_tabled(vocab):
    """The strategy end to end: the same masks as tabled along a schema's answer, bits included."""
    walk_like_tabled(vocab, *SCHEMAS["strict object, maxLength"])


@pytest.mark.parametrize("pattern, answer, shared", [
    (r'\{"age": [0-9]+\}', '{"age": 42}', True),  # the lesson's age task
    (r'\{"name": "[A-Z][a-zé]+"\}', '{"name": "Zoé"}', False),  # [a-zé] cuts at é and after it
])
def test_lazy_over_a_pattern_walks_like_tabled(vocab, pattern, answer, shared):
    """A pattern task: lazy walks the checker's classes where they refine the pattern's, so it reuses the index
    index_vocabulary built instead of indexing every token per pattern; a pattern that cuts a non-ASCII range keeps
    its own classes. The masks are tabled's (which walks the pattern's own classes), and naive's (every token stepped
    through the DFA character by character: no table row, so not the rows both others read)."""
    require_llama3(vocab)
    task = Task("t", "pattern", pattern, answer)
    lazy, tabled, naive = (compile_constraint(task, vocab, s) for s in ("lazy", "tabled", "naive"))
    assert np.array_equal(lazy.dense.boundaries, machine_boundaries()) == shared
    assert not np.array_equal(tabled.dense.boundaries, machine_boundaries())
    assert lazy.dense._expanded[:len(lazy.dense.states)].all()  # a small DFA: tabled whole at compile time
    a, b, c = lazy.start(), tabled.start(), naive.start()
    for tid in vocab.encode(answer) + [vocab.eos_id]:
        assert np.array_equal(lazy.mask_bits(a), tabled.mask_bits(b))
        assert np.array_equal(lazy.mask_bits(a), naive.mask_bits(c))
        if tid != vocab.eos_id:
            a, b, c = lazy.advance(a, tid), tabled.advance(b, tid), naive.advance(c, tid)
    assert lazy.can_end(a) and tabled.can_end(b) and naive.can_end(c)


@settings(max_examples=60, deadline=None)
@given(pattern=st.lists(st.sampled_from(["[a-c]", "x", "[0-9]+", "é", "[^a]", ".", "(ab|b)", "\\d{2}", "[ -~]*",
                                         "\\u00e9?", "[\\u0100-\\uffff]"]), min_size=1, max_size=5))
def test_a_patterns_rows_are_its_steps(pattern):
    """PatternMachine.rows (a table's rows in one vectorised lookup) is the DFA's step on each class's first
    character, from every state, over the pattern's own classes and the checker's where they refine them."""
    dfa = compile_pattern("".join(pattern))
    machine = PatternMachine(dfa)
    for bounds in (pattern_boundaries(dfa), machine_boundaries()):
        if not set(pattern_boundaries(dfa).tolist()) <= set(bounds.tolist()):
            continue
        got = machine.rows(range(dfa.n_states), bounds)
        want = [[-1 if (t := dfa.step(s, chr(int(b)))) is None else t for b in bounds] for s in range(dfa.n_states)]
        assert got.tolist() == want


def test_a_walk_stopped_midway_leaves_the_next_one_right(vocab):
    """The walk's scratch arrays are shared per vocabulary: a walk stopped by an error after it took subtrees whole
    and set runs aside (a budget, in a round's Python part) must not leak them into the next mask."""
    if not trie_walk.compiled():
        pytest.skip("numba is not installed")
    checker = SchemaChecker({"type": "object", "properties": {"note": {"type": "string"}}}, "any", "lesson")
    bounds = machine_boundaries(checker.special_chars())
    dense, plain = TrieDense(checker, bounds, vocab), LazyDense(checker, bounds, vocab)
    inside = dense.id_of(checker.feed(checker.start(), '{"note": "'))
    real_fill, calls = dense._fill, []

    def failing_fill(cur, cls):
        calls.append(len(cur))
        raise RuntimeError("a budget ran out")

    dense._fill = failing_fill
    with pytest.raises(RuntimeError):
        dense.mask(inside)  # inside a free string: subtrees are taken whole before the first pending round
    assert calls
    dense._fill = real_fill
    after_open = checker.feed(checker.start(), "{")
    got, _ = dense.mask(dense.id_of(after_open))
    expected, _ = plain.mask(plain.id_of(after_open))
    assert np.array_equal(got, expected)


@pytest.mark.parametrize("schema, escapes", [
    ({"type": "string", "maxLength": 3}, True), ({"type": "string", "pattern": '^[a-z"\\n/]+$'}, True),
    ({"type": "string", "pattern": '^[a-z"/]+$'}, True),  # a backslash (for \\" or \\/), but no \\u: no other escape
    ({"type": "string", "format": "date"}, False), ({"enum": ["a\\b", "a\nb", "é"]}, True)])
def test_a_checked_strings_escape_rows_are_the_checkers_steps(schema, escapes):
    """A checked string's table (a DFA built whole) holds its simple escapes too: a backslash at DFA state d leads to
    row n + d, where each simple escape moves the DFA by the character it stands for, `u` is left to the checker
    (EXIT: string_mode.exits_for resolves it as the backslash and the `u`), and anything else is refused; the
    backslash is refused where no escape could go on. Each read where the checker's own steps read it."""
    from structbench.masking import string_mode

    checker = SchemaChecker(schema, "any", "lesson")
    bounds = machine_boundaries(checker.special_chars())
    inside = checker.feed(checker.start(), '"')
    dfa, _ = checker.string_content(inside)
    content = string_mode.StringContent(dfa, bounds, 16)
    n, lex = content.content_states, content.lex
    assert content.whole and lex.shape[0] == content.n_rows == 2 * n and not content.total[n:].any()
    cls = {ch: int(np.searchsorted(bounds, ord(ch), side="right") - 1) for ch in '\\"/nbtux0e9'}
    escaped = 0
    for d in range(n):
        at = checker.with_string_state(inside, d)
        if lex[d, cls["\\"]] == -1:
            assert checker.step(at, "\\") is None, d
            continue
        assert lex[d, cls["\\"]] == n + d and checker.step(at, "\\") is not None
        escaped += 1
        for escape in ["\\n", '\\"', "\\\\", "\\/", "\\b", "\\t", "\\x", "\\u00e9"]:
            row, state = d, at
            for ch in escape:
                state = checker.step(state, ch)
                row = int(lex[row, cls[ch]])
                if row == trie_walk.EXIT:  # the `u`: the checker's from here (its row's exit)
                    assert ch == "u" and state is not None, (d, escape)
                    break
                assert (row >= 0) == (state is not None), (d, escape, ch)
                if row < 0:
                    break
            if 0 <= row < n:  # finished: back in the content, where the checker's DFA is
                assert state == checker.with_string_state(inside, row), (d, escape)
    assert bool(escaped) == escapes  # (a date's characters are printable ASCII, which no escape may stand for)


@pytest.mark.parametrize("schema", [
    {"type": "string", "maxLength": 3}, {"type": "string", "pattern": "^[a-z\u00e9\u4e00-\u9fff]+$"},
    {"type": "string", "pattern": "^x.*$"}, {"enum": ["\u00e9t\u00e9", "a\u0001b", "\U0001f600!", "plain"]},
    {"type": "string", "format": "date"}])
def test_a_checked_strings_unicode_escapes_are_read_as_far_as_tokens_go(schema):
    """Where the vocabulary's tokens hold at most three hex digits after a `\\u` (token_index.unicode_escape_prefixes),
    a checked string's table reads those escapes too: rows after `\\u` and each prefix, shared by the DFA states
    that allow the same, where a token ends allowed exactly where the checker's own steps are not refused (lone
    surrogates and printable ASCII left out, a high surrogate standing for its pairs), and never back in the DFA."""
    from structbench.masking import string_mode

    prefixes = ("", "0", "c", "d", "f", "00", "0e", "d8", "dc", "ff", "00e", "d83")
    checker = SchemaChecker(schema, "any", "lesson")
    bounds = machine_boundaries(checker.special_chars())
    inside = checker.feed(checker.start(), '"')
    dfa, _ = checker.string_content(inside)
    content = string_mode.StringContent(dfa, bounds, 16, prefixes)
    n, lex = content.content_states, content.lex
    assert content.whole and lex.shape[0] == content.n_rows >= 2 * n
    cls = {ch: int(np.searchsorted(bounds, ord(ch), side="right") - 1) for ch in "\\u0123456789abcdefABCDEFxg"}
    texts = ["\\u"] + ["\\u" + p for p in prefixes[1:]] + ["\\uFF", "\\uD8", "\\u0E", "\\u0x", "\\ufg", "\\uC"]
    read = 0
    for d in range(n):
        at = checker.with_string_state(inside, d)
        for text in texts:
            row, state = d, at
            for ch in text:
                state = checker.step(state, ch)
                row = int(lex[row, cls[ch]]) if row >= 0 else -1
                assert row != trie_walk.EXIT, (d, text)
                assert (row >= 0) == (state is not None), (d, text, ch)
                assert row < 0 or row >= n, (d, text)  # never back in the DFA's states: no token finishes one
            read += state is not None
    assert bool(read) == ("format" not in schema)  # (a date's characters are printable ASCII: no escape for them)
    assert (content.n_rows > 2 * n) == bool(read)  # (and no rows for them)


@pytest.mark.parametrize("prefixes", [
    ("", "b", "c", "d", "f", "ff"),  # Llama 3's and Qwen's: a state's group found in a table of codes
    ("", "0", "00", "00e", "0e", "1", "12", "2", "a", "ab", "c", "d", "d8", "d83", "dc", "e", "f", "ff"),  # (sorted)
])
def test_unicode_escape_rows_say_per_state_which_prefixes_go_on(prefixes):
    """string_mode._unicode_rows against its rule, state by state: from a state a `\\u` escape may go on at
    (by_code), each prefix's hex digits are read exactly while the DFA at that state moves on some character the
    escape may still stand for (strings.escape_candidates), and the rows reached are the escape rows (from `first`),
    never the DFA's states; elsewhere the `u` is refused. Both ways of grouping states (a table of codes up to 16
    prefixes, a sort past that) are checked."""
    from structbench.jsonschema.strings import dfa_live_on, escape_candidates
    from structbench.masking import string_mode
    from structbench.regular.dfa import moves_array

    n_classes = 131
    rng = np.random.default_rng(7)
    for pattern in ["^.{0,8}$", "^[^<>]*$", "^[\u00e0-\u00ff]{2,5}x$", "^[\ud800-\udbff]?.$", "^[a-z]+$",
                    "^(abc|[\u0100-\uffff]{3})$"]:
        dfa = compile_pattern(pattern)
        n = dfa.n_states
        first = 2 * n
        by_code = rng.random(n) < 0.8
        u_column, rows = string_mode._unicode_rows(moves_array(dfa), n, prefixes, by_code, first, n_classes)
        assert rows.shape[1] == n_classes and rows.shape[0] % len(prefixes) == 0
        for d in range(n):
            if not by_code[d]:
                assert u_column[d] == -1
                continue
            for p in prefixes[1:]:
                row = int(u_column[d])
                for k, h in enumerate(p):
                    row = int(rows[row - first, ord(h)]) if row >= 0 else -1
                    live = dfa_live_on(dfa, d, escape_candidates("u" + p[:k + 1]))
                    assert (row >= 0) == (live and all(dfa_live_on(dfa, d, escape_candidates("u" + p[:j + 1]))
                                                        for j in range(k))), (pattern, d, p[:k + 1])
                    assert row < 0 or first <= row < first + len(rows), (pattern, d, p)
            assert (rows[int(u_column[d]) - first, ord("g")] == -1)  # (no hex digit: refused)


@pytest.mark.parametrize("schema, used, escapes", [
    # strict: names with a slash, a quote, a newline and a non-ASCII character, each of which may come escaped
    ({"type": "object", "additionalProperties": False, "properties": {
        "a/b": {"type": "null"}, 'a"c': {"type": "null"}, "a\nd": {"type": "null"}, "aé": {"type": "null"},
        "ab": {"type": "null"}, "x/y": {"type": "null"}}}, ["a/b", 'a"c', "aé", "a\nd"], True),  # then "a" takes none
    # pattern keys: the patterns' characters may come escaped too (\u00e9 for é, \/ for /)
    ({"type": "object", "additionalProperties": False, "properties": {"k/1": {"type": "null"}},
      "patternProperties": {"^k[/é0-9]*$": {"type": "null"}, "^z\\t$": {"type": "null"}}}, ["k/1", "k/"], True),
    # strict, names of printable ASCII without a quote, a slash or a backslash: no escape goes on, no escape rows
    ({"type": "object", "additionalProperties": False, "properties": {"alpha": {"type": "null"},
                                                                      "beta": {"type": "null"}}}, ["beta"], False),
])
def test_a_checked_keys_escape_rows_are_the_checkers_steps(schema, used, escapes):
    """A key checked by the product of its names and key DFAs (key_patterns) reads its simple escapes in its table
    as a checked string does: a backslash at state d leads to row n + d, each simple escape moves by the character
    it stands for, `u` is the checker's (EXIT), the rest refused, and the backslash is refused where no escape can
    go on. So in every context of the object (each with its own rows where a used name's prefixes are dead), each
    escape is read where the checker's own steps read it. Names alone, none holding a character an escape may stand
    for, take no escape anywhere: no escape rows."""
    from structbench.masking import string_mode

    checker = SchemaChecker(schema, "any", "compact")
    bounds = machine_boundaries(checker.special_chars())
    rows = string_mode.StringRows(bounds, lambda: 16, None, None, None)
    prefix, contexts = "{", 0
    for name in [None] + used:
        if name is not None:
            prefix += json.dumps(name) + ":null,"
        inside = checker.feed(checker.start(), prefix + '"')
        dfa, _ = checker.string_content(inside)
        assert type(dfa).__name__ == "KeyPatternDFA", prefix
        n = dfa.content_states
        base = rows.row(dfa, inside, 0)
        n_rows = rows.content(dfa).n_rows
        assert n_rows == (2 * n if escapes else n)
        lex = rows.lex[rows.lex_row[base:base + n_rows]]
        cls = {ch: int(np.searchsorted(bounds, ord(ch), side="right") - 1) for ch in '\\"/nbtuxe0123456789kabdz'}
        escaped = 0
        for d in range(n):
            at = checker.with_string_state(inside, d)
            if lex[d, cls["\\"]] == -1:
                assert checker.step(at, "\\") is None, (prefix, d)
                continue
            assert lex[d, cls["\\"]] == n + d and checker.step(at, "\\") is not None, (prefix, d)
            escaped += 1
            for escape in ["\\n", '\\"', "\\\\", "\\/", "\\b", "\\t", "\\x", "\\u00e9", "\\u0"]:
                row, state = d, at
                for ch in escape:
                    state = checker.step(state, ch)
                    row = int(lex[row, cls[ch]])
                    if row == trie_walk.EXIT:  # the `u`: the checker's from here (its row's exit)
                        assert ch == "u" and state is not None, (prefix, d, escape)
                        break
                    assert (row >= 0) == (state is not None), (prefix, d, escape, ch)
                    if row < 0:
                        break
                if 0 <= row < n:  # finished: back in the key, where the checker is
                    assert state == checker.with_string_state(inside, row), (prefix, d, escape)
        assert bool(escaped) == escapes, prefix
        contexts += 1
    assert contexts == len(used) + 1


@pytest.mark.parametrize("other, bounds", [("email", (0, 254)), ("email", (3, 1024)),
                                           (r"^[a-zA-Z0-9_.\\-]+$", (2, 2500)), (r'^(?:ab|[0-9]+x)*["/]?$', (0, 1000)),
                                           (r"^.*$", (5, 2500))])
def test_a_counts_product_built_a_level_at_a_time_is_its_whole_table(other, bounds):
    """A length counter's product too big to build whole (an email under a maxLength of 254) is built a level of
    counts at a time, several levels past the row asked for, with its escape rows: asked for its rows in a random
    order (states' and escape rows'), it ends up with the whole table's every row, and its runs (a pure counter's
    chains, `^.*$`). A walk's first row builds more than its own level."""
    from structbench.masking import string_mode
    from structbench.regular.automata import any_string, intersect
    from structbench.regular.dfa import compile_pattern
    from structbench.regular.formats import format_dfa

    dfa = intersect(any_string(*bounds), format_dfa(other) if other == "email" else compile_pattern(other, True))
    codes, cap = machine_boundaries(), 64
    levels = dfa.__dict__["count_levels"]
    by_levels = string_mode.StringContent(dfa, codes, cap)  # (built by rows: not kept on the DFA, as a whole one is)
    assert not by_levels.whole and by_levels.n_rows == 2 * dfa.n_states  # (its escape rows after its states)
    order = np.random.default_rng(7).permutation(by_levels.n_rows)
    by_levels.rows(order[:1])
    first = order[0] % dfa.n_states
    level = int(np.searchsorted(levels.starts, first, side="right")) - 1
    ahead = levels.starts[min(level + 2, len(levels.starts) - 1)]
    assert (by_levels._at[first:ahead] >= 0).all()  # the next level's rows were made with the first's
    for k in range(1, len(order), 5):
        by_levels.rows(order[k:k + 1])
    by_levels.rows(np.arange(by_levels.n_rows))
    saved = string_mode._WHOLE_CELLS
    string_mode._WHOLE_CELLS = 1 << 30
    try:
        whole = string_mode.StringContent(dfa, codes, cap)
    finally:
        string_mode._WHOLE_CELLS = saved
    assert whole.whole and len(whole.lex) == by_levels.n_rows
    assert np.array_equal(by_levels.lex, whole.lex)
    assert np.array_equal(np.minimum(by_levels.run, cap + 1), np.minimum(whole.run, cap + 1))
    if other == r"^.*$":  # a counter's chains: plain characters surely taken
        assert (by_levels.run > 0).sum() > dfa.n_states // 2


@pytest.mark.parametrize("name", ["maxLength", "pattern", "format", "searched", "keys"])
def test_whole_string_tables_are_the_rows_built_one_by_one(name):
    """String mode's tables built whole at once (one vectorised pass; a key's from its name tree) are the rows
    StringContent builds one DFA state at a time from the DFA's moves; run lengths included."""
    from structbench.masking import string_mode
    from structbench.regular.dfa import compile_pattern
    from structbench.regular.formats import format_dfa
    from structbench.regular.search import search_dfa

    if name == "keys":
        checker = SchemaChecker(SCHEMAS["keys: prefixes, escaped, counted"][0], "any", "lesson")
        frame = checker.feed(checker.start(), '{"')[-1]
        dfa = checker.key_trie(frame)
        moves = []  # the key's DFA as moves: each class's representative, as the checker's own step reads it
        bounds = machine_boundaries(checker.special_chars())
        for text in dfa.texts:
            row = []
            for c, lo in enumerate(bounds.tolist()):
                hi = (bounds[c + 1] - 1) if c + 1 < len(bounds) else 0x10FFFF
                nxt = checker.step((checker.start()[0], frame._replace(text=text)), chr(lo)) if 0x20 <= lo else None
                if nxt is not None and chr(lo) not in '"\\':
                    row.append((lo, int(hi), dfa.state_of[nxt[-1].text]))
            moves.append(row)
        reference = type("Moves", (), {"moves": moves, "accepting": dfa.accepting, "n_states": dfa.content_states})()
        ends = {d for d, text in enumerate(dfa.texts)
                if checker.step((checker.start()[0], frame._replace(text=text)), '"') is not None}
        assert ends and ends <= dfa.accepting  # the quote is offered wherever the key may end
    else:
        bounds = machine_boundaries()
        dfa = {"maxLength": compile_pattern(r"^[\s\S]{0,6}$"), "pattern": compile_pattern(r"^[A-Z]{2}-\d+$"),
               "format": format_dfa("date-time"), "searched": search_dfa(r"[a-f0-9]{8}")}[name]
        # The same moves in another object: string mode keeps a DFA's whole tables on it, which the rows built one
        # by one would otherwise read back.
        reference = type("Moves", (), {"moves": dfa.moves, "accepting": dfa.accepting, "n_states": dfa.n_states})()
    cap = 40
    whole = string_mode.StringContent(dfa, bounds, cap)
    saved = string_mode._WHOLE_CELLS
    string_mode._WHOLE_CELLS = 0  # every row built on first need, from the moves
    try:
        by_row = string_mode.StringContent(reference, bounds, cap)
    finally:
        string_mode._WHOLE_CELLS = saved
    assert whole.whole and not by_row.whole
    n = reference.n_states  # a key's DFA has its escape's states after its texts (test_a_keys_escape_rows_...)
    by_row.rows(np.arange(n))
    same = np.ones(len(bounds), dtype=bool)
    # Where the backslash leads is the escape rows' (a key's, and a checked string's whole table's: tested there)
    same[bounds == ord("\\")] = False
    if name != "keys":  # the backslash: to the escape row of its state where the rows built one by one leave it
        backslash = whole.lex[:n, ord("\\")]  # to the checker (EXIT), else refused in both
        exits = by_row.lex[:, ord("\\")] == trie_walk.EXIT
        assert np.array_equal(backslash[exits], n + np.flatnonzero(exits)) and (backslash[~exits] == -1).all()
    assert np.array_equal(whole.lex[:n][:, same], by_row.lex[:, same])
    assert np.array_equal(np.minimum(whole.run[:n], cap + 1), np.minimum(by_row.run, cap + 1))
    if name == "maxLength":  # a counter: six characters of anything from the start, then none
        assert whole.run.max() == 6
    if name == "keys":  # a key no name continues reads anything
        assert (whole.run > cap).any() and whole.total[:n].all() and not whole.total[n:].any()
    if name == "searched":  # no character is refused anywhere, though each state has several next ones
        assert whole.total[:n].all() and (whole.run[:n] <= cap).any()
    if name in ("pattern", "format"):  # a character refused within a token's reach: not claimed
        assert not whole.total[:n].all()
    plain = whole._plain
    for d in np.flatnonzero(whole.total).tolist():  # total: every run of plain characters as long as a token is read
        seen = {d}
        for _ in range(cap):
            nxt = {int(t) for e in seen for t in by_row.lex[e][plain]}
            assert min(nxt) >= 0, (name, d)
            seen = nxt


@pytest.mark.parametrize("chars", ["", "é", "中文—\U0001F600"])
def test_node_classes_shortcut_is_the_lookup(vocab, chars):
    """An index's node classes: ASCII nodes take their code as class (the checker's partition), only the non-ASCII
    ones are looked up; the same as looking every node up, for the checker's classes and for a pattern's."""
    require_llama3(vocab)
    from structbench.masking.tabled import vocab_codes
    from structbench.masking.token_index import TokenIndex

    trie = TokenIndex(vocab_codes(vocab), machine_boundaries()).trie
    assert (trie.codes >= 128).any() and (trie.codes < 128).any()
    for boundaries in (machine_boundaries(chars), np.array([0, 48, 58, 0x80 + len(chars), 0x4E00])):
        looked_up = np.searchsorted(boundaries, trie.codes, side="right") - 1
        assert np.array_equal(TokenIndex(vocab_codes(vocab), boundaries).node_classes, looked_up)


@pytest.mark.parametrize("chars", ["", "é", "中文—\U0001F600"])
def test_class_runs_end_at_the_first_sibling_of_another_class(vocab, chars):
    """A refused node drops its siblings of its class: each node's run ends at the first later sibling of another
    class (or its parent's end), for the checker's classes (only non-ASCII nodes looked at) and a pattern's."""
    from structbench.masking.tabled import vocab_codes
    from structbench.masking.token_index import TokenIndex

    for boundaries in (machine_boundaries(chars), np.array([0, 48, 58, 0x80 + len(chars), 0x4E00])):
        index = TokenIndex(vocab_codes(vocab), boundaries)
        trie, classes, run_end = index.trie, index.node_classes, index.run_end
        rng = np.random.default_rng(len(chars))
        for node in np.concatenate([np.flatnonzero(trie.parent < 0)[:50], rng.integers(0, trie.size, 3000)]):
            p = trie.parent[node]
            end = trie.size if p < 0 else p + trie.subtree[p]
            expect = node + trie.subtree[node]
            while expect < end and classes[expect] == classes[node]:
                expect += trie.subtree[expect]
            assert run_end[node] == expect
        assert (run_end > np.arange(trie.size)).all()


@pytest.mark.parametrize("chars", ["é", "中文—\U0001F600", "".join(map(chr, range(0x100, 0x180)))])
def test_classes_below_from_the_ascii_index_are_the_full_pass(vocab, chars):
    """A schema naming non-ASCII characters: its classes below each node come from the checker's index (ASCII bits
    kept, only non-ASCII nodes' ancestors walked), the same as the full pass over every node."""
    require_llama3(vocab)
    from structbench.masking.tabled import vocab_codes
    from structbench.masking.token_index import TokenIndex

    index = TokenIndex(vocab_codes(vocab), machine_boundaries(chars))
    below, height = trie_walk.classes_below(index.trie.parent, index.node_classes, index.n_words)
    assert index.n_words >= (3 if len(chars) < 20 else 4)
    assert np.array_equal(index.below, below) and np.array_equal(index.height, height)
    assert (index.below[:, 2:] != 0).any()


def test_walk_arrays_are_their_definitions(vocab):
    """The prefix tree's arrays the walk jumps by: a node range's token ends start at first_end[node] (the first
    token end at or after it); nonplain_next[node] is the first of the node and its following siblings whose
    subtree holds a character that is not plain (else the parent's end); and below a plain path, exit_next[node]
    the first whose subtree holds a quote or a backslash below a plain path (every other node is its own)."""
    from structbench.masking.tabled import vocab_codes
    from structbench.masking.token_index import token_trie
    from structbench.regular.charsets import json_plain

    trie = token_trie(vocab_codes(vocab))
    first_end, nonplain_next, exit_next = trie_walk.trie_arrays(trie)
    assert len(first_end) == trie.size + 1 and first_end[-1] == len(trie.ends)
    plain = json_plain(trie.codes)
    path_plain = plain.copy()  # every character from the root to the node is plain
    for n in range(trie.size):
        if trie.parent[n] >= 0:
            path_plain[n] &= path_plain[trie.parent[n]]
    above = np.where(trie.parent >= 0, path_plain[np.maximum(trie.parent, 0)], True)
    exits = np.flatnonzero(((trie.codes == 0x22) | (trie.codes == 0x5C)) & above)  # in preorder

    def leads(node):  # such an exit in the node's subtree (nodes node .. node + subtree - 1)
        return np.searchsorted(exits, node + trie.subtree[node]) > np.searchsorted(exits, node)

    rng = np.random.default_rng(0)
    nodes = np.concatenate([np.flatnonzero(trie.parent < 0)[::40], rng.integers(0, trie.size, 2000)])
    for node in nodes:
        k = first_end[node]
        assert (k == len(trie.ends) or trie.ends[k] >= node) and (k == 0 or trie.ends[k - 1] < node)
        p = trie.parent[node]
        end = trie.size if p < 0 else p + trie.subtree[p]
        expect = node
        while expect < end and trie.plain_subtree[expect]:
            expect += trie.subtree[expect]
        assert nonplain_next[node] == expect
        if p >= 0 and not path_plain[p]:
            assert exit_next[node] == node
            continue
        expect = node
        while expect < end and not leads(expect):
            expect += trie.subtree[expect]
        assert exit_next[node] == expect
    assert (~trie.plain_subtree).any() and trie.plain_subtree[np.flatnonzero(trie.parent < 0)].any()
    assert (exit_next[nodes] != nonplain_next[nodes]).any()


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 12).flatmap(lambda n: st.tuples(
    st.lists(st.lists(st.integers(-1, n - 1), min_size=3, max_size=3), min_size=n, max_size=n), st.integers(1, 8))))
def test_every_plain_run_is_read_where_no_short_run_reaches_a_refusal(table_and_cap):
    """string_mode's `total` (found breadth first backwards) is its definition: from d, no run of fewer than `cap`
    plain characters reaches a state that refuses one, on random tables (chains, loops, refusals) and depths."""
    from structbench.masking import string_mode

    rows, cap = table_and_cap
    lex = np.array(rows, dtype=np.int32)
    lex = np.concatenate([lex, np.full((len(lex), 1), -1, dtype=np.int32)], axis=1)  # a class that is not plain
    plain = np.array([True, True, True, False])
    want = []
    for d in range(len(lex)):
        reached, ok = {d}, True
        for _ in range(cap):  # runs of 0 .. cap - 1 characters
            if any((lex[e, :3] < 0).any() for e in reached):
                ok = False
                break
            reached = {int(t) for e in reached for t in lex[e, :3]}
        want.append(ok)
    assert string_mode._plain_runs(lex, plain, cap)[1].tolist() == want


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 14).flatmap(lambda n: st.tuples(
    st.lists(st.lists(st.integers(-1, n - 1), min_size=4, max_size=4), min_size=n, max_size=n),
    st.lists(st.booleans(), min_size=4, max_size=4), st.integers(0, 9))))
def test_compiled_string_table_runs_are_the_vectorised_ones(table_plain_cap):
    """string_mode._plain_runs compiled (trie_walk.plain_runs) gives the vectorised passes' run and total, on random
    tables (chains, loops, refusals), plain classes and depths."""
    from structbench.masking import string_mode

    if not trie_walk.compiled():
        pytest.skip("numba is not installed")
    rows, plain, cap = table_plain_cap
    lex, plain = np.array(rows, dtype=np.int32), np.array(plain)
    if not plain.any():
        plain[0] = True
    run, total = trie_walk.plain_runs(lex, np.flatnonzero(plain), cap)
    want_run, want_total = string_mode._plain_runs_vectorised(lex, plain, cap)
    assert run.tolist() == want_run.tolist() and total.tolist() == want_total.tolist()


@settings(max_examples=150, deadline=None)
@given(st.lists(st.text(st.sampled_from('ab/"\\\n\té\u0100z_'), min_size=1, max_size=6), min_size=0, max_size=12,
                unique=True), st.sampled_from(["checker's", "non-ASCII cuts", "coarse"]))
def test_compiled_key_trie_tables_are_the_numpy_ones(names, partition):
    """A key's tree of names as string mode's table, compiled (trie_walk.key_trie_tables), is KeyTrie.string_tables':
    names with escapable, control and non-ASCII characters, over the checker's partition, one with non-ASCII cuts,
    and one that gives ASCII characters no class of their own (no escape rows; a name's character must still have
    its own class, or both refuse the partition)."""
    from structbench.jsonschema.key_trie import KeyTrie
    from structbench.jsonschema.keys import OTHER

    if not trie_walk.compiled():
        pytest.skip("numba is not installed")
    trie = KeyTrie(sorted(names), OTHER)
    specials = {ch for name in names for ch in name if ord(ch) >= 128}
    codes = {"checker's": machine_boundaries(specials), "non-ASCII cuts": machine_boundaries(specials | {"\u4e00"}),
             "coarse": np.array(sorted({0, 0x20, 0x7F} | {c for name in names for ch in name
                                                           for c in (ord(ch), ord(ch) + 1)}))}[partition]
    codes = np.asarray(codes, dtype=np.int64)
    try:
        want = trie.string_tables(codes, trie_walk.CLOSE, trie_walk.EXIT, 9)
    except ValueError:
        with pytest.raises(ValueError):
            trie_walk.key_trie_tables(trie.table_parts(), trie.n_states, codes, trie_walk.CLOSE, trie_walk.EXIT, 9)
        return
    got = trie_walk.key_trie_tables(trie.table_parts(), trie.n_states, codes, trie_walk.CLOSE, trie_walk.EXIT, 9)
    for a, b in zip(got, want):
        assert a.dtype == b.dtype and np.array_equal(a, b)


def test_compiled_key_trie_tables_refuse_a_partition_that_cuts_no_class_for_a_names_character():
    from structbench.jsonschema.key_trie import KeyTrie
    from structbench.jsonschema.keys import OTHER

    if not trie_walk.compiled():
        pytest.skip("numba is not installed")
    trie, coarse = KeyTrie(["ab"], OTHER), np.array([0, 0x20, 0x7F], dtype=np.int64)
    for build in (lambda: trie.string_tables(coarse, trie_walk.CLOSE, trie_walk.EXIT, 9),
                  lambda: trie_walk.key_trie_tables(trie.table_parts(), trie.n_states, coarse, trie_walk.CLOSE,
                                                    trie_walk.EXIT, 9)):
        with pytest.raises(ValueError, match="class of its own"):
            build()


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 12).flatmap(lambda n: st.integers(1, 140).flatmap(lambda width: st.lists(
    st.lists(st.sampled_from(list(range(-1, n)) + [trie_walk.UNKNOWN]), min_size=width, max_size=width),
    min_size=n, max_size=n))))
def test_compiled_loop_bits_are_the_vectorised_ones(rows):
    """A string table's loop bits, compiled (trie_walk.loop_bits), are the vectorised compare-and-pack's, on random
    tables up to three words wide (None where no row loops)."""
    from structbench.masking import string_mode

    if not trie_walk.compiled():
        pytest.skip("numba is not installed")
    lex = np.array(rows, dtype=np.int32)
    got, want = trie_walk.loop_bits(lex), string_mode._loop_bits_vectorised(lex)
    assert (got is None) == (want is None)
    assert want is None or np.array_equal(got, want)


# Patterns whose tables the compiled builds are checked on: ASCII classes, a URL, a search, non-ASCII and ranges
TABLE_PATTERNS = ["^[a-z0-9_-]{1,20}$", "^(https?|ftp)://[^ ]+$", "[a-f0-9]{24}", "^é+[^\\x00-\\x1f]*$",
                  "^\\d{4}-\\d{2}-\\d{2}$", "^[\\u0100-\\uffff]{2,3}x$"]


@pytest.mark.parametrize("pattern", TABLE_PATTERNS + ['^["\\\\/]+\\n?$', "^[^a-z]*$", "^\\\\u[0-9a-f]{4}$",
                                                      "(?:\\uD83D[\\uDE00-\\uDE4F])+"])
def test_compiled_checked_string_table_is_the_vectorised_one(pattern):
    """A checked string's rows and its simple escapes' rows, compiled (trie_walk.checked_string_table), are the
    vectorised build's (string_mode._dfa_rows_vectorised): over the checker's partition, one with non-ASCII cuts,
    and a coarse one that gives ASCII characters no class of their own (no escape rows, the backslash the
    checker's); and so is the whole table with the `\\u` rows Llama 3's tokens ask for."""
    from structbench.masking import string_mode
    from structbench.regular.charsets import ascii_own, json_plain
    from structbench.regular.dfa import compile_pattern, moves_array

    if not trie_walk.compiled():
        pytest.skip("numba is not installed")
    try:
        dfa = compile_pattern(pattern)
    except Exception as e:  # noqa: BLE001 - a pattern the compiler declares unsupported says so itself
        pytest.skip(f"{pattern}: {e}")
    for codes in (machine_boundaries(), machine_boundaries({"é", "\u0100", "\uffff"}),
                  np.array([0, 0x20, 0x22, 0x23, 48, 58, 0x5C, 0x5D, 97, 123, 0x100], dtype=np.int64)):
        codes = np.asarray(codes, dtype=np.int64)
        plain, moves = json_plain(codes), moves_array(dfa)
        accepting = np.isin(np.arange(dfa.n_states), list(dfa.accepting))
        got, got_code = trie_walk.checked_string_table(moves, codes, plain, accepting, ascii_own(codes))
        want, want_code = string_mode._dfa_rows_vectorised(dfa, moves, codes, plain, accepting)
        assert got.dtype == want.dtype and np.array_equal(got, want), pattern
        assert (got_code is None) == (want_code is None) and (got_code is None or np.array_equal(got_code, want_code))
        whole = string_mode._dfa_lex_table(dfa, codes, plain, ("", "b", "c", "d", "f", "ff"))
        others = np.arange(want.shape[1]) != ord("u")  # (the `u` column of the escape rows: to the \\u rows)
        assert np.array_equal(whole[:dfa.n_states], want[:dfa.n_states])
        assert np.array_equal(whole[dfa.n_states:len(want)][:, others], want[dfa.n_states:][:, others])


@pytest.mark.parametrize("pattern", TABLE_PATTERNS)
def test_compiled_moves_table_is_next_states(pattern):
    """A DFA's moves over a class partition, compiled (trie_walk.moves_table), are regular.dfa.next_states: over the
    checker's partition, one with non-ASCII cuts and a coarse one."""
    from structbench.regular.dfa import compile_pattern, moves_array, next_states

    if not trie_walk.compiled():
        pytest.skip("numba is not installed")
    dfa = compile_pattern(pattern)
    for codes in (machine_boundaries(), machine_boundaries({"é", "\u0100", "\uffff"}),
                  np.array([0, 48, 58, 97, 123, 0x100], dtype=np.int64)):
        codes = np.asarray(codes, dtype=np.int64)
        want = next_states(dfa, codes).astype(np.int32)
        assert np.array_equal(trie_walk.moves_table(moves_array(dfa), dfa.n_states, codes), want), pattern


def test_a_big_strict_objects_keys_are_read_in_string_mode(vocab):
    """An object of 1,000 properties and no other keys (5,000 name prefixes) reads its keys by one name table
    (key_patterns with no DFA; only combinations of DFA states are capped), and a mask inside a key is
    LazyDense's token walk's."""
    require_llama3(vocab)
    if not trie_walk.compiled():
        pytest.skip("numba is not installed")
    schema = {"type": "object", "additionalProperties": False,
              "properties": {f"field_{i:04d}_name": {"type": "string"} for i in range(1000)}}
    checker = SchemaChecker(schema, "any", "compact")
    bounds = machine_boundaries(checker.special_chars())
    trie, plain = TrieDense(checker, bounds, vocab), LazyDense(SchemaChecker(schema, "any", "compact"), bounds, vocab)
    for prefix in ['{"field_00', '{"field_0001_name":"x","field_000']:
        stack = checker.feed(checker.start(), prefix)
        content = checker.string_content(stack)
        assert content is not None and type(content[0]).__name__ == "KeyPatternDFA", prefix
        expected, _ = plain.mask(plain.id_of(stack))
        got, _ = trie.mask(trie.id_of(stack))
        assert np.array_equal(got, expected), (prefix, np.flatnonzero(got != expected)[:10])
        assert 5 <= expected.sum() < 1000, prefix  # (after "field_000": its digits but the used 1)


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_a_tokens_advance_reads_strings_by_their_dfas_and_lands_where_the_checker_does(vocab, name):
    """TrieDense.step_text (the lazy strategy's advance: plain runs read by string mode's tables, a closing quote
    by what a walk found after it) lands on the checker's own state after the token's text, and refuses where it
    refuses; along the instance and random tokens from states a mask was walked from (their closes known) or not."""
    require_llama3(vocab)  # (the synthetic stand-in cannot spell the instances)
    schema, value = SCHEMAS[name]
    checker = SchemaChecker(schema, "any", "lesson")
    dense = TrieDense(checker, machine_boundaries(checker.special_chars()), vocab)
    rng = np.random.default_rng(7)
    text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    state, strings_read, refused = dense.start, 0, 0
    for k, tid in enumerate(vocab.encode(text)):
        if k % 2:
            dense.mask(state)  # its walk finds the closes a later advance may read
        token = vocab.tokens[tid]
        for other in rng.choice(len(vocab.tokens), size=40, replace=False).tolist():  # any tokens, most refused
            piece = vocab.tokens[other]
            if not piece:
                continue
            expected = checker.feed(dense.states[state], piece)
            got = dense.step_text(state, piece)
            assert (got is None) == (expected is None), (name, token, piece)
            if got is not None:
                assert dense.states[got] == expected, (name, token, piece)
            refused += got is None
        strings_read += dense._enter[state] >= 0
        nxt = dense.step_text(state, token)
        assert nxt is not None and dense.states[nxt] == checker.feed(dense.states[state], token), (name, token)
        state = nxt
    assert checker.can_end(dense.states[state])
    assert refused
    if "union" not in name:  # (strings under a union are the checker's: no string mode there)
        assert strings_read  # the string-mode path was taken


def test_objects_with_alike_keys_share_their_key_dfas_and_masks_stay_the_walks(vocab):
    """Two object nodes with the same names and no other key (their values differ) read their keys by one key DFA,
    and a context (the names used) by one DFA whichever object it is in, so string mode builds their tables once;
    an object with other names has its own. A mask inside each key is LazyDense's token walk's."""
    require_llama3(vocab)
    if not trie_walk.compiled():
        pytest.skip("numba is not installed")

    def strict(**props):
        return {"type": "object", "properties": props, "additionalProperties": False}

    schema = strict(x=strict(ab={"type": "string"}, ac={"type": "integer"}),
                    y=strict(ab={"type": "integer"}, ac={"type": "string"}),
                    z=strict(ab={"type": "integer"}, ad={"type": "string"}))
    checker = SchemaChecker(schema, "any", "compact")
    bounds = machine_boundaries(checker.special_chars())
    trie, plain = TrieDense(checker, bounds, vocab), LazyDense(SchemaChecker(schema, "any", "compact"), bounds, vocab)
    prefixes = {"x": '{"x":{"a', "y": '{"x":{"ab":"s","ac":1},"y":{"a', "z": '{"y":{"ac":"s","ab":1},"z":{"a',
                "x used": '{"x":{"ab":"s","a', "y used": '{"y":{"ab":1,"a', "z used": '{"z":{"ab":1,"a'}
    dfas, nodes = {}, {}
    for name, prefix in prefixes.items():
        stack = checker.feed(checker.start(), prefix)
        content = checker.string_content(stack)
        assert content is not None and type(content[0]).__name__ == "KeyPatternDFA", prefix
        dfas[name], nodes[name] = content[0], stack[-1].node
        expected, _ = plain.mask(plain.id_of(stack))
        got, _ = trie.mask(trie.id_of(stack))
        assert np.array_equal(got, expected), (prefix, np.flatnonzero(got != expected)[:10])
    assert len({nodes["x"], nodes["y"], nodes["z"]}) == 3
    assert dfas["x"] is dfas["y"] and dfas["x used"] is dfas["y used"]  # other nodes, one DFA
    assert dfas["x used"] is not dfas["x"] and dfas["x used"].shared is dfas["x"]
    assert dfas["z"] is not dfas["x"] and dfas["z used"] is not dfas["x used"]  # other names


def test_a_whole_tables_string_content_is_one_per_dfa_and_partition(vocab):
    """string_mode.string_content keeps a DFA's StringContent on it where its table is whole (read-only then): the
    free string's, an unbounded number's, a literal's is one for every constraint, through a cold start; another
    partition or cap has its own; a DFA built by rows (which records the rows a walk made) has one per call."""
    from structbench.jsonschema.free_text import FREE_STRING
    from structbench.masking import string_mode

    first = string_mode.string_content(FREE_STRING, machine_boundaries(), 16)
    cold_start(vocab)
    assert string_mode.string_content(FREE_STRING, machine_boundaries(), 16) is first
    assert string_mode.string_content(FREE_STRING, machine_boundaries({"\u4e00"}), 16) is not first
    assert string_mode.string_content(FREE_STRING, machine_boundaries(), 17) is not first
    counter = compile_pattern("[a-z]{0,1000}")
    saved = string_mode._WHOLE_CELLS
    string_mode._WHOLE_CELLS = 0  # built by rows
    try:
        by_rows = string_mode.string_content(counter, machine_boundaries(), 16)
        assert not by_rows.whole and string_mode.string_content(counter, machine_boundaries(), 16) is not by_rows
    finally:
        string_mode._WHOLE_CELLS = saved
    whole = string_mode.string_content(counter, machine_boundaries(), 16)
    assert whole.whole and string_mode.string_content(counter, machine_boundaries(), 16) is whole


def test_a_dfa_keeps_its_tables_for_a_few_partitions_the_least_recent_let_go():
    """String mode keeps a DFA's whole tables on it per class partition (the free string's is every checker's),
    at most _KEPT_PARTITIONS of them: a corpus of schemas naming non-ASCII characters does not grow it without
    end, and a partition in use stays."""
    from structbench.jsonschema.free_text import FreeString
    from structbench.masking import string_mode

    dfa = FreeString()
    shared = machine_boundaries()
    string_mode.StringContent(dfa, shared, 40)
    for k in range(string_mode._KEPT_PARTITIONS + 3):
        own = machine_boundaries({chr(0x4E00 + k)})
        string_mode.StringContent(dfa, own, 40)
        string_mode.StringContent(dfa, shared, 40)  # used again: the most recent
        kept = dfa.__dict__["_string_mode_tables"]
        assert len(kept) <= string_mode._KEPT_PARTITIONS
        assert (shared.astype(np.int64).tobytes(), 40, None) in kept
    assert (machine_boundaries({chr(0x4E00)}).astype(np.int64).tobytes(), 40, None) not in kept


NUMBER_SCHEMAS = [({"type": "integer"}, "json"), ({"type": "number"}, "json"), ({"type": "number"}, "lesson"),
                  ({"type": "integer", "minimum": -5, "maximum": 1200}, "json"),
                  ({"type": "number", "exclusiveMinimum": 0.5, "maximum": 99.25}, "json"),
                  ({"type": "number", "multipleOf": 0.01}, "json"), ({"enum": [1, 2.5, -30]}, "json")]


@pytest.mark.parametrize("schema,numbers", NUMBER_SCHEMAS)
def test_a_numbers_lexeme_table_is_its_dfas_moves_ended_open(schema, numbers):
    """A number's string-mode table (NumberLexeme.lexeme_tables): each class its DFA moves on goes where the DFA goes
    (a class read by its first character, as regular.dfa.next_states reads it); any other ends the number (END)
    where the DFA accepts, else is refused; no plain run is claimed."""
    checker = SchemaChecker(schema, "any", "lesson", numbers)
    dfa = checker.nodes[checker.root].number_dfa
    lexeme = number_lexeme(dfa)
    codes = machine_boundaries(checker.special_chars()).astype(np.int64)
    lex, run, total = lexeme.lexeme_tables(codes, trie_walk.CLOSE, trie_walk.END, 16)
    expected = next_states(dfa, codes)
    accepting = np.isin(np.arange(dfa.n_states), list(dfa.accepting))
    expected[(expected < 0) & accepting[:, None]] = trie_walk.END
    assert np.array_equal(lex, expected)
    assert (lex == trie_walk.END).any() and (lex >= 0).any() and not run.any() and not total.any()
    assert lexeme.ends_open and lexeme.content_states == dfa.n_states


def test_unbounded_numbers_share_one_lexeme_across_cold_starts(vocab):
    """An unbounded integer's or number's DFA and lexeme are one for every schema, kept through a cold start (JSON's
    number syntax: a fresh schema does not compile it again, and its tables over the vocabulary's classes are made
    once); a bounded number's, or one with a multipleOf, is its own, made anew, and accepts what its keywords say."""
    def dfa(schema):
        checker = SchemaChecker(schema, "any", "lesson")
        return checker.nodes[checker.root].number_dfa

    schemas = [{"type": "integer"}, {"type": "number"}, {"type": "integer", "maximum": 9},
               {"type": "integer", "multipleOf": 3}]
    first = [dfa(s) for s in schemas]
    cold_start(vocab)
    again = [dfa(s) for s in schemas]
    assert again[0] is first[0] and again[1] is first[1] and first[0] is not first[1]
    assert [number_lexeme(d) for d in again[:2]] == [number_lexeme(d) for d in first[:2]]
    assert again[0] == trim(compile_pattern(INTEGER))  # the DFA number_language compiled before it was kept
    for k in (2, 3):
        assert again[k] is not first[k] and again[k] == first[k] and number_lexeme(again[k]) is not number_lexeme(
            first[k])
    assert [again[2].accepts(t) for t in ("9", "10", "-4")] == [True, False, True]
    assert [again[3].accepts(t) for t in ("9", "10", "-4")] == [True, False, False]


def masks_after(vocab, schema: dict, prefixes: list[str]) -> tuple:
    """(checker, TrieDense, LazyDense) after the compiled walk's mask at each prefix's state was checked against
    LazyDense's token walk."""
    require_llama3(vocab)
    if not trie_walk.compiled():
        pytest.skip("numba is not installed")
    checker = SchemaChecker(schema, "any", "lesson")
    bounds = machine_boundaries(checker.special_chars())
    trie, plain = TrieDense(checker, bounds, vocab), LazyDense(SchemaChecker(schema, "any", "lesson"), bounds, vocab)
    for prefix in prefixes:
        stack = checker.feed(checker.start(), prefix)
        expected, _ = plain.mask(plain.id_of(stack))
        got, _ = trie.mask(trie.id_of(stack))
        assert np.array_equal(got, expected), (prefix, np.flatnonzero(got != expected)[:10])
    return checker, trie, plain


def test_a_numbers_digits_make_no_machine_state(vocab):
    """A mask's walk reads a number by its DFA in string mode: after a key's colon, the machine states it numbers
    inside numbers are those its first characters reach (a sign, a zero, another digit), not one per DFA state the
    vocabulary's number tokens pass through; and the masks stay LazyDense's token walk's."""
    schema = {"type": "object", "properties": {"n": {"type": "number"}, "s": {"type": "string"}}}
    checker, trie, _ = masks_after(vocab, schema, ['{"n": ', '{"n": 12', '{"n": -0.5e', '{"s": "x", "n": 3'])
    in_numbers = {st[-1].at for st in trie.states if st[-1].kind == "number"}
    dfa = checker.nodes[dict(checker.nodes[checker.root].properties)["n"]].number_dfa
    firsts = {dfa.step(dfa.start, ch) for ch in "-0123456789"}
    # The prefixes' own states (the first characters', 12's, -0.5e's, 3's), no other.
    assert in_numbers <= firsts | {dfa.walk(dfa.start, t) for t in ("12", "-0.5e", "3")}
    assert len(in_numbers) < dfa.n_states - 2
    assert number_lexeme(dfa) is not None and checker.string_content(checker.feed(checker.start(), '{"n": 1'))


@pytest.mark.parametrize("word", ["true", "false", "null"])
def test_a_literals_lexeme_reads_its_letters_and_closes_at_the_last(word):
    """A literal's string-mode table: from d letters read, the next letter's class to d + 1, the last letter's to
    CLOSE (read, as a string's quote: the machine goes on after it), every other class refused; one lexeme per word
    for every checker."""
    checker = SchemaChecker({"type": ["boolean", "null"]}, "any", "lesson")
    codes = machine_boundaries().astype(np.int64)
    stack = checker.feed(checker.start(), word[0])
    lexeme, at = checker.string_content(stack)
    assert lexeme is literal_lexeme(word) and at == 1 and lexeme.closing == word[-1]
    lex, run, total = lexeme.lexeme_tables(codes, trie_walk.CLOSE, trie_walk.END, 16)
    for d in range(1, len(word)):
        expected = np.full(len(codes), -1)
        expected[np.searchsorted(codes, ord(word[d]), side="right") - 1] = d + 1 if d + 1 < len(word) else trie_walk.CLOSE
        assert np.array_equal(lex[d], expected), d
        assert checker.with_string_state(stack, d) == checker.feed(checker.start(), word[:d])
    assert not run.any() and not total.any()


def test_a_literals_letters_make_no_machine_state(vocab):
    """A mask's walk reads true, false and null by their lexemes: after a key's colon, the literal states it numbers
    are those the first letters reach (one letter read), not one per letter the vocabulary's tokens pass through;
    the masks stay LazyDense's token walk's."""
    schema = {"type": "object", "properties": {"b": {"type": ["boolean", "null"]}}}
    _, trie, plain = masks_after(vocab, schema, ['{"b": ', '{"b": t', '{"b": fal', '{"b": null'])
    read = {(st[-1].text, st[-1].at) for st in trie.states if st[-1].kind == "literal"}
    # the first letters' states, and the prefixes' own ("t", "fal")
    assert read <= {("true", 1), ("false", 1), ("null", 1), ("false", 3)}, read
    assert len({(st[-1].text, st[-1].at) for st in plain.states if st[-1].kind == "literal"}) > len(read)


def test_a_range_to_the_last_code_point_names_no_class(vocab):
    """A maxLength counter's moves and `[^<>]`'s run to the last code point: the code points' end is a class boundary
    already, so such a schema's classes are the shared ones (no index of the vocabulary of its own), and its masks
    are those the finer partition that named the last code point gave, at every state an instance and random
    detours reach. A non-ASCII property name still has its classes."""
    require_llama3(vocab)
    if not trie_walk.compiled():
        pytest.skip("numba is not installed")
    schema = {"type": "object", "properties": {"note": {"type": "string", "maxLength": 12},
                                               "tag": {"type": "string", "pattern": "^[^<>]*$"}}}
    value = {"note": "h\u00e9llo w\u00f6rld", "tag": "na\u00efve caf\u00e9"}
    checker = SchemaChecker(schema, "any", "lesson")
    assert checker.special_chars() == set()
    assert np.array_equal(machine_boundaries(checker.special_chars()), machine_boundaries())
    assert SchemaChecker({"type": "object", "properties": {"\u00e9t\u00e9": {}}}).special_chars() == {"\u00e9"}
    shared = TrieDense(checker, machine_boundaries(), vocab)
    finer = TrieDense(SchemaChecker(schema, "any", "lesson"), machine_boundaries({chr(0x10FFFF)}), vocab)
    assert len(finer.boundaries) == len(shared.boundaries) + 1
    plain = LazyDense(SchemaChecker(schema, "any", "lesson"), machine_boundaries(), vocab)
    states = reached_states(checker, plain, vocab, value, np.random.default_rng(5))
    for i in states:
        got, _ = shared.mask(shared.id_of(plain.states[i]))
        want, _ = finer.mask(finer.id_of(plain.states[i]))
        assert np.array_equal(got, want), (plain.states[i][-1], np.flatnonzero(got != want)[:10])
    assert len(set(states)) > 10


def test_rows_a_token_read_past_a_close_needs_are_made_with_it(vocab):
    """Where a walk closes a string or a key, the rows a token reading on needs next are made with the close's, not
    in another round of the walk each: after a value's comma what may come next, and after a key's colon the value's
    first characters, then an object's or array's opening bracket's."""
    require_llama3(vocab)
    if not trie_walk.compiled():
        pytest.skip("numba is not installed")
    schema = {"type": "object", "additionalProperties": False, "properties": {
        "a": {"type": "string"}, "b": {"type": "object", "properties": {"c": {"type": "integer"}}},
        "d": {"type": "array", "items": {"type": "integer"}}}}
    checker = SchemaChecker(schema, "any", "lesson")
    dense = TrieDense(checker, machine_boundaries(checker.special_chars()), vocab)

    def state(text):
        return dense.id_of(checker.feed(checker.start(), text))

    dense.mask(state('{"a": "x'))  # its walk reads the string's closing quote
    assert dense._expanded[state('{"a": "x",')]
    for key in ("b", "d"):  # its walk closes the key (Llama 3: `":{"`, `":["`)
        dense.mask(state('{"a": "x", "' + key))
    for text in ('{"a": "x", "b":', '{"a": "x", "b":{', '{"a": "x", "d":', '{"a": "x", "d":['):
        assert dense._expanded[state(text)], text


def test_a_union_of_a_checked_string_and_free_ones_is_one_dfa(vocab):
    """A union whose branches are in strings, each checked by one DFA X at one state or free, is read in string mode
    by or_free(X) (X's states and a sink where only the free branches live); every state it moves to by plain
    characters is the stack the checker's own steps reach (the sink's: the free branches alone, settled as a union
    settles), and where the branches' DFAs differ otherwise (two checked ones) there is none."""
    schema = SCHEMAS["a checked string against free ones in a union"][0]
    checker = SchemaChecker(schema, "any", "lesson")
    for text, chars in (('{"ctx": {"a": "', "abcdefgh"), ('{"ctx": {"id": "', "beefz!"), ('{"more": [{"a": "', "xyzzy!")):
        stack = checker.feed(checker.start(), text)
        dfa, d = checker.string_content(stack)
        assert dfa.free_sink == dfa.n_states - 1 and d == 0, text
        base = checker.with_string_state(stack, 0)
        for ch in chars:
            stack = checker.step(stack, ch)
            d = dfa.step(d, ch)
            assert checker.with_string_state(base, d, dfa) == stack, (text, ch)
        assert d == dfa.free_sink and stack[-1].kind == "string", text  # the checked branch is gone
        assert checker.string_content(stack)[0] is checker.string_content(checker.feed(
            checker.start(), '{"x": "'))[0]  # a free string's alone
        assert checker.with_string_state(stack, d, dfa) == stack  # (the sink's stack read on: as it is)
    long = SchemaChecker(SCHEMAS["a long maxLength against free ones in a union"][0], "any", "lesson")
    stack = long.feed(long.start(), '{"ctx": {"a": "')
    dfa, d = long.string_content(stack)
    assert dfa.n_states == 5002 and dfa.free_sink == 5001 and d == 0  # (a count of 0-5,000 and the sink)
    base = long.with_string_state(stack, 0)
    for ch in "x" * 5001:
        stack, d = long.step(stack, ch), dfa.step(d, ch)
        assert d in (5000, 5001) or d % 1000 or long.with_string_state(base, d, dfa) == stack
    assert d == dfa.free_sink and long.with_string_state(base, d, dfa) == stack and stack[-1].kind == "string"
    two = SchemaChecker({"anyOf": [{"type": "object", "properties": {"a": {"type": "string", "maxLength": 3}}},
                                   {"type": "object", "properties": {"a": {"type": "string", "pattern": "^x"}}}]},
                        "any", "lesson")
    assert two.string_content(two.feed(two.start(), '{"a": "')) is None


def test_a_union_of_a_checked_string_and_free_ones_leaves_unicode_escapes_to_the_checker():
    """The free branches of such a union read a `\\u` escape by the lenient rules (a lone low surrogate, `\\udc..`),
    which a checked string's table rows refuse: the union's table leaves the `u` to the checker, so a vocabulary
    whose tokens hold those prefixes gets the checker's masks (Llama 3's hold none that tell the rules apart)."""
    if not trie_walk.compiled():
        pytest.skip("numba is not installed")
    tokens = list(dict.fromkeys([chr(c) for c in range(32, 127)] + ["\\u", "\\u003", "\\u00", "\\udc", "\\ud8",
                                                                     "ab", '"', "\\n", EOS]))
    vocab = Vocabulary(tokens, eos=EOS)
    index_vocabulary(vocab)
    schema = SCHEMAS["a checked string against free ones in a union"][0]
    for text in ('{"ctx": {"a": "', '{"ctx": {"a": "ab', '{"ctx": {"a": "abcdefg'):
        checker = SchemaChecker(schema, "any", "lesson")
        bounds = machine_boundaries(checker.special_chars())
        trie, plain = TrieDense(checker, bounds, vocab), LazyDense(SchemaChecker(schema, "any", "lesson"), bounds,
                                                                   vocab)
        stack = checker.feed(checker.start(), text)
        got, _ = trie.mask(trie.id_of(stack))
        want, _ = plain.mask(plain.id_of(stack))
        assert np.array_equal(got, want), (text, [tokens[t] for t in np.flatnonzero(got != want)])
        assert want[tokens.index("\\udc")], text  # (the lenient rule is what this test is about)


def test_a_mask_from_inside_a_string_meets_its_closes_known(vocab, monkeypatch):
    """A mask walked from inside a string or a key has the machine state after the closing quote at its start row
    computed before the walk (Llama 3's `"`, `",`, `":`, ...; a number's end at a comma), and in a key any other key
    may be, at the other keys' state too (`)"`, `."`, ...): no round of the walk sets those closes aside. (A token
    may read on into another string and close it: that one's close is the walk's.) The masks are the checker's."""
    require_llama3(vocab)
    if not trie_walk.compiled():
        pytest.skip("numba is not installed")
    kernels = trie_walk._kernels()
    set_aside = set()

    def walk(*args):  # the compiled walk, the rows of the closes it set aside read after each round
        n_pend, steps, n_cov = kernels.walk(*args)
        kinds, rows = args[30][:n_pend], args[29][:n_pend]
        set_aside.update(rows[kinds == trie_walk.NEED_CLOSE].tolist())
        return n_pend, steps, n_cov

    monkeypatch.setattr(trie_walk, "_kernels", lambda: kernels._replace(walk=walk))
    schema = {"type": "object", "properties": {"name": {"type": "string"}, "n": {"type": "integer"}}}
    checker = SchemaChecker(schema, "any", "lesson")
    dense = TrieDense(checker, machine_boundaries(checker.special_chars()), vocab)
    plain = LazyDense(SchemaChecker(schema, "any", "lesson"), machine_boundaries(checker.special_chars()), vocab)
    for text, known in (('{"name": "Ada', ""), ('{"', "zz"), ('{"name', "zz"), ('{"name": "Ada", "zz', ""),
                        ('{"n": 12', "")):
        set_aside.clear()
        stack = checker.feed(checker.start(), text)
        i = dense.id_of(stack)
        start = int(dense._enter[i])
        mine = {start} | ({int(dense._enter[dense.id_of(checker.feed(stack, known))])} if known else set())
        assert dense._strings.closes[start] == trie_walk.UNKNOWN
        got, _ = dense.mask(i)
        want, _ = plain.mask(plain.id_of(stack))
        assert np.array_equal(got, want), text
        assert not set_aside & mine, (text, set_aside, mine)
        assert all(dense._strings.closes[r] != trie_walk.UNKNOWN for r in mine), text


@pytest.mark.parametrize("partition", ["checker", "pattern"])
def test_control_characters_refused_is_read_as_the_control_classes_say(vocab, partition):
    """The control characters' classes are the slice 0-31 where every ASCII character is a class of its own (the
    checker's partitions), else their mask: _refuses_controls gives the same answer either way, per row and for a
    block of rows, on rows refusing them all, all but one, or none, and a write through them reaches exactly those."""
    checker = SchemaChecker({"type": "string"}, "any", "lesson")
    if partition == "checker":
        bounds = machine_boundaries(checker.special_chars())
    else:  # a pattern's own classes: a class spans several control characters
        bounds = pattern_boundaries(trim(compile_pattern(r"[\x00-\x1f]x|[a-z]+")))
    dense = TrieDense(checker, bounds, vocab)
    controls = dense._classes_of("".join(map(chr, range(0x20))))
    rng = np.random.default_rng(11)
    rows = rng.integers(0, 5, size=(40, len(bounds))).astype(np.int32)
    rows[:10][:, controls] = -1  # all refused
    rows[10:20][:, controls] = -1
    rows[10:20, int(np.flatnonzero(controls)[-1])] = 3  # all but one
    expected = (rows[:, controls] == -1).all(axis=1)
    assert expected[:10].all() and not expected[10:].any()
    assert isinstance(dense._control_classes(), slice) is (partition == "checker")
    assert np.array_equal(dense._refuses_controls(rows), expected)
    assert [bool(dense._refuses_controls(row)) for row in rows] == expected.tolist()
    written = rows.copy()  # and a row's control cells written through them (a hint's refusal: _settle_by_hints)
    written[0][dense._control_classes()] = 7
    assert np.array_equal(written[0] == 7, controls) and np.array_equal(written[1:], rows[1:])
