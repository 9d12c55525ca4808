"""The fresh-schema yardstick's table (issue 12), from stored rows of the fresh experiment only.

Per strategy: p50 / p90 / p99 / max of compile (every schema that compiled), TTFM (compile + first mask),
TBM (every cold step after the first, its mask and its advance by the step's token, pooled over the walks: as
MaskBench times and pools compute_mask + commit_token), fresh answer (compile + every cold step of the walk) and
warm step (the same walks again), each with its ratio to
llguidance's p50 and p99 (the issue's targets are such ratios); and the count of schemas per outcome. Two
scopes: the schemas every strategy walked, the same instance (same walks), and everything each strategy ran.
Where a trial walked a `paired` strategy on each schema (experiments/fresh.py), a third table: per strategy, its
percentiles and the paired strategy's over the schemas both walked on the same instance, each pair of walks
seconds apart (the ratios of the other tables compare trials run minutes apart, on a host whose speed drifts), their
ratios with a bootstrap 95% interval over the schemas (how far the schemas a corpus holds move a ratio);
and a fourth: each schema's own value over its paired walk's, those ratios' quantiles, a bootstrap interval of
their median, and the share of schemas where the strategy was at least as fast.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from structbench.bench.strategies import STRATEGIES
from structbench.report.summary import OUTCOMES as COMPILE_OUTCOMES
from structbench.report.summary import step_us, stored_list

# A fresh row's outcome: the compile's (summary.OUTCOMES), then the walk's.
OUTCOMES = COMPILE_OUTCOMES + ("no_instance", "walk_refused", "walk_timeout")
COMPILED = ("ok", "no_instance", "walk_refused", "walk_timeout")  # the compile went through
REFERENCE = "llguidance"  # the ratios' denominator
PERCENTILES = (50, 90, 99)
# (column, unit, what it is): the order of the table and of the figure's panels.
METRICS = (("compile", "ms", "compile"),
           ("ttfm", "ms", "TTFM: compile + first mask"),
           ("tbm", "µs", "TBM: each cold step after the first (mask + advance)"),
           ("fresh", "ms", "fresh answer: compile + every cold step"),
           ("warm", "µs", "warm step, mask + advance (the same walk again)"))


def strategies_of(df: pd.DataFrame) -> list[str]:
    """The strategies present, ours and the engines in the package's order, then any others."""
    present = set(df["strategy"].dropna())
    return [s for s in STRATEGIES if s in present] + sorted(present - set(STRATEGIES))


def _steps(lists) -> np.ndarray:
    arrays = [np.asarray(v, dtype=float) for v in lists if v is not None and len(v)]
    return np.concatenate(arrays) if arrays else np.array([])


def _column(rows: pd.DataFrame, name: str) -> list:
    return list(rows[name]) if name in rows else [None] * len(rows)


def _cold_steps(rows: pd.DataFrame) -> list[np.ndarray]:
    """Each walked row's cold steps (step_us)."""
    return [step_us(m, a) for m, a in zip(rows["mask_us"], _column(rows, "advance_us"))]


def walk_values(rows: pd.DataFrame, cold: list[np.ndarray] | None = None) -> pd.DataFrame:
    """Per walked row (outcome ok), the per-schema metrics: compile, TTFM (compile + the first mask) and fresh answer
    (compile + every cold step), in ms, and the median of its TBM steps (µs; NaN for a walk of one step). cold: the
    rows' _cold_steps, where the caller has them."""
    compile_ms = rows["compile_ms"].to_numpy(dtype=float)
    cold = _cold_steps(rows) if cold is None else cold
    return pd.DataFrame({
        "compile": compile_ms,
        "ttfm": compile_ms + np.array([m[0] for m in rows["mask_us"]], dtype=float) / 1000.0,
        "tbm": np.array([float(np.median(s[1:])) if len(s) > 1 else math.nan for s in cold], dtype=float),
        "fresh": compile_ms + np.array([float(np.sum(s)) for s in cold], dtype=float) / 1000.0,
    }, index=rows.index)


def metric_values(rows: pd.DataFrame) -> dict[str, np.ndarray]:
    """One strategy's rows -> each metric's values: one per schema (compile, TTFM, fresh answer) or one per step
    (TBM, warm)."""
    compiled = rows[rows["outcome"].isin(COMPILED)]
    ok = rows[rows["outcome"] == "ok"]
    cold = _cold_steps(ok)
    walks = walk_values(ok, cold)
    warm = [step_us(m, a) for m, a in zip(ok["warm_mask_us"], _column(ok, "warm_advance_us")) if m is not None]
    return {
        "compile": compiled["compile_ms"].to_numpy(dtype=float),
        "ttfm": walks["ttfm"].to_numpy(),
        "tbm": _steps(s[1:] for s in cold),
        "fresh": walks["fresh"].to_numpy(),
        "warm": _steps(warm),
    }


PAIRED_METRICS = METRICS[:4]  # the paired strategy's walk is cold only
PER_SCHEMA_QUANTILES = (10, 25, 50, 75, 90)
PER_SCHEMA_RESAMPLES = 2000  # bootstrap resamples of the median ratio (seeded: the same rows, the same interval)
PAIRED_RESAMPLES = 1000  # bootstrap resamples of the schemas behind the paired table's ratios (seeded)


def _paired_rows(df: pd.DataFrame, strategy: str) -> pd.DataFrame:
    """A strategy's rows walked with a paired strategy, both on the same instance (the paired tables' schemas);
    ValueError where its schemas were paired with different strategies."""
    rows = df[(df["strategy"] == strategy) & df["paired_strategy"].notna()]
    rows = rows[(rows["outcome"] == "ok") & (rows["paired_instance"] == rows["instance"])]
    paired = rows["paired_strategy"].unique()
    if len(paired) > 1:
        raise ValueError(f"{strategy}'s schemas were paired with different strategies: {sorted(paired)}")
    return rows


def _paired_view(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows with the paired strategy's walk in the own columns (its compile, masks and advances)."""
    return rows.assign(compile_ms=rows["paired_compile_ms"], mask_us=rows["paired_mask_us"],
                       advance_us=rows["paired_advance_us"], warm_mask_us=None)


def paired_ratios(df: pd.DataFrame) -> dict[str, tuple[str, pd.DataFrame]]:
    """Per strategy walked with a paired one: (the paired strategy, one row per schema both walked on the same
    instance with each metric's ratio, this strategy's value over the paired walk's, TBM the median of its steps
    over theirs; NaN where a walk has one step). Empty without paired rows."""
    out = {}
    if "paired_strategy" not in df:
        return out
    for strategy in strategies_of(df):
        rows = _paired_rows(df, strategy)
        if len(rows):
            out[strategy] = (rows["paired_strategy"].iloc[0], walk_values(rows) / walk_values(_paired_view(rows)))
    return out


def per_schema_table(df: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """Per strategy walked with a paired one and per metric (not warm): the quantiles over the schemas of each
    schema's ratio (paired_ratios), with a bootstrap 95% interval of their median and the share of schemas at or
    below 1 (where this strategy was at least as fast). The paired table's ratios are of two percentiles; these are
    one ratio per schema, so a few heavy schemas do not decide them. Empty without paired rows."""
    out = []
    rng = np.random.default_rng(seed)
    for strategy, (paired, ratios) in paired_ratios(df).items():
        for metric, _, _ in PAIRED_METRICS:
            r = ratios[metric].to_numpy(dtype=float)
            r = r[np.isfinite(r)]
            if not len(r):
                continue
            medians = np.median(r[rng.integers(0, len(r), (PER_SCHEMA_RESAMPLES, len(r)))], axis=1)
            lo, hi = np.percentile(medians, (2.5, 97.5))
            out.append({"strategy": strategy, "paired": paired, "metric": metric,
                        "schemas": len(r), **{f"p{q}": float(np.percentile(r, q)) for q in PER_SCHEMA_QUANTILES},
                        "p50_ci95_lo": float(lo), "p50_ci95_hi": float(hi),
                        "at_most_1_pct": 100.0 * float(np.mean(r <= 1.0))})
    return pd.DataFrame(out)


def paired_table(df: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """Per strategy walked with a paired one and per metric (not warm): over the schemas both walked, the same
    instance, n, this strategy's p50 and p99, the paired one's, their ratios, and a bootstrap 95% interval of each
    ratio over the schemas (`*_ci95_lo`, `*_ci95_hi`: ratio_intervals). Empty without paired rows."""
    out = []
    if "paired_strategy" not in df:
        return pd.DataFrame(out)
    rng = np.random.default_rng(seed)
    for strategy in strategies_of(df):
        rows = _paired_rows(df, strategy)
        if not len(rows):
            continue
        paired = rows["paired_strategy"].unique()
        own, other = _schema_groups(rows), _schema_groups(_paired_view(rows))  # (values, and the schema of each)
        for metric, unit, _ in PAIRED_METRICS:
            a, b = percentiles(own[metric][0]), percentiles(other[metric][0])
            intervals = ratio_intervals(own[metric], other[metric], (50, 99), rng)
            out.append({"strategy": strategy, "paired": paired[0], "metric": metric, "unit": unit, "n": a["n"],
                        "p50": a["p50"], "p99": a["p99"], "paired_p50": b["p50"], "paired_p99": b["p99"],
                        "p50_vs_paired": a["p50"] / b["p50"], "p99_vs_paired": a["p99"] / b["p99"],
                        "p50_vs_paired_ci95_lo": intervals[50][0], "p50_vs_paired_ci95_hi": intervals[50][1],
                        "p99_vs_paired_ci95_lo": intervals[99][0], "p99_vs_paired_ci95_hi": intervals[99][1]})
    return pd.DataFrame(out)


def _schema_groups(rows: pd.DataFrame) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per paired metric, (its values, the row each came from, 0..len(rows)-1): a schema's one value, or for TBM its
    cold steps after the first. The rows are walked (ok) rows, as paired_table's are, so the values are
    metric_values' for them."""
    walks = walk_values(rows)
    cold = _cold_steps(rows)
    out = {metric: (walks[metric].to_numpy(dtype=float), np.arange(len(rows))) for metric in ("compile", "ttfm",
                                                                                             "fresh")}
    steps = [s[1:] for s in cold]
    out["tbm"] = (_steps(steps), np.repeat(np.arange(len(rows)), [len(s) for s in steps]))
    return out


def weighted_percentiles(values: np.ndarray, weights: np.ndarray, qs) -> list[float]:
    """Percentiles of `values` where each counts `weights` times (whole numbers, as a bootstrap resample's), by the
    inverted CDF: the smallest value whose cumulative weight reaches q% of the total. The same as np.percentile's
    "inverted_cdf" over the values repeated; NaN where the weights sum to 0."""
    order = np.argsort(values, kind="stable")
    cum = np.cumsum(weights[order])
    if not len(cum) or cum[-1] <= 0:
        return [math.nan] * len(qs)
    return [_at_percentile(values[order], cum, q) for q in qs]


def _at_percentile(sorted_values: np.ndarray, cum: np.ndarray, q: float) -> float:
    """The inverted CDF's q-th percentile of sorted values whose cumulative weights are `cum` (weighted_percentiles)."""
    return float(sorted_values[min(int(np.searchsorted(cum, q / 100.0 * cum[-1], side="left")), len(cum) - 1)])


def ratio_intervals(own: tuple, other: tuple, qs, rng, resamples: int = PAIRED_RESAMPLES) -> dict:
    """A bootstrap 95% interval of each percentile ratio (own's q-th percentile over other's), resampling the schemas
    (a schema drawn k times counts each of its values k times, on both sides: the pairs stay pairs, and a schema's
    steps, which move together, are drawn together). own, other: (values, the schema of each, numbered from 0).
    {q: (lo, hi)}, NaN where a side has no values."""
    (a, a_of), (b, b_of) = own, other
    n = int(max(a_of.max(initial=-1), b_of.max(initial=-1))) + 1
    if not len(a) or not len(b) or not n:
        return {q: (math.nan, math.nan) for q in qs}
    a_order, b_order = np.argsort(a, kind="stable"), np.argsort(b, kind="stable")
    a_sorted, a_sorted_of, b_sorted, b_sorted_of = a[a_order], a_of[a_order], b[b_order], b_of[b_order]
    ratios = {q: [] for q in qs}
    for _ in range(resamples):
        counts = np.bincount(rng.integers(0, n, n), minlength=n)
        a_cum, b_cum = np.cumsum(counts[a_sorted_of]), np.cumsum(counts[b_sorted_of])
        if a_cum[-1] <= 0 or b_cum[-1] <= 0:
            continue
        for q in qs:
            x, y = _at_percentile(a_sorted, a_cum, q), _at_percentile(b_sorted, b_cum, q)
            ratios[q].append(x / y if y else math.nan)
    out = {}
    for q in qs:
        r = np.asarray(ratios[q], dtype=float)
        r = r[np.isfinite(r)]
        out[q] = tuple(float(v) for v in np.percentile(r, (2.5, 97.5))) if len(r) else (math.nan, math.nan)
    return out


def untimed_advances(df: pd.DataFrame) -> int:
    """Walked rows stored without their advances timed (before schema 5): their steps are masks alone."""
    ok = df[df["outcome"] == "ok"]
    return int(sum(not stored_list(a) for a in _column(ok, "advance_us")))


def percentiles(values: np.ndarray) -> dict:
    """n, p50, p90, p99 and max (NaN when there are none)."""
    if not len(values):
        return {"n": 0, **{f"p{q}": math.nan for q in PERCENTILES}, "max": math.nan}
    return {"n": len(values), **{f"p{q}": float(np.percentile(values, q)) for q in PERCENTILES},
            "max": float(np.max(values))}


def same_walks(df: pd.DataFrame) -> pd.DataFrame:
    """The rows of the schema files every strategy in df walked, and walked the same instance (same text)."""
    strategies = set(df["strategy"].dropna())
    ok = df[df["outcome"] == "ok"]
    per_file = ok.groupby("schema_file").agg(strategies=("strategy", "nunique"), texts=("text", "nunique"))
    files = per_file[(per_file["strategies"] == len(strategies)) & (per_file["texts"] == 1)].index
    return df[df["schema_file"].isin(files)]


def fresh_table(df: pd.DataFrame) -> pd.DataFrame:
    """Per strategy and metric: n, p50, p90, p99, max, and the p50 and p99 as ratios to llguidance's (NaN without
    llguidance rows)."""
    values = {s: metric_values(df[df["strategy"] == s]) for s in strategies_of(df)}
    stats = {s: {m: percentiles(v[m]) for m, _, _ in METRICS} for s, v in values.items()}
    out = []
    for strategy, by_metric in stats.items():
        for metric, unit, _ in METRICS:
            row = {"strategy": strategy, "metric": metric, "unit": unit, **by_metric[metric]}
            for q in ("p50", "p99"):
                ref = stats.get(REFERENCE, {}).get(metric, {}).get(q, math.nan)
                row[f"{q}_vs_{REFERENCE}"] = row[q] / ref if ref and math.isfinite(ref) else math.nan
            out.append(row)
    return pd.DataFrame(out)


def outcome_counts(df: pd.DataFrame) -> pd.DataFrame:
    """Per strategy: schema files run, then how many ended in each outcome (every failure kind, never dropped)."""
    out = []
    for strategy in strategies_of(df):
        g = df[df["strategy"] == strategy].drop_duplicates("schema_file")
        counts = g["outcome"].value_counts()
        out.append({"strategy": strategy, "schemas": len(g), **{o: int(counts.get(o, 0)) for o in OUTCOMES}})
    return pd.DataFrame(out)


def markdown(table: pd.DataFrame) -> str:
    def cell(v) -> str:
        if isinstance(v, float):
            return "—" if math.isnan(v) else f"{v:,.3g}" if abs(v) < 100 else f"{v:,.0f}"
        return f"{v:,}" if isinstance(v, (int, np.integer)) else str(v)

    lines = ["| " + " | ".join(table.columns) + " |", "|" + "---|" * len(table.columns)]
    lines += ["| " + " | ".join(cell(v) for v in r) + " |" for r in table.itertuples(index=False)]
    return "\n".join(lines)


def format_fresh(df: pd.DataFrame) -> str:
    """The outcome counts and the two percentile tables, as markdown."""
    same = same_walks(df)
    files = df.groupby("strategy")["schema_file"].nunique()
    parts = [f"### schemas per outcome ({df['schema_file'].nunique():,} schema files)", "",
             markdown(outcome_counts(df)), ""]
    fewer = [f"{s} ran {n:,}" for s, n in files.items() if n < files.max()]
    if fewer:  # a strategy run on a smaller sample narrows the same walks to it
        parts += [f"Of {files.max():,} files, {', '.join(fewer)}: the same walks are among those (leave a strategy "
                  f"out with --strategies).", ""]
    for title, rows in ((f"the schemas every strategy walked, the same instance ({same['schema_file'].nunique():,} "
                         f"schemas)", same), ("everything each strategy walked", df)):
        parts += [f"### {title}", "", markdown(fresh_table(rows)), ""]
    paired = paired_table(df)
    if len(paired):
        schemas = ", ".join(f"{s} {n:,}" for s, n in paired.drop_duplicates("strategy")[["strategy", "n"]].itertuples(
            index=False))
        shown = paired.copy()
        for q in ("p50", "p99"):  # (the interval in one column, beside its ratio)
            lo, hi = shown.pop(f"{q}_vs_paired_ci95_lo"), shown.pop(f"{q}_vs_paired_ci95_hi")
            shown.insert(shown.columns.get_loc(f"{q}_vs_paired") + 1, f"{q}_ci95",
                         [f"{x:.3g}–{y:.3g}" if math.isfinite(x) else "—" for x, y in zip(lo, hi)])
        parts += [f"### paired: each schema walked by both, seconds apart, the same instance (schemas: {schemas})",
                  "", markdown(shown), "",
                  "p50_ci95, p99_ci95: a bootstrap 95% interval of the ratio beside it, resampling the schemas "
                  f"({PAIRED_RESAMPLES:,} resamples, seeded; a schema's steps drawn together, on both sides): how far "
                  "the schemas this corpus holds move it. It does not hold the host's drift between runs.", ""]
        parts += ["### paired, per schema: each schema's own value over the paired strategy's (TBM: the median of "
                  "its steps over the paired walk's)", "", markdown(per_schema_table(df)), "",
                  "p10-p90: quantiles of the per-schema ratios; p50_ci95: a bootstrap 95% interval of their median "
                  f"({PER_SCHEMA_RESAMPLES:,} resamples, seeded); at_most_1_pct: the schemas where this strategy took "
                  "at most the paired one's time.", ""]
    parts.append("compile, TTFM, fresh answer: one value per schema; TBM, warm: one per step (its mask and its "
                 "advance by the step's token, as MaskBench times compute_mask + commit_token). Ratios: the "
                 f"strategy's percentile over {REFERENCE}'s, same metric, same scope; in the paired table, over "
                 "the paired strategy's on the same schemas, each walked seconds from this one's.")
    untimed = untimed_advances(df)
    if untimed:
        parts.append(f"{untimed:,} walked rows were stored before advances were timed: their steps are masks alone.")
    return "\n".join(parts)
