"""The end-of-sweep summary: valid share with 95% intervals, median mask time, coverage verdicts, where rows went.

The tables are computed here, from stored rows, so the command line, the sweep callback and the coverage
experiment's markdown tables (``python -m structbench.experiments.coverage``) all print the same numbers.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from structbench.bench.referees import UNJUDGED

Z95 = 1.959963984540054  # the standard normal's 97.5% quantile: every 95% interval in the package uses it
# The coverage experiment's vocabulary: a schema's compile outcome, and an instance's verdict.
OUTCOMES = ("ok", "unsupported", "error", "timeout", "no_referee")
VERDICTS = ("valid_accepted", "valid_rejected", "invalid_accepted", "invalid_rejected")
# An instance with no verdict (its column is shown whenever any row has it): the referee timed out, the walk
# timed out, or spelling / walking it failed.
UNVERDICTED = {UNJUDGED: "referee_timeout", "timeout": "walk_timeout", "error": "instance_error"}


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """95% Wilson score interval for a binomial share: sensible at 0 and n, unlike the normal one."""
    if n == 0:
        return (math.nan, math.nan)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def removed_per_step(removed_mass) -> float:
    """The mean, over every step of every answer, of the model's probability the mask threw away."""
    steps = [np.asarray(v, dtype=float) for v in removed_mass if v is not None and len(v)]
    return float(np.concatenate(steps).mean()) if steps else math.nan


def validity_summary(df: pd.DataFrame) -> pd.DataFrame:
    """Per task x strategy x noise (x model, temperature, vocab size, depth where they vary): answers, valid share
    and its interval, and the mean probability the masks removed per step. For tasks whose facts never state
    the age, the share of answers that wrote an integer age anyway (an invented one)."""
    from structbench.bench.tasks import NO_AGE_TASKS, invented_age

    keys = [k for k in ("model", "temperature", "task", "schema_depth", "vocab_size", "strategy", "noise") if k in df.columns]
    keys = [k for k in keys if k in ("task", "strategy", "noise") or df[k].nunique() > 1]
    out = []
    for key, group in df.groupby(keys, sort=True, dropna=False):  # a real model's rows have no noise
        n, valid = len(group), int((group["category"] == "valid").sum())
        lo, hi = wilson_interval(valid, n)
        row = {**dict(zip(keys, key if isinstance(key, tuple) else (key,))), "answers": n, "valid": valid,
               "valid_share": valid / n, "ci95_low": lo, "ci95_high": hi,
               "cut_off": int((group["category"] == "cut_off").sum()),
               "mean_attempts": float(group["attempts"].mean())}
        if (df["category"] == UNJUDGED).any():  # answers the referee could not judge in time: never "not valid"
            row[UNJUDGED] = int((group["category"] == UNJUDGED).sum())
        if "removed_mass" in group:
            row["removed_per_step"] = removed_per_step(group["removed_mass"])
        if (df["task"].isin(NO_AGE_TASKS)).any():
            row["invented_age"] = (float(np.mean([invented_age(t) for t in group["text"]]))
                                   if group["task"].iloc[0] in NO_AGE_TASKS else math.nan)
        out.append(row)
    return pd.DataFrame(out)


def mask_time_summary(df: pd.DataFrame) -> pd.DataFrame:
    """Median and p95 mask microseconds per step, per masking strategy (and vocabulary size where it varies)."""
    df = df[df["mask_us"].map(lambda v: v is not None and len(v) > 0)]  # unconstrained answers build no masks
    if df.empty:
        return pd.DataFrame()
    keys = ["strategy"] + (["vocab_size"] if df["vocab_size"].nunique() > 1 else [])
    out = []
    for key, group in df.groupby(keys, sort=True):
        steps = np.concatenate([np.asarray(v, dtype=float) for v in group["mask_us"]]) if len(group) else np.array([])
        key = key if isinstance(key, tuple) else (key,)
        out.append({**dict(zip(keys, key)), "steps": len(steps),
                    "median_mask_us": float(np.median(steps)) if len(steps) else math.nan,
                    "p95_mask_us": float(np.percentile(steps, 95)) if len(steps) else math.nan,
                    "median_compile_ms": float(group["compile_ms"].median())})
    return pd.DataFrame(out)


def stored_list(value) -> bool:
    """Whether a list column's value is stored (a part written before the column reads it as None, or NaN)."""
    return isinstance(value, (list, tuple, np.ndarray))


def cold_walks(df: pd.DataFrame) -> pd.Series:
    """Per speed row: is it a cold walk (the first over a constraint just compiled: its `cold`; a part written before
    the column made one compile per trial, and its walk 0 was the cold one)?"""
    cold = df["cold"] if "cold" in df else pd.Series(None, index=df.index, dtype=object)
    return cold.where(cold.notna(), df["sample"] == 0).astype(bool)


def _timed_cold_walks(df: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """The speed rows' cold walks that hold their masks' times, and the columns the summaries group them by: task and
    strategy, and the vocabulary's size where the rows hold several (fresh_answer_summary and cold_steps alike)."""
    walks = df[cold_walks(df) & df["mask_us"].map(lambda v: stored_list(v) and len(v) > 0)]
    keys = ["task", "strategy"] + (["vocab_size"] if walks["vocab_size"].nunique() > 1 else [])
    return walks, keys


def fresh_answer_summary(df: pd.DataFrame) -> pd.DataFrame:
    """Per task and strategy of the speed sweep (and vocabulary size where it varies): the fresh answer, compile +
    every mask and advance of a cold walk (the first over a constraint just compiled), in ms: the median over the
    trial's cold starts, their fewest and most, beside the medians of its parts (rows stored before advances were
    timed count none); where llguidance ran the task, the median's ratio to llguidance's (`vs_llguidance`, across
    trials: minutes apart, so it carries the host's drift between them); and where the trial walked a `paired`
    strategy beside its cold starts, that strategy (`paired`) and the median over the starts of this one's fresh
    answer over the paired one's at the same start (`vs_paired`: each ratio between two walks seconds apart), with
    the fewest and the most of those ratios (`vs_paired_fewest`, `vs_paired_most`: whether a median near 1 holds at
    every start)."""
    walks, keys = _timed_cold_walks(df)
    if walks.empty:
        return pd.DataFrame()
    out = []
    for key, group in walks.groupby(keys, sort=True):
        masks = np.array([np.sum(np.asarray(v, dtype=float)) for v in group["mask_us"]]) / 1000
        advances = group["advance_us"] if "advance_us" in group else [None] * len(group)
        advances = np.array([np.sum(np.asarray(v, dtype=float)) if stored_list(v) else 0.0 for v in advances]) / 1000
        compiles = group["compile_ms"].to_numpy(dtype=float)
        answers = compiles + masks + advances
        out.append({**dict(zip(keys, key)), "cold_starts": len(group), "compile_ms": float(np.median(compiles)),
                    "cold_walk_masks_ms": float(np.median(masks)), "cold_walk_advances_ms": float(np.median(advances)),
                    "fresh_answer_ms": float(np.median(answers)), "fewest_ms": float(answers.min()),
                    "most_ms": float(answers.max()), **_paired_ratio(group, answers)})
    table = pd.DataFrame(out)
    ref = table[table["strategy"] == "llguidance"].set_index(keys[:1] + keys[2:])["fresh_answer_ms"]
    if len(ref):
        at = table.set_index(keys[:1] + keys[2:]).index
        table["vs_llguidance"] = table["fresh_answer_ms"].to_numpy() / ref.reindex(at).to_numpy()
    if "paired" in table:
        itself = table["strategy"].isin(table["paired"].dropna().unique())  # the paired strategy's own trial: 1
        table.loc[itself, "paired"] = table.loc[itself, "strategy"]
        table.loc[itself, ["vs_paired", "vs_paired_fewest", "vs_paired_most"]] = 1.0
        last = ["paired", "vs_paired", "vs_paired_fewest", "vs_paired_most"]
        table = table[[c for c in table if c not in last] + last]
    return table


def _paired_ratio(group: pd.DataFrame, answers: np.ndarray) -> dict:
    """{paired, vs_paired, vs_paired_fewest, vs_paired_most} for one task and strategy's cold walks (fresh answers
    `answers`): the median, fewest and most of each start's ratio to its paired walk; {} where no walk has one (parts
    written before schema 7, no `paired`)."""
    if "paired_fresh_ms" not in group:
        return {}
    paired = group["paired_fresh_ms"].to_numpy(dtype=float)
    has = ~np.isnan(paired)
    if not has.any():
        return {}
    names = group.loc[has, "paired_strategy"].unique()
    if len(names) != 1:
        raise ValueError(f"one task's cold walks were paired with different strategies: {sorted(names)}")
    ratios = answers[has] / paired[has]
    return {"paired": names[0], "vs_paired": float(np.median(ratios)), "vs_paired_fewest": float(ratios.min()),
            "vs_paired_most": float(ratios.max())}


def step_us(masks, advances) -> np.ndarray:
    """A walk's microseconds per step: each mask, plus the advance by the step's token where it has one (every step
    but the end token's); masks alone in rows stored before advances were timed (advances null)."""
    steps = np.asarray(masks, dtype=float).copy()
    if stored_list(advances) and len(advances):
        taken = np.asarray(advances, dtype=float)
        steps[:len(taken)] += taken
    return steps


def cold_steps(df: pd.DataFrame) -> pd.DataFrame:
    """The speed sweep's cold walks step by step: per task, strategy (and vocabulary size where it varies) and step
    of the answer, the step's time (its mask and the advance by its token, µs), the median over the trial's cold
    starts (`us`); and where the trial walked a `paired` strategy beside them (speed parts written from 2026-12-07),
    that strategy's median at the same step over the same starts (`paired_us`) and the median of the starts' ratios
    at that step (`vs_paired`: each between two walks seconds apart). One row per step; `step` counts from 0, the
    answer's first token, to its end token. Where a fresh answer's time goes, along the answer: a strategy that
    builds masks as it meets them pays most at a few steps."""
    walks, keys = _timed_cold_walks(df)
    if walks.empty:
        return pd.DataFrame()
    out = []
    for key, group in walks.groupby(keys, sort=True):
        ours = [step_us(m, a) for m, a in zip(group["mask_us"], group.get("advance_us", [None] * len(group)))]
        n = min(len(s) for s in ours)
        ours = np.array([s[:n] for s in ours])
        theirs = None
        if "paired_mask_us" in group:
            paired = [(p, step_us(m, a)) for p, m, a in zip(group["paired_strategy"], group["paired_mask_us"],
                                                                group["paired_advance_us"]) if stored_list(m)]
            if paired and len({p for p, _ in paired}) == 1 and all(len(s) >= n for _, s in paired) \
                    and len(paired) == len(ours):
                strategy, theirs = paired[0][0], np.array([s[:n] for _, s in paired])
        for step in range(n):
            row = {**dict(zip(keys, key)), "step": step, "cold_starts": len(ours),
                   "us": float(np.median(ours[:, step]))}
            if theirs is not None:
                row.update(paired=strategy, paired_us=float(np.median(theirs[:, step])),
                           vs_paired=float(np.median(ours[:, step] / theirs[:, step])))
            out.append(row)
    return pd.DataFrame(out)


def same_schemas(df: pd.DataFrame) -> pd.DataFrame:
    """The coverage rows of the schema files every strategy in df ran (a strategy run on a sample beside others
    run on the whole corpus: the side-by-side on that sample)."""
    files = None
    for _, g in df.groupby("strategy"):
        files = set(g["schema_file"]) if files is None else files & set(g["schema_file"])
    return df[df["schema_file"].isin(files or set())]


def coverage_summary(df: pd.DataFrame) -> pd.DataFrame:
    """Per subset x strategy: schemas, compiled (declared coverage), outcomes, and the four verdicts
    (among schemas compiled), the instances left without one (UNVERDICTED, where any are), with compile and
    mask time medians."""
    out = []
    for (subset, strategy), g in df.groupby(["subset", "strategy"], sort=True):
        per_schema = g.drop_duplicates("schema_file")
        inst = g[g["instance"] >= 0]
        steps = [v for m in inst["mask_us"] if m is not None for v in m]
        row = {"subset": subset, "strategy": strategy, "schemas": len(per_schema),
               "compiled": int((per_schema["outcome"] == "ok").sum())}
        for o in OUTCOMES[1:]:
            row[o] = int((per_schema["outcome"] == o).sum())
        row["instances"] = len(inst)
        for v in VERDICTS:
            row[v] = int((inst["category"] == v).sum())
        for category, column in UNVERDICTED.items():
            if (df["category"] == category).any():
                row[column] = int((inst["category"] == category).sum())
        row["compile_ms_median"] = float(per_schema["compile_ms"].median()) if len(per_schema) else np.nan
        row["mask_us_median"] = float(np.median(steps)) if steps else np.nan
        out.append(row)
    table = pd.DataFrame(out)
    if not table.empty:
        total = table.groupby("strategy", sort=True).sum(numeric_only=True).reset_index()
        total["subset"] = "ALL"
        for col in ("compile_ms_median", "mask_us_median"):
            total[col] = [float(df[df["strategy"] == s].drop_duplicates("schema_file")["compile_ms"].median())
                          if col == "compile_ms_median" else
                          float(np.median([v for m in df[df["strategy"] == s]["mask_us"] if m is not None for v in m]
                                          or [np.nan])) for s in total["strategy"]]
        table = pd.concat([table, total[table.columns]], ignore_index=True)
    return table


def format_summary(df: pd.DataFrame, where: str) -> str:
    if df.empty:
        return f"no rows found ({where})"
    with pd.option_context("display.width", 200, "display.max_rows", 500, "display.max_columns", 20,
                           "display.float_format", "{:.3f}".format):
        parts = []
        if (df["kind"] == "validity").any():
            parts += ["valid share per trial (95% Wilson interval):", validity_summary(df[df["kind"] == "validity"]).to_string(index=False), ""]
        if (df["kind"] == "coverage").any():
            parts += ["coverage per subset and strategy (verdicts among the instances of compiled schemas):",
                      coverage_summary(df[df["kind"] == "coverage"]).to_string(index=False), ""]
        if (df["kind"] == "fresh").any():
            from structbench.report.fresh import format_fresh

            parts += ["fresh schemas:", format_fresh(df[df["kind"] == "fresh"]), ""]
        if (df["kind"] == "speed").any():
            parts += ["fresh answer per task (compile + a cold walk's masks and advances; median over the cold "
                      "starts, and their fewest and most):",
                      fresh_answer_summary(df[df["kind"] == "speed"]).to_string(index=False), ""]
        rest = df[~df["kind"].isin(("coverage", "fresh"))]
        if (rest["kind"] == "speed").any():  # speed: the warm walks (the cold ones are the fresh answer's)
            rest = rest[(rest["kind"] != "speed") | ~cold_walks(rest)]
        masks = mask_time_summary(rest) if not rest.empty else pd.DataFrame()
        if not masks.empty:
            title = "mask time per step (speed: warm walks, after the first over one compile):" if (
                rest["kind"] == "speed").any() else "mask time per step:"
            parts += [title, masks.to_string(index=False), ""]
        parts.append(f"rows: {len(df)} in {where}")
        return "\n".join(parts)
