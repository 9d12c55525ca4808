"""The engine adapters' shared contract: a compile failure becomes EngineRejected, with `unsupported` read once
from the engine's own words; what is not the engine's verdict passes through; the coverage sweep classifies by
type alone; and every strategy's constraint meets the Constraint protocol."""

import pytest
from structbench.experiments.coverage import classify_error

from structbench.bench.strategies import compile_constraint
from structbench.bench.tasks import Task, age_task, person_task
from structbench.errors import CompileTimeout, EngineRejected, SettingsError
from structbench.extras import install_line
from structbench.lm.vocab import toy_vocabulary
from structbench.masking import ENGINES, Constraint, engine_constraint
from structbench.masking.engines.adapter import EngineAdapter

VOCAB = toy_vocabulary()


class _Refusing(EngineAdapter):
    name = "fake"

    def __init__(self, error):
        self.error = error

    def _compile(self, kind, spec, whitespace):
        raise self.error


@pytest.mark.parametrize("error, unsupported", [
    (ValueError("llguidance cannot compile the task: at 2(8): failed to compile JSON schema: Unknown format: url"), True),
    (RuntimeError('Unsupported JSON Schema structure {"pattern":"customer"} \nmore lines'), True),
    (RuntimeError("[18:05:52] json_schema_converter.cc:5082: Schema 'false' cannot accept any value"), False),
    (TypeError(""), False),
])
def test_a_refusal_is_read_once_from_the_engines_words(error, unsupported):
    with pytest.raises(EngineRejected) as info:
        _Refusing(error).compile("schema", {})
    e = info.value
    assert e.engine == "fake" and e.unsupported is unsupported and e.__cause__ is error
    first = str(error).splitlines()[0] if str(error) else type(error).__name__
    assert e.message == first.removeprefix("[18:05:52] ")  # xgrammar's clock time is not part of its verdict


@pytest.mark.parametrize("error", [CompileTimeout(), RecursionError("deep")])
def test_what_is_not_the_engines_verdict_passes_through(error):
    with pytest.raises(type(error)):
        _Refusing(error).compile("schema", {})


def test_coverage_classifies_a_refusal_by_type():
    def rejected(error):
        try:
            _Refusing(error).compile("schema", {})
        except EngineRejected as e:
            return e

    msg = "llguidance cannot compile the task: at 2(8): failed to compile JSON schema: Unimplemented keys: [\"not\"]"
    assert classify_error(rejected(ValueError(msg))) == ("unsupported", msg)
    msg = "/project/cpp/regex_converter.cc:43: The regex must not contain null characters."
    assert classify_error(rejected(RuntimeError("[18:06:18] " + msg + "\nStack trace"))) == ("error", f"RuntimeError: {msg}")
    assert classify_error(ValueError("not supported, but not an engine's word")) == (
        "error", "ValueError: not supported, but not an engine's word")
    assert classify_error(CompileTimeout()) == ("timeout", "")


def test_unknown_engine_and_key_order_are_settings_errors():
    with pytest.raises(SettingsError, match="unknown engine"):
        engine_constraint("nope", age_task(), VOCAB)
    with pytest.raises(SettingsError, match="schema order"):
        engine_constraint(ENGINES[0], person_task(), VOCAB, key_order="any")


@pytest.mark.parametrize("strategy", ["naive", "tabled", *ENGINES])
@pytest.mark.parametrize("task", [age_task(), Task("json", "schema", {}, "{}")], ids=["pattern", "schema"])
def test_every_strategy_meets_the_protocol(strategy, task):
    if strategy in ENGINES:
        pytest.importorskip(strategy, reason=install_line("engines"))
    constraint = compile_constraint(task, VOCAB, strategy, "schema")
    assert isinstance(constraint, Constraint)
    state = constraint.start()
    assert constraint.mask(state).shape == (len(VOCAB),)
    assert len(constraint.mask_bits(state)) == (len(VOCAB) + 31) // 32
