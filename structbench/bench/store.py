"""The results store: one Parquet part per trial, one declared schema for writing and reading.

    <results_dir>/<experiment>/part-<trial_id>.parquet

A part is written to a dot-prefixed temporary name in the same folder and
renamed into place, so a reader never sees half a file and a killed sweep
leaves only dot-files, which readers ignore. The name is a hash of the trial's
settings only: a rerun overwrites, a resumed sweep skips, parallel or remote
jobs never collide.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from structbench.errors import StoreError

SCHEMA_VERSION = 2  # 2: columns temperature and prompt added

# Columns whose values depend on the machine and the moment, not on the settings.
TIMING_COLUMNS = ("mask_us", "compile_ms", "wall_ms")
PROVENANCE_COLUMNS = ("git_sha", "structbench_version", "created_at", "hostname")

ROW_SCHEMA = pa.schema(
    [
        ("experiment", pa.string()),
        ("kind", pa.string()),
        ("trial_id", pa.string()),
        ("seed", pa.int64()),
        ("sample", pa.int64()),
        ("task", pa.string()),
        ("schema_depth", pa.int64()),
        ("strategy", pa.string()),
        ("model", pa.string()),
        ("noise", pa.float64()),
        ("skill", pa.float64()),
        ("chatter", pa.float64()),
        ("vocab", pa.string()),
        ("vocab_size", pa.int64()),
        ("max_tokens", pa.int64()),
        ("max_attempts", pa.int64()),
        ("text", pa.string()),
        ("finished", pa.bool_()),
        ("category", pa.string()),
        ("n_tokens", pa.int64()),
        ("attempts", pa.int64()),
        ("removed_mass", pa.list_(pa.float64())),
        ("mask_us", pa.list_(pa.float64())),
        ("allowed_counts", pa.list_(pa.int64())),
        ("compile_ms", pa.float64()),
        ("compile_work_chars", pa.int64()),
        ("work_chars", pa.int64()),
        ("work_reads", pa.int64()),
        ("compile_masks", pa.int64()),
        ("masks_built", pa.int64()),
        ("wall_ms", pa.float64()),
        # kind=coverage: one row per (schema file, test instance); instance -1 for a schema's compile alone.
        ("subset", pa.string()),
        ("schema_file", pa.string()),
        ("whitespace", pa.string()),
        ("outcome", pa.string()),  # ok, unsupported, error, timeout, no_referee
        ("outcome_detail", pa.string()),  # the keyword and path, or the message
        ("instance", pa.int64()),
        ("referee_valid", pa.bool_()),
        ("dataset_valid", pa.bool_()),
        ("accepted", pa.bool_()),
        # The sampling temperature (0 = greedy); null in parts written before the column, which sampled at 1.0.
        ("temperature", pa.float64()),
        # A real model's prompt for this answer, as its chat template wrote it (null for the toy model).
        ("prompt", pa.string()),
        # Data points behind a figure (kind=lesson): which figure, which series, and the point itself.
        ("figure", pa.string()),
        ("series", pa.string()),
        ("label", pa.string()),
        ("x", pa.float64()),
        ("y", pa.float64()),
        ("config_json", pa.string()),
        ("git_sha", pa.string()),
        ("structbench_version", pa.string()),
        ("created_at", pa.string()),
        ("hostname", pa.string()),
    ],
    metadata={"structbench_schema_version": str(SCHEMA_VERSION)},
)


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
