"""The speed sweep's figure: per task and strategy, warm mask time per step, compile time and the fresh answer
(compile + a cold walk's masks and advances, the median over the trial's cold starts), as points on log axes (a
bar on a log axis has a length set by wherever the axis starts, so none are drawn)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from structbench.errors import MissingRows
from structbench.report.figures.common import dodge, strategies_in, tasks_in
from structbench.report.figures.style import (
    INK,
    NOTE,
    STRATEGY_COLORS,
    STRATEGY_MARKERS,
    drawn_in_style,
)
from structbench.report.summary import cold_walks, fresh_answer_summary


@drawn_in_style
def fig_speed(df: pd.DataFrame) -> plt.Figure:
    """The speed sweep: warm mask time per step (median, whisker to p95), compile time (median) and fresh answer
    (median, whiskers to the fewest and most over the cold starts), per task and strategy."""
    rows = df[df["kind"] == "speed"]
    if rows.empty:
        raise MissingRows("no speed rows")
    tasks = tasks_in(rows)
    strategies = strategies_in(rows)
    vocabs = sorted(rows["vocab"].unique())
    shift = dodge(strategies, 0.8 / max(len(strategies), 1))
    fresh = fresh_answer_summary(rows)
    fig, (left, right, cold) = plt.subplots(1, 3, figsize=(16, 4.6))
    for strategy in strategies:
        xs, med, p95, comp, answer, fewest, most = [], [], [], [], [], [], []
        for i, task in enumerate(tasks):
            g = rows[(rows["task"] == task) & (rows["strategy"] == strategy)]
            if g.empty:
                continue
            warm = g[~cold_walks(g)]
            steps = np.concatenate([np.asarray(v, dtype=float) for v in (warm if len(warm) else g)["mask_us"]])
            xs.append(i + shift[strategy])
            med.append(float(np.median(steps)))
            p95.append(float(np.percentile(steps, 95)))
            comp.append(float(g.loc[cold_walks(g), "compile_ms"].median()))  # one per compile
            first = fresh[(fresh["task"] == task) & (fresh["strategy"] == strategy)]
            answer.append(float(first["fresh_answer_ms"].median()) if len(first) else np.nan)
            fewest.append(float(first["fewest_ms"].min()) if len(first) else np.nan)
            most.append(float(first["most_ms"].max()) if len(first) else np.nan)
        style = dict(color=STRATEGY_COLORS.get(strategy, INK), marker=STRATEGY_MARKERS.get(strategy, "o"), ms=6,
                     ls="none")
        left.errorbar(xs, med, yerr=[np.zeros(len(med)), np.array(p95) - np.array(med)], capsize=2.5, lw=1, **style)
        right.plot(xs, comp, **style)
        cold.errorbar(xs, answer, yerr=[np.array(answer) - np.array(fewest), np.array(most) - np.array(answer)],
                      capsize=2.5, lw=1, **style)
    depth = rows.loc[rows["task"] == "nested", "schema_depth"]
    labels = [f"nested (depth {int(depth.iloc[0])})" if t == "nested" and len(depth) else t for t in tasks]
    for ax in (left, right, cold):
        ax.set_yscale("log")
        ax.set_xticks(range(len(tasks)), labels)
        ax.set_xlim(-0.5, len(tasks) - 0.5)
        ax.set_xlabel("task")
        ax.grid(axis="y", which="major", color="#e5e7eb", lw=0.6)
        ax.set_axisbelow(True)
    cold_rows = cold_walks(rows)
    warm = int(rows[~cold_rows].groupby(["task", "strategy"]).size().max()) if (~cold_rows).any() else 0
    starts = int(rows[cold_rows].groupby(["task", "strategy"]).size().max())
    left.set_ylabel("mask time per step, µs (log scale)")
    left.set_title(f"Warm mask per step over {warm} walks: median, whisker to p95" if warm else
                   "Mask per step (cold walks: no warm walk stored): median, whisker to p95", fontsize=10)
    right.set_ylabel("compile time, ms (log scale)")
    right.set_title("Compile, median (tables or index included)", fontsize=10)
    cold.set_ylabel("fresh answer, ms (log scale)")
    cold.set_title(f"Fresh answer: compile + cold walk, median of {starts}, whiskers to fewest and most",
                   fontsize=10)
    handles = [Line2D([], [], color=STRATEGY_COLORS.get(s, INK), marker=STRATEGY_MARKERS.get(s, "o"), ms=6, ls="none",
                      label=s) for s in strategies]
    fig.legend(handles=handles, frameon=False, loc="lower center", ncol=len(handles), bbox_to_anchor=(0.5, 0.035))
    fig.text(0.5, 0.0, f"Each trial compiles its task {starts} times, each after forgetting what earlier compiles kept, and "
             "walks each compile once (cold: masks built as met); the first compile is walked again (warm: masks "
             "reused). The fresh sweep's figure times cold walks over the corpus.", ha="center", va="bottom",
             fontsize=7.5, color=NOTE)
    fig.suptitle(f"Speed on the {', '.join(vocabs)} vocabulary ({int(rows['vocab_size'].iloc[0]):,} tokens): "
                 f"walking one valid answer per task", fontsize=11)
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    return fig
