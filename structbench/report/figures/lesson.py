"""The lesson's seven figures, each drawn from the points the `lesson` experiment stored (and, for the
bars, the `validity` answers): p ** n, one masked step, answers by category, the mask table, distortion,
mask cost and retry."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter

from structbench.bench.referees import CATEGORIES
from structbench.errors import MissingRows
from structbench.report.figures.common import (
    before_and_after_bars,
    draw_retry,
    figure_rows,
    legend_below,
    retry_points,
    token_label,
    valid_share,
    visible,
)
from structbench.report.figures.style import (
    AMBER,
    BLUE,
    CATEGORY_COLORS,
    CATEGORY_LABELS,
    GREEN,
    INK,
    MUTED,
    NOTE,
    PERCENT,
    PURPLE,
    RED,
    drawn_in_style,
)


def fit_p(lengths, valid, n) -> float:
    """Maximum-likelihood p for share = p ** length over binomial counts (a fine grid: no SciPy)."""
    grid = np.linspace(0.5, 0.99999, 50_000)
    pn = grid[:, None] ** np.asarray(lengths, dtype=float)[None, :]
    pn = np.clip(pn, 1e-300, 1 - 1e-15)
    k, m = np.asarray(valid, dtype=float), np.asarray(n, dtype=float)
    loglik = (k * np.log(pn) + (m - k) * np.log1p(-pn)).sum(axis=1)
    return float(grid[int(np.argmax(loglik))])


@drawn_in_style
def fig_validity_vs_length(df: pd.DataFrame) -> plt.Figure:
    """p ** n curves from the formula, against the toy model's measured valid share by answer length."""
    curves = figure_rows(df, "validity_vs_length")
    measured = curves[curves["series"] == "measured"]
    curves = curves[curves["series"].str.startswith("p=")]
    if curves.empty or measured.empty:
        raise MissingRows("validity_vs_length needs both the p^n curves (part=formulas) and the measured copies (part=length)")
    fig, ax = plt.subplots(figsize=(7, 4.2))
    palette = (GREEN, BLUE, AMBER, RED, PURPLE)
    order = sorted(curves["series"].unique(), key=lambda s: -float(s[2:]))
    for color, series in zip(palette * 3, order):
        c = curves[curves["series"] == series].sort_values("x")
        ax.plot(c["x"], c["y"], color=color, lw=1.6, label=f"pⁿ, p = {c['label'].iloc[0]}")
    # The lesson's worked example, read from the stored curve.
    p98 = curves[(curves["series"] == "p=0.98") & (curves["x"] == 10)]
    if not p98.empty:
        y10 = float(p98["y"].iloc[0])
        ax.plot([10], [y10], "o", color=INK, ms=4, zorder=4)
        ax.annotate(f"10 tokens at 98%: {y10:.2f}", (10, y10), (60, 0.73), fontsize=8, ha="left", va="center",
                    arrowprops=dict(arrowstyle="-", color=MUTED), zorder=3,
                    bbox=dict(facecolor="white", edgecolor="none", pad=1))
    pts = pd.DataFrame([{"x": x, **valid_share(g["category"])} for x, g in measured.groupby("x", sort=True)])
    p_fit = fit_p(pts["x"], pts["valid"], pts["n"])
    xs = np.geomspace(1, 200, 300)
    ax.plot(xs, p_fit ** xs, color=INK, ls="--", lw=1.2, label=f"pⁿ fitted to the measured points: p = {p_fit:.3f}")
    ax.errorbar(pts["x"], pts["share"], yerr=[pts["share"] - pts["lo"], pts["hi"] - pts["share"]], fmt="o",
                color=INK, mfc="white", ms=5, capsize=2.5, lw=1, zorder=5,
                label=f"measured: toy model copying digits ({int(pts['n'].iloc[0])} answers per length, 95% CI)")
    ax.set_xscale("log")
    ax.set_xlim(1, 210)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_xticks([1, 2, 5, 10, 20, 50, 100, 200])
    ax.set_ylim(0, 1.05)
    ax.yaxis.set_major_formatter(PERCENT)
    ax.set_xlabel("answer length n (tokens, end token included; log scale)")
    ax.set_ylabel("share of answers valid")
    ax.set_title("Every token is a chance to break the format")
    legend_below(ax, ncol=2, y=-0.17)
    return fig


SHOWN_FROM = 0.01  # a token below 1% either side would be a pair of bars both labelled 0.00


@drawn_in_style
def fig_masked_step(df: pd.DataFrame) -> plt.Figure:
    """The model's first-step probabilities before and after the age mask: its likeliest tokens (up to four,
    each with at least 1%) and every token the mask allows; the rest summed in the axis label."""
    rows = figure_rows(df, "masked_step")
    before = rows[rows["series"] == "before"].set_index("x")
    after = rows[rows["series"] == "after"].set_index("x")
    if before.empty or after.empty:
        raise MissingRows("masked_step needs series before and after")
    by_belief = before["y"].sort_values(ascending=False, kind="stable")
    top = by_belief.iloc[:4]
    wanted = set(top.index[top.to_numpy() >= SHOWN_FROM]) | set(after.index[after["y"].to_numpy() > 0])
    shown = [t for t in by_belief.index if t in wanted]
    rest = by_belief.index.difference(shown)
    b, a = before.loc[shown, "y"].to_numpy(), after.reindex(shown)["y"].fillna(0).to_numpy()
    fig, ax = plt.subplots(figsize=(6, 3.4))
    x = before_and_after_bars(ax, b, a, ("what the model wanted", "after the mask"), fontsize=8)
    ax.set_xticks(x, [token_label(t) for t in before.loc[shown, "label"]])
    ax.set_xlim(-0.6, max(len(shown), 2) - 0.4)
    ax.set_xlabel(f"first token: the model's likeliest (1% or more) and the allowed ones\n"
                  f"the other {len(rest)} tokens: {before.loc[rest, 'y'].sum():.2f} together before the mask, "
                  f"{after.reindex(rest)['y'].fillna(0).sum():.2f} after")
    ax.set_ylabel("probability of the first token")
    ax.set_ylim(0, 1.15)
    ax.set_title('First token of {"age": 42}: the mask removes the chatter')
    ax.legend(frameon=False, loc="upper right")
    return fig


@drawn_in_style
def fig_validity_bars(df: pd.DataFrame) -> plt.Figure:
    """Unconstrained (strategy none) vs constrained (tabled) answers at the lesson's noise 1.0, by category."""
    at = df[np.isclose(df["noise"], 1.0) & df["strategy"].isin(["none", "tabled"])]
    bars = []
    for task in ("age", "person"):
        for strategy, name in (("none", "unconstrained"), ("tabled", "constrained")):
            g = at[(at["task"] == task) & (at["strategy"] == strategy)]
            if g.empty:
                raise MissingRows(f"validity_bars needs task={task} strategy={strategy} at noise 1.0")
            counts = g["category"].value_counts()
            bars.append({"name": f"{task}\n{name}", "n": len(g), **{c: int(counts.get(c, 0)) for c in CATEGORIES}})
    fig, ax = plt.subplots(figsize=(7.5, 3.8))
    names = [b["name"] for b in bars]
    bottom = np.zeros(len(bars))
    for category in CATEGORIES:
        part = np.array([b[category] / b["n"] for b in bars])
        ax.bar(names, part, bottom=bottom, color=CATEGORY_COLORS[category], label=CATEGORY_LABELS[category], width=0.62)
        bottom += part
    for i, b in enumerate(bars):
        valid = b["valid"] / b["n"]
        ax.text(i, valid / 2, f"{valid:.1%}".replace(".0%", "%"), ha="center", va="center", color="white",
                fontweight="bold", fontsize=9)
        if b["cut_off"]:
            ax.text(i, 1.015, f"{b['cut_off']} of {b['n']} cut off", ha="center", va="bottom", fontsize=8, color=NOTE)
    ns = sorted({b["n"] for b in bars})
    ax.set_ylabel(f"share of {ns[0]} answers" if len(ns) == 1 else "share of answers")
    ax.set_xlabel("task and decoding (noise 1.0, the lesson's setting)")
    ax.set_ylim(0, 1.1)
    ax.yaxis.set_major_formatter(PERCENT)
    ax.set_title("Constrained decoding: every finished answer is valid")
    ax.legend(frameon=False, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return fig


@drawn_in_style
def fig_mask_table(df: pd.DataFrame) -> plt.Figure:
    """The age pattern's mask table: states x (tokens allowed anywhere, plus 'Sure' and 'x')."""
    rows = figure_rows(df, "mask_table")
    table = rows.pivot_table(index="sample", columns="x", values="y", aggfunc="max").sort_index().sort_index(axis=1)
    tokens = rows.drop_duplicates("x").set_index("x")["label"]
    states = rows.drop_duplicates("sample").set_index("sample")["series"].sort_index()
    shown = [j for j in table.columns if table[j].max() > 0]
    by_token = {t: j for j, t in tokens.items()}
    shown += [by_token[t] for t in ("Sure", "x") if t in by_token and by_token[t] not in shown]
    fig, ax = plt.subplots(figsize=(9, 4.6))
    ax.imshow(table[shown].to_numpy(), cmap="Blues", vmin=0, vmax=1.3, aspect="auto", interpolation="nearest")
    ax.set_xticks(range(len(shown)), [token_label(tokens[j], spaces=True) for j in shown], rotation=90, fontsize=8)
    ax.set_yticks(range(len(states)), [visible(s) for s in states], fontsize=8)
    ax.set_xticks(np.arange(-0.5, len(shown), 1), minor=True)
    ax.set_yticks(np.arange(-0.5, len(states), 1), minor=True)
    ax.grid(which="minor", color="white", lw=0.8)
    ax.tick_params(which="minor", length=0)
    for side in ax.spines.values():
        side.set_visible(False)
    ax.set_xlabel("token (every token allowed somewhere, plus two that never are; ␣ = space)")
    ax.set_ylabel("state, named by the text that reaches it")
    ax.set_title("The age pattern's mask table, computed once before generation")
    cmap = plt.get_cmap("Blues")
    ax.legend(handles=[Patch(color=cmap(1 / 1.3), label="allowed"), Patch(facecolor=cmap(0.0), edgecolor=MUTED, lw=0.5, label="masked out")],
              frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return fig


@drawn_in_style
def fig_distortion(df: pd.DataFrame) -> plt.Figure:
    """Masked decoding vs the model's own odds among valid answers (the two-step model)."""
    rows = figure_rows(df, "distortion")
    cond = rows[rows["series"] == "conditional"].set_index("label")["y"]
    masked = rows[rows["series"] == "masked"].set_index("label")["y"]
    if cond.empty or masked.empty:
        raise MissingRows("distortion needs series conditional and masked")
    answers = sorted(set(cond.index) | set(masked.index))
    c, m = cond.reindex(answers).fillna(0).to_numpy(), masked.reindex(answers).fillna(0).to_numpy()
    fig, ax = plt.subplots(figsize=(5.8, 3.6))
    x = before_and_after_bars(ax, c, m, ("model's own odds among valid answers", "what token-by-token masking produces"),
                              fontsize=8.5)
    ax.set_xticks(x, answers)
    ax.set_xlabel("valid answer (two tokens, must end in y)")
    ax.set_ylim(0, 1.25)
    ax.set_ylabel("probability of the answer")
    ax.set_title("Valid, but not what the model preferred")
    ax.legend(frameon=False, fontsize=8, loc="upper center", ncol=1)
    return fig


@drawn_in_style
def fig_mask_cost(df: pd.DataFrame) -> plt.Figure:
    """The lesson's mask_cost lines: check every token at every step vs build a table once."""
    rows = figure_rows(df, "mask_cost")
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    for series, color in (("naive", RED), ("table", BLUE)):
        r = rows[rows["series"] == series].sort_values("x")
        if r.empty:
            raise MissingRows(f"mask_cost needs series {series}")
        ax.plot(r["x"], r["y"] / 1e6, "o-", color=color, ms=4, label=r["label"].iloc[0])
    ax.set_xlabel("answers generated with one schema")
    ax.set_ylabel("work (millions of character steps)")
    ax.set_title("Mask cost: every step vs a table built once\n|V| = 128,000, 200 tokens per answer, 50 states",
                 fontsize=10.5)
    ax.set_ylim(bottom=0)
    ax.legend(frameon=False, loc="upper left")
    return fig


@drawn_in_style
def fig_retry(df: pd.DataFrame) -> plt.Figure:
    """1/p against the retry strategy's measured attempts at the measured p, per task."""
    curve = figure_rows(df, "retry", "1/p").sort_values("x")
    pts = retry_points(figure_rows(df, "retry", "measured"))
    top = max(12.0, math.ceil(float(pts["att_hi"].max()) + 0.5))
    fig, ax = plt.subplots(figsize=(7, 4.4))
    y = curve["y"].to_numpy()
    # Past the top the curve leaves the chart, below the title.
    ax.plot(curve["x"], np.where(y <= top, y, np.nan), color=INK, lw=1.4, label="1/p, the formula")
    draw_retry(ax, pts, top)
    for task, g in pts.groupby("task", sort=True):
        lesson = g[np.isclose(g["noise"], 1.0)]
        if not lesson.empty:
            r = lesson.iloc[0]
            # Text where the chart is empty: right of the curve for a likely answer, low on the left for an unlikely one.
            where = (min(r["p"] + 0.05, 0.7), r["attempts"] + 2.2) if r["p"] > 0.4 else (0.01, 0.9)
            ax.annotate(f"{task}, noise 1 (the lesson's setting):\np = {r['p']:.3f}, {r['attempts']:.2f} tries; 1/p = {1 / r['p']:.2f}",
                        (r["p"], r["attempts"]), where, fontsize=7.5, ha="left", va="center",
                        arrowprops=dict(arrowstyle="-", color=MUTED), zorder=3,
                        bbox=dict(facecolor="white", edgecolor="none", pad=1))
    caps = sorted(pts["max_attempts"].unique())
    gave_up = int(pts["gave_up"].sum())
    ax.set_title("Retrying is cheap only when the model is usually right")
    note = f"retry gives up after {', '.join(str(c) for c in caps)} tries; {gave_up} of {int(pts['n'].sum())} retry answers did"
    legend_below(ax, ncol=1, y=-0.16, title=note, title_fontsize=7.5)
    return fig
