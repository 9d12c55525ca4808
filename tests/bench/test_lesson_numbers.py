"""The lesson's published numbers, pinned: seed 0 and the lesson's settings reproduce them exactly."""

import numpy as np
import pytest

from structbench.bench.formulas import (
    chance_all_valid,
    chance_still_failing,
    distortion_example,
    expected_attempts,
    forced_choice,
    mask_cost,
    tokenizations,
)
from structbench.bench.lesson import PERSON_STATUS_TABLE, json_mode_vs_strict, validity_table
from structbench.bench.tasks import AGE_PATTERN, AGE_REFERENCE, ENUM_PATTERN, PERSON_REFERENCE, PERSON_SCHEMA
from structbench.jsonschema.checker import SchemaChecker
from structbench.lm.sampling import masked_softmax
from structbench.lm.vocab import EOS, Vocabulary, toy_vocabulary
from structbench.masking import allowed_tokens, mask_table
from structbench.regular import compile_pattern

LESSON_TABLE = {
    ("age", "none"): (133, 37, 30, 0),
    ("age", "constrained"): (200, 0, 0, 0),
    ("person", "none"): (36, 41, 123, 0),
    ("person", "constrained"): (195, 0, 0, 5),
}


@pytest.mark.parametrize("strategy", ["naive", "tabled"])
def test_validity_table_reproduces_the_lesson(strategy):
    got = {}
    for row in validity_table(n=200, seed=0, strategy=strategy):
        key = (row["task"], "none" if row["strategy"] == "none" else "constrained")
        got[key] = (row["valid"], row["chatter"], row["broken"], row["cut_off"])
    assert got == LESSON_TABLE


def test_json_mode_versus_strict_schema():
    result = json_mode_vs_strict(n=50, seed=0)
    json_mode, strict = result["json_mode"], result["strict_no_age"]
    assert sum(c for t, c in json_mode.items() if t is not None) == 47
    assert json_mode[None] == 3
    assert json_mode['{"name": "Ada"}'] == 44
    assert json_mode["false"] == 1
    assert json_mode['{"name":242,"USD":"USD"}'] == 1  # the lesson's code, which is the reference
    assert sum(c for t, c in strict.items() if t is not None) == 37
    assert strict[None] == 13
    assert strict['{"name": "Ada","age": 9700,"pets": []}'] == 1  # the invented age of the lesson's prose
    # Every finished strict answer has the required age the model never wanted to write.
    assert all('"age"' in t for t in strict if t is not None)


def test_state_counts():
    assert compile_pattern(ENUM_PATTERN).n_states == 8
    assert compile_pattern(AGE_PATTERN).n_states == 11
    assert compile_pattern(r"-?[0-9]+").n_states == 3


def test_enum_machine_allowed_tokens():
    dfa = compile_pattern(ENUM_PATTERN)
    vocab = Vocabulary(["c", "a", "t", "r", "d", "o", "g", "ca", "cat", "do", "dog", "at", "og", EOS], name="enum")
    assert allowed_tokens(dfa, dfa.start, vocab) == ["c", "d", "ca", "cat", "do", "dog"]
    assert allowed_tokens(dfa, dfa.walk(dfa.start, "ca"), vocab) == ["t", "r"]
    assert allowed_tokens(dfa, dfa.walk(dfa.start, "dog"), vocab) == [EOS]
    assert dfa.walk(0, "cat") in dfa.accepting and dfa.walk(0, "at") is None


def test_age_mask_table_shape_and_rows():
    vocab = toy_vocabulary()
    dfa = compile_pattern(AGE_PATTERN)
    table = mask_table(dfa, vocab)
    assert table.shape == (11, 83)
    final = dfa.walk(dfa.start, AGE_REFERENCE)
    assert [vocab[j] for j in np.flatnonzero(table[final])] == [EOS]  # the last row allows only the end token
    first = [vocab[j] for j in np.flatnonzero(table[dfa.start])]
    assert first == ["{"]


def test_person_status_table():
    checker = SchemaChecker(PERSON_SCHEMA)
    assert {p: checker.status(p) for p in PERSON_STATUS_TABLE} == PERSON_STATUS_TABLE


def test_stack_example():
    anything = SchemaChecker({})
    assert anything.open_containers('{"a": [1, {"b": ') == ["object", "array", "object"]
    assert anything.status('{"a": [1, {"b": ') == "open"
    assert anything.status('{"a": [1}') == "dead"
    assert anything.status('{"a": [1, {"b": 2}]}') == "complete"


def test_tokenizations():
    vocab = toy_vocabulary()
    assert tokenizations("42", vocab.tokens) == [["4", "2"], ["42"]]
    assert len(tokenizations(AGE_REFERENCE, vocab.tokens)) == 16
    assert len(tokenizations(PERSON_REFERENCE, vocab.tokens)) == 1536


def test_distortion():
    d = distortion_example()
    assert round(d["conditional"]["Ay"], 3) == 0.091
    assert round(d["conditional"]["By"], 3) == 0.909
    assert d["masked"] == pytest.approx({"Ay": 0.9, "By": 0.1})


def test_mask_cost():
    c = mask_cost(n_steps=200, vocab_size=128_000, avg_len=4, n_states=50)
    assert c == {"naive": 102_400_000, "table": 51_200_000}


def test_retry_formulas():
    assert round(expected_attempts(0.665), 2) == 1.50
    assert round(expected_attempts(0.18), 2) == 5.56
    assert round(chance_still_failing(0.665, 3), 4) == 0.0376
    assert round(expected_attempts(0.95), 2) == 1.05


def test_validity_formula():
    assert round(chance_all_valid(0.98, 10), 3) == 0.817
    assert round(chance_all_valid(0.98, 100), 3) == 0.133


def test_masked_softmax_example():
    z = np.array([2.0, 1.0, 0.5, 0.0])
    before = masked_softmax(z, np.ones(4, dtype=bool))
    after = masked_softmax(z, np.array([False, False, True, True]))
    assert np.round(before, 3).tolist() == [0.579, 0.213, 0.129, 0.078]
    assert np.round(after, 3).tolist() == [0.0, 0.0, 0.622, 0.378]


def test_forced_choice():
    kept, removed = forced_choice({"null": 0.80, "3": 0.12, "5": 0.08}, {"3", "5"})
    assert round(removed, 2) == 0.80
    assert kept == pytest.approx({"3": 0.6, "5": 0.4})
