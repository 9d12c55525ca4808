"""One figure per validity sweep, each drawn from the stored answers: valid share against noise and depth,
mask time against vocabulary size, the probability the mask removed step by step, the work counter against
the lesson's formula, and retry's attempts against 1/p."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter

from structbench.errors import MissingRows
from structbench.report.figures.common import (
    dodge,
    draw_retry,
    figure_rows,
    has_masks,
    legend_below,
    retry_points,
    strategies_in,
    tasks_in,
    valid_share,
)
from structbench.report.figures.style import (
    INK,
    MARKER_NAMES,
    MUTED,
    NOTE,
    PERCENT,
    PURPLE,
    SOFT,
    STRATEGY_COLORS,
    STRATEGY_LABELS,
    STRATEGY_MARKERS,
    drawn_in_style,
)


def _retry_cap(df: pd.DataFrame) -> str:
    """The title's "; retry gives up after N tries" when the sweep ran retry, else nothing."""
    retry_cap = df.loc[df["strategy"] == "retry", "max_attempts"]
    return f"; retry gives up after {int(retry_cap.max())} tries" if not retry_cap.empty else ""


def _title_and_legend(fig: plt.Figure, ax, title: str) -> None:
    """A sweep figure's frame: the title on top, one legend of `ax`'s series along the bottom."""
    handles, labels = ax.get_legend_handles_labels()
    fig.suptitle(title, fontsize=11)
    fig.legend(handles, labels, frameon=False, loc="lower center", ncol=len(labels), bbox_to_anchor=(0.5, -0.02))
    fig.tight_layout(rect=(0, 0.07, 1, 1))


@drawn_in_style
def fig_sweep_noise(df: pd.DataFrame) -> plt.Figure:
    """Valid share vs model noise, per task and strategy, with 95% Wilson intervals."""
    df = df[df["kind"] == "validity"] if "kind" in df else df
    if df.empty:
        raise MissingRows("no validity answers")
    tasks = tasks_in(df)
    strategies = strategies_in(df)
    noises = sorted(df["noise"].unique())
    step = min(np.diff(noises)) if len(noises) > 1 else 1.0
    shift = dodge(strategies, 0.1 * step)
    fig, axes = plt.subplots(1, len(tasks), figsize=(5.2 * len(tasks), 3.9), sharey=True, squeeze=False)
    for ax, task in zip(axes[0], tasks):
        for s in strategies:
            g = df[(df["task"] == task) & (df["strategy"] == s)]
            if g.empty:
                continue
            pts = pd.DataFrame([{"noise": n, **valid_share(h["category"])} for n, h in g.groupby("noise", sort=True)])
            ax.errorbar(pts["noise"] + shift[s], pts["share"], yerr=[pts["share"] - pts["lo"], pts["hi"] - pts["share"]],
                        fmt=STRATEGY_MARKERS.get(s, "o") + "-", color=STRATEGY_COLORS.get(s, PURPLE), ms=4.5, lw=1.3,
                        capsize=2, label=STRATEGY_LABELS.get(s, s), mfc="white" if s == "naive" else None)
        ax.axvline(1.0, color=MUTED, lw=0.8, ls=":", zorder=0)
        ax.text(1.0, 0.02, " lesson", color=SOFT, fontsize=7.5, va="bottom")
        n = int(df[df["task"] == task].groupby(["strategy", "noise"]).size().max())
        ax.set_title(f"{task} ({n} answers per point)", fontsize=10)
        ax.set_xlabel("model noise σ (std. dev. of the logit noise)")
        ax.set_ylim(-0.02, 1.04)
        ax.yaxis.set_major_formatter(PERCENT)
    axes[0][0].set_ylabel("share of answers valid (95% CI)")
    experiment = df["experiment"].iloc[0]
    _title_and_legend(fig, axes[0][0],
                      f"Valid share as the model gets noisier (experiment {experiment}{_retry_cap(df)})")
    return fig


@drawn_in_style
def fig_sweep_depth(df: pd.DataFrame) -> plt.Figure:
    """Valid share vs nested-schema depth per strategy (95% Wilson intervals); beside it, how long the answers got."""
    if df.empty:
        raise MissingRows("no answers")
    strategies = strategies_in(df)
    shift = dodge(strategies, 0.1)
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(10.5, 4.0), gridspec_kw={"width_ratios": [3, 2]})
    for s in strategies:
        g = df[df["strategy"] == s]
        rows = []
        for d, h in g.groupby("schema_depth", sort=True):
            tokens = h["n_tokens"].to_numpy(dtype=float)
            rows.append({"depth": d, **valid_share(h["category"]), "tokens": tokens.mean(), "max": tokens.max()})
        pts = pd.DataFrame(rows)
        style = dict(color=STRATEGY_COLORS.get(s, PURPLE), ms=4.5, lw=1.3, label=STRATEGY_LABELS.get(s, s))
        ax.errorbar(pts["depth"] + shift[s], pts["share"], yerr=[pts["share"] - pts["lo"], pts["hi"] - pts["share"]],
                    fmt=STRATEGY_MARKERS.get(s, "o") + "-", capsize=2, **style)
        ax2.errorbar(pts["depth"] + shift[s], pts["tokens"], yerr=[np.zeros(len(pts)), pts["max"] - pts["tokens"]],
                     fmt=STRATEGY_MARKERS.get(s, "o") + "-", capsize=2, **style)
    depths = sorted(df["schema_depth"].unique())
    budget = int(df["max_tokens"].max())
    cut = int((df["category"] == "cut_off").sum())
    n = int(df.groupby(["strategy", "schema_depth"]).size().max())
    ax2.axhline(budget, color=INK, lw=1, ls="--")
    ax2.text(depths[0], budget * 0.97, f"token budget: {budget}", va="top", fontsize=8)
    ax2.set_ylim(0, budget * 1.08)
    for a in (ax, ax2):
        a.set_xticks(depths)
        a.set_xlabel("schema nesting depth (levels)")
    ax.set_ylim(-0.02, 1.04)
    ax.yaxis.set_major_formatter(PERCENT)
    ax.set_ylabel("share of answers valid (95% CI)")
    ax.set_title(f"Valid share ({n} answers per point)", fontsize=10)
    ax2.set_ylabel("answer length (tokens)")
    ax2.set_title(f"Mean length, whisker to the longest ({cut} cut off)", fontsize=10)
    _title_and_legend(fig, ax, f"Deeper schemas: longer answers, more chances to break{_retry_cap(df)}")
    return fig


@drawn_in_style
def fig_sweep_vocab_mask_time(df: pd.DataFrame) -> plt.Figure:
    """Mask time per step vs vocabulary size, per task and masking strategy: median with a p95 whisker."""
    df = df[has_masks(df["mask_us"])]
    if df.empty:
        raise MissingRows("no answers with mask timings (unconstrained answers build no masks)")
    tasks = tasks_in(df)
    strategies = strategies_in(df)
    factor = {s: 1.0 + 0.06 * (i - (len(strategies) - 1) / 2) for i, s in enumerate(strategies)}
    fig, axes = plt.subplots(1, len(tasks), figsize=(4.4 * len(tasks) + 0.6, 3.9), sharey=True, squeeze=False)
    for ax, task in zip(axes[0], tasks):
        for s in strategies:
            g = df[(df["task"] == task) & (df["strategy"] == s)]
            if g.empty:
                continue
            rows = []
            for size, h in g.groupby("vocab_size", sort=True):
                steps = np.concatenate([np.asarray(v, dtype=float) for v in h["mask_us"]])
                rows.append({"size": size, "median": float(np.median(steps)), "p95": float(np.percentile(steps, 95))})
            pts = pd.DataFrame(rows)
            ax.errorbar(pts["size"] * factor[s], pts["median"], yerr=[np.zeros(len(pts)), pts["p95"] - pts["median"]],
                        fmt=STRATEGY_MARKERS.get(s, "o") + "-", color=STRATEGY_COLORS.get(s, PURPLE), ms=5, lw=1.3,
                        capsize=3, label=f"{STRATEGY_LABELS.get(s, s)}: median, whisker to p95")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(task, fontsize=10)
        ax.set_xlabel("vocabulary size |V| (tokens, log scale)")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    axes[0][0].set_ylabel("mask time per step (µs, log scale)")
    experiment = df["experiment"].iloc[0]
    _title_and_legend(fig, axes[0][0], f"Mask time per decoding step as the vocabulary grows (experiment {experiment})")
    return fig


@drawn_in_style
def fig_sweep_removed_mass(df: pd.DataFrame, min_answers: int = 20) -> plt.Figure:
    """Mean probability mass the mask removed at each step index, per task, noise and masking strategy."""
    masked = df[has_masks(df["mask_us"])]
    if masked.empty:
        raise MissingRows("no masked answers (strategies naive or tabled)")
    tasks = tasks_in(masked)
    noises = sorted(masked["noise"].unique())
    cmap = plt.get_cmap("viridis")
    noise_color = {n: cmap(0.1 + 0.75 * i / max(1, len(noises) - 1)) for i, n in enumerate(noises)}
    strategies = strategies_in(masked)
    fig, axes = plt.subplots(1, len(tasks), figsize=(5.4 * len(tasks), 3.9), sharey=True, squeeze=False)
    for ax, task in zip(axes[0], tasks):
        for noise in noises:
            for s in strategies:
                g = masked[(masked["task"] == task) & (masked["noise"] == noise) & (masked["strategy"] == s)]
                if g.empty:
                    continue
                width = max(len(v) for v in g["removed_mass"])
                grid = np.full((len(g), width), np.nan)
                for i, v in enumerate(g["removed_mass"]):
                    grid[i, : len(v)] = v
                count = np.sum(~np.isnan(grid), axis=0)
                keep = count >= min(min_answers, len(g))
                steps = np.arange(width)[keep]
                mean = np.nanmean(grid[:, keep], axis=0)
                if s == "tabled":
                    ax.plot(steps, mean, "-", color=noise_color[noise], lw=2.2, alpha=0.85)
                else:
                    ax.plot(steps, mean, STRATEGY_MARKERS.get(s, "o"), color=noise_color[noise], ms=4.5, mew=1.1,
                            mfc="none" if STRATEGY_MARKERS.get(s) != "x" else None)
        ax.set_title(task, fontsize=10)
        ax.set_xlabel("decoding step (token index in the answer)")
        ax.set_ylim(-0.02, 1.0)
        ax.yaxis.set_major_formatter(PERCENT)
    axes[0][0].set_ylabel("mean probability removed by the mask")
    # One entry per noise, drawn as that colour's marks appear: the tabled line, the other strategies' markers.
    marked = [s for s in strategies if s != "tabled"]
    marker = STRATEGY_MARKERS.get(marked[0], "o") if marked else None
    handles = [Line2D([], [], color=noise_color[n], lw=2.2 if "tabled" in strategies else 0, marker=marker, ms=4.5,
                      mew=1.1, mfc="none" if marker not in (None, "x") else None, label=f"noise {n:g}") for n in noises]
    key = (["line: tabled mask"] if "tabled" in strategies else []) + [
        f"{MARKER_NAMES.get(STRATEGY_MARKERS.get(s, 'o'), 'marker')}: {s} mask" for s in marked]
    unmasked = sorted(set(df["strategy"]) - set(strategies))
    note = (f"Steps with at least {min_answers} answers. " +
            (f"{' and '.join(unmasked)}: no mask, nothing removed. " if unmasked else "") +
            ("naive and tabled build the same masks, so their points coincide." if {"naive", "tabled"} <= set(strategies) else ""))
    fig.suptitle("How much of the model's belief the mask throws away, step by step", fontsize=11)
    fig.legend(handles=handles, frameon=False, loc="lower center", ncol=len(handles), bbox_to_anchor=(0.5, 0.03),
               title=f"colour: model noise σ; {', '.join(key)}", title_fontsize=8)
    fig.text(0.5, 0.0, note, ha="center", va="bottom", fontsize=7.5, color=NOTE)
    fig.tight_layout(rect=(0, 0.14, 1, 1))
    return fig


@drawn_in_style
def fig_sweep_work_vs_formula(df: pd.DataFrame) -> plt.Figure:
    """The measured work counter against the lesson's mask_cost prediction: log-log, with y = x."""
    rows = figure_rows(df, "work")
    fig, ax = plt.subplots(figsize=(6.6, 5.0))
    sizes = sorted(rows["vocab_size"].unique())
    size_ms = {v: 5 + 3 * i for i, v in enumerate(sizes)}
    task_marker = {"age": "o", "person": "s"}
    for (task, strategy), g in rows.groupby(["task", "strategy"], sort=True):
        g = g.sort_values("vocab_size")
        color = STRATEGY_COLORS.get(strategy, PURPLE)
        ax.plot(g["x"], g["y"], "-", color=color, lw=0.8, alpha=0.5, zorder=2)
        for _, r in g.iterrows():
            ax.plot(r["x"], r["y"], task_marker.get(task, "D"), color=color, ms=size_ms[r["vocab_size"]],
                    mfc=color if task == "age" else "white", mew=1.4, zorder=3)
    lo = min(rows["x"].min(), rows["y"].min()) / 2
    hi = max(rows["x"].max(), rows["y"].max()) * 2
    ax.plot([lo, hi], [lo, hi], color=INK, lw=1, ls="--", zorder=1)
    ax.text(lo * 1.5, lo * 1.5 * 1.9, "y = x: work as predicted", rotation=45, rotation_mode="anchor", fontsize=8,
            color=INK)
    ax.text(hi / 1.5, lo * 1.5, "below the line:\nless work than predicted", ha="right", va="bottom", fontsize=8,
            color=NOTE)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_aspect("equal")
    ax.set_xlabel("predicted by mask_cost (character steps, log scale)")
    ax.set_ylabel("measured work counter (steps + table reads, log scale)")
    ax.set_title("Mask work: the counter against the lesson's formula", fontsize=11)
    handles = [Line2D([], [], color=STRATEGY_COLORS[s], lw=0, marker="o", ms=7, label=f"{s} strategy")
               for s in ("naive", "tabled") if s in set(rows["strategy"])]
    handles += [Line2D([], [], color=INK, lw=0, marker=task_marker.get(t, "D"), ms=7, mfc=INK if t == "age" else "white",
                       label=f"task {t}") for t in sorted(rows["task"].unique())]
    handles += [Line2D([], [], color=MUTED, lw=0, marker="o", ms=size_ms[v], label=f"|V| = {v:,}") for v in sizes]
    ax.legend(handles=handles, frameon=False, loc="upper left", bbox_to_anchor=(1.02, 1.0), labelspacing=1.0)
    return fig


@drawn_in_style
def fig_sweep_retry(df: pd.DataFrame) -> plt.Figure:
    """Measured retry attempts vs p from the sweep, against 1/p and against 1/p capped by the attempt limit."""
    df = df[df["kind"] == "validity"] if "kind" in df else df
    pts = retry_points(df)
    caps = sorted(pts["max_attempts"].unique())
    top = max(12.0, math.ceil(float(pts["att_hi"].max()) + 0.5))
    fig, ax = plt.subplots(figsize=(7, 4.4))
    p = np.linspace(0.01, 1.0, 400)
    inv = 1 / p
    ax.plot(p, np.where(inv <= top, inv, np.nan), color=INK, lw=1.4, label="1/p, the formula (no limit)")
    for cap, ls in zip(caps, ("--", "-.", ":")):
        capped = (1 - (1 - p) ** cap) / p  # mean tries when retry gives up after `cap`
        ax.plot(np.concatenate([[0.0], p]), np.concatenate([[cap], capped]), color=INK, lw=1, ls=ls,
                label=f"(1 − (1 − p)^{cap}) / p: the mean when retry gives up after {cap} tries")
    draw_retry(ax, pts, top)
    experiment = df["experiment"].iloc[0]
    ax.set_title(f"Retry attempts against 1/p (experiment {experiment})")
    gave_up = int(pts["gave_up"].sum())
    legend_below(ax, ncol=1, y=-0.16, title=f"{gave_up} of {int(pts['n'].sum())} retry answers gave up",
                  title_fontsize=7.5)
    return fig
