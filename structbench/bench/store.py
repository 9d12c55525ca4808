"""The results store: one Parquet part per trial, one declared schema for writing and reading.

    <results_dir>/<experiment>/part-<trial_id>.parquet

A part is written to a dot-prefixed temporary name in the same folder and
renamed into place, so a reader never sees half a file and a killed sweep
leaves only dot-files, which readers ignore and the next trial stored in that
folder removes once they are stale (:func:`remove_stale_temps`). The name is a
hash of the trial's settings only: a rerun overwrites, a resumed sweep skips,
parallel or remote jobs never collide.
"""

from __future__ import annotations

import os
import re
import time
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from structbench.bench.rows import COLUMNS, Kind, names_of
from structbench.errors import StoreError

SCHEMA_VERSION = 10  # 2: columns temperature and prompt added; 3: the distortion columns; 4: warm_mask_us, log_z_hat;
# 5: advance_us, warm_advance_us; 6: cold; 7: paired_strategy, paired_fresh_ms; 8: paired_compile_ms, paired_mask_us,
# paired_advance_us, paired_instance (the fresh experiment's pairing); 9: engine_versions; 10: runtime

# Every column, its type and meaning are declared once, in structbench.bench.rows.
ROW_SCHEMA = pa.schema([(c.name, c.type) for c in COLUMNS], metadata={"structbench_schema_version": str(SCHEMA_VERSION)})
# Columns whose values depend on the machine and the moment, or on the run, not on the settings.
TIMING_COLUMNS = names_of(Kind.TIMING)
PROVENANCE_COLUMNS = names_of(Kind.PROVENANCE)


# The dot-files this module writes, and nothing else: a part's temporary (write_part) and a write probe
# (ensure_writable), each named with a uuid4 hex.
TEMP_NAME = re.compile(r"\.(part-[0-9a-f]{16}\.parquet\.[0-9a-f]{32}\.tmp|probe-[0-9a-f]{32})")
# A temporary older than this was left by a write that died: a write lives from the table's first byte to its
# rename, under 2 s for a part 27 times the largest stored (198k rows, 10.7 MB, measured). Age, not "held by a
# live process", is the test because a part may be written by a job on another host (a shared results folder);
# 10 minutes leaves room for a slow shared disk and clocks a little apart.
STALE_AFTER_SECONDS = 600


def part_path(results_dir, experiment: str, trial_id: str) -> Path:
    return Path(results_dir) / experiment / f"part-{trial_id}.parquet"


def ensure_writable(folder: Path) -> None:
    """Create `folder` and prove a file can be written there, or fail naming it."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / f".probe-{uuid.uuid4().hex}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as e:
        raise StoreError(f"results directory {str(folder)!r} cannot be written: {e.strerror or e}") from None


def remove_stale_temps(folder: Path, now: float | None = None) -> list[Path]:
    """Remove the temporaries of killed writes in `folder`: only names this module makes, only stale ones
    (last written more than STALE_AFTER_SECONDS ago). Returns those removed."""
    now = time.time() if now is None else now
    removed = []
    for entry in os.scandir(folder):
        if not TEMP_NAME.fullmatch(entry.name) or not entry.is_file(follow_symlinks=False):
            continue
        try:
            if now - entry.stat(follow_symlinks=False).st_mtime > STALE_AFTER_SECONDS:
                os.unlink(entry.path)
                removed.append(Path(entry.path))
        except FileNotFoundError:  # another job removed it first
            continue
    return removed


def write_part(rows: list[dict], path: Path) -> Path:
    """Write rows atomically: to `.<name>.<random>.tmp` beside `path`, then rename into place."""
    table = pa.Table.from_pylist(rows, schema=ROW_SCHEMA)
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        pq.write_table(table, tmp)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def part_files(results_dir, experiment: str | None = None) -> list[Path]:
    root = Path(results_dir)
    folders = [root / experiment] if experiment else sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")) if root.is_dir() else []
    return sorted(f for folder in folders if folder.is_dir() for f in folder.glob("part-*.parquet"))


def read_results(results_dir="results", experiment: str | None = None, files=None):
    """One pandas DataFrame over every part (of one experiment, or all), read with the declared schema."""
    files = part_files(results_dir, experiment) if files is None else [Path(f) for f in files]
    if not files:
        return ROW_SCHEMA.empty_table().to_pandas()
    tables = [pq.read_table(f, schema=ROW_SCHEMA) for f in files]
    df = pa.concat_tables(tables).to_pandas()
    df["temperature"] = df["temperature"].fillna(1.0)  # parts from before the column sampled at temperature 1
    df["whitespace"] = df["whitespace"].fillna("lesson")  # parts from before the setting used the lesson's
    return df.sort_values(["experiment", "trial_id", "sample"], kind="stable").reset_index(drop=True)
