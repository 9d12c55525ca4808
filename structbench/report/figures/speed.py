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
from structbench.report.summary import cold_steps, cold_walks, fresh_answer_summary


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


@drawn_in_style
def fig_speed_steps(df: pd.DataFrame) -> plt.Figure:
    """The speed sweep's cold walks step by step: per task, each strategy's time at each step of the answer (its mask
    and the advance by its token, the median over the trial's cold starts), with its compile beside them at the
    left. Where a strategy pays for a fresh schema shows: at compile (tables built ahead), spread over the walk, or
    at a few steps (masks built as met, where a walk meets new states)."""
    rows = df[df["kind"] == "speed"]
    if rows.empty:
        raise MissingRows("no speed rows")
    steps = cold_steps(rows)
    if steps.empty:
        raise MissingRows("no cold speed walks with their masks' times")
    tasks = tasks_in(steps)
    strategies = strategies_in(steps)
    cols = 2 if len(tasks) > 1 else 1
    nrows = -(-len(tasks) // cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(15, 4.1 * nrows + 0.9), squeeze=False)
    compiles = rows[cold_walks(rows)].groupby(["task", "strategy"])["compile_ms"].median()
    for ax, task in zip(axes.flat, tasks):
        shown = steps[steps["task"] == task]
        n = int(shown["step"].max()) + 1
        at = -max(2.0, 0.12 * n)  # the compile's x
        for strategy in strategies:
            g = shown[shown["strategy"] == strategy].sort_values("step")
            if g.empty:
                continue
            look = dict(color=STRATEGY_COLORS.get(strategy, INK), marker=STRATEGY_MARKERS.get(strategy, "o"))
            ax.plot(g["step"], g["us"], lw=0.9, ms=3, **look)
            if (task, strategy) in compiles.index:  # the compile, in the same unit, left of the first step
                ax.plot([at], [compiles[(task, strategy)] * 1000], ls="none", ms=6, **look)
        ax.axvline(at / 2, color="#d1d5db", lw=0.8)
        ax.set_yscale("log")
        ax.set_xlim(1.5 * at, n)
        # the compile's tick far enough left of the steps' that their labels never meet, whatever the walk's length
        ticks = list(range(0, n, 5)) if n <= 40 else list(range(10, n, 10))
        ax.set_xticks([at] + ticks, ["compile"] + [str(t) for t in ticks])
        depth = rows.loc[rows["task"] == task, "schema_depth"]
        ax.set_title(f"{task} (depth {int(depth.iloc[0])})" if task == "nested" and len(depth) else task, fontsize=10)
        ax.set_xlabel("step of the answer (its token's mask and advance)")
        ax.set_ylabel("cold step, µs (log scale)")
        ax.grid(axis="y", which="major", color="#e5e7eb", lw=0.6)
        ax.set_axisbelow(True)
    for ax in list(axes.flat)[len(tasks):]:
        ax.set_visible(False)
    handles = [Line2D([], [], color=STRATEGY_COLORS.get(s, INK), marker=STRATEGY_MARKERS.get(s, "o"), ms=5, lw=1.1,
                      label=s) for s in strategies]
    fig.legend(handles=handles, frameon=False, loc="lower center", ncol=len(handles), bbox_to_anchor=(0.5, 0.03))
    starts = int(steps["cold_starts"].max())
    fig.text(0.5, 0.0, f"Each point: one step of the task's answer walked cold (the first walk over a constraint just "
             f"compiled), the median over {starts} cold starts; each strategy from its own trial. The compile (left) "
             "in the same unit. `python -m structbench.experiments.speed --steps` names each step's token and "
             "sets each step beside the paired strategy's, walked seconds apart.", ha="center", va="bottom",
             fontsize=7.5, color=NOTE, wrap=True)
    vocabs = sorted(rows["vocab"].unique())
    fig.suptitle(f"Where a fresh answer's time goes, step by step ({', '.join(vocabs)} vocabulary)", fontsize=11)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    return fig
