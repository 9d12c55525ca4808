"""Run one trial: settings in, one Parquet part out (or skipped when it already exists).

Plain Python, no Hydra: the entry point composes the settings and calls
:func:`run_trial`; tests and other tools can call it directly.
"""

from __future__ import annotations

import datetime as _dt
import functools
import importlib
import json
import os
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from structbench import __version__
from structbench.bench.settings import (
    Settings,
    build_model,
    build_task,
    build_vocab,
    check_model,
)
from structbench.bench.store import (
    ensure_writable,
    part_path,
    remove_stale_temps,
    write_part,
)
from structbench.bench.strategies import using_strategy
from structbench.jsonschema import node_store
from structbench.limits import using

MANIFEST_NAME = "trials.jsonl"  # in a sweep's folder: one line per trial, read by the end-of-sweep summary

@dataclass
class Trial:
    settings: Settings
    task: object
    vocab: object
    model: object
    label: str


@dataclass
class TrialResult:
    trial_id: str
    path: Path
    skipped: bool
    n_rows: int
    seconds: float


@functools.lru_cache(maxsize=1)
def git_sha() -> str:
    """The commit the package runs from, '+dirty' when the work tree differs; 'unknown' outside git."""
    root = Path(__file__).resolve().parent  # inside a git checkout (editable install) or not at all
    try:
        sha = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10)
        if sha.returncode != 0:
            return "unknown"
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10)
        return sha.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def experiment_module(kind: str):
    return importlib.import_module(f"structbench.experiments.{kind}")


def build_trial(settings) -> Trial:
    """The task, vocabulary and model of a trial's settings (a Settings, or the dict it is built from)."""
    settings = Settings.from_dict(settings)
    check_model(settings.model)  # a real model that is not installed: the install line, before anything loads
    task = build_task(settings.task)
    vocab = build_vocab(settings.vocab)
    model = build_model(settings.model, task, vocab, settings.seed)
    setting = (f"noise={model.noise:g}" if model.noise is not None
               else f"{settings.model.name}/temperature={settings.temperature:g}")
    label = f"{task.name}/{settings.strategy.name}/{setting}"
    return Trial(settings, task, vocab, model, label)


def run_trial(settings, manifest: Path | None = None) -> TrialResult:
    """Run one trial and store its rows, unless its part exists and `force` is off.
    `settings`: a Settings, or the dict Hydra composes (validated here)."""
    settings = Settings.from_dict(settings)
    tid = settings.trial_id
    path = part_path(settings.results_dir, settings.experiment, tid)
    if path.exists() and not settings.force:
        # Stored already: skip without loading the trial's vocabulary or model (a real model takes seconds).
        result = TrialResult(tid, path, True, 0, 0.0)
    else:
        with using(settings.limits), using_strategy(settings.strategy):
            trial = build_trial(settings)  # every bad setting fails here, before anything is written
            created = [f for f in (path.parent, *path.parent.parents) if not f.exists()]
            ensure_writable(path.parent)
            remove_stale_temps(path.parent)  # what killed writes left here (ours only, and only stale ones)
            t0 = time.perf_counter()
            # No masks kept from an earlier trial in this process (node_store): a trial's rows (masks built, work)
            # are its settings' alone, whichever trials ran before it
            node_store.forget()
            try:
                rows = experiment_module(settings.kind).run(settings, trial, progress=settings.progress)
            except BaseException:
                _remove_empty(created)  # a trial that fails leaves no empty results folders behind
                raise
        common = _common_columns(settings, trial, tid)
        write_part([{**common, **row} for row in rows], path)
        result = TrialResult(tid, path, False, len(rows), time.perf_counter() - t0)
    if manifest is not None:
        _record(manifest, result)
    return result


def _remove_empty(folders) -> None:
    """Remove the folders this trial created (innermost first) while they are empty."""
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:
            return


def _common_columns(settings: Settings, trial: Trial, tid: str) -> dict:
    model = trial.model
    return {
        "experiment": settings.experiment,
        "kind": settings.kind,
        "trial_id": tid,
        "seed": settings.seed,
        "task": trial.task.name,
        "schema_depth": trial.task.schema_depth,
        "strategy": settings.strategy.name,
        "model": settings.model.name,
        "noise": model.noise,  # the toy model's settings; null for a real model
        "skill": model.skill,
        "chatter": model.chatter,
        "temperature": settings.temperature,
        "whitespace": settings.whitespace,
        "prompt": None,  # a real model's prompt, per answer (the experiment's rows fill it in)
        "vocab": trial.vocab.name,
        "vocab_size": len(trial.vocab),
        "max_tokens": settings.max_tokens,
        "max_attempts": settings.max_attempts,
        "config_json": json.dumps(settings.identity(), sort_keys=True, default=str),
        "git_sha": git_sha(),
        "structbench_version": __version__,
        "created_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "hostname": socket.gethostname(),
        "engine_versions": _engine_versions(settings),
        "runtime": runtime(),
    }


@functools.cache
def runtime() -> str:
    """JSON of what runs the trial's Python and arrays: CPython's version and its build (date and compiler tell
    two builds of one version apart: on one host, Debian's 3.11 ran our cold path about a tenth faster than
    pyenv's, docs/running.md), NumPy's and numba's versions (numba None where it is not installed)."""
    import importlib.metadata
    import platform

    def installed(name: str) -> str | None:
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            return None

    return json.dumps({"python": platform.python_version(), "implementation": platform.python_implementation(),
                       "build": " ".join(platform.python_build()), "compiler": platform.python_compiler(),
                       "numpy": installed("numpy"), "numba": installed("numba")})


def _engine_versions(settings: Settings) -> str | None:
    """JSON {engine: installed version} of the engines the trial runs: its strategy, and the `paired` one walked
    beside it (speed, fresh); None where it runs none."""
    from structbench.masking.engines import ENGINES, engine_version

    names = {settings.strategy.name, settings.get("paired")} & set(ENGINES)
    return json.dumps({name: engine_version(name) for name in sorted(names)}) if names else None


def _record(manifest: Path, result: TrialResult) -> None:
    """One line per trial in the sweep's manifest; O_APPEND keeps parallel writers' lines whole."""
    manifest.parent.mkdir(parents=True, exist_ok=True)
    line = json.dumps({"trial_id": result.trial_id, "path": str(result.path.resolve()), "skipped": result.skipped}) + "\n"
    fd = os.open(manifest, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)
