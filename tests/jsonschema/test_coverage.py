"""JSON Schema coverage: every 2020-12 keyword enforced or declared, the official test suite's soundness,
and the coverage experiment's outcomes on a corpus with bad files in it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import SUITE

from structbench.bench.referees import SchemaReferee
from structbench.errors import UnsupportedSchema
from structbench.jsonschema.checker import SchemaChecker
from structbench.jsonschema.keywords import VOCABULARY_2020_12
from structbench.limits import Limits, using

# keyword -> (schema, a valid instance, an invalid instance); None for annotations (no invalid one).
KEYWORD_CASES = {
    "type": ({"type": "integer"}, 3, "3"),
    "enum": ({"enum": ["a", 1, [True]]}, [True], "b"),
    "const": ({"const": {"a": [1]}}, {"a": [1.0]}, {"a": [2]}),
    "multipleOf": ({"type": "integer", "multipleOf": 7}, 14, 15),
    "maximum": ({"type": "integer", "maximum": 9}, 9, 10),
    "exclusiveMaximum": ({"type": "integer", "exclusiveMaximum": 9}, 8, 9),
    "minimum": ({"type": "number", "minimum": -2}, -1.5, -2.5),
    "exclusiveMinimum": ({"type": "number", "exclusiveMinimum": 0}, 0.5, 0),
    "maxLength": ({"type": "string", "maxLength": 2}, "ab", "abc"),
    "minLength": ({"type": "string", "minLength": 2}, "ab", "a"),
    "pattern": ({"type": "string", "pattern": "^[a-c]+$"}, "abc", "abd"),
    "maxItems": ({"type": "array", "maxItems": 1}, [1], [1, 2]),
    "minItems": ({"type": "array", "minItems": 2}, [1, 2], [1]),
    "uniqueItems": ({"type": "array", "uniqueItems": True}, [1, 2], [1, 1]),
    "maxContains": ({"type": "array", "contains": {"const": 1}, "maxContains": 1}, [1], [1, 1]),
    "minContains": ({"type": "array", "contains": {"const": 1}, "minContains": 2}, [1, 1], [1]),
    "maxProperties": ({"type": "object", "maxProperties": 1}, {"a": 1}, {"a": 1, "b": 2}),
    "minProperties": ({"type": "object", "minProperties": 1}, {"a": 1}, {}),
    "required": ({"type": "object", "required": ["a"]}, {"a": 1}, {"b": 1}),
    "dependentRequired": ({"dependentRequired": {"a": ["b"]}}, {"a": 1, "b": 2}, {"a": 1}),
    "prefixItems": ({"prefixItems": [{"type": "integer"}]}, [1, "x"], ["x"]),
    "items": ({"items": {"type": "integer"}}, [1], ["x"]),
    "contains": ({"contains": {"type": "integer"}}, ["x", 1], ["x"]),
    "additionalProperties": ({"properties": {"a": {}}, "additionalProperties": False}, {"a": 1}, {"b": 1}),
    "properties": ({"properties": {"a": {"type": "integer"}}}, {"a": 1}, {"a": "x"}),
    "patternProperties": ({"patternProperties": {"^x": {"type": "integer"}}}, {"xa": 1}, {"xa": "s"}),
    "dependentSchemas": ({"dependentSchemas": {"a": {"required": ["b"]}}}, {"a": 1, "b": 1}, {"a": 1}),
    "propertyNames": ({"propertyNames": {"maxLength": 1}}, {"a": 1}, {"ab": 1}),
    "if": ({"if": {"type": "integer"}, "then": {"minimum": 0}}, 1, -1),
    "then": ({"if": {"type": "integer"}, "then": {"minimum": 0}}, 1, -1),
    "else": ({"if": {"type": "integer"}, "else": {"type": "string"}}, "x", None),
    "allOf": ({"allOf": [{"type": "integer"}, {"minimum": 2}]}, 2, 1),
    "anyOf": ({"anyOf": [{"type": "integer"}, {"type": "string", "maxLength": 1}]}, "x", "xy"),
    "oneOf": ({"oneOf": [{"type": "integer"}, {"type": "string"}]}, 1, None),
    "not": ({"not": {"type": "integer"}}, "x", 1),
    "format": ({"type": "string", "format": "date"}, "2024-02-29", "2023-02-29"),
    "$ref": ({"$defs": {"n": {"type": "integer"}}, "$ref": "#/$defs/n"}, 1, "x"),
    "$defs": ({"$defs": {"n": {"type": "integer"}}, "properties": {"a": {"$ref": "#/$defs/n"}}}, {"a": 1}, {"a": "x"}),
    "$dynamicRef": ({"$dynamicAnchor": "m", "items": {"$dynamicRef": "#m"}}, [[1]], None),
    "$dynamicAnchor": ({"$dynamicAnchor": "m", "type": "integer"}, 1, "x"),
    "$anchor": ({"$anchor": "m", "type": "integer"}, 1, "x"),
    "unevaluatedItems": ({"prefixItems": [{}], "unevaluatedItems": False}, [1], [1, 2]),
    "unevaluatedProperties": ({"properties": {"a": {}}, "unevaluatedProperties": False}, {"a": 1}, {"b": 1}),
    "contentEncoding": ({"type": "string", "contentEncoding": "base64"}, "eA==", 1),
    "contentMediaType": ({"type": "string", "contentMediaType": "application/json"}, "{}", 1),
    "contentSchema": ({"type": "string", "contentMediaType": "application/json", "contentSchema": {}}, "{}", 1),
}
ANNOTATIONS = ("title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly", "$comment",
               "$schema", "$id", "$vocabulary")


def _accepts(checker: SchemaChecker, value) -> bool:
    return checker.status(json.dumps(value, separators=(", ", ": "))) == "complete"


def test_every_2020_12_keyword_is_enforced_or_declared():
    assert set(KEYWORD_CASES) | set(ANNOTATIONS) == set(VOCABULARY_2020_12)
    declared, enforced = [], []
    for keyword, (schema, valid, invalid) in KEYWORD_CASES.items():
        referee = SchemaReferee(schema)
        assert referee(json.dumps(valid))
        if invalid is not None:
            assert not referee(json.dumps(invalid)), keyword
        try:
            checker = SchemaChecker(schema)
        except UnsupportedSchema as e:
            assert e.keyword in (keyword, "if", "contains"), (keyword, str(e))
            declared.append(keyword)
            continue
        assert _accepts(checker, valid), keyword
        if invalid is not None:
            assert not _accepts(checker, invalid), f"{keyword} is silently ignored"
        enforced.append(keyword)
    print(f"enforced: {sorted(enforced)}\ndeclared unsupported: {sorted(declared)}")


@pytest.mark.parametrize("keyword", ANNOTATIONS)
def test_annotations_change_nothing(keyword):
    value = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "https://example.com/s",
             "$vocabulary": {"https://json-schema.org/draft/2020-12/vocab/core": True}, "examples": [1],
             "deprecated": True, "readOnly": True, "writeOnly": False}.get(keyword, "x")
    checker = SchemaChecker({"type": "integer", keyword: value})
    assert _accepts(checker, 3) and not _accepts(checker, "3")


@pytest.mark.skipif(not SUITE.is_dir(), reason="no JSON-Schema-Test-Suite in $STRUCTBENCH_DATA or ../shared/data")
def test_official_suite_never_accepts_an_invalid_instance(capsys):
    """Every case whose schema compiles: the checker never accepts what the referee rejects, and no keyword
    agrees with the referee on fewer cases than recorded in results/official_suite.csv (written by
    `python -m structbench.report.official_suite`)."""
    from structbench.report.official_suite import (
        DEFAULT_TABLE,
        format_rows,
        read_table,
        run_suite,
    )

    rows, unsound = run_suite(SUITE)
    with capsys.disabled():
        print("\nJSON-Schema-Test-Suite draft2020-12 (agree: verdicts equal to the referee's)\n" + format_rows(rows))
    assert not unsound, unsound[:10]
    recorded = read_table(DEFAULT_TABLE)
    fell = {r["keyword"]: (r["agree"], recorded[r["keyword"]]["agree"]) for r in rows
            if r["agree"] < recorded.get(r["keyword"], {"agree": 0})["agree"]}
    assert not fell, f"keywords agreeing on fewer cases than recorded (now, recorded): {fell}"
    assert sum(r["agree"] for r in rows) >= 0.5 * sum(r["tests"] for r in rows)


def _write(folder: Path, name: str, content: str):
    (folder / name).write_text(content)


def test_coverage_experiment_outcomes_and_one_bad_file_never_stops(tmp_path):

    from structbench.experiments.coverage import corpus_files, schema_rows

    from structbench.lm.vocab import toy_vocabulary

    good = {"schema": {"type": "object", "properties": {"age": {"type": "integer"}}, "required": ["age"]},
            "tests": [{"data": {"age": 42}, "valid": True}, {"data": {"age": "x"}, "valid": False}]}
    _write(tmp_path, "Toy---good.json", json.dumps(good))
    _write(tmp_path, "Toy---notjson.json", "{not json")
    _write(tmp_path, "Toy---noformat.json", json.dumps({"tests": []}))
    _write(tmp_path, "Toy---badschema.json", json.dumps({"schema": {"type": "nonsense"}, "tests": []}))
    _write(tmp_path, "Toy---unsupported.json", json.dumps({"schema": {"contains": {}}, "tests": [{"data": [1]}]}))
    vocab = toy_vocabulary()
    rows = {p.stem.split("---")[1]: schema_rows(p, "tabled", vocab, "lesson", 5, 1) for p in corpus_files(tmp_path)}
    assert [r["category"] for r in rows["good"]] == ["valid_accepted", "invalid_rejected"]
    assert rows["good"][0]["mask_us"] and rows["good"][0]["outcome"] == "ok"
    assert rows["notjson"][0]["outcome"] == "error" and "not a MaskBench file" in rows["notjson"][0]["outcome_detail"]
    assert rows["noformat"][0]["outcome"] == "error"
    assert rows["badschema"][0]["outcome"] == "no_referee"
    assert rows["unsupported"][0]["outcome"] == "unsupported"
    assert rows["unsupported"][0]["outcome_detail"].startswith("contains at #")
    assert len(corpus_files(tmp_path, sample=2)) == 2 and corpus_files(tmp_path, sample=2) == corpus_files(tmp_path, sample=2)


def test_lazy_coverage_judges_its_own_masks_against_the_referee(tmp_path, monkeypatch):
    """Under lazy an instance is accepted only where each of its tokens, then the end token, is in the mask at its
    state: the verdicts are tabled's (the checker's) where the masks are right; a mask that allows the end too early
    is caught accepting, one that allows a token the checker refuses as the instance's error at the advance; its
    masks are timed on a second constraint, built anew."""
    from structbench.experiments import coverage

    from structbench.lm.vocab import toy_vocabulary

    good = {"schema": {"type": "object", "properties": {"age": {"type": "integer"}, "pets": {"type": "array",
                       "items": {"enum": ["cat", "dog"]}}}, "required": ["age"], "additionalProperties": False},
            "tests": [{"data": {"age": 42, "pets": ["cat"]}, "valid": True}, {"data": {"age": "x"}, "valid": False},
                      {"data": {"age": 4, "pets": ["cow"]}, "valid": False}, {"data": {"pets": []}, "valid": False}]}
    _write(tmp_path, "Toy---good.json", json.dumps(good))
    vocab = toy_vocabulary()
    path = tmp_path / "Toy---good.json"
    tabled = coverage.schema_rows(path, "tabled", vocab, "lesson", 5, 1)
    compiled, real_compiled = [], coverage._MaskWalker._compiled
    monkeypatch.setattr(coverage._MaskWalker, "_compiled", lambda self: compiled.append(1) or real_compiled(self))
    lazy = coverage.schema_rows(path, "lazy", vocab, "lesson", 5, 1)
    assert len(compiled) == 2  # the accepting walks' constraint, and the timed one
    assert [r["category"] for r in lazy] == [r["category"] for r in tabled] == [
        "valid_accepted", "invalid_rejected", "invalid_rejected", "invalid_rejected"]
    assert lazy[0]["mask_us"] and len(lazy[0]["mask_us"]) == lazy[0]["n_tokens"]
    # An answer stopped short: every token allowed, but not the end; a mask that allowed the end there would be
    # caught accepting it
    short = vocab.encode('{"age": 4')
    assert not coverage.build_walker("lazy", good["schema"], vocab, "lesson").accepts(short)
    real = coverage.allows
    monkeypatch.setattr(coverage, "allows", lambda bits, tid: tid == vocab.eos_id or real(bits, tid))
    assert coverage.build_walker("lazy", good["schema"], vocab, "lesson").accepts(short)
    # A mask that allowed every token: the checker's advance refuses the wrong one, filed as the instance's error
    monkeypatch.setattr(coverage, "allows", lambda bits, tid: True)
    loose = coverage.schema_rows(path, "lazy", vocab, "lesson", 5, 0)
    assert loose[1]["category"] == "error" and loose[1]["outcome_detail"].startswith("TokenRejected")


def test_coverage_stops_on_a_strategy_it_does_not_run_instead_of_filing_it_as_an_outcome(tmp_path):
    from structbench.experiments.coverage import schema_rows

    from structbench.errors import SettingsError
    from structbench.lm.vocab import toy_vocabulary

    _write(tmp_path, "Toy---good.json", json.dumps({"schema": {"type": "integer"}, "tests": [{"data": 3}]}))
    with pytest.raises(SettingsError, match="runs strategy tabled, lazy or an engine, not 'naive'"):
        schema_rows(tmp_path / "Toy---good.json", "naive", toy_vocabulary(), "lesson", 5, 1)

@pytest.mark.parametrize("whitespace", ["lesson", "compact", "flexible"])
def test_coverage_walks_each_whitespace_policy_and_flags_large_or_empty_schemas(tmp_path, whitespace, monkeypatch):

    from structbench.experiments import coverage

    from structbench.lm.vocab import toy_vocabulary

    good = {"schema": {"type": "object", "properties": {"age": {"type": "integer"}, "pets": {"type": "array"}},
                       "required": ["age"]},
            "tests": [{"data": {"age": 42.0, "pets": []}, "valid": True}, {"data": {"age": 4.5}, "valid": False}]}
    _write(tmp_path, "Toy---good.json", json.dumps(good))
    _write(tmp_path, "Toy---empty.json", json.dumps({"schema": {"type": "integer", "minimum": 3, "maximum": 2},
                                                     "tests": []}))
    _write(tmp_path, "Toy---large.json", json.dumps({"schema": {}, "tests": [], "pad": "x" * 2000}))
    with using(Limits(max_schema_bytes=1000)):
        rows = {p.stem.split("---")[1]: coverage.schema_rows(p, "tabled", toy_vocabulary(), whitespace, 5, 1)
                for p in coverage.corpus_files(tmp_path)}
    assert [r["category"] for r in rows["good"]] == ["valid_accepted", "invalid_rejected"]
    assert ('"age": 42' in rows["good"][0]["text"]) == (whitespace != "compact")  # 42.0 written as 42
    assert rows["empty"][0]["outcome"] == "error" and "no JSON value" in rows["empty"][0]["outcome_detail"]
    assert rows["large"][0]["outcome"] == "error" and "larger than 1000 bytes" in rows["large"][0]["outcome_detail"]
