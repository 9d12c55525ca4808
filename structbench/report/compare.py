"""Two result stores compared row for row on their stable columns: does a change keep behaviour?

    python -m structbench.report.compare OLD_RESULTS NEW_RESULTS [EXPERIMENT ...]

A refactor must give the same rows for the same settings and seed. Regenerate the stored sweeps into a
fresh folder (``python -m structbench +sweep=validity results_dir=/tmp/new``, ...) and compare: every
part file must exist on both sides (same trial ids), and every stable column (``structbench.bench.rows``:
not timing, not provenance) must hold the same values. Rows are read with
:func:`structbench.bench.store.read_results`, so parts written before a column existed read as its
default, exactly as every reader sees them. Floats that differ in their last bits alone (another NumPy or
torch build sums in another order: a fresh environment) are reported apart. Exit 0 when every experiment is
identical, or differs in such bits alone; 1 otherwise.
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from structbench.bench.rows import Kind, names_of
from structbench.bench.store import part_files, read_results

LESSON_SWEEPS = ("lesson", "validity", "noise", "depth", "vocab")  # the toy model's sweeps: seconds to minutes each
_UNSTABLE = set(names_of(Kind.TIMING)) | set(names_of(Kind.PROVENANCE))


def _canonical(df: pd.DataFrame) -> pd.DataFrame:
    """Stable columns only, every value as its repr (lists and nulls compare as text), rows in a fixed order."""
    df = df[[c for c in df.columns if c not in _UNSTABLE]]
    df = df.astype(object).where(df.notna(), None)
    df = df.map(lambda v: repr(v.tolist()) if hasattr(v, "tolist") else repr(v))
    return df.sort_values(list(df.columns)).reset_index(drop=True)


def compare_experiment(old_dir, new_dir, experiment: str) -> list[str]:
    """The differences between two stores for one experiment, as lines; empty when identical."""
    old_parts = {p.name for p in part_files(old_dir, experiment)}
    new_parts = {p.name for p in part_files(new_dir, experiment)}
    if not old_parts or not new_parts:
        return [f"{experiment}: no parts in {old_dir if not old_parts else new_dir}"]
    problems = []
    if old_parts != new_parts:
        problems.append(f"{experiment}: part files differ: only in old {sorted(old_parts - new_parts)[:5]}, "
                        f"only in new {sorted(new_parts - old_parts)[:5]}")
    a = _canonical(read_results(old_dir, experiment))
    b = _canonical(read_results(new_dir, experiment))
    if list(a.columns) != list(b.columns):
        problems.append(f"{experiment}: columns differ: {sorted(set(a.columns) ^ set(b.columns))}")
        common = [c for c in a.columns if c in b.columns]
        a, b = a[common], b[common]
    if len(a) != len(b):
        return problems + [f"{experiment}: {len(a)} rows in old, {len(b)} in new"]
    differing, rounding = {}, {}
    for c in a.columns:
        rows = (a[c] != b[c]).to_numpy()
        if rows.any():
            last_bits = [_rounding_only(x, y) for x, y in zip(a[c][rows], b[c][rows])]
            if all(last_bits):
                rounding[c] = int(rows.sum())
            else:
                differing[c] = int(rows.sum())
    if differing:
        problems.append(f"{experiment}: {len(a)} rows; rows differing per column: {differing}")
    if rounding:
        problems.append(f"{experiment}: rows whose floats {_LAST_BITS} (relative {_ROUNDING:g} or "
                        f"absolute {_ULP_OF_ONE:g}; another NumPy or torch build sums in another order), per column: "
                        f"{rounding}")
    return problems


_LAST_BITS = "differ in their last bits alone"  # how a rounding-only difference is told (main does not fail on it)
_ROUNDING = 1e-12  # floats this close, relatively (or within _ULP_OF_ONE: a mass taken from 1), differ by summation
_ULP_OF_ONE = 1e-15  # order alone


def _rounding_only(old: str, new: str) -> bool:
    """Whether two values (as _canonical's reprs) are the same number, or list of numbers, up to rounding."""
    try:
        x, y = ast.literal_eval(old), ast.literal_eval(new)
    except (ValueError, SyntaxError):
        return False
    x, y = (x, y) if isinstance(x, list) and isinstance(y, list) else ([x], [y])
    if len(x) != len(y) or not all(isinstance(v, float) and isinstance(w, float) for v, w in zip(x, y)):
        return False
    return bool(np.allclose(x, y, rtol=_ROUNDING, atol=_ULP_OF_ONE, equal_nan=True))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m structbench.report.compare", description=__doc__.split("\n")[0])
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("experiments", nargs="*", default=list(LESSON_SWEEPS))
    args = parser.parse_args(argv)
    ok = True
    for experiment in args.experiments:
        problems = compare_experiment(args.old, args.new, experiment)
        ok = ok and all(_LAST_BITS in p for p in problems)
        if problems:
            print("\n".join(problems))
        else:
            n = len(part_files(args.new, experiment))
            print(f"{experiment}: identical ({n} parts; timing and provenance columns aside)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
