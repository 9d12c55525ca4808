"""The fresh experiment (issue 12's yardstick): a tiny corpus through the harness for ours (lazy) and an engine
(llguidance), one row per schema file with its outcome, cold and warm walks of the first accepted instance with
one mask per token and the end's, failures filed never dropped, and the settings it refuses."""

import json
import time

import pytest
from helpers import settings_of
from structbench.experiments import fresh

from structbench.bench.runner import run_trial
from structbench.bench.settings import Settings
from structbench.bench.store import read_results
from structbench.errors import EngineUnavailable, SettingsError
from structbench.extras import install_line
from structbench.limits import Limits, using
from structbench.lm.vocab import toy_vocabulary

OK = {"schema": {"type": "object", "properties": {"age": {"type": "integer"}}, "required": ["age"]},
      "tests": [{"data": {"age": "x"}, "valid": False}, {"data": {"age": 42}, "valid": True}]}
CORPUS = {
    "Toy---ok.json": json.dumps(OK),
    # `not` of an object: neither ours nor llguidance support it
    "Toy---unsupported.json": json.dumps({"schema": {"not": {"type": "object", "properties": {"a": {"const": 1}}}},
                                          "tests": [{"data": 3}]}),
    "Toy---noinstance.json": json.dumps({"schema": {"type": "integer"}, "tests": [{"data": "x", "valid": False}]}),
    "Toy---broken.json": "{not json",
}


@pytest.fixture
def corpus(tmp_path):
    folder = tmp_path / "corpus"
    folder.mkdir()
    for name, text in CORPUS.items():
        (folder / name).write_text(text)
    return folder


@pytest.mark.parametrize("strategy", ["lazy", "llguidance"])
def test_a_tiny_corpus_through_the_harness(compose, corpus, tmp_path, strategy):
    if strategy == "llguidance":
        pytest.importorskip("llguidance", reason=install_line("engines"))
    # lazy walked beside tabled on each schema (`paired`: ours, installed everywhere); llguidance is the sweep's
    # paired strategy, so its own trial walks alone
    settings = Settings.from_dict(settings_of(compose([
        "+sweep=fresh", "vocab=toy", f"strategy={strategy}", f"corpus_dir={corpus}", "sample=null",
        f"results_dir={tmp_path / 'results'}", "progress=false"] + (["paired=tabled"] if strategy == "lazy" else []))))
    result = run_trial(settings)
    df = read_results(tmp_path / "results", "fresh")
    assert result.n_rows == len(df) == len(CORPUS)  # one row per file, failures included
    rows = {r["schema_file"].split("---")[1]: r for r in df.to_dict("records")}
    assert {k: r["outcome"] for k, r in rows.items()} == {
        "ok.json": "ok", "unsupported.json": "unsupported", "noinstance.json": "no_instance", "broken.json": "error"}
    assert "not a MaskBench file" in rows["broken.json"]["outcome_detail"]
    assert rows["noinstance.json"]["outcome_detail"] == "none of its 1 test instances is valid"
    assert rows["noinstance.json"]["compile_ms"] > 0  # it compiled: its compile counts
    ok = rows["ok.json"]
    vocab = toy_vocabulary()
    assert ok["instance"] == 1 and ok["text"] == '{"age": 42}'  # the first valid instance
    assert ok["n_tokens"] == len(vocab.encode(ok["text"]))
    cold, warm = list(ok["mask_us"]), list(ok["warm_mask_us"])
    assert len(cold) == len(warm) == len(ok["allowed_counts"]) == ok["n_tokens"] + 1  # the end token's mask too
    assert all(t > 0 for t in cold + warm) and ok["compile_ms"] > 0
    assert ok["allowed_counts"][-1] >= 1 and ok["kind"] == "fresh" and ok["strategy"] == strategy
    if strategy == "llguidance":
        assert df["paired_strategy"].isna().all() and df["paired_mask_us"].isna().all()
        return
    assert (df["paired_strategy"] == "tabled").all()
    paired_masks, paired_advances = list(ok["paired_mask_us"]), list(ok["paired_advance_us"])
    assert ok["paired_instance"] == 1 and len(paired_masks) == len(cold) and len(paired_advances) == ok["n_tokens"]
    assert ok["paired_compile_ms"] > 0 and ok["paired_fresh_ms"] == pytest.approx(
        ok["paired_compile_ms"] + (sum(paired_masks) + sum(paired_advances)) / 1000)
    for name in ("unsupported.json", "noinstance.json", "broken.json"):  # walked nothing: no walk to pair
        assert rows[name]["paired_instance"] == -1 and rows[name]["paired_mask_us"] is None
        assert rows[name]["paired_fresh_ms"] != rows[name]["paired_fresh_ms"]  # (NaN)
    assert rows["noinstance.json"]["paired_compile_ms"] > 0  # it compiled under tabled too
    assert rows["broken.json"]["paired_compile_ms"] != rows["broken.json"]["paired_compile_ms"]  # never compiled


def test_a_paired_engine_not_installed_is_named_as_the_paired_setting(compose, corpus, monkeypatch):
    """The sweep pairs every strategy with llguidance: without the engine, the error says it is `paired` that needs
    it (and how to turn it off), not only that strategy 'llguidance' does."""
    from structbench.experiments import speed

    def missing(strategy, vocab):
        raise EngineUnavailable(f"strategy {strategy!r} needs the {strategy} package")

    monkeypatch.setattr(speed, "prepare_vocabulary", missing)
    settings = Settings.from_dict(settings_of(compose(["+sweep=fresh", "vocab=toy", "strategy=lazy",
                                                       f"corpus_dir={corpus}"])))
    with pytest.raises(EngineUnavailable, match="^paired=llguidance \\(walked beside this strategy; paired=null for "
                                                "none\\): strategy 'llguidance' needs"):
        fresh.run(settings, type("Trial", (), {"vocab": toy_vocabulary()})())


def test_a_bad_paired_strategy_is_refused_before_any_file_is_read(compose, corpus, tmp_path):
    settings = Settings.from_dict(settings_of(compose(["+sweep=fresh", "vocab=toy", "strategy=lazy",
                                                       f"corpus_dir={corpus}", "paired=smc"])))
    with pytest.raises(SettingsError, match="paired \\(the strategy walked cold beside this one on each schema\\) "
                                            "must be null or one that builds masks: .*got 'smc'"):
        fresh.run(settings, None)


def _row(folder, name, schema, tests, timeout_s=5, **limits):
    """The row of one corpus file written to `folder`, under lazy on the toy vocabulary."""
    path = folder / name
    path.write_text(json.dumps({"schema": schema, "tests": tests}))
    with using(Limits(**limits)):
        return fresh.schema_row(path, "lazy", toy_vocabulary(), "any", "lesson", timeout_s)


def test_the_first_instance_the_constraint_accepts_is_walked_cold_on_a_fresh_compile(tmp_path):
    """With strings cut to 3 characters (limits.max_string_length), "abcdef" is valid but refused: the walk of
    the next valid instance starts on a new compile, and masks are built while walking it (cold)."""
    schema = {"type": "string", "maxLength": 50}
    row = _row(tmp_path, "Toy---cut.json", schema, [{"data": "abcdef"}, {"data": "ab"}], max_string_length=3)
    assert row["outcome"] == "ok" and row["instance"] == 1 and row["text"] == '"ab"'
    assert row["masks_built"] >= 1 and len(row["mask_us"]) == row["n_tokens"] + 1
    row = _row(tmp_path, "Toy---none.json", schema, [{"data": "abcdef"}], max_string_length=3)
    assert (row["outcome"], row["outcome_detail"]) == (
        "no_instance", "the constraint accepts none of its 1 valid test instances")


class _Refusing:
    """A real constraint whose masks drop one token it accepts (a broken engine)."""

    def __init__(self, inner, token):
        self.inner, self.token = inner, token

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def mask_bits(self, state):
        bits = self.inner.mask_bits(state).copy()
        bits[self.token // 32] &= ~(1 << (self.token % 32))
        return bits


def test_a_mask_refusing_a_token_the_constraint_accepts_is_filed_walk_refused(monkeypatch, tmp_path):
    vocab = toy_vocabulary()
    real = fresh.compile_constraint
    monkeypatch.setattr(fresh, "compile_constraint", lambda *a: _Refusing(real(*a), vocab.tokens.index("42")))
    row = _row(tmp_path, "Toy---ok.json", OK["schema"], OK["tests"])
    assert row["outcome"] == "walk_refused" and row["instance"] == 1
    assert row["outcome_detail"] == "the mask at step 3 refuses '42', which the constraint accepts"


def test_a_compile_or_walk_past_the_time_limit_is_counted(monkeypatch, tmp_path):
    real = fresh.compile_constraint

    def slow_compile(*a):
        time.sleep(2)
        return real(*a)

    monkeypatch.setattr(fresh, "compile_constraint", slow_compile)
    row = _row(tmp_path, "Toy---ok.json", OK["schema"], OK["tests"], timeout_s=0.2)
    assert row["outcome"] == "timeout" and row["compile_ms"] >= 150

    class SlowMasks(_Refusing):
        def mask_bits(self, state):
            time.sleep(2)
            return self.inner.mask_bits(state)

    monkeypatch.setattr(fresh, "compile_constraint", lambda *a: SlowMasks(real(*a), 0))
    row = _row(tmp_path, "Toy---ok.json", OK["schema"], OK["tests"], timeout_s=0.2)
    assert row["outcome"] == "walk_timeout" and row["compile_ms"] < 150


@pytest.mark.parametrize("strategy", ["naive", "none", "smc"])
def test_a_strategy_without_masks_to_time_is_refused_before_any_file_is_read(compose, corpus, strategy):
    settings = Settings.from_dict(settings_of(compose(["+sweep=fresh", "vocab=toy", f"strategy={strategy}",
                                                       f"corpus_dir={corpus}"])))
    with pytest.raises(SettingsError, match=f"the fresh experiment runs strategy lazy, tabled, .* not '{strategy}'"):
        fresh.check_settings(settings)


def test_the_corpus_settings_are_checked_as_the_coverage_experiments_are(compose, corpus):
    settings = Settings.from_dict(settings_of(compose(["+sweep=fresh", "vocab=toy", f"corpus_dir={corpus}",
                                                       "subset=Nope"])))
    with pytest.raises(SettingsError, match="subset 'Nope' is not in corpus_dir .*choose one of: all, Toy$"):
        fresh.check_settings(settings)
    settings = Settings.from_dict(settings_of(compose(["+sweep=fresh", "vocab=toy", f"corpus_dir={corpus}",
                                                       "sample=2"])))
    assert len(fresh.check_settings(settings)["files"]) == 2
