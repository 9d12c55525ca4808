"""The figure command: read each experiment's stored rows once, draw every registered figure that has its
rows, and write it as SVG and PNG, byte-identical from one run to the next (fixed SVG hash salt, no dates
or software versions in the metadata). A figure whose experiment has no rows is skipped with one line
naming the sweep to run; the others are still made."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from structbench.bench.store import read_results
from structbench.errors import MissingRows
from structbench.report.figures.registry import BY_NAME, FIGURES, LESSON_FIGURES
from structbench.report.figures.style import styled

FORMATS = ("svg", "png")
# Nothing in the files that changes from run to run: no date in the SVG, no software version in the PNG.
METADATA = {"svg": {"Date": None}, "png": {"Software": None}}


def settings_key(config_json, trial_id) -> str:
    """A trial's settings, ignoring keys set to null (older code left them out of the trial id)."""
    if not isinstance(config_json, str) or not config_json:
        return f"trial:{trial_id}"

    def drop_nulls(value):
        if isinstance(value, dict):
            return {k: drop_nulls(v) for k, v in value.items() if v is not None}
        return value

    try:
        return json.dumps(drop_nulls(json.loads(config_json)), sort_keys=True)
    except ValueError:
        return f"trial:{trial_id}"


def newest_trials(df: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """One part per distinct settings: the newest, when the store holds the same trial under two ids
    (a part written before the trial id changed). Returns the rows kept and the number of parts dropped."""
    if df.empty:
        return df, 0
    parts = df.drop_duplicates("trial_id")[["trial_id", "config_json", "created_at"]].copy()
    parts["key"] = [settings_key(c, t) for c, t in zip(parts["config_json"], parts["trial_id"])]
    parts = parts.sort_values(["key", "created_at", "trial_id"], na_position="first", kind="stable")
    keep = set(parts.drop_duplicates("key", keep="last")["trial_id"])
    dropped = len(parts) - len(keep)
    return (df[df["trial_id"].isin(keep)].reset_index(drop=True) if dropped else df), dropped


def save(fig: plt.Figure, out: Path, name: str, formats=FORMATS) -> list[Path]:
    """Write the figure in each format, in the figures' style, byte-identical for the same rows."""
    paths = []
    with styled():
        for fmt in formats:
            path = out / f"{name}.{fmt}"
            fig.savefig(path, format=fmt, bbox_inches="tight", metadata=METADATA[fmt])
            paths.append(path)
    return paths


def make_figures(results_dir="results", out=None, names=None, log=print, formats=FORMATS) -> dict:
    """Draw every figure whose data is stored; return {"made": [...], "skipped": {name: reason}, "out": folder}."""
    results_dir = Path(results_dir)
    out = Path(out) if out is not None else results_dir / "figures"
    cache: dict[str, pd.DataFrame] = {}

    def rows_of(experiment: str) -> pd.DataFrame:
        if experiment not in cache:
            rows, dropped = newest_trials(read_results(results_dir, experiment))
            if dropped:
                log(f"note: {results_dir / experiment} holds {dropped} part(s) repeating the settings of another "
                    f"(stored under an older trial id); drawing only the newest part of each")
            cache[experiment] = rows
        return cache[experiment]

    made, skipped = [], {}
    for spec in FIGURES:
        if names and spec.name not in names:
            continue
        source = next((e for e in spec.sources if not rows_of(e).empty), None)
        if source is None:
            where = " or ".join(str(results_dir / e) for e in spec.sources)
            reason = f"no rows in {where} — run: python -m structbench +sweep={spec.sources[0]}"
        else:
            if source != spec.sources[0]:
                log(f"note: {spec.name} drawn from {results_dir / source} (no rows in {results_dir / spec.sources[0]}; "
                    f"run: python -m structbench +sweep={spec.sources[0]})")
            try:
                fig = spec.draw(rows_of(source))
            except MissingRows as e:
                reason = f"{e} in {results_dir / source} — run: python -m structbench +sweep={source}"
            else:
                out.mkdir(parents=True, exist_ok=True)
                save(fig, out, spec.name, formats)
                plt.close(fig)
                made.append(spec.name)
                continue
        skipped[spec.name] = reason
        log(f"skipped {spec.name}: {reason}")
    return {"made": made, "skipped": skipped, "out": out}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m structbench.report.figures",
                                     description="Draw the figures from stored results (nothing is recomputed).")
    parser.add_argument("--results-dir", default="results", help="the results store (default: results)")
    parser.add_argument("--out", default=None, help="where to write SVG and PNG (default: <results-dir>/figures)")
    parser.add_argument("--only", nargs="+", metavar="NAME", choices=list(BY_NAME),
                        help="draw only these figures")
    parser.add_argument("--formats", nargs="+", default=list(FORMATS), choices=FORMATS,
                        help="file formats to write (default: svg png)")
    args = parser.parse_args(argv)
    result = make_figures(args.results_dir, args.out, args.only, formats=args.formats)
    made = result["made"]
    if made:
        print(f"wrote {len(made)} figure(s) as {' and '.join(f.upper() for f in args.formats)} to {result['out']}: {', '.join(made)}")
    if not made:
        print(f"error: no figure could be made from {args.results_dir} — run: python -m structbench +sweep=lesson "
              f"and python -m structbench +sweep=validity", file=sys.stderr)
        return 1
    wanted = [n for n in LESSON_FIGURES if not args.only or n in args.only]
    missing = [n for n in wanted if n not in made]
    if missing:
        print(f"error: lesson figure(s) not made: {', '.join(missing)} (see the skipped lines above)", file=sys.stderr)
        return 1
    return 0
