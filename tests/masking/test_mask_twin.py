"""Mask twins (SchemaChecker.mask_twin, TabledConstraint._by_twin): in an object whose keys are remembered whole
(minProperties counting distinct free keys), a state's mask is its twin's, whose keys keep their text only while it
may still be a property name or a used key, with the tokens holding three or more quotes stepped from the state
itself. Each mask equals the one the state's own walk makes, and a free key costs a few states, not one per token
prefix."""

from __future__ import annotations

import json

import numpy as np
import pytest
from helpers import walk_against_checker

from structbench.jsonschema.checker import SchemaChecker
from structbench.jsonschema.keys import FRESH, TWIN_AT
from structbench.lm.vocab import EOS, Vocabulary
from structbench.masking.lazy import lazy_constraint
from structbench.masking.tabled import quoted_tokens, schema_constraint

# Objects that count distinct keys: free, with names, with maxProperties, patterns, propertyNames, typed other
# values, nested in arrays and in unions (whose branches are twinned each)
SCHEMAS = [
    {"type": "object", "minProperties": 2},
    {"type": "object", "minProperties": 3, "properties": {"a": {"type": "integer"}, "ab": {"type": "string"}}},
    {"type": "object", "minProperties": 2, "maxProperties": 3},
    {"type": "object", "minProperties": 3, "additionalProperties": {"type": "integer"}},
    {"type": "object", "minProperties": 2, "patternProperties": {"^x": {"type": "integer"}},
     "additionalProperties": False},
    {"type": "object", "minProperties": 2, "propertyNames": {"maxLength": 3}},
    {"type": "array", "items": {"type": "object", "minProperties": 2, "additionalProperties": {"type": "array"}}},
    {"anyOf": [{"type": "object", "minProperties": 2},
               {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}]},
]

# Tokens where a later key closed in the same token repeats the key before it: what only the state tells
ADVERSARIAL = ['a":1,"a"', 'a":1,"b"', '":1,"a"', '":0,"x":1,"x"', 'ab":2,"ab"', 'b":[],"b":', '"a":1,"a":',
               'x":{},"x"', '":"","', '","","', '"}', '":{"a":1,"a"', 'a": 1, "a"', 'a": 1, "c"']


@pytest.fixture(scope="module")
def small_vocab(vocab):
    """Llama 3's tokens that hold a quote, 3,000 others, the printable ASCII characters and the adversarial tokens:
    small enough that a walk without twins stays quick."""
    rng = np.random.default_rng(0)
    texts = [t for t in vocab.tokens if t is not None and t != vocab.eos]
    quoted = [t for t in texts if '"' in t]
    others = [texts[i] for i in rng.choice(len(texts), 3000, replace=False)]
    chars = [chr(c) for c in range(0x20, 0x7F)]
    tokens = list(dict.fromkeys([EOS] + chars + ADVERSARIAL + quoted + others))
    return Vocabulary(tokens, name="twin-test")


def _pair(schema, vocab, make=lazy_constraint):
    """A constraint with mask twins and one whose every mask is its state's own walk, neither reading the masks the
    process keeps across schemas (else the reference reads back the twinned one's masks: a mask compared with
    itself)."""
    twinned, alone = make(SchemaChecker(schema), vocab), make(SchemaChecker(schema), vocab)
    alone._mask_twin = None
    twinned._store = alone._store = None
    return twinned, alone


@pytest.mark.parametrize("schema", SCHEMAS, ids=[str(i) for i in range(len(SCHEMAS))])
def test_random_walks_read_every_mask_as_the_state_own_walk(schema, small_vocab):
    rng = np.random.default_rng(7)
    twinned, alone = _pair(schema, small_vocab)
    quotes = np.array([t is not None and '"' in t for t in small_vocab.tokens])
    short = np.array([t is not None and len(t) <= 2 for t in small_vocab.tokens])
    twins = 0
    for _ in range(6):
        a, b = twinned.start(), alone.start()
        for _ in range(40):
            got, want = twinned.mask_bits(a), alone.mask_bits(b)
            assert np.array_equal(got, want), (schema, twinned.dense.states[a])
            twins += twinned._mask_twin(twinned.dense.states[a]) is not None
            allowed = np.flatnonzero(twinned.mask(a))
            allowed = allowed[allowed != small_vocab.eos_id]
            if not len(allowed):
                break
            pick = rng.random()  # keys closed and opened often, short keys that may repeat
            pool = allowed[quotes[allowed]] if pick < 0.4 else allowed[short[allowed]] if pick < 0.8 else allowed
            token = int(rng.choice(pool if len(pool) else allowed))
            a, b = twinned.advance(a, token), alone.advance(b, token)
    assert twins > 10 and alone.work.masks_built > 10  # the walks met states with twins; the reference walked its own


@pytest.mark.parametrize("make", [lazy_constraint, schema_constraint], ids=["lazy", "tabled"])
def test_a_token_that_repeats_its_own_key_is_refused_where_the_key_counts(small_vocab, make):
    """After `{"a` under minProperties 3, `":1,"a"` writes the key "a" twice (refused), `a":1,"a"` the keys "aa" and
    "a" (allowed): the twin, which forgets a free key, would allow both; the state itself tells them apart."""
    twinned, alone = _pair({"type": "object", "minProperties": 3}, small_vocab, make)
    index = small_vocab.index
    for constraint in (twinned, alone):
        state = constraint.advance(constraint.advance(constraint.start(), index['{"']), index["a"])
        mask = constraint.mask(state)
        assert not mask[index['":1,"a"']] and not mask[index['":0,"x":1,"x"']]
        assert mask[index['a":1,"a"']] and mask[index['a":1,"b"']] and mask[index['a": 1, "c"']]
    twin = twinned._mask_twin(twinned.dense.states[state])
    assert twin is not None and twin[-1].text == FRESH


def test_a_free_key_costs_a_few_states_and_its_mask_is_the_twin_read_back(vocab):
    """Llama 3: in a free key of an object counting keys, each mask walked by its own state numbered about 200,000
    states (seconds, hundreds of MB); with twins, the key's every state shares one walk."""
    constraint = lazy_constraint(SchemaChecker({"type": "object", "minProperties": 2}), vocab)
    state = constraint.start()
    for token in vocab.encode('{" Americas 메abellaunta.githubVi貨 braveseeูล'):
        assert constraint.mask(state)[token]
        state = constraint.advance(state, token)
    assert len(constraint.dense.states) < 2000
    twin = constraint._mask_twin(constraint.dense.states[state])
    assert twin[-1].text == FRESH and twin[-1].at == TWIN_AT
    assert len(constraint._twin_bits) <= 4
    assert len(quoted_tokens(vocab)) < 100


def test_only_checkers_with_an_object_that_remembers_free_keys_ask_for_twins(vocab):
    assert SchemaChecker({"type": "object", "minProperties": 2}).has_mask_twins
    assert SchemaChecker({"type": "array", "items": SCHEMAS[4]}).has_mask_twins  # (patterns: other keys counted)
    # Names alone to count (strict), a minimum the required keys imply, no minimum: no key is remembered whole
    for schema in ({"type": "object", "minProperties": 1, "properties": {"a": {}, "b": {}},
                    "additionalProperties": False},
                   {"type": "object", "minProperties": 1, "properties": {"a": {}}, "required": ["a"]},
                   {"type": "object"}):
        checker = SchemaChecker(schema)
        assert not checker.has_mask_twins and lazy_constraint(checker, vocab)._mask_twin is None


def test_a_key_spelled_as_the_fresh_sentinel_is_remembered():
    """`\\u0000\\u0002fresh` decodes to FRESH's text: a real key so spelt is checked for repeats as any other (two
    distinct keys here, not the three minProperties asks for). Found by review."""
    checker = SchemaChecker({"type": "object", "minProperties": 3})
    assert checker.feed(checker.start(), '{"\\u0000\\u0002fresh":1,"\\u0000\\u0002fresh":1,"x":1}') is None
    assert checker.can_end(checker.feed(checker.start(), '{"\\u0000\\u0002fresh":1,"\\u0000\\u0002frest":1,"x":1}'))


def test_a_remembered_key_that_spells_other_is_kept_whole():
    """OTHER's text (`\\u0000\\u0001other`) followed by more: two distinct keys, and a repeat of one refused (the
    key's text was cut at OTHER's and every such key read as one). Found by review; it predates mask twins."""
    checker = SchemaChecker({"type": "object", "minProperties": 2})
    two = '{"\\u0000\\u0001otherA":1,"\\u0000\\u0001otherB":1}'
    assert checker.can_end(checker.feed(checker.start(), two))
    assert checker.feed(checker.start(), two.replace("otherB", "otherA")) is None


@pytest.mark.parametrize("make", [lazy_constraint, schema_constraint], ids=["lazy", "tabled"])
def test_no_twin_where_a_key_could_spell_the_sentinel(make):
    """After `{"\\u0000\\u0002freshA":1,"\\u0000\\u0002` the used key starts as FRESH does: a twin keeping the
    key's text as its prefix would meet FRESH's text and forget the rest, and allow `freshA"` (one quote), which
    repeats the used key. No twin is made there; the mask is the state's own. Found by review."""
    tokens = [EOS] + [chr(c) for c in range(0x20, 0x7F)] + ['{"', "\\u0000", "\\u0002", "freshA", 'freshA"', '":1,"']
    vocab = Vocabulary(list(dict.fromkeys(tokens)), name="sentinel")
    twinned, alone = _pair({"type": "object", "minProperties": 3}, vocab, make)
    states = []
    for constraint in (twinned, alone):
        state = constraint.start()
        for token in ['{"', "\\u0000", "\\u0002", "freshA", '":1,"', "\\u0000", "\\u0002"]:
            state = constraint.advance(state, vocab.index[token])
        assert not constraint.mask(state)[vocab.index['freshA"']]
        states.append(state)
    assert twinned._mask_twin(twinned.dense.states[states[0]]) is None
    assert np.array_equal(twinned.mask_bits(states[0]), alone.mask_bits(states[1]))


@pytest.mark.parametrize("make", [lazy_constraint, schema_constraint], ids=["lazy", "tabled"])
@pytest.mark.parametrize("key_order", ["any", "schema"])
def test_distinct_keys_of_one_character_class_are_told_apart(vocab, make, key_order):
    """`é` and `ä` are two keys (the checker's own steps say so), though a constraint's walks step each character
    class by its representative: a token's advance steps them by their own characters (LazyDense._step_own). Until
    that, the second key read as a repeat of the first and its closing quote was refused. Found by review."""
    schema, text = {"type": "object", "minProperties": 2}, '{"é":1,"ä":1}'
    checker = SchemaChecker(schema, key_order=key_order)
    assert checker.can_end(checker.feed(checker.start(), text))
    constraint = make(SchemaChecker(schema, key_order=key_order), vocab)
    state = constraint.start()
    for token in vocab.encode(text):
        assert constraint.mask(state)[token]
        state = constraint.advance(state, token)
    assert constraint.can_end(state)
    assert constraint.dense.states[state][0].kind == "root"


# Keys past ASCII whose characters share a class (every schema here names none of them): single characters, a
# class's representative (U+0080) among them, tokens closing a key and tokens closing two
WIDE_TOKENS = ["é", "ä", "\x80", "éä", 'é"', 'ä"', '\x80"', 'é":', 'ä":1', 'é":1,"ä"', 'é":1,"é"', 'ä":1,"é"',
               '":1,"é"', '":1,"ä"', 'ü":1,"ü"', 'éé"', 'ﬀ"', "ﬀ"]
WIDE_SCHEMAS = [
    {"type": "object", "minProperties": 3},
    {"type": "object", "minProperties": 2, "maxProperties": 3},
    {"type": "object", "minProperties": 3, "properties": {"a": {"type": "integer"}}},
    {"type": "array", "items": {"type": "object", "minProperties": 2}},
    {"anyOf": [{"type": "object", "minProperties": 3},
               {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}]},
]


@pytest.mark.parametrize("make", [lazy_constraint, schema_constraint], ids=["lazy", "tabled"])
@pytest.mark.parametrize("schema", WIDE_SCHEMAS, ids=[str(i) for i in range(len(WIDE_SCHEMAS))])
def test_every_mask_is_the_checker_own_where_keys_past_ascii_share_a_class(schema, make):
    """Random walks through keys of such characters: each mask bit is what the checker's own steps say of the token
    from the state (a key repeating a used one refused, two keys of one class both allowed), in a twin's mask and
    in a state's own walk alike (_by_own_characters)."""
    tokens = [EOS] + [chr(c) for c in range(0x20, 0x7F)] + ['{"', '":', ',"', '":1,"', "1,", '[{"'] + WIDE_TOKENS
    vocab = Vocabulary(list(dict.fromkeys(tokens)), name="wide-keys")
    rng = np.random.default_rng(3)
    for key_order in ("any", "schema") if '"properties"' not in json.dumps(schema) else ("any",):
        checker = SchemaChecker(schema, key_order=key_order)  # (schema order asks strict objects)
        constraint = make(SchemaChecker(schema, key_order=key_order), vocab)
        wide = np.array([t is not None and not t.isascii() for t in vocab.tokens])
        assert walk_against_checker(constraint, checker, vocab, rng, walks=8, steps=30, prefer=wide) > 8

def test_the_tokens_kept_on_the_vocabulary_are_left_as_they_are():
    """The tokens re-stepped at a state whose used keys hold characters past ASCII are the vocabulary's kept lists
    together: a new list, neither of the kept ones grown (they were, by `+=`, at every such mask)."""
    vocab = Vocabulary(list(dict.fromkeys([EOS] + [chr(c) for c in range(0x20, 0x7F)] + ['{"', '":'] + WIDE_TOKENS)),
                       name="kept")
    constraint = lazy_constraint(SchemaChecker({"type": "object", "minProperties": 3}), vocab)
    state = constraint.start()
    for token in ['{"', "é", '":', "1", ",", '"']:
        constraint.mask(state)
        state = constraint.advance(state, vocab.index[token])
    kept = list(quoted_tokens(vocab, past_ascii=True))
    for _ in range(3):
        bits = constraint._by_own_characters(state, constraint.mask_bits(state))
        assert bits is not None
    assert quoted_tokens(vocab, past_ascii=True) == kept and kept  # ('é":1,"ä"' and its kin)


def test_set_bit_writes_one_token_bit_as_allows_reads_it():
    from structbench.masking.bitmask import allows, pack_bits, set_bit, unpack_bits

    mask = np.zeros(70, dtype=bool)
    mask[[0, 33, 69]] = True
    words = pack_bits(mask)
    set_bit(words, 33, False)
    set_bit(words, 40, True)
    set_bit(words, 69, True)  # (already set: stays)
    assert not allows(words, 33) and allows(words, 40)
    assert np.flatnonzero(unpack_bits(words, 70)).tolist() == [0, 40, 69]
