"""Settings out of range, through the real command line where the CLI is concerned: each ends in one line naming the
setting, exit 2, before anything is written (issue 13's settings audit).

Coverage's own keys are checked before any corpus file is read; booleans are booleans; counts (n, max_tokens,
max_attempts) are bounded by limits that name themselves; seeds fit the rows' int64; every limit has a ceiling;
Python's `re` FutureWarnings never reach stderr; the experiment name is a plain folder name."""

import json
import shutil

import pytest
from helpers import one_line_error, run_cli, settings_of
from structbench.experiments import coverage

from structbench.bench.referees import PatternReferee
from structbench.bench.settings import MAX_SEED, Settings
from structbench.errors import LimitExceeded, SettingsError
from structbench.limits import LIMIT_CEILING, Limits, using

FEB_DATE = {"schema": {"type": "string", "format": "date"},
            "tests": [{"data": "2021-02-28", "valid": True}, {"data": "2021-02-30", "valid": False}]}
SMALL_INT = {"schema": {"type": "integer", "minimum": 0, "maximum": 9},
             "tests": [{"data": 3, "valid": True}, {"data": 12, "valid": False}]}


_one_line = one_line_error


def _written(folder):
    """Everything under `folder` but the inputs a test put there (the corpus, *.json, *.txt)."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")
                  if p.suffix not in (".json", ".txt") and "corpus" not in p.relative_to(folder).parts)


def _cli(tmp_path, *args):
    """The CLI run from `tmp_path`, so that whatever it writes (results, Hydra's folders) lands there."""
    return run_cli(*args, "results_dir=results", "progress=false", cwd=tmp_path, timeout=300)


@pytest.fixture
def corpus(tmp_path):
    """Two subsets of two files each, in MaskBench's naming."""
    folder = tmp_path / "corpus"
    folder.mkdir()
    for name, doc in (("Dates---a", FEB_DATE), ("Dates---b", FEB_DATE), ("Ints---a", SMALL_INT),
                      ("Ints---b", SMALL_INT)):
        (folder / f"{name}.json").write_text(json.dumps(doc))
    return folder


def _coverage_args(corpus, *more):
    # The toy vocabulary keeps a run to seconds; one trial (one strategy, one subset) overrides the sweep's lists.
    return ("+sweep=coverage", f"corpus_dir={corpus}", "vocab=toy", "strategy=tabled", "subset=all",
            "hydra.sweep.dir=multirun/cov", *more)


# --- 1. coverage's own settings, checked before any file is read ---------------------------------------------


@pytest.mark.parametrize("args,said", [
    (["sample=abc"], "sample must be an integer >= 1 or null, got 'abc'"),
    (["sample=-1"], "sample must be an integer >= 1 or null, got -1"),  # once: silently the last file dropped
    (["sample=0"], "sample must be an integer >= 1"),
    (["compile_timeout_s=-1"], "compile_timeout_s must be a number of seconds > 0, got -1"),
    (["compile_timeout_s=0"], "compile_timeout_s must be a number of seconds > 0, got 0"),
    (["compile_timeout_s=abc"], "compile_timeout_s must be a number of seconds > 0, got 'abc'"),
    (["compile_timeout_s=nan"], "compile_timeout_s must be a number of seconds > 0"),
    (["compile_timeout_s=1e12"], "compile_timeout_s=1e+12 seconds is longer than allowed (limits.max_compile_seconds"
                                 " = 3,600; raise it with +limits.max_compile_seconds=N)"),
    (["subset=Nope"], "subset 'Nope' is not in corpus_dir"),
    (["mask_walks=-1"], "mask_walks must be an integer >= 0, got -1"),
    (["mask_walks=1.5"], "mask_walks must be an integer >= 0, got 1.5"),
    (["mask_steps=0"], "mask_steps must be an integer >= 1, got 0"),
    (["strategy=naive"], "the coverage experiment runs strategy tabled, lazy or an engine"),
])
def test_a_bad_coverage_setting_is_refused_naming_it(compose, corpus, args, said):
    settings = Settings.from_dict(settings_of(compose(["+sweep=coverage", "vocab=toy", f"corpus_dir={corpus}",
                                                       "subset=all", *args])))
    with using(settings.limits), pytest.raises((SettingsError, LimitExceeded)) as raised:
        coverage.check_settings(settings)
    assert said in str(raised.value)


@pytest.mark.parametrize("strategy", ["tabled", "lazy", "llguidance"])
def test_the_coverage_experiments_strategies_pass_its_settings_check(compose, corpus, strategy):
    settings = Settings.from_dict(settings_of(compose(["+sweep=coverage", "vocab=toy", f"corpus_dir={corpus}",
                                                       "subset=all", f"strategy={strategy}"])))
    assert coverage.check_settings(settings)["files"]


def test_a_missing_corpus_and_an_unknown_subset_name_what_there_is(compose, tmp_path, corpus):
    (tmp_path / "file.json").write_text("{}")
    for where in (tmp_path / "nothing", tmp_path / "file.json"):
        settings = Settings.from_dict(settings_of(compose(["+sweep=coverage", f"corpus_dir={where}"])))
        with pytest.raises(SettingsError, match="corpus_dir .* is not a directory"):
            coverage.check_settings(settings)
    settings = Settings.from_dict(settings_of(compose(["+sweep=coverage", f"corpus_dir={corpus}", "subset=Nope"])))
    with pytest.raises(SettingsError, match="choose one of: all, Dates, Ints$"):
        coverage.check_settings(settings)


@pytest.mark.parametrize("sweep", ["coverage", "fresh"])
def test_the_default_corpus_is_the_shared_datas_wherever_it_is(compose, tmp_path, corpus, monkeypatch, sweep):
    # corpus_dir null: $STRUCTBENCH_DATA/maskbench, and the trial's id is the same whichever folder that is
    ids = []
    for data in (tmp_path / "here", tmp_path / "there"):
        shutil.copytree(corpus, data / "maskbench")
        monkeypatch.setenv("STRUCTBENCH_DATA", str(data))
        settings = Settings.from_dict(settings_of(compose([f"+sweep={sweep}", "vocab=toy", "subset=all"])))
        assert settings["corpus_dir"] is None
        files = coverage.check_corpus_settings(settings)["files"]
        assert [p.parent for p in files] == [data / "maskbench"] * 4
        ids.append(settings.trial_id)
    assert ids[0] == ids[1]
    monkeypatch.setenv("STRUCTBENCH_DATA", str(tmp_path / "nowhere"))
    settings = Settings.from_dict(settings_of(compose([f"+sweep={sweep}", "vocab=toy"])))
    with pytest.raises(SettingsError, match="corpus_dir null is the shared data's maskbench/, and .*nowhere/maskbench "
                                            "is not a directory: set STRUCTBENCH_DATA"):
        coverage.check_corpus_settings(settings)


@pytest.mark.parametrize("args,said", [
    (["sample=abc"], "sample must be an integer"),  # once: a 46-line traceback
    (["compile_timeout_s=1e12"], "limits.max_compile_seconds"),  # once: every schema an `error` row, exit 0
    (["subset=Nope"], "subset 'Nope'"),  # once: exit 0, an empty part stored
])
def test_coverage_settings_fail_on_the_cli_in_one_line_and_write_nothing(tmp_path, corpus, args, said):
    _one_line(_cli(tmp_path, *_coverage_args(corpus, *args)), said)
    assert _written(tmp_path) == []


def test_a_good_coverage_trial_runs_each_sampled_file_of_its_subset(tmp_path, corpus):
    out = _cli(tmp_path, *_coverage_args(corpus, "subset=Ints", "sample=1"))
    assert out.returncode == 0, out.stderr
    import pandas as pd

    (part,) = (tmp_path / "results" / "coverage").glob("part-*.parquet")
    rows = pd.read_parquet(part)
    assert rows["schema_file"].nunique() == 1 and set(rows["subset"]) == {"Ints"}
    assert sorted(rows["category"]) == ["invalid_rejected", "valid_accepted"]


# --- 2. booleans are booleans -----------------------------------------------------------------------------


@pytest.mark.parametrize("arg,said", [
    ("progress=maybe", "progress must be true or false, got 'maybe'"),
    ("force=2", "force must be true or false, got 2"),
    ("force=yes", "force must be true or false, got 'yes'"),
])
def test_a_boolean_setting_takes_only_true_or_false(tmp_path, arg, said):
    out = run_cli("n=2", "results_dir=results", arg, cwd=tmp_path, timeout=300)  # `arg` last: it is what counts
    _one_line(out, said)
    assert _written(tmp_path) == []


# --- 3. counts are bounded by limits that name themselves; seeds fit int64 --------------------------------------


@pytest.mark.parametrize("arg,said", [
    ("n=100000000", "n=100,000,000 answers in one trial is more than allowed (limits.max_answers = 100,000; "
                    "raise it with +limits.max_answers=N)"),
    ("max_tokens=99999999999999999999", "max_tokens=99,999,999,999,999,999,999 tokens for one answer is more than "
                                        "allowed (limits.max_answer_tokens = 10,000"),
    ("max_attempts=10000000", "max_attempts=10,000,000 tries for one answer is more than allowed "
                              "(limits.max_retry_attempts = 1,000,000"),
    ("seed=1180591620717411303424", "seed must be an integer from 0 to 2**63 - 1 (rows store it as int64)"),
    ("seed=9223372036854775808", "seed must be an integer from 0 to 2**63 - 1"),
    ("+limits.referee_seconds=999999999999", "limits.referee_seconds must be an integer from 1 to 2,147,483,647"),
])
def test_a_count_past_its_limit_is_one_line_naming_setting_and_limit(tmp_path, arg, said):
    _one_line(_cli(tmp_path, arg), said)
    assert _written(tmp_path) == []


def test_raising_a_count_limit_lets_the_count_pass(compose):
    big = ["n=200000", "max_tokens=20000", "max_attempts=2000000"]
    with pytest.raises(LimitExceeded, match="limits.max_answers"):
        Settings.from_dict(settings_of(compose(big)))
    raised = ["+limits.max_answers=200000", "+limits.max_answer_tokens=20000", "+limits.max_retry_attempts=2000000"]
    settings = Settings.from_dict(settings_of(compose(big + raised)))
    assert (settings.n, settings.max_tokens, settings.max_attempts) == (200_000, 20_000, 2_000_000)
    assert settings.identity()["limits"] == {"max_answers": 200_000, "max_answer_tokens": 20_000,
                                             "max_retry_attempts": 2_000_000}


def test_the_largest_seed_runs_and_is_stored(tmp_path):
    out = _cli(tmp_path, f"seed={MAX_SEED}", "n=2")
    assert out.returncode == 0, out.stderr
    import pandas as pd

    (part,) = (tmp_path / "results" / "adhoc").glob("part-*.parquet")
    assert set(pd.read_parquet(part)["seed"]) == {MAX_SEED}


def test_every_limit_has_a_ceiling_stated_in_its_error():
    for name in ("referee_seconds", "max_nesting", "max_answers"):
        assert getattr(Limits.from_settings({name: LIMIT_CEILING}), name) == LIMIT_CEILING
        with pytest.raises(SettingsError, match=rf"limits.{name} must be an integer from 1 to 2,147,483,647 "
                                                rf"\(2\*\*31 - 1\), got 2147483648"):
            Limits.from_settings({name: LIMIT_CEILING + 1})


def test_the_referee_time_limit_holds_at_the_ceiling():
    """referee_seconds at its ceiling is still a timer the system takes (it once overflowed setitimer)."""
    with using(Limits(referee_seconds=LIMIT_CEILING)):
        referee = PatternReferee("[a-z]+")
        assert referee("abc") and not referee("ab1")


# --- 4. Python's `re` FutureWarnings never reach stderr ---------------------------------------------------------


def test_a_set_operation_in_a_pattern_gives_one_line_on_a_failed_run(tmp_path):
    path = tmp_path / "p.txt"
    path.write_text("[a-z&&[^aeiou]]+\n")
    out = _cli(tmp_path, "task=file", f"task.path={path}", "task.kind=pattern", "task.reference=bcd", "n=2")
    _one_line(out, "task.reference 'bcd' is not valid under its own pattern")
    assert "FutureWarning" not in out.stderr


def test_a_set_operation_in_a_schema_pattern_leaves_stderr_empty_on_a_good_run(tmp_path):
    """jsonschema's own `re` use (the referee) and ours read `[a-z&&[^aeiou]]+` alike: a class (with '&' and '[')
    then one or more ']'."""
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"type": "string", "pattern": "^[a-z&&[^aeiou]]+$"}))
    out = _cli(tmp_path, "task=file", f"task.path={path}", "task.reference='\"b]]\"'", "n=2")
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""


# --- 5. the experiment name is a plain folder name -------------------------------------------------------------


@pytest.mark.parametrize("name", ["../escape", "a/b", "..", "a\\b", "''"])
def test_an_experiment_name_that_is_not_a_plain_name_is_refused(tmp_path, name):
    line = _one_line(_cli(tmp_path, f"experiment={name}", "n=2"), "experiment must be a plain name")
    assert "under results_dir" in line
    assert _written(tmp_path) == [] and not (tmp_path / "escape").exists()
