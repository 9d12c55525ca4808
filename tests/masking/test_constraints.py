"""The masking strategies: naive and tabled agree at every step, the interface refuses what it must,
the work counters count what the lesson says, and bad arguments fail loudly."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import TOY_FREE_CHAR, TOY_NAMES, schema_and_document
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from structbench.bench.referees import SchemaReferee
from structbench.bench.strategies import STRATEGIES, check_strategy, compile_constraint, generate
from structbench.bench.tasks import Task, age_task, json_mode_task, person_task
from structbench.errors import TokenRejected, UnsupportedSchema
from structbench.jsonschema.checker import SchemaChecker
from structbench.lm.sampling import sample_answer
from structbench.lm.toy_model import ToyModel
from structbench.lm.vocab import EOS, Vocabulary, VocabularyError, toy_vocabulary
from structbench.masking import NaiveConstraint
from structbench.regular import compile_pattern

VOCAB = toy_vocabulary()
LESSON_TASKS = {"age": age_task, "person": person_task, "json_mode": json_mode_task}


def greedy_tokens(text: str, vocab: Vocabulary = VOCAB) -> list[int]:
    """Longest match first, one token at a time."""
    ids, i = [], 0
    while i < len(text):
        best = max((t for t in vocab.trie.prefixes_of(text[i:]) if t != vocab.eos_id), key=lambda t: len(vocab.tokens[t]))
        ids.append(best)
        i += len(vocab.tokens[best])
    return ids


def char_tokens(text: str, vocab: Vocabulary = VOCAB) -> list[int]:
    return [vocab.index[ch] for ch in text]


def walk_both(task: Task, token_ids: list[int], vocab: Vocabulary = VOCAB):
    """Walk naive and tabled side by side; at every step their masks must be the same, and allow the next token."""
    naive = compile_constraint(task, vocab, "naive")
    tabled = compile_constraint(task, vocab, "tabled")
    ns, ts = naive.start(), tabled.start()
    for k, tid in enumerate(token_ids):
        nm, tm = naive.mask(ns), tabled.mask(ts)
        assert nm.dtype == bool and nm.shape == tm.shape == (len(vocab),)
        assert np.array_equal(nm, tm), f"{task.name}: masks differ after {k} tokens, at {[vocab[i] for i in np.flatnonzero(nm != tm)]}"
        assert nm[tid], f"{task.name}: token {vocab[tid]!r} refused at step {k}"
        assert naive.can_end(ns) == tabled.can_end(ts) == bool(nm[vocab.eos_id])
        ns, ts = naive.advance(ns, tid), tabled.advance(ts, tid)
    final_n, final_t = naive.mask(ns), tabled.mask(ts)
    assert np.array_equal(final_n, final_t)
    return naive, tabled, ns, ts


def _references(task: Task) -> list[str]:
    refs = [task.reference]
    walk = getattr(task, "walk_answer", None)
    if walk:
        refs.append(walk)
    return refs


@pytest.mark.parametrize("spelling", [greedy_tokens, char_tokens], ids=["greedy", "chars"])
@pytest.mark.parametrize("name", sorted(LESSON_TASKS))
def test_naive_and_tabled_agree_on_the_lesson_tasks(name, spelling):
    task = LESSON_TASKS[name]()
    walked = 0
    for reference in _references(task):
        if not set(reference) <= set(VOCAB.tokens):
            continue
        walked += 1
        naive, tabled, ns, ts = walk_both(task, spelling(reference))
        # The reference is a finished answer: the end token is allowed there, by both.
        assert naive.can_end(ns) and tabled.can_end(ts)
        assert naive.mask(ns)[VOCAB.eos_id] and task.referee()(reference)
    assert walked >= 1


def test_person_reference_after_age_allows_exactly_the_digits_and_what_follows():
    task = person_task()
    prefix = '{"name": "Ada", "age": 3'
    naive = compile_constraint(task, VOCAB, "naive")
    state = naive.start()
    for tid in greedy_tokens(prefix):
        state = naive.advance(state, tid)
    allowed = {VOCAB[i] for i in np.flatnonzero(naive.mask(state))}
    assert set("0123456789") <= allowed
    assert {"}", ",", ", "} <= allowed
    assert not allowed & {'"', "a", ".", " ", EOS, "{", "]"}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(pair=schema_and_document(names=TOY_NAMES, chars=TOY_FREE_CHAR), data=st.data())
def test_naive_and_tabled_agree_on_random_schemas(pair, data):
    """A valid document's tokens (greedy or one character each) for a random stretch, then random
    tokens the masks allow: the masks agree at every step, and a finished text is referee-valid."""
    schema, doc = pair
    task = Task(name="h", kind="schema", spec=schema, reference='{"a": 1}')
    spelling = data.draw(st.sampled_from([greedy_tokens, char_tokens]), label="spelling")
    tokens = spelling(doc)
    cut = data.draw(st.integers(0, len(tokens)), label="cut")
    naive, tabled, ns, ts = walk_both(task, tokens[:cut])
    referee = SchemaReferee(schema)
    text = "".join(VOCAB[t] for t in tokens[:cut])
    for _ in range(data.draw(st.integers(0, 15), label="extra steps")):
        nm, tm = naive.mask(ns), tabled.mask(ts)
        assert np.array_equal(nm, tm), (schema, text)
        if nm[VOCAB.eos_id]:
            assert referee(text), (schema, text)
        choices = [int(i) for i in np.flatnonzero(nm) if i != VOCAB.eos_id]
        if not choices:
            break
        tid = data.draw(st.sampled_from(choices), label="token")
        ns, ts = naive.advance(ns, tid), tabled.advance(ts, tid)
        text += VOCAB[tid]
    assert np.array_equal(naive.mask(ns), tabled.mask(ts))


# --- advance and the end token --------------------------------------------------------


@pytest.mark.parametrize("strategy", ["naive", "tabled"])
@pytest.mark.parametrize("name,prefix,refused", [
    ("age", "", "}"),
    ("age", '{"age": ', "x"),
    ("age", '{"age": 4', '"'),
    ("person", "", "Sure"),
    ("person", '{"', "x"),
    ("person", '{"name": "Ada", "age": ', '"'),
    ("json_mode", '{"a": 1', "]"),
])
def test_advance_refuses_a_disallowed_token(strategy, name, prefix, refused):
    task = LESSON_TASKS[name]()
    constraint = compile_constraint(task, VOCAB, strategy)
    state = constraint.start()
    for tid in char_tokens(prefix):
        state = constraint.advance(state, tid)
    tid = VOCAB.index[refused]
    assert not constraint.mask(state)[tid]
    with pytest.raises(TokenRejected):
        constraint.advance(state, tid)
    with pytest.raises(TokenRejected):
        constraint.advance(state, VOCAB.eos_id)  # no state after the end
    # The refusal changed nothing: the state still takes what its mask allows.
    allowed = [int(i) for i in np.flatnonzero(constraint.mask(state)) if i != VOCAB.eos_id]
    assert allowed
    constraint.advance(state, allowed[0])


def test_token_rejected_is_a_value_error():
    assert issubclass(TokenRejected, ValueError)


# --- the work counters ------------------------------------------------------------------


def test_naive_work_grows_with_every_mask_call():
    task = age_task()
    naive = compile_constraint(task, VOCAB, "naive")
    assert isinstance(naive, NaiveConstraint)
    assert naive.work.chars == 0 and naive.work.masks_built == 0
    state = naive.start()
    before = naive.work.chars
    naive.mask(state)
    first = naive.work.chars - before
    assert first >= len(VOCAB) - 1  # every token but the end one walked at least one character
    naive.mask(state)
    assert naive.work.chars - before == 2 * first  # the same state costs the same again: no memory
    assert naive.work.masks_built == 2
    previous = naive.work.chars
    for k, tid in enumerate(greedy_tokens(task.reference)):
        state = naive.advance(state, tid)
        naive.mask(state)
        assert naive.work.chars > previous, f"mask call {k} did no work"
        previous = naive.work.chars
    assert naive.work.reads == 0


def test_tabled_pattern_works_only_at_construction():
    task = age_task()
    tabled = compile_constraint(task, VOCAB, "tabled")
    built, chars = tabled.work.masks_built, tabled.work.chars
    n_states = compile_pattern(task.spec).n_states
    assert chars > 0 and built >= 1
    assert built <= n_states + 1  # one mask per state (the trimmed dead state at most extra)
    assert tabled.work.reads == 0
    state, reads = tabled.start(), 0
    for tid in greedy_tokens(task.reference) + greedy_tokens(task.reference)[:2]:
        mask = tabled.mask(state)
        reads += len(mask)
        assert tabled.work.reads == reads  # reading a row reads the vocabulary's width
        assert (tabled.work.chars, tabled.work.masks_built) == (chars, built)  # ... and builds nothing
        if tid in np.flatnonzero(mask):
            state = tabled.advance(state, tid)
        else:
            state = tabled.start()
    # Sampling a whole batch of answers builds nothing either.
    model = ToyModel(task.reference, VOCAB, noise=3.0)
    rng = np.random.default_rng(1)
    for _ in range(5):
        sample_answer(model, rng, tabled, max_tokens=15)
    assert (tabled.work.chars, tabled.work.masks_built) == (chars, built)
    assert tabled.work.reads > reads


# --- errors -------------------------------------------------------------------------------


def test_vocabulary_without_its_end_token_names_it():
    with pytest.raises(VocabularyError) as info:
        Vocabulary(["a", "b", "c"])
    assert EOS in str(info.value)
    with pytest.raises(VocabularyError) as info:
        Vocabulary(["a", "<eos>"], eos="</s>", name="mine")
    assert "</s>" in str(info.value) and "mine" in str(info.value)
    assert issubclass(VocabularyError, ValueError)


@pytest.mark.parametrize("tokens", [["a", "a", EOS], ["a", "", EOS]], ids=["duplicate", "empty"])
def test_vocabulary_refuses_duplicates_and_empty_tokens(tokens):
    with pytest.raises(VocabularyError):
        Vocabulary(tokens)


@pytest.mark.parametrize("noise", [-1.0, -1e-9, float("nan"), float("inf")])
def test_toy_model_refuses_a_bad_noise(noise):
    with pytest.raises(ValueError, match="noise"):
        ToyModel('{"a": 1}', VOCAB, noise=noise)


def test_toy_model_accepts_zero_noise_and_is_then_deterministic():
    model = ToyModel('{"age": 42}', VOCAB, noise=0.0)
    a = model.logits('{"a', np.random.default_rng(0))
    b = model.logits('{"a', np.random.default_rng(99))
    assert np.array_equal(a, b)


@pytest.mark.parametrize("max_tokens", [0, -1, True, 2.5, "10"])
def test_sample_answer_needs_a_positive_integer_budget(max_tokens):
    model = ToyModel('{"a": 1}', VOCAB)
    with pytest.raises(ValueError, match="max_tokens"):
        sample_answer(model, np.random.default_rng(0), None, max_tokens=max_tokens)


@pytest.mark.parametrize("max_attempts", [0, -3, False, 1.0])
def test_retry_needs_at_least_one_attempt(max_attempts):
    task = age_task()
    model = ToyModel(task.reference, VOCAB)
    with pytest.raises(ValueError, match="max_attempts"):
        generate(model, np.random.default_rng(0), "retry", None, task.referee(), max_tokens=10, max_attempts=max_attempts)


def test_retry_needs_a_referee():
    model = ToyModel('{"a": 1}', VOCAB)
    with pytest.raises(ValueError, match="referee"):
        generate(model, np.random.default_rng(0), "retry", max_attempts=2)


# Keywords outside the checker's subset, each at a path inside the schema.
UNSUPPORTED = [
    ({"type": "object", "properties": {"a": {"type": "string", "if": {"type": "string"}}}}, "if", "#/properties/a"),
    ({"properties": {"a": {"type": "array", "contains": {"type": "integer"}}}}, "contains", "#/properties/a"),
    ({"properties": {"a": {"$ref": "https://example.com/other.json"}}}, "$ref", "#/properties/a"),
    ({"type": "array", "items": {"properties": {"b": {"type": "object", "minContains": 2}}}},
     "minContains", "#/items/properties/b"),
    ({"type": "object", "additionalProperties": {"type": "object", "unevaluatedProperties": False}},
     "unevaluatedProperties", "#/additionalProperties"),
    ({"type": "object", "then": {}}, "then", "#"),
]


@pytest.mark.parametrize("schema,keyword,path", UNSUPPORTED, ids=[k for _, k, _ in UNSUPPORTED])
def test_unsupported_keyword_names_itself_and_its_path(schema, keyword, path):
    SchemaReferee(schema)  # a valid schema: only the checker's subset is exceeded
    with pytest.raises(UnsupportedSchema) as info:
        SchemaChecker(schema)
    err = info.value
    assert err.keyword == keyword and err.path == path
    assert keyword in str(err) and path in str(err)
    # The strategies built on the checker refuse it the same way, before any token.
    task = Task(name="u", kind="schema", spec=schema, reference="{}")
    for strategy in ("naive", "tabled"):
        with pytest.raises(UnsupportedSchema, match=keyword.replace("$", r"\$")):
            compile_constraint(task, VOCAB, strategy)


@pytest.mark.parametrize("call", ["check_strategy", "compile_constraint", "generate"])
def test_unknown_strategy_lists_the_valid_ones(call):
    task = age_task()
    with pytest.raises(ValueError) as info:
        if call == "check_strategy":
            check_strategy("greedy")
        elif call == "compile_constraint":
            compile_constraint(task, VOCAB, "greedy")
        else:
            generate(ToyModel(task.reference, VOCAB), np.random.default_rng(0), "greedy")
    message = str(info.value)
    assert "greedy" in message
    for name in ("none", "naive", "tabled", "retry"):
        assert name in STRATEGIES and name in message


def test_strategies_none_and_retry_have_no_constraint():
    for strategy in ("none", "retry"):
        assert compile_constraint(age_task(), VOCAB, strategy) is None
