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
import string

import jsonschema
import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from structbench.constraints import TokenRejected
from structbench.referees import SchemaReferee
from structbench.sampling import sample_answer
from structbench.schema import SchemaChecker
from structbench.strategies import compile_constraint
from structbench.tasks import Task
from structbench.toy_model import ToyModel
from structbench.vocab import toy_vocabulary

SCALAR_TYPES = ["string", "integer", "number", "boolean", "null"]
ALL_TYPES = SCALAR_TYPES + ["object", "array"]
ANNOTATIONS = {"title": "t", "description": "a schema", "$comment": "c"}

# Names and enum values: general ones (non-ASCII, spaces, prefixes of one another, the empty
# string), and ones the toy vocabulary can spell one character at a time.
GENERAL_NAMES = st.text(alphabet="abé x-😀", max_size=4)
TOY_NAMES = st.text(alphabet="abcxyz -!'", max_size=4)
TOY_CHARS = set("abcxyz -!'")
TOY_FREE_CHAR = st.sampled_from("abcxyzADE -.!'0123456789:,{}[]")  # string content the toy vocabulary spells

# Free string content: anything JSON writes without an escape (no quote, no backslash, no control
# character), non-ASCII included; no lone surrogates, which are no text.
FREE_CHAR = st.characters(min_codepoint=32, blacklist_characters='"\\', blacklist_categories=("Cs",))


def _maybe_annotate(draw, schema: dict) -> dict:
    if draw(st.integers(0, 9)) == 0:
        schema = {**schema, **ANNOTATIONS}
    return schema


@st.composite
def leaf_schemas(draw, names=GENERAL_NAMES):
    kind = draw(st.sampled_from(["any", "true", "type", "enum", "typed_enum", "type_list"]))
    if kind == "any":
        return {}
    if kind == "true":
        return True
    if kind == "type":
        return _maybe_annotate(draw, {"type": draw(st.sampled_from(SCALAR_TYPES))})
    if kind in ("enum", "typed_enum"):
        values = draw(st.lists(names, min_size=1, max_size=4, unique=True))
        schema = {"enum": values}
        if kind == "typed_enum":
            schema["type"] = draw(st.sampled_from(["string", ["string", "null"], ["integer", "string"]]))
        return schema
    return {"type": draw(st.lists(st.sampled_from(ALL_TYPES), min_size=1, max_size=3, unique=True))}


@st.composite
def schemas(draw, depth=3, names=GENERAL_NAMES):
    """A random schema of the lesson's subset, every object in it satisfiable."""
    if depth == 0 or draw(st.integers(0, 2)) == 0:
        return draw(leaf_schemas(names))
    if draw(st.booleans()):
        props = draw(st.dictionaries(names, schemas(depth - 1, names), max_size=3))
        schema = {}
        if draw(st.integers(0, 3)):
            schema["type"] = draw(st.sampled_from(["object", "object", ["object", "null"], ["object", "array"]]))
        if props or draw(st.booleans()):
            schema["properties"] = props
        extra = draw(st.sampled_from(["absent", "false", "true", "schema"]))
        if extra == "false":
            schema["additionalProperties"] = False
        elif extra == "true":
            schema["additionalProperties"] = True
        elif extra == "schema":
            schema["additionalProperties"] = draw(schemas(depth - 1, names))
        candidates = sorted(props)
        if extra != "false":  # required keys outside the properties need room for other keys
            candidates += draw(st.lists(names.filter(lambda n: n not in props), max_size=2, unique=True))
        if candidates:
            required = draw(st.lists(st.sampled_from(candidates), max_size=len(candidates), unique=True))
            if required or draw(st.booleans()):
                schema["required"] = required
        return _maybe_annotate(draw, schema)
    schema = {"type": draw(st.sampled_from(["array", "array", ["array", "null"]]))}
    items = draw(st.sampled_from(["absent", "false", "schema", "schema"]))
    if items == "false":
        schema["items"] = False
    elif items == "schema":
        schema["items"] = draw(schemas(depth - 1, names))
    return _maybe_annotate(draw, schema)


# --- valid documents, written the checker's way -----------------------------------------


def _sep(draw) -> str:
    return draw(st.sampled_from(["", " "]))


def _string(draw, chars) -> str:
    return '"' + draw(st.text(chars, max_size=5)) + '"'


def _integer(draw) -> str:
    return str(draw(st.integers(-10**6, 10**6)))


def _number(draw) -> str:
    whole = _integer(draw)
    if draw(st.booleans()):
        return whole
    frac = draw(st.text(alphabet=string.digits, min_size=1, max_size=3))
    if whole == "0" and draw(st.booleans()):
        whole = "-0"
    return f"{whole}.{frac}"


def _any_value(draw, depth: int, chars) -> str:
    kinds = SCALAR_TYPES + (["object", "array"] if depth < 3 else [])
    return _value_of_type(draw, draw(st.sampled_from(kinds)), True, depth, chars)


def _container(draw, open_: str, close: str, parts: list[str]) -> str:
    out = open_
    for i, part in enumerate(parts):
        if i:
            out += "," + _sep(draw)
        out += part
    return out + close


def _object(draw, schema, depth: int, chars) -> str:
    schema = schema if isinstance(schema, dict) else {}
    props = schema.get("properties", {})
    extra = schema.get("additionalProperties", True)
    keys = list(schema.get("required", []))
    keys += [k for k in props if k not in keys and draw(st.booleans())]
    if extra is not False and depth < 3:
        others = draw(st.lists(st.text(chars, max_size=3), max_size=2, unique=True))
        keys += [k for k in others if k not in props and k not in keys]
    keys = draw(st.permutations(keys))
    parts = []
    for key in keys:
        sub = props.get(key, extra)
        parts.append(f'"{key}":' + _sep(draw) + _value(draw, sub, depth + 1, chars))
    return _container(draw, "{", "}", parts)


def _array(draw, schema, depth: int, chars) -> str:
    items = schema.get("items", True) if isinstance(schema, dict) else True
    if items is False or depth >= 3:
        return "[]"
    n = draw(st.integers(0, 3))
    return _container(draw, "[", "]", [_value(draw, items, depth + 1, chars) for _ in range(n)])


def _value_of_type(draw, t: str, schema, depth: int, chars) -> str:
    if t == "string":
        return _string(draw, chars)
    if t == "integer":
        return _integer(draw)
    if t == "number":
        return _number(draw)
    if t == "boolean":
        return draw(st.sampled_from(["true", "false"]))
    if t == "null":
        return "null"
    if t == "object":
        return _object(draw, schema, depth, chars)
    return _array(draw, schema, depth, chars)


def _value(draw, schema, depth: int = 0, chars=FREE_CHAR) -> str:
    if schema is True or schema == {} or (isinstance(schema, dict) and set(schema) <= set(ANNOTATIONS)):
        return _any_value(draw, depth, chars)
    if "enum" in schema:
        return '"' + draw(st.sampled_from(schema["enum"])) + '"'
    t = schema.get("type", ALL_TYPES)
    types = [t] if isinstance(t, str) else list(t)
    if depth >= 3:  # keep documents small: containers only where required
        types = [x for x in types if x not in ("object", "array")] or types
    return _value_of_type(draw, draw(st.sampled_from(types)), schema, depth, chars)


@st.composite
def documents(draw, schema, chars=FREE_CHAR):
    """The text of a JSON document valid under `schema` (one of `schemas()`), in the lesson's whitespace;
    free strings and keys drawn from `chars`."""
    return _value(draw, schema, 0, chars)


@st.composite
def schema_and_document(draw, names=GENERAL_NAMES, chars=FREE_CHAR):
    schema = draw(schemas(names=names))
    return schema, draw(documents(schema, chars))


# --- helpers --------------------------------------------------------------------------


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


def _completion(checker: SchemaChecker, stack, alphabet) -> str | None:
    """A text over `alphabet` taking `stack` to one where the output may end, following the checker's
    own moves. Best first, open frames weighing on the cost so the search closes rather than nests:
    first greedily (heavy weight), then more patiently."""
    for weight, limit in ((30, 30_000), (6, 60_000)):
        found = _best_first(checker, stack, alphabet, weight, limit)
        if found is not None:
            return found
    return None


def _best_first(checker: SchemaChecker, stack, alphabet, weight: int, limit: int) -> str | None:
    tie = itertools.count()
    parent = {stack: None}
    heap = [(weight * len(stack), next(tie), 0, stack)]
    while heap and len(parent) < limit:
        _, _, cost, s = heapq.heappop(heap)
        if checker.can_end(s):
            out = []
            while parent[s] is not None:
                s, ch = parent[s]
                out.append(ch)
            return "".join(reversed(out))
        for ch in alphabet:
            nxt = checker.step(s, ch)
            if nxt is not None and nxt not in parent:
                parent[nxt] = (s, ch)
                heapq.heappush(heap, (cost + 1 + weight * len(nxt), next(tie), cost + 1, nxt))
    return None


_REFEREES: dict[str, SchemaReferee] = {}


def _referee(schema) -> SchemaReferee:
    key = json.dumps(schema, sort_keys=True)
    if key not in _REFEREES:
        _REFEREES[key] = SchemaReferee(schema)
    return _REFEREES[key]


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
    # Completable, the strong way: the checker's own moves finish the text, and the referee agrees.
    tail = _completion(checker, stack, _completion_alphabet(schema))
    assert tail is not None, f"no completion of {text!r} under {schema!r}"
    assert referee(text + tail), (schema, text, tail)


@fast(60)
@given(pair=schema_and_document(), rnd=st.randoms(use_true_random=False))
def test_every_prefix_of_a_valid_document_completes_to_a_valid_one(pair, rnd):
    """From a random prefix of a valid document, the shortest completion is referee-valid."""
    schema, text = pair
    checker = SchemaChecker(schema)
    prefix = text[: rnd.randint(0, len(text))]
    stack = checker.feed(checker.start(), prefix)
    assert stack is not None
    tail = _completion(checker, stack, _completion_alphabet(schema))
    assert tail is not None and _referee(schema)(prefix + tail), (schema, prefix, tail)


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
    from structbench.schema import SchemaChecker

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
    from structbench.schema import UnsupportedSchema

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
