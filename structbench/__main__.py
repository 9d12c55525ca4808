"""`python -m structbench`: the Hydra entry point. Composes one trial's settings and runs it.

`python -m structbench +sweep=validity` runs a whole sweep (each sweep file sets
hydra.mode=MULTIRUN). This is the only module that imports Hydra (with the sweep summary, its callback).

Every error a user can cause ends the same way: one line, `structbench: error: ...`, on stderr, and exit
status 2. Ours (StructbenchError, and a ValueError met outside our own checks) are caught where the trial
runs, in each job of a sweep, and so are OSError, MemoryError, RecursionError and arithmetic errors (an
input that outgrew the machine: named by type, see :func:`resource_error`); Hydra's own (an unknown config choice such as strategy=foo, a misspelled key
such as n_sampels=5, an override that does not parse) are raised to :func:`cli` and put on one line there.
HYDRA_FULL_ERROR=1 keeps Hydra's full report and traceback. A key no setting has, given without `+`, is named
with the closest known one (:func:`structbench.bench.settings.unknown_setting`) instead of Hydra's hint to add it
with `+`; a key given with `+` that no trial reads is refused by the settings check.

A job that fails leaves nothing behind: no results folder (the runner), and not the folder Hydra made for it
before our code ran (its .hydra/ copies of the config and its log; a sweep's folder too when no job of it
ran before), see :func:`discard_job_output`.
"""

from __future__ import annotations

import os
import re
import sys
import warnings
from pathlib import Path
from typing import NoReturn

import hydra
from hydra.errors import HydraException
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from structbench.errors import StructbenchError


@hydra.main(version_base="1.3", config_path="pkg://structbench.conf", config_name="config")
def main(cfg: DictConfig) -> None:
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    from structbench.bench.runner import MANIFEST_NAME, run_trial

    hc = HydraConfig.get()
    manifest = Path(hc.sweep.dir) / MANIFEST_NAME if hc.mode == RunMode.MULTIRUN else None
    # Caught here, in the job, so that each job of a sweep ends the same way on every launcher.
    try:
        settings = OmegaConf.to_container(cfg, resolve=True)
        result = run_trial(settings, manifest=manifest)
    except OmegaConfBaseException as e:  # e.g. an interpolation that names nothing (some are ValueErrors too)
        fail(one_line(e), hc)
    except (StructbenchError, ValueError) as e:  # ValueError: a bad value met outside our own checks
        fail(str(e), hc)
    except (OSError, MemoryError, RecursionError, ArithmeticError) as e:  # an input that outgrew the machine
        fail(resource_error(e), hc)
    what = "skipped (already stored)" if result.skipped else f"{result.n_rows} rows in {result.seconds:.2f} s"
    print(f"[{result.trial_id}] {what} -> {result.path}")
    if hc.mode != RunMode.MULTIRUN and not result.skipped:
        from structbench.bench.store import read_results
        from structbench.report.summary import format_summary

        print(format_summary(read_results(files=[result.path]), str(result.path)))


def fail(message: str, hc) -> NoReturn:
    """End a failed job: its Hydra folder removed, the one line printed, exit status 2."""
    discard_job_output(hc)
    print(f"structbench: error: {message}", file=sys.stderr)
    sys.exit(2)


def discard_job_output(hc) -> None:
    """Remove what Hydra wrote for a job before it ran: the files it writes by name (the .hydra/ config copies and
    the job's log) and then the folders left empty, the sweep's too when it holds only multirun.yaml (no other
    job has begun). Only those names: a folder with anything else in it (another job's, the user's) stays."""
    from hydra.types import RunMode

    base = Path(hc.runtime.cwd)  # where relative run and sweep folders are made (the cwd before any chdir)
    output = Path(hc.runtime.output_dir)
    if hc.output_subdir:
        for name in ("config.yaml", "hydra.yaml", "overrides.yaml"):
            (output / hc.output_subdir / name).unlink(missing_ok=True)
        _remove_empty(output / hc.output_subdir)
    (output / f"{hc.job.name}.log").unlink(missing_ok=True)
    if hc.mode != RunMode.MULTIRUN:
        _remove_empty(output, up_to=base if not Path(hc.run.dir).is_absolute() else None)
        return
    _remove_empty(output)
    sweep = Path(hc.sweep.dir) if Path(hc.sweep.dir).is_absolute() else base / hc.sweep.dir
    if sweep.is_dir() and [p.name for p in sweep.iterdir()] == ["multirun.yaml"]:
        (sweep / "multirun.yaml").unlink(missing_ok=True)
        _remove_empty(sweep, up_to=base if not Path(hc.sweep.dir).is_absolute() else None)


def _remove_empty(folder: Path, up_to: Path | None = None) -> None:
    """Remove `folder` if empty, then its parents while empty, stopping below `up_to` (or after `folder`)."""
    folder = folder.resolve()
    stop = up_to.resolve() if up_to is not None else folder.parent
    while folder != stop and stop in folder.parents:
        try:
            folder.rmdir()
        except OSError:  # not empty (or gone): leave it and everything above
            return
        folder = folder.parent


def resource_error(error: BaseException) -> str:
    """An error no check of ours caught (a file that cannot be read, memory or Python's recursion limit run out,
    a number out of range), named with its type, on one line."""
    if isinstance(error, MemoryError):
        return "MemoryError: out of memory (an input or a setting too large for this machine)"
    if isinstance(error, RecursionError):
        return "RecursionError: nesting deeper than Python's recursion limit (an input nested too deeply)"
    message = (str(error).strip().splitlines() or [""])[0]
    return f"{type(error).__name__}: {message}" if message else type(error).__name__


def one_line(error: BaseException) -> str:
    """Hydra's several-line message as one line: a list under a heading joins the heading's line, the search
    path it appends is left out, and an OmegaConf cause (e.g. "Key 'x' is not in struct") is kept."""
    lines = str(error).splitlines()
    if "Config search path:" in lines:
        lines = lines[: lines.index("Config search path:")]
    parts: list[str] = []
    for line in lines:
        if line[:1].isspace() and parts:  # an indented item: on its heading's line
            parts[-1] += (" " if parts[-1].endswith(":") else ", ") + line.strip()
        elif line.strip():
            parts.append(line.strip())
    cause = error.__cause__
    if isinstance(cause, OmegaConfBaseException) and str(cause).strip():
        parts.insert(1, str(cause).strip().splitlines()[0])
    return "; ".join(p.rstrip(".") for p in parts) or type(error).__name__


def unknown_key(error: BaseException) -> str | None:
    """For Hydra's "Could not override 'KEY'" (a key the config lacks): our message naming it and the closest or
    all known keys, when no trial reads it; None otherwise (then Hydra's hint to add it with `+` is right)."""
    match = re.match(r"Could not override '([^']+)'", str(error))
    if match is None or "not in struct" not in str(error.__cause__ or ""):
        return None
    from structbench.bench.settings import unknown_setting

    return unknown_setting(match.group(1))


# What Python's `re` warns about a pattern it reads one way today and may read another way later (a class such as
# `[a-z&&[^aeiou]]`, which ours and the referee's dialect read as plain characters): not the user's error, and a
# line of its own on stderr would break the one-line rule. Only these are silenced.
RE_FUTURE_WARNINGS = r"Possible (nested set|set (difference|intersection|symmetric difference|union)) at position"


def cli() -> None:
    """Run the entry point; Hydra's errors and ours that reach here print one line and exit 2."""
    warnings.filterwarnings("ignore", message=RE_FUTURE_WARNINGS, category=FutureWarning)
    if os.environ.get("HYDRA_FULL_ERROR") == "1":  # the user asked for Hydra's full report
        main()
        return
    os.environ["HYDRA_FULL_ERROR"] = "1"  # Hydra then raises its errors to us instead of printing them
    try:
        main()
    except (HydraException, OmegaConfBaseException) as e:
        print(f"structbench: error: {unknown_key(e) or one_line(e)}", file=sys.stderr)
        sys.exit(2)
    except StructbenchError as e:  # e.g. the sweep summary reading the results
        print(f"structbench: error: {e}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    cli()
