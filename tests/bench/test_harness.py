"""The harness: sweep configs, the store, determinism, resume, launchers and bad input."""

import itertools
import json
import os
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest
from helpers import ROOT, SWEEPS, run_cli, settings_of

from structbench.bench.runner import build_trial, run_trial
from structbench.bench.settings import Settings, SettingsError, build_task, trial_id
from structbench.bench.store import PROVENANCE_COLUMNS, TIMING_COLUMNS, read_results
from structbench.extras import EXTRAS, install_line

UNSTABLE = set(TIMING_COLUMNS) | set(PROVENANCE_COLUMNS)


def stable(df: pd.DataFrame) -> pd.DataFrame:
    keep = [c for c in df.columns if c not in UNSTABLE]
    return df[keep].sort_values(["trial_id", "sample"]).reset_index(drop=True)


@pytest.mark.parametrize("sweep", SWEEPS)
def test_every_sweep_composes_as_a_multirun_with_valid_parameters(compose, sweep):
    cfg = compose([f"+sweep={sweep}"], hydra_config=True)
    assert str(cfg.hydra.mode) == "RunMode.MULTIRUN"
    params = cfg.hydra.sweeper.params
    assert params, f"sweep {sweep} sweeps nothing"
    assert cfg.experiment == sweep
    # Every point of the grid composes to settings that build a trial.
    grid = [[f"{k}={v}" for v in str(vals).split(",")] for k, vals in params.items()]
    points = list(itertools.product(*grid))
    assert len(points) >= 2
    for point in points:
        settings = Settings.from_dict(settings_of(compose([f"+sweep={sweep}", *point])))
        if settings.model.name != "toy":  # a real model's weights load in its slow smoke test
            build_task(settings.task)
            continue
        try:
            build_trial(settings)
        except SettingsError as e:
            # An optional extra (a real vocabulary) not installed here: the error quotes its install line.
            if any(install_line(extra) in str(e) for extra in EXTRAS):
                pytest.skip(f"sweep {sweep} needs an optional extra: {e}")
            raise


def test_validity_sweep_contains_the_lessons_setting(compose):
    cfg = compose(["+sweep=validity"], hydra_config=True)
    params = cfg.hydra.sweeper.params
    assert set(params["task"].split(",")) == {"age", "person"}
    assert set(params["strategy"].split(",")) == {"none", "naive", "tabled", "retry"}
    assert "1.0" in params["model.noise"].split(",")
    assert cfg.n == 200 and cfg.seed == 0 and cfg.max_tokens == 40


def lesson_settings(compose, tmp_path, task, strategy, **extra):
    overrides = [f"task={task}", f"strategy={strategy}", f"results_dir={tmp_path}", "experiment=t", "progress=false"]
    overrides += [f"{k}={v}" for k, v in extra.items()]
    return settings_of(compose(overrides))


@pytest.mark.parametrize("task,strategy,expected", [
    ("age", "none", {"valid": 133, "chatter": 37, "broken": 30, "cut_off": 0}),
    ("age", "tabled", {"valid": 200, "chatter": 0, "broken": 0, "cut_off": 0}),
    ("person", "none", {"valid": 36, "chatter": 41, "broken": 123, "cut_off": 0}),
    ("person", "naive", {"valid": 195, "chatter": 0, "broken": 0, "cut_off": 5}),
])
def test_stored_rows_give_the_lessons_counts(compose, tmp_path, task, strategy, expected):
    result = run_trial(lesson_settings(compose, tmp_path, task, strategy))
    df = read_results(tmp_path, "t")
    assert len(df) == 200 and result.n_rows == 200
    counts = df["category"].value_counts().to_dict()
    assert {k: counts.get(k, 0) for k in expected} == expected
    assert (df["n_tokens"] == df["removed_mass"].map(len) - df["finished"].astype(int)).all()


def test_same_settings_same_rows_and_resume_skips(compose, tmp_path):
    settings = lesson_settings(compose, tmp_path, "person", "retry", n=30)
    first = run_trial(settings)
    a = read_results(tmp_path, "t")
    again = run_trial(settings)
    assert again.skipped and again.path == first.path
    forced = run_trial({**settings, "force": True})
    assert not forced.skipped
    b = read_results(tmp_path, "t")
    pd.testing.assert_frame_equal(stable(a), stable(b))
    assert not (a["created_at"].isna().any())


def test_trial_id_depends_on_settings_only(compose, tmp_path):
    s = lesson_settings(compose, tmp_path, "age", "tabled")
    assert trial_id(s) == trial_id({**s, "results_dir": "elsewhere", "force": True, "progress": True, "experiment": "x"})
    assert trial_id(s) != trial_id({**s, "seed": 1})


@pytest.mark.parametrize("strategy", ["tabled", "naive"])
def test_whitespace_policy_reaches_the_answers(compose, tmp_path, strategy):
    """compact: no space between JSON tokens (the toy model's own spaces are masked away, and every
    answer stays valid); lesson, the default, keeps the trial id the whitespace key did not exist for."""
    settings = lesson_settings(compose, tmp_path, "person", strategy, whitespace="compact", n=20)
    run_trial(settings)
    df = read_results(tmp_path, "t")
    finished = df[df["finished"]]
    assert len(finished) and (finished["category"] == "valid").all()
    compact = lambda t: json.dumps(json.loads(t), separators=(",", ":"), ensure_ascii=False)  # noqa: E731
    assert (finished["text"].map(compact) == finished["text"]).all()
    assert (df["whitespace"] == "compact").all()
    lesson = lesson_settings(compose, tmp_path, "person", strategy, n=20)
    assert trial_id(lesson) == trial_id({k: v for k, v in lesson.items() if k != "whitespace"})
    assert trial_id(lesson) != trial_id(settings)


def test_part_is_written_atomically_and_reader_ignores_dot_files(compose, tmp_path):
    run_trial(lesson_settings(compose, tmp_path, "age", "tabled", n=5))
    folder = tmp_path / "t"
    (folder / ".part-deadbeef.parquet.123.tmp").write_bytes(b"half a file")
    df = read_results(tmp_path, "t")
    assert len(df) == 5
    assert [p.name for p in folder.iterdir() if not p.name.startswith(".")] == [f"part-{df.trial_id[0]}.parquet"]


# --- the command line, as a user runs it ---------------------------------------------------


def sweep_rows(results_dir, experiment):
    return stable(read_results(results_dir, experiment))


LAUNCHERS = {
    "basic": [],
    "joblib": ["hydra/launcher=joblib", "hydra.launcher.n_jobs=2"],
    "submitit_local": ["hydra/launcher=submitit_local", "hydra.launcher.timeout_min=10"],
}


@pytest.mark.slow
@pytest.mark.parametrize("launcher", list(LAUNCHERS))
def test_two_trial_sweep_through_each_launcher_gives_identical_rows(tmp_path, launcher):
    if launcher == "submitit_local":
        pytest.importorskip("hydra_plugins.hydra_submitit_launcher", reason=install_line("slurm"))
    args = ["+sweep=validity", "task=age", "strategy=none,tabled", "model.noise=1.0", "n=40", "progress=false"]
    ref = run_cli(*args, f"results_dir={tmp_path / 'ref'}")
    assert ref.returncode == 0, ref.stderr
    extra = LAUNCHERS[launcher]
    out = run_cli(*args, *extra, f"results_dir={tmp_path / launcher}")
    assert out.returncode == 0, out.stderr
    assert "valid share" in out.stdout and "rows written" not in out.stderr
    a, b = sweep_rows(tmp_path / "ref", "validity"), sweep_rows(tmp_path / launcher, "validity")
    assert len(a) == 80 and a["trial_id"].nunique() == 2
    pd.testing.assert_frame_equal(a, b)


@pytest.mark.slow
def test_ray_launcher_lands_in_the_same_store(tmp_path):
    pytest.importorskip("hydra_plugins.hydra_ray_launcher", reason=install_line("ray"))
    args = ["+sweep=validity", "task=age", "strategy=none,tabled", "model.noise=1.0", "n=20", "progress=false"]
    ref = run_cli(*args, f"results_dir={tmp_path / 'ref'}")
    assert ref.returncode == 0, ref.stderr
    env = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_ENABLE_UV_RUN_RUNTIME_ENV": "0"}
    out = run_cli(*args, "hydra/launcher=ray", "+hydra.launcher.ray.init.num_cpus=2",
                  "+hydra.launcher.ray.init.include_dashboard=false", f"results_dir={tmp_path / 'ray'}", env=env, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    pd.testing.assert_frame_equal(sweep_rows(tmp_path / "ref", "validity"), sweep_rows(tmp_path / "ray", "validity"))


@pytest.mark.slow
def test_killed_sweep_resumes_to_the_complete_set_of_rows(tmp_path):
    args = ["+sweep=validity", "task=age,person", "strategy=naive,retry", "model.noise=1.0,2.0", "progress=false"]
    full = run_cli(*args, f"results_dir={tmp_path / 'full'}")
    assert full.returncode == 0, full.stderr
    killed_dir = tmp_path / "killed"
    proc = subprocess.Popen([sys.executable, "-m", "structbench", *args, f"results_dir={killed_dir}"], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + 120
    while time.time() < deadline and len(list((killed_dir / "validity").glob("part-*"))) < 2:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    done_before = len(list((killed_dir / "validity").glob("part-*")))
    assert 2 <= done_before < 8, "the kill should land mid-sweep"
    read_results(killed_dir, "validity")  # whatever the kill left, reading works
    resumed = run_cli(*args, f"results_dir={killed_dir}")
    assert resumed.returncode == 0, resumed.stderr
    assert f"{done_before} already stored and skipped" in resumed.stdout
    pd.testing.assert_frame_equal(sweep_rows(tmp_path / "full", "validity"), sweep_rows(killed_dir, "validity"))


# --- bad input: one clear message, a non-zero exit, nothing written -------------------------


@pytest.mark.parametrize("override,message", [
    ("strategy=fastest", "strategy/fastest"),
    ("task=poem", "task/poem"),
    ("vocab=gpt7", "vocab/gpt7"),
    ("modle.noise=1.0", "modle"),
    ("model.noize=1.0", "noize"),
    ("model.noise=-1", "noise"),
    ("max_tokens=0", "max_tokens"),
    ("max_attempts=0", "max_attempts"),
    ("n=0", "n (answers per trial)"),
    ("vocab=synthetic vocab.size=10", "at least"),
    ("whitespace=tabs", "whitespace policy 'tabs'"),
])
def test_bad_settings_fail_clearly(tmp_path, override, message):
    """Ours and Hydra's alike (an unknown config choice, a misspelled key): one line, exit 2."""
    out = run_cli(*override.split(), f"results_dir={tmp_path}", "n=3" if not override.startswith("n=") else "seed=0")
    assert out.returncode == 2
    assert message in out.stderr
    assert out.stderr.count("\n") == 1 and out.stderr.startswith("structbench: error: "), out.stderr
    assert not list(tmp_path.rglob("part-*"))


@pytest.mark.parametrize("args,message", [
    (["+sweep=validity", "strategy=fastest"], "strategy/fastest"),
    (["+sweep=validity", "n_sampels=5"], "n_sampels"),
    (["+sweep=validity", "task=age", "strategy=none", "model.noise=1.0", "n=0"], "n (answers per trial)"),
    (["+sweep=nosuch"], "sweep/nosuch"),
    (["n=[1"], "no viable alternative"),
    (["temperature=${nothing}"], "nothing"),
])
def test_bad_sweeps_and_overrides_fail_in_one_line(tmp_path, args, message):
    out = run_cli(*args, f"results_dir={tmp_path}", "progress=false", cwd=tmp_path)
    assert out.returncode == 2
    errors = [line for line in out.stderr.splitlines() if not line.startswith("[")]  # Hydra logs its launches
    assert len(errors) == 1 and errors[0].startswith("structbench: error: ") and message in errors[0], out.stderr
    assert not list(tmp_path.rglob("part-*"))


def test_schema_file_that_does_not_parse(tmp_path):
    bad = tmp_path / "broken.json"
    bad.write_text('{"type": "object", "properties": {')
    out = run_cli("task=file", f"task.path={bad}", "task.reference='{}'", f"results_dir={tmp_path / 'r'}")
    assert out.returncode == 2
    assert "is not valid JSON" in out.stderr and "broken.json" in out.stderr
    assert "Traceback" not in out.stderr
    assert not (tmp_path / "r").exists()


def test_schema_file_with_unsupported_keyword(tmp_path):
    f = tmp_path / "s.json"
    f.write_text(json.dumps({"type": "array", "items": {"type": "integer"}, "contains": {"const": 2}}))
    out = run_cli("task=file", f"task.path={f}", "task.reference=[1, 2]", f"results_dir={tmp_path / 'r'}")
    assert out.returncode == 2
    assert "unsupported: contains at #" in out.stderr


def test_results_dir_that_cannot_be_written(tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    out = run_cli("n=3", f"results_dir={blocker / 'results'}")
    assert out.returncode == 2
    assert "cannot be written" in out.stderr and str(blocker) in out.stderr
    assert "Traceback" not in out.stderr


def test_file_task_runs_end_to_end(tmp_path):
    f = tmp_path / "point.json"
    f.write_text(json.dumps({"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"],
                             "additionalProperties": False}))
    out = run_cli("task=file", f"task.path={f}", """task.reference='{"x": 42}'""", "n=20", "progress=false",
                  f"results_dir={tmp_path / 'r'}")
    assert out.returncode == 0, out.stderr
    df = read_results(tmp_path / "r", "adhoc")
    assert len(df) == 20 and df["task"].eq("point").all()
    assert (df.loc[df.finished, "category"] == "valid").all()
