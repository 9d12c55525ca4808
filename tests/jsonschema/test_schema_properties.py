"""The schema checker against its referee (jsonschema, Draft 2020-12), on random schemas.

* completeness: a valid document, written in the checker's whitespace style, is "open" at every
  prefix and "complete" at its end;
* soundness: wherever the checker says the text may end, the referee accepts it (random walks
  through the checker, and answers sampled under the naive and tabled constraints);
* completability: every live state has a continuation, and following the checker's own moves
  from it reaches a text the referee accepts.

The schemas are the lesson's subset: objects (properties, required, additionalProperties false /
true / a schema), arrays (items), strings (with or without an enum of escape-free strings),
integer, number, boolean, null, type lists, `{}` and `true`, nested up to depth 3.
"""

from __future__ import annotations

import heapq
import itertools
import json

import jsonschema
import numpy as np
import pytest
from helpers import (
    TOY_FREE_CHAR,
    TOY_NAMES,
    schema_and_document,
    schemas,
)
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from structbench.bench.referees import SchemaReferee
from structbench.bench.strategies import compile_constraint
from structbench.bench.tasks import Task
from structbench.errors import TokenRejected
from structbench.jsonschema.checker import SchemaChecker
from structbench.lm.sampling import sample_answer
from structbench.lm.toy_model import ToyModel
from structbench.lm.vocab import toy_vocabulary


def _schema_chars(schema) -> set[str]:
    """Every character in the schema's names and enum values."""
    text = json.dumps(schema, ensure_ascii=False)
    return set(text)


# JSON's structure, numbers with exponents, the words, escapes (\\n, \\uXXXX), and a few strangers.
WALK_ALPHABET = sorted(set('{}[]":, -.+0123456789eEtrufalsn\\/bu' 'cdABCDEF' 'xé😀\n\t'))


def _walk_alphabet(schema) -> list[str]:
    return sorted(set(WALK_ALPHABET) | _schema_chars(schema))


def _completion_alphabet(schema) -> list[str]:
    # JSON's structure, the words, the escapes (\\uXXXX needs every hex digit) and the schema's own characters.
    return sorted(set('{}[]":,0123456789nultrefas\\u' 'bcdABCDEF') | _schema_chars(schema))


_SEARCH_STATES = 20_000  # per search, a guard against hangs: the generated schemas need under 3,000


class _ShortestCompletion:
    """The shortest text over an alphabet that takes a stack to one where the output may end, following
    the checker's own moves.

    A finished value leaves its parent in the same state however it was written, so the open values are
    finished one at a time, innermost first, each by a uniform-cost search over its own frame alone
    (on a bare root frame). A character that opens a value inside it is followed at once by that value's
    own shortest finish, searched the same way and memoised per frame: the searches stay as small as one
    frame's states (phases, keys seen, a key's text so far), however deep the completion nests."""

    def __init__(self, checker: SchemaChecker, alphabet):
        self.checker, self.alphabet = checker, alphabet
        self._root = checker.start()[0]
        self._memo: dict = {}
        self._open: set = set()  # frames whose search is under way: a value never needs itself to finish

    def __call__(self, stack) -> str | None:
        checker, tail = self.checker, ""
        while not checker.can_end(stack):
            seg = self._search(stack)[0] if len(stack) == 1 else self._finish(stack[-1])[0]
            if seg is None:
                return None
            tail += seg
            after = checker.feed(stack, seg)
            # A finished number (or union) stays on top until its parent reads the next character.
            stack = checker.close_top(after) if len(after) == len(stack) > 1 and not checker.can_end(after) else after
        return tail

    def _finish(self, frame):
        """The shortest text finishing `frame`'s value, and the frames cut short on the way (their search
        was under way further down the recursion): a result that cut none is exact, and memoised."""
        if frame in self._memo:
            return self._memo[frame], frozenset()
        if frame in self._open:
            return None, frozenset({frame})
        self._open.add(frame)
        text, cut = self._search((self._root, frame))
        self._open.discard(frame)
        cut = cut - {frame}
        if not cut:
            self._memo[frame] = text
        return text, cut

    def _search(self, base):
        """Uniform-cost search from `base` (its top frame the one to finish) to a stack that may end."""
        checker, depth, cut = self.checker, len(base), set()
        tie = itertools.count()
        best, came, heap = {base: 0}, {base: None}, [(0, next(tie), base)]
        while heap and len(best) < _SEARCH_STATES:
            cost, _, s = heapq.heappop(heap)
            if cost > best[s]:
                continue
            if checker.can_end(s):
                out = []
                while came[s] is not None:
                    s, seg = came[s]
                    out.append(seg)
                return "".join(reversed(out)), frozenset(cut)
            for ch in self.alphabet:
                nxt, seg = checker.step(s, ch), ch
                while nxt is not None and len(nxt) > depth:  # it opened a value: finish that at once
                    sub, sub_cut = self._finish(nxt[-1])
                    cut |= sub_cut
                    if sub is None:
                        nxt = None
                        break
                    done = checker.feed(nxt, sub)
                    nxt, seg = (done if len(done) < len(nxt) else checker.close_top(done)), seg + sub
                if nxt is not None and cost + len(seg) < best.get(nxt, cost + len(seg) + 1):
                    best[nxt], came[nxt] = cost + len(seg), (s, seg)
                    heapq.heappush(heap, (cost + len(seg), next(tie), nxt))
        return None, frozenset(cut)


_REFEREES: dict[str, SchemaReferee] = {}


def _referee(schema) -> SchemaReferee:
    key = json.dumps(schema, sort_keys=True)
    if key not in _REFEREES:
        _REFEREES[key] = SchemaReferee(schema)
    return _REFEREES[key]


def _assert_completes(checker: SchemaChecker, schema, text: str, stack) -> None:
    """Completable, the strong way: the checker's own moves take `text` (read to `stack`) to a text
    that may end, and the referee accepts it."""
    tail = _ShortestCompletion(checker, _completion_alphabet(schema))(stack)
    assert tail is not None, f"no completion of {text!r} under {schema!r}"
    assert checker.can_end(checker.feed(stack, tail)), (schema, text, tail)
    assert _referee(schema)(text + tail), (schema, text, tail)


def fast(n: int):
    return settings(max_examples=n, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# --- the generators themselves -----------------------------------------------------------


@fast(150)
@given(schema_and_document())
def test_generated_schemas_and_documents_are_valid(pair):
    schema, text = pair
    jsonschema.Draft202012Validator.check_schema(schema)
    value = json.loads(text)
    assert jsonschema.Draft202012Validator(schema).is_valid(value), (schema, text)
    # The lesson's whitespace: outside strings, a space only right after ":" or ",", never two.
    in_string = False
    for i, ch in enumerate(text):
        if ch == '"':
            in_string = not in_string
        elif not in_string and ch in " \t\n\r":
            assert ch == " " and i > 0 and text[i - 1] in ":,", (text, i)


# --- completeness --------------------------------------------------------------------------


@fast(200)
@given(schema_and_document())
def test_completeness_every_prefix_of_a_valid_document_is_live(pair):
    schema, text = pair
    checker = SchemaChecker(schema)
    referee = _referee(schema)
    stack = checker.start()
    for i, ch in enumerate(text):
        if checker.can_end(stack):  # a prefix the checker would let stop must be valid on its own
            assert referee(text[:i]), (schema, text[:i])
        stack = checker.step(stack, ch)
        assert stack is not None, f"valid document {text!r} refused at {i} ({text[:i + 1]!r}) under {schema!r}"
    assert checker.can_end(stack), (schema, text)
    assert checker.status(text) == "complete"
    for cut in {0, len(text) // 2, len(text) - 1}:
        assert checker.status(text[:cut]) in ("open", "complete")


@pytest.mark.parametrize("text,status", [
    ('{"a":1,"b":[1,2]}', "complete"),
    ('{"a": 1, "b": [1, 2]}', "complete"),
    ('{"a":  1}', "dead"),  # two spaces after ":"
    ('{"a" : 1}', "dead"),  # a space before ":"
    ('{ "a": 1}', "dead"),  # a space after "{"
    ('{"a": 1 }', "dead"),
    ('[1 ,2]', "dead"),
    ('[ 1]', "dead"),
    ('[1,  2]', "dead"),
    (' {}', "dead"),
    ('{}\n', "dead"),
    ('{} ', "dead"),
    ('{"a":\t1}', "dead"),
    ('{"a":\n1}', "dead"),
    ('{"a": ', "open"),
    ('[1, ', "open"),
    ('{"a b": "c, d: e"}', "complete"),  # spaces inside strings are text, not whitespace
])
def test_whitespace_is_the_lessons(text, status):
    """None anywhere except at most one space after ":" and after ","."""
    for schema in ({}, {"type": ["object", "array"], "additionalProperties": True, "items": {}}):
        assert SchemaChecker(schema).status(text) == status, (schema, text)


# --- soundness and completability: random walks ----------------------------------------------------


def _pick(rnd, allowed: list[str]) -> str:
    # Lean towards characters that finish things, so walks reach complete texts often.
    closers = [c for c in allowed if c in '}]"0']
    if closers and rnd.random() < 0.35:
        return rnd.choice(closers)
    return rnd.choice(allowed)


@fast(120)
@given(schema=schemas(), rnd=st.randoms(use_true_random=False), length=st.integers(1, 60))
def test_random_walks_are_sound_and_completable(schema, rnd, length):
    checker = SchemaChecker(schema)
    referee = _referee(schema)
    alphabet = _walk_alphabet(schema)
    stack, text = checker.start(), ""
    for _ in range(length):
        if checker.can_end(stack):
            assert referee(text), f"checker lets {text!r} end, the referee refuses it, under {schema!r}"
        allowed = [c for c in alphabet if checker.step(stack, c) is not None]
        # Completable: a live state always has a way on (or is allowed to end).
        assert allowed or checker.can_end(stack), f"dead end after {text!r} under {schema!r}"
        if not allowed:
            break
        ch = _pick(rnd, allowed)
        stack = checker.step(stack, ch)
        text += ch
        assert checker.feed(checker.start(), text) == stack  # step is a function of the text
    if checker.can_end(stack):
        assert referee(text), (schema, text)
    event(f"walk ended complete: {checker.can_end(stack)}")
    _assert_completes(checker, schema, text, stack)


@fast(60)
@given(pair=schema_and_document(), rnd=st.randoms(use_true_random=False))
def test_every_prefix_of_a_valid_document_completes_to_a_valid_one(pair, rnd):
    """From a random prefix of a valid document, the shortest completion is referee-valid."""
    schema, text = pair
    checker = SchemaChecker(schema)
    prefix = text[: rnd.randint(0, len(text))]
    stack = checker.feed(checker.start(), prefix)
    assert stack is not None
    _assert_completes(checker, schema, prefix, stack)


@pytest.mark.parametrize("schema,prefix", [
    # Found by hypothesis: inside a key of an additional property, whose object needs two keys of its own,
    # and then four required keys of the root, one an object needing another key.
    ({"type": ["object", "array"],
      "properties": {
          "-x": {"type": "object", "additionalProperties": True, "required": ["x-xa"]},
          " a": {"type": ["array", "null"]},
          "": {"type": "array", "items": {"type": ["object", "array"],
                                          "additionalProperties": {"enum": ["---"], "type": "string"},
                                          "required": ["", "--"]}}},
      "additionalProperties": {
          "type": "object",
          "properties": {
              "😀-x": {},
              "": {"enum": ["-😀é", ""], "type": ["integer", "string"]},
              "😀aéb": {"type": "object",
                        "properties": {"béxé": {"type": "null"},
                                       "é😀": {"enum": ["😀b", "xbéa", "", "ééba"], "type": "string"},
                                       " ": {"type": ["boolean", "array"]}},
                        "required": ["é😀"]}},
          "required": ["bxbé", "b éx"]},
      "required": ["a", "", " a", "-x"]},
     '{":7a":{"0":5,"/":0,"E]00-5]'),
    # JSON mode nests without end: every open value, innermost first, inside an escape.
    ({}, '[[{"a":[{"":{"b":[1,{"c":"x\\ud83d\\u'),
    ({"type": "array", "items": {"type": "object", "required": ["ab", "b"],
                                 "properties": {"ab": {"type": "array", "items": {"$comment": "c"}}}}},
     '[{"b":true,"ab":[[[-0.5e'),
])
def test_hard_prefixes_complete(schema, prefix):
    """Prefixes whose completions are long and nested complete as every live prefix must."""
    checker = SchemaChecker(schema)
    stack = checker.feed(checker.start(), prefix)
    assert stack is not None, prefix
    _assert_completes(checker, schema, prefix, stack)


# --- soundness: constrained sampling ---------------------------------------------------------

VOCAB = toy_vocabulary()


def _toy_reference(draw_text: str) -> str:
    return draw_text if draw_text.startswith("{") else '{"a": 1}'


@fast(25)
@given(pair=schema_and_document(names=TOY_NAMES, chars=TOY_FREE_CHAR), seed=st.integers(0, 2**32 - 1))
def test_constrained_sampling_is_sound(pair, seed):
    schema, doc = pair
    task = Task(name="h", kind="schema", spec=schema, reference=_toy_reference(doc))
    referee = task.referee()
    checker = SchemaChecker(schema)
    model = ToyModel(task.reference, VOCAB, noise=3.0)
    answers = {}
    for strategy in ("naive", "tabled"):
        constraint = compile_constraint(task, VOCAB, strategy)
        rng = np.random.default_rng(seed)
        answers[strategy] = []
        for _ in range(3):
            answer = sample_answer(model, rng, constraint, max_tokens=30)
            answers[strategy].append((answer.text, answer.finished))
            event(f"answer finished: {answer.finished}")
            if answer.finished:
                assert referee(answer.text), f"{strategy}: finished answer {answer.text!r} is invalid under {schema!r}"
            else:
                assert checker.status(answer.text) != "dead", (strategy, answer.text, schema)
    # Same masks, same generator: the two strategies write the very same answers.
    assert answers["naive"] == answers["tabled"]


@fast(30)
@given(schema=schemas(names=TOY_NAMES), rnd=st.randoms(use_true_random=False))
def test_token_walks_never_meet_an_empty_mask(schema, rnd):
    """Completable over the toy vocabulary: on random token walks the mask always allows something,
    and a token the mask allows is one the constraint advances by."""
    task = Task(name="h", kind="schema", spec=schema, reference='{"a": 1}')
    constraint = compile_constraint(task, VOCAB, "naive")
    referee = task.referee()
    state, text = constraint.start(), ""
    for _ in range(25):
        mask = constraint.mask(state)
        assert mask.any(), f"no token allowed after {text!r} under {schema!r}"
        if mask[VOCAB.eos_id]:
            assert referee(text), (schema, text)
        ids = [i for i in np.flatnonzero(mask) if i != VOCAB.eos_id]
        if not ids:
            break
        refused = [i for i in np.flatnonzero(~mask) if i != VOCAB.eos_id]
        if refused:
            with pytest.raises(TokenRejected):
                constraint.advance(state, int(rnd.choice(refused)))
        tid = int(rnd.choice(ids))
        state = constraint.advance(state, tid)
        text += VOCAB.tokens[tid]


# --- schemas with an unsatisfiable object branch -------------------------------------------------


@pytest.mark.parametrize("schema", [
    {"required": ["x"], "additionalProperties": False},
    {"type": ["object", "null"], "required": ["x"], "additionalProperties": False},
    {"type": ["object", "integer"], "properties": {"a": {}}, "required": ["b"], "additionalProperties": False},
])
def test_an_object_branch_no_object_satisfies_is_refused_at_its_brace(schema):
    """The object branch admits no value, the others do: "{" must be dead, not a live dead end."""
    checker = SchemaChecker(schema)
    assert checker.status("{") == "dead"
    assert checker.status("null" if "null" in schema.get("type", ["null"]) else "1") == "complete"


def test_sampling_with_an_unsatisfiable_object_branch_does_not_crash():
    schema = {"required": ["x"], "additionalProperties": False}
    task = Task(name="h", kind="schema", spec=schema, reference='{"x": 1}')
    referee = task.referee()
    for strategy in ("naive", "tabled"):
        constraint = compile_constraint(task, VOCAB, strategy)
        rng = np.random.default_rng(0)
        model = ToyModel(task.reference, VOCAB, noise=1.0)
        for _ in range(5):
            answer = sample_answer(model, rng, constraint, max_tokens=20)
            assert not answer.finished or referee(answer.text)


def test_min_properties_from_pattern_properties():
    """Keys from patternProperties count towards minProperties once each (the referee reads a repeated
    key once), and a pattern with enough keys makes the object completable."""
    from structbench.jsonschema.checker import SchemaChecker

    schema = {"type": "object", "minProperties": 2, "patternProperties": {"^(a|b)$": {}},
              "additionalProperties": False}
    checker = SchemaChecker(schema, "any", "lesson")
    assert checker.feed(checker.start(), '{"a": 1, "a": 2}') is None
    assert checker.can_end(checker.feed(checker.start(), '{"a": 1, "b": 2}'))
    assert checker.feed(checker.start(), '{"a": 1') is not None
    assert checker.feed(checker.start(), '{"a": 1}') is None
    # Four keys match (Python's `$` also before a final newline: "a\n", "b\n"), never five.
    assert checker.can_end(checker.feed(checker.start(), '{"a": 1, "b": 2, "a\\n": 3, "b\\n": 4}'))
    with pytest.raises(Exception, match="no JSON value satisfies"):
        SchemaChecker({**schema, "minProperties": 5}, "any", "lesson")


def _assert_agrees_with_referee(schema, texts) -> None:
    """The checker (any key order, lesson whitespace) accepts each text exactly when the referee does."""
    checker, referee = SchemaChecker(schema, "any", "lesson"), SchemaReferee(schema)
    for text in texts:
        state = checker.feed(checker.start(), text)
        assert (state is not None and checker.can_end(state)) == referee(text), text


@pytest.mark.parametrize("branches", [
    [["length", "width"], ["radius"]],
    [["ssn"], ["ein"], ["itin"]],
    [["radius"], ["width", "height"], ["base", "height"]],
    [["a"], ["a", "b"]],  # the second implies the first: only {a} without b is valid
])
def test_one_of_told_apart_by_absent_keys_is_exact(branches):
    """oneOf of required-key branches (not provably exclusive by kind or value): every object over the
    keys involved is accepted exactly when the referee says exactly one branch holds; non-objects never."""
    import itertools

    keys = sorted({k for b in branches for k in b})
    schema = {"properties": {k: {"type": "integer"} for k in keys}, "oneOf": [{"required": b} for b in branches]}
    texts = [json.dumps({k: 1 for k in combo}) for n in range(len(keys) + 1) for combo in itertools.combinations(keys, n)]
    texts += ['"text"', "3", "[]"]
    _assert_agrees_with_referee(schema, texts)


def test_one_of_by_absent_keys_only_when_exact():
    """Told apart by absent keys only when the unproved branches differ by `required` alone (then it is
    exact, null beside them untouched); branches with other differences are declared unsupported."""
    from structbench.errors import UnsupportedSchema

    schema = {"oneOf": [{"type": "object", "required": ["a", "b"]}, {"type": "object", "required": ["c"]},
                        {"type": "null"}]}
    _assert_agrees_with_referee(schema, ["null", "{}", '{"a": 1}', '{"a": 1, "b": 2}', '{"c": 1}',
                                         '{"a": 1, "b": 2, "c": 3}', '{"a": 1, "c": 3}', '"x"', "1"])
    with pytest.raises(UnsupportedSchema, match="not provably exclusive"):
        SchemaChecker({"oneOf": [{"properties": {"a": {"type": "string"}}, "required": ["a"]},
                                 {"properties": {"b": {}}, "required": ["b"]}]})


@pytest.mark.parametrize("schema", [
    {"not": {"type": "object"}}, {"not": {"type": ["string", "number"]}}, {"not": {"type": "number"}},
    {"not": {"required": ["a", "b"]}}, {"properties": {"a": {}, "b": {}}, "not": {"required": ["a"]}},
    {"type": "object", "not": {"required": ["a"], "description": "an annotation changes nothing"}},
])
def test_not_of_type_or_required_is_exact(schema):
    values = [None, True, 1, 1.5, "s", [], [1], {}, {"a": 1}, {"a": 1, "b": 2}, {"b": 2}]
    _assert_agrees_with_referee(schema, [json.dumps(v) for v in values])


@pytest.mark.parametrize("schema,values", [
    ({"oneOf": [{"type": "array", "maxItems": 1}, {"type": "array", "minItems": 2}]}, [[], [1], [1, 2], [1, 2, 3]]),
    ({"oneOf": [{"type": "number", "maximum": 5}, {"type": "number", "minimum": 5.5}]}, [4, 5, 5.2, 5.5, 6, -1]),
    ({"oneOf": [{"type": "object", "required": ["from"], "properties": {"from": {"type": "array", "maxItems": 1}, "sender": {}}},
                {"type": "object", "required": ["from", "sender"], "properties": {"from": {"type": "array", "minItems": 2}}}]},
     [{"from": [1]}, {"from": [1], "sender": 2}, {"from": [1, 2], "sender": 2}, {"from": [1, 2]}]),
    # Apart as objects (by a required key's values), not as anything else: non-objects satisfy both.
    ({"oneOf": [{"properties": {"type": {"enum": ["A"]}, "key": {}}, "required": ["type", "key"]},
                {"properties": {"type": {"enum": ["B"]}}, "required": ["type"]}]},
     [{"type": "A", "key": 1}, {"type": "B"}, {"type": "B", "key": 1}, {"type": "A"}, 3, "s", None, []]),
])
def test_one_of_proved_exclusive_by_item_counts_number_ranges_or_per_kind(schema, values):
    """Branches apart by item counts or by number ranges are exclusive without any key left out: an
    e-mail schema's `from` (one sender, or several and a `sender`) keeps its optional `sender`."""
    _assert_agrees_with_referee(schema, [json.dumps(v) for v in values])
