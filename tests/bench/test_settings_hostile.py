"""Settings a user gets wrong, through the real command line: each ends in one line naming what was wrong, exit 2,
and leaves nothing behind (no results folder, no Hydra folder); and what killed writes left is cleaned up.

Issue 13's settings part: a file task's reference must be valid under its own referee; a key no trial reads is
refused (with `+` or without); Hydra's own errors are one line; a file that says the other kind gets a hint;
a failing run or sweep writes nothing; stale temporaries of killed writes are removed on the next run."""

import json
import os
import time

import pytest
from helpers import CONF_DIR, one_line_error, run_cli, settings_of

from structbench.bench.settings import Settings, build_task
from structbench.bench.store import STALE_AFTER_SECONDS, remove_stale_temps
from structbench.errors import SettingsError

POINT_SCHEMA = {"type": "object", "properties": {"x": {"type": "integer", "minimum": 0}}, "required": ["x"],
                "additionalProperties": False}


_one_line = one_line_error


def _written(folder):
    """Everything under `folder` but the inputs a test put there (*.json, *.txt)."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.suffix not in (".json", ".txt"))


def _cli(tmp_path, *args):
    """The CLI run from `tmp_path`, so that whatever it writes (results, Hydra's folders) lands there."""
    return run_cli(*args, "results_dir=results", "progress=false", cwd=tmp_path, timeout=300)


# --- 1. a file task's reference must be valid under its own referee -----------------------------------------


@pytest.mark.parametrize("kind,spec,reference,reason", [
    ("schema", POINT_SCHEMA, '{"y": 1}', "'x' is a required property (at $)"),
    ("schema", POINT_SCHEMA, '{"x": -1}', "-1 is less than the minimum of 0 (at $['x'])"),
    ("schema", POINT_SCHEMA, '{"x": 1', "it is not JSON"),
    ("pattern", "[a-z]+@[a-z]+\\.com", "Ada@example.com", "does not match the pattern"),
])
def test_a_reference_its_own_referee_rejects_is_refused_naming_both(tmp_path, kind, spec, reference, reason):
    path = tmp_path / ("spec.json" if kind == "schema" else "spec.txt")
    path.write_text(json.dumps(spec) if kind == "schema" else spec + "\n")
    out = _cli(tmp_path, "task=file", f"task.path={path}", f"task.kind={kind}", f"task.reference='{reference}'", "n=5")
    line = _one_line(out, f"task.reference {reference!r} is not valid under its own {kind}", str(path), reason)
    assert "did you mean" not in line  # the file is what task.kind says
    assert _written(tmp_path) == []


def test_a_valid_reference_runs_for_a_pattern_file(tmp_path):
    path = tmp_path / "email.txt"
    path.write_text("[a-z]+@[a-z]+\\.com\n")
    out = _cli(tmp_path, "task=file", f"task.path={path}", "task.kind=pattern", "task.reference=ada@example.com", "n=5")
    assert out.returncode == 0, out.stderr
    assert "rows: 5" in out.stdout


@pytest.mark.parametrize("name", sorted(p.stem for p in (CONF_DIR / "task").glob("*.yaml") if p.stem != "file"))
def test_every_task_config_still_builds(compose, name):
    """The check is the file task's: built-in tasks whose reference is invalid on purpose (strict_no_age's model
    forgets the age) keep building."""
    task = build_task(Settings.from_dict(settings_of(compose([f"task={name}"]))).task)
    assert task.reference


def test_the_file_task_config_builds_with_a_valid_reference_only(compose, tmp_path):
    path = tmp_path / "point.json"
    path.write_text(json.dumps(POINT_SCHEMA))
    for reference, ok in (('{"x": 3}', True), ('{"x": -3}', False)):
        settings = Settings.from_dict(settings_of(compose(["task=file", f"task.path={path}",
                                                           f"task.reference='{reference}'"])))
        if ok:
            assert build_task(settings.task).reference == reference
        else:
            with pytest.raises(SettingsError, match="less than the minimum"):
                build_task(settings.task)


# --- 2. a key no trial reads is refused, even added with `+` -----------------------------------------------


@pytest.mark.parametrize("args,said", [
    (["+n_samples=5"], ["unknown setting n_samples for kind=validity", "it reads: experiment, force", " n, "]),
    (["+model.nois=2"], ["unknown setting model.nois for model=toy (did you mean model.noise?)"]),
    (["task=nested", "+task.schema_depthh=3"], ["task.schema_depthh for task=nested", "task.schema_depth?"]),
    (["+task.path=x.json"], ["unknown setting task.path for task=age; it reads: task.name"]),
    (["+vocab.seed=3"], ["unknown setting vocab.seed for vocab=toy"]),
    (["+strategy.depth=3"], ["strategy.depth", "'tabled' takes no options", "strategy._target_"]),
    (["+sweep=validity", "task=age", "strategy=none", "model.noise=1.0", "+n_samples=5"], ["n_samples"]),
])
def test_a_key_added_with_plus_that_no_trial_reads_is_refused(tmp_path, args, said):
    _one_line(_cli(tmp_path, *args, "n=2"), *said)
    assert _written(tmp_path) == []


def test_keys_that_are_read_pass_the_check(tmp_path, compose):
    """A limit added with `+`, a sweep's own keys (coverage's corpus keys), a key of Hydra's own."""
    Settings.from_dict(settings_of(compose(["+sweep=coverage"])))
    out = _cli(tmp_path, "+limits.max_repeat=5000", "+hydra.job.env_set.STRUCTBENCH_TEST=1", "n=2")
    assert out.returncode == 0, out.stderr


# --- 3. Hydra's own errors: one line naming the thing and the valid choices ----------------------------------


@pytest.mark.parametrize("args,said", [
    (["strategy=tabeld"], ["Could not find 'strategy/tabeld'", "Available options in 'strategy':", "tabled"]),
    (["+sweep=nosuch"], ["Could not find 'sweep/nosuch'", "Available options in 'sweep':", "validity"]),
    (["+sweep=validity", "strategy=nosuch"], ["strategy/nosuch", "naive"]),
    (["n_samples=5"], ["unknown setting n_samples"]),
    (["temprature=0"], ["unknown setting temprature (did you mean temperature?)"]),
    (["model.nois=2"], ["unknown setting model.nois (did you mean model.noise?)"]),
    # A key some trial reads, missing from this config: Hydra's hint to add it with `+` is right.
    (["limits.max_repeat=5000"], ["Could not override 'limits.max_repeat'", "use +limits.max_repeat=5000"]),
])
def test_hydras_own_errors_name_the_thing_in_one_line(tmp_path, args, said):
    line = _one_line(_cli(tmp_path, *args), *said)
    assert "To append to your config use +n_samples" not in line
    assert _written(tmp_path) == []


# --- 4. a file that says the other kind gets a hint ---------------------------------------------------------


@pytest.mark.parametrize("name,content,kind,said", [
    ("email.txt", "[a-z]+@[a-z]+\\.com\n", "schema",
     "is not valid JSON: Expecting value at line 1 column 2 (did you mean task.kind=pattern?)"),
    ("point.json", json.dumps(POINT_SCHEMA), "pattern", "(did you mean task.kind=schema?)"),
    ("point.txt", json.dumps(POINT_SCHEMA), "pattern", "(did you mean task.kind=schema?)"),
])
def test_a_file_of_the_other_kind_gets_a_hint(tmp_path, name, content, kind, said):
    path = tmp_path / name
    path.write_text(content)
    out = _cli(tmp_path, "task=file", f"task.path={path}", f"task.kind={kind}", """task.reference='{"x": 1}'""", "n=2")
    _one_line(out, str(path), said)
    assert _written(tmp_path) == []


def test_a_broken_schema_file_gets_no_hint(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{"type": "object", "properties": {')
    line = _one_line(_cli(tmp_path, "task=file", f"task.path={path}", "task.reference='{}'", "n=2"), "not valid JSON")
    assert "did you mean" not in line


# --- 5. nothing is written by a run that fails -------------------------------------------------------------


@pytest.mark.parametrize("args", [
    ["n=0"],
    ["+sweep=validity", "n=0"],
    ["+sweep=validity", "task=age", "strategy=none,tabled", "model.noise=-1"],
])
def test_a_run_or_sweep_that_fails_its_settings_writes_nothing(tmp_path, args):
    _one_line(_cli(tmp_path, *args), "must be")
    assert _written(tmp_path) == []  # no results/, no outputs/ or multirun/ of Hydra's


def test_a_sweep_failing_midway_keeps_the_jobs_that_ran_and_drops_the_failed_ones_folder(tmp_path):
    out = _cli(tmp_path, "+sweep=validity", "task=age", "strategy=none", "model.noise=1.0,-1", "n=2")
    _one_line(out, "noise", "must be >= 0")
    (sweep,) = (tmp_path / "multirun" / "validity").iterdir()
    assert sorted(p.name for p in sweep.iterdir()) == ["0", "multirun.yaml", "trials.jsonl"]
    assert len(list((tmp_path / "results" / "validity").glob("part-*.parquet"))) == 1


def test_a_failed_run_removes_only_what_hydra_wrote(tmp_path):
    """A run folder of the user's own, holding a file of theirs, keeps the file and the folder."""
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.md").write_text("keep me")
    _one_line(_cli(tmp_path, "n=0", f"hydra.run.dir={mine}"), "n (answers per trial)")
    assert sorted(p.name for p in mine.iterdir()) == ["notes.md"]


# --- 6. stale temporaries of killed writes are removed on the next run ----------------------------------------


def _temp_names():
    return {"part": f".part-{'a' * 16}.parquet.{'b' * 32}.tmp", "probe": f".probe-{'c' * 32}"}


def test_only_our_stale_temporaries_are_removed(tmp_path):
    now = time.time()
    ours = _temp_names()
    not_ours = [".part-x.parquet.tmp", "notes.tmp", ours["part"] + ".bak", f".part-{'a' * 16}.parquet"]
    for name in [*ours.values(), *not_ours]:
        (tmp_path / name).write_bytes(b"x")
        os.utime(tmp_path / name, (now - 2 * STALE_AFTER_SECONDS,) * 2)
    fresh = tmp_path / f".part-{'d' * 16}.parquet.{'e' * 32}.tmp"  # a write under way, maybe on another host
    fresh.write_bytes(b"x")
    folder_named_like_ours = tmp_path / f".probe-{'f' * 32}"
    folder_named_like_ours.mkdir()
    os.utime(folder_named_like_ours, (now - 2 * STALE_AFTER_SECONDS,) * 2)
    removed = remove_stale_temps(tmp_path, now=now)
    assert sorted(p.name for p in removed) == sorted(ours.values())
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == sorted([*not_ours, fresh.name, folder_named_like_ours.name])


def test_the_next_run_removes_stale_temporaries_and_keeps_fresh_ones(tmp_path):
    folder = tmp_path / "results" / "adhoc"
    folder.mkdir(parents=True)
    stale, fresh = folder / _temp_names()["part"], folder / f".part-{'d' * 16}.parquet.{'e' * 32}.tmp"
    for f in (stale, fresh):
        f.write_bytes(b"half a part")
    os.utime(stale, (time.time() - STALE_AFTER_SECONDS - 60,) * 2)
    out = _cli(tmp_path, "n=2")
    assert out.returncode == 0, out.stderr
    assert not stale.exists() and fresh.exists()
    assert len(list(folder.glob("part-*.parquet"))) == 1
