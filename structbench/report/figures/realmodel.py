"""The realmodel sweep's figure: the toy model beside a real one (SmolLM2), greedy and sampled.

Top row, one panel per task: the valid share by strategy. Bottom row: the mean probability the mask removed
per step (one panel, the masking strategies only, since the others remove nothing) and, for each task whose
facts never state the age, the share of answers that wrote one anyway (an invented age). Every panel drawn
holds points: a measure that does not apply to a task or strategy gets no place on an axis.
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from structbench.bench.tasks import NO_AGE_TASKS, invented_age
from structbench.errors import MissingRows
from structbench.report.figures.common import (
    dodge,
    has_masks,
    mean_ci,
    models_in,
    strategies_in,
    tasks_in,
    valid_share,
)
from structbench.report.figures.style import (
    INK,
    MODEL_COLORS,
    MODEL_LABELS,
    NOTE,
    PERCENT,
    PURPLE,
    TEMPERATURE_MARKERS,
    drawn_in_style,
)


def answer_removed(values) -> float:
    """One answer's mean probability removed per step."""
    v = np.asarray(values if values is not None else [], dtype=float)
    return float(v.mean()) if len(v) else math.nan


def _errorbars(ax, points: list[dict], style: dict, value: str = "share") -> None:
    if points:
        p = pd.DataFrame(points)
        ax.errorbar(p["x"], p[value], yerr=[p[value] - p["lo"], p["hi"] - p[value]], **style)


def _share_axis(ax, ticks: list[str], xlabel: str) -> None:
    ax.set_xticks(range(len(ticks)), ticks, fontsize=8)
    ax.set_xlim(-0.6, len(ticks) - 0.4)
    ax.set_ylim(-0.03, 1.05)
    ax.yaxis.set_major_formatter(PERCENT)
    ax.set_xlabel(xlabel)


@drawn_in_style
def fig_realmodel(df: pd.DataFrame) -> plt.Figure:
    """The realmodel sweep: per task, valid share (95% Wilson intervals) and the mean probability the mask removed
    per step, by strategy, the toy model beside the real one, greedy and sampled; and for the tasks whose facts never
    state the age, the share of answers that wrote one anyway (an invented age)."""
    df = df[df["kind"] == "validity"]
    if df.empty:
        raise MissingRows("no validity answers")
    df = df.assign(temperature=df["temperature"].fillna(1.0), masked=has_masks(df["mask_us"]))
    tasks, strategies, models = tasks_in(df), strategies_in(df), models_in(df)
    masked = [s for s in strategies if df.loc[df["strategy"] == s, "masked"].any()]
    no_age = [t for t in tasks if t in NO_AGE_TASKS]
    temps = sorted(df["temperature"].unique())
    series = [(m, t) for m in models for t in temps]
    shift = dodge(series, 0.8 / max(len(series), 1))
    # The mask panel's x: each task under each masking strategy (the task alone when one strategy masks).
    removed_x = [(t, s) for t in tasks for s in masked if not df[(df["task"] == t) & (df["strategy"] == s)].empty]

    bottom = len(removed_x) > 0 or len(no_age) > 0
    fig = plt.figure(figsize=(3.3 * len(tasks) + 0.8, 2.9 * (2 if bottom else 1) + 1.1))
    grid = fig.add_gridspec(2 if bottom else 1, 1, hspace=0.45)
    top_axes = grid[0].subgridspec(1, len(tasks), wspace=0.12).subplots(sharey=True, squeeze=False)[0]
    removed_ax, invented_axes = None, {}
    if bottom:
        widths = ([max(1, len(tasks) - len(no_age))] if removed_x else []) + [1] * len(no_age)
        row = grid[1].subgridspec(1, len(widths), width_ratios=widths, wspace=0.25).subplots(squeeze=False)[0]
        if removed_x:
            removed_ax, row = row[0], row[1:]
        invented_axes = dict(zip(no_age, row))
        for ax in row[1:]:
            ax.sharey(row[0])
            ax.tick_params(labelleft=False)
    strategy_x = {s: i for i, s in enumerate(strategies)}
    for (model, temp) in series:
        color = MODEL_COLORS.get(model, PURPLE)
        style = dict(color=color, marker=TEMPERATURE_MARKERS.get(temp, "D"), ms=5, mfc=color if temp == 0 else "white",
                     ls="none", capsize=2, lw=1.1)
        removed = []
        for col, task in enumerate(tasks):
            g = df[(df["task"] == task) & (df["model"] == model) & (df["temperature"] == temp)]
            valid, invented = [], []
            for strategy, h in g.groupby("strategy", sort=False):
                x = strategy_x[strategy] + shift[(model, temp)]
                valid.append({"x": x, **valid_share(h["category"])})
                if task in invented_axes:
                    invented.append({"x": x, **valid_share(h["text"].map(lambda t: "valid" if invented_age(t) else "no"))})
                if (task, strategy) in removed_x:
                    mean, lo, hi = mean_ci([answer_removed(v) for v in h["removed_mass"]])
                    removed.append({"x": removed_x.index((task, strategy)) + shift[(model, temp)], "mean": mean,
                                    "lo": max(lo, 0.0), "hi": hi})
            _errorbars(top_axes[col], valid, style)
            if task in invented_axes:
                _errorbars(invented_axes[task], invented, style)
        if removed_ax is not None:
            _errorbars(removed_ax, removed, style, value="mean")

    for col, task in enumerate(tasks):
        n = int(df[df["task"] == task].groupby(["model", "temperature", "strategy"]).size().max())
        top_axes[col].set_title(f"{task} ({n} answers per point)", fontsize=10)
        _share_axis(top_axes[col], strategies, "strategy")
    top_axes[0].set_ylabel("share of answers valid (95% CI)")
    if removed_ax is not None:
        one = len(masked) == 1
        _share_axis(removed_ax, [t if one else f"{t}\n{s}" for t, s in removed_x], "task" if one else "task and strategy")
        removed_ax.set_title("What the mask removed" + (f" ({masked[0]})" if one else ""), fontsize=10)
        removed_ax.set_ylabel("mean probability removed\nper step (95% CI)")
    for i, (task, ax) in enumerate(invented_axes.items()):
        _share_axis(ax, strategies, "strategy")
        ax.set_title(f"{task}: invented ages", fontsize=10)
        if i == 0:
            ax.set_ylabel("share with an invented\ninteger age (95% CI)")

    handles = [Line2D([], [], color=MODEL_COLORS.get(m, PURPLE), lw=0, marker="o", ms=6, label=MODEL_LABELS.get(m, m))
               for m in models]
    handles += [Line2D([], [], color=INK, lw=0, marker=TEMPERATURE_MARKERS.get(t, "D"), ms=6,
                       mfc=INK if t == 0 else "white", label="greedy (temperature 0)" if t == 0 else f"temperature {t:g}")
                for t in temps]
    fig.legend(handles=handles, frameon=False, loc="lower center", ncol=len(handles), bbox_to_anchor=(0.5, 0.03))
    unmasked = [s for s in strategies if s not in masked]
    vocab = df.loc[df["model"] != "toy", "vocab_size"]
    toy_noise = sorted(df.loc[df["model"] == "toy", "noise"].dropna().unique())
    note = ((f"{' and '.join(unmasked)}: no mask, nothing removed. " if unmasked else "") +
            (f"Toy model at noise {', '.join(f'{x:g}' for x in toy_noise)}; " if toy_noise else "") +
            (f"SmolLM2 on its own {int(vocab.iloc[0]):,}-token vocabulary; " if len(vocab) else "") +
            "each real answer asks about its own facts; retry gives up after "
            f"{int(df['max_attempts'].max())} tries; budget {int(df['max_tokens'].max())} tokens.")
    fig.text(0.5, 0.005, note, ha="center", va="bottom", fontsize=7.5, color=NOTE)
    fig.suptitle("A real model beside the toy: valid share, what the mask removed, invented ages", fontsize=11)
    fig.subplots_adjust(left=0.07, right=0.99, top=0.92, bottom=0.14)
    return fig
