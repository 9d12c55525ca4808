"""Figures drawn only from stored rows: the lesson's seven, and one per sweep.

    python -m structbench.report.figures [--results-dir results] [--out results/figures]

Every `fig_<name>(df)` takes the DataFrame `structbench.bench.store.read_results`
returned for one experiment and draws it; nothing here reruns an experiment.
Each figure is written as SVG and PNG, byte-identical from one run to the next
(fixed SVG hash salt, no dates in the metadata). A figure whose experiment has
no rows is skipped with one line naming the sweep to run; the others are still
made.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from matplotlib.ticker import FuncFormatter, PercentFormatter  # noqa: E402

from structbench.bench.store import read_results  # noqa: E402
from structbench.errors import MissingRows
from structbench.lm.vocab import EOS  # noqa: E402
from structbench.report.summary import wilson_interval  # noqa: E402

BLUE, RED, GREEN, AMBER, MUTED, INK = "#2563eb", "#dc2626", "#059669", "#d97706", "#9ca3af", "#111827"
PURPLE = "#7c3aed"
STRATEGY_COLORS = {"none": MUTED, "naive": RED, "tabled": BLUE, "retry": GREEN,
                   "xgrammar": "#0f766e", "llguidance": AMBER, "outlines_core": PURPLE}
STRATEGY_LABELS = {"none": "none (unconstrained)", "naive": "naive mask", "tabled": "tabled mask", "retry": "retry"}
STRATEGY_MARKERS = {"none": "o", "naive": "x", "tabled": "s", "retry": "^"}
STRATEGY_ORDER = ("none", "naive", "tabled", "retry")
TASK_COLORS = {"age": BLUE, "person": RED}
CATEGORIES = (("valid", GREEN, "valid"), ("chatter", AMBER, "chatter before the JSON"),
              ("broken", RED, "broken inside"), ("cut_off", MUTED, "cut off by the token budget"))
Z95 = 1.959963984540054

STYLE = {
    "svg.hashsalt": "structbench-figures",  # fixed ids in the SVG: reruns are byte-identical
    "svg.fonttype": "path",
    "figure.dpi": 100,
    "savefig.dpi": 150,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titlesize": 11,
    "axes.labelsize": 9.5,
    "xtick.labelsize": 8.5,
    "ytick.labelsize": 8.5,
    "legend.fontsize": 8,
    "font.family": "DejaVu Sans",
}
matplotlib.rcParams.update(STYLE)

PERCENT = PercentFormatter(1.0, decimals=0)


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def _rows(df: pd.DataFrame, figure: str, series: str | None = None) -> pd.DataFrame:
    out = df[df["figure"] == figure]
    if series is not None:
        out = out[out["series"] == series]
    if out.empty:
        raise MissingRows(f"no rows with figure={figure!r}" + (f", series={series!r}" if series else ""))
    return out


def _share(categories: pd.Series) -> dict:
    """Valid share of a group of answers with its 95% Wilson interval."""
    n, k = len(categories), int((categories == "valid").sum())
    lo, hi = wilson_interval(k, n)
    share = k / n if n else math.nan
    # Rounding can leave the share a hair outside its interval at 0 and n: keep the error bars non-negative.
    return {"n": n, "valid": k, "share": share, "lo": min(lo, share), "hi": max(hi, share)}


def _mean_ci(values) -> tuple[float, float, float]:
    """Mean and its normal-approximation 95% interval."""
    v = np.asarray(values, dtype=float)
    mean = float(v.mean())
    half = Z95 * float(v.std(ddof=1)) / math.sqrt(len(v)) if len(v) > 1 else 0.0
    return mean, mean - half, mean + half


def _legend_below(ax_or_fig, handles=None, ncol=4, y=-0.18, **kw):
    """A legend under the axes, outside the data."""
    kwargs = dict(frameon=False, loc="upper center", ncol=ncol, bbox_to_anchor=(0.5, y), **kw)
    return ax_or_fig.legend(handles=handles, **kwargs) if handles is not None else ax_or_fig.legend(**kwargs)


def _strategies(df: pd.DataFrame) -> list[str]:
    present = set(df["strategy"].dropna())
    return [s for s in STRATEGY_ORDER if s in present] + sorted(present - set(STRATEGY_ORDER))


def _token_label(token: str, spaces: bool = False) -> str:
    if token == EOS:
        return "end"
    return repr(_visible(token)) if spaces else repr(token)


def _visible(text: str) -> str:
    """State text with its spaces shown (two states differ only by a trailing space)."""
    return text.replace(" ", "\u2423")


def _fit_p(lengths, valid, n) -> float:
    """Maximum-likelihood p for share = p ** length over binomial counts (a fine grid: no SciPy)."""
    grid = np.linspace(0.5, 0.99999, 50_000)
    pn = grid[:, None] ** np.asarray(lengths, dtype=float)[None, :]
    pn = np.clip(pn, 1e-300, 1 - 1e-15)
    k, m = np.asarray(valid, dtype=float), np.asarray(n, dtype=float)
    loglik = (k * np.log(pn) + (m - k) * np.log1p(-pn)).sum(axis=1)
    return float(grid[int(np.argmax(loglik))])


def _settings_key(config_json, trial_id) -> str:
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
    parts["key"] = [_settings_key(c, t) for c, t in zip(parts["config_json"], parts["trial_id"])]
    parts = parts.sort_values(["key", "created_at", "trial_id"], na_position="first", kind="stable")
    keep = set(parts.drop_duplicates("key", keep="last")["trial_id"])
    dropped = len(parts) - len(keep)
    return (df[df["trial_id"].isin(keep)].reset_index(drop=True) if dropped else df), dropped


# ---------------------------------------------------------------------------
# the lesson's seven figures
# ---------------------------------------------------------------------------


def fig_validity_vs_length(df: pd.DataFrame) -> plt.Figure:
    """p ** n curves from the formula, against the toy model's measured valid share by answer length."""
    curves = _rows(df, "validity_vs_length")
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
    pts = pd.DataFrame([{"x": x, **_share(g["category"])} for x, g in measured.groupby("x", sort=True)])
    p_fit = _fit_p(pts["x"], pts["valid"], pts["n"])
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
    _legend_below(ax, ncol=2, y=-0.17)
    return fig


def fig_masked_step(df: pd.DataFrame) -> plt.Figure:
    """The model's first-step probabilities before and after the age mask, top four tokens."""
    rows = _rows(df, "masked_step")
    before = rows[rows["series"] == "before"].set_index("x")
    after = rows[rows["series"] == "after"].set_index("x")
    if before.empty or after.empty:
        raise MissingRows("masked_step needs series before and after")
    top = before["y"].sort_values(ascending=False, kind="stable").index[:4]
    b, a = before.loc[top, "y"].to_numpy(), after.reindex(top)["y"].fillna(0).to_numpy()
    fig, ax = plt.subplots(figsize=(6, 3.4))
    x = np.arange(len(top))
    ax.bar(x - 0.2, b, 0.4, color=MUTED, label="what the model wanted")
    ax.bar(x + 0.2, a, 0.4, color=BLUE, label="after the mask")
    for xi, (bv, av) in enumerate(zip(b, a)):
        ax.text(xi - 0.2, bv + 0.02, f"{bv:.2f}", ha="center", fontsize=8)
        ax.text(xi + 0.2, av + 0.02, f"{av:.2f}", ha="center", fontsize=8, color=BLUE)
    ax.set_xticks(x, [_token_label(t) for t in before.loc[top, "label"]])
    ax.set_xlabel("candidate first token (the four the model liked most)")
    ax.set_ylabel("probability of the first token")
    ax.set_ylim(0, 1.15)
    ax.set_title('First token of {"age": 42}: the mask removes the chatter')
    ax.legend(frameon=False, loc="upper right")
    return fig


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
            bars.append({"name": f"{task}\n{name}", "n": len(g), **{c: int(counts.get(c, 0)) for c, _, _ in CATEGORIES}})
    fig, ax = plt.subplots(figsize=(7.5, 3.8))
    names = [b["name"] for b in bars]
    bottom = np.zeros(len(bars))
    for key, color, label in CATEGORIES:
        share = np.array([b[key] / b["n"] for b in bars])
        ax.bar(names, share, bottom=bottom, color=color, label=label, width=0.62)
        bottom += share
    for i, b in enumerate(bars):
        valid = b["valid"] / b["n"]
        ax.text(i, valid / 2, f"{valid:.1%}".replace(".0%", "%"), ha="center", va="center", color="white",
                fontweight="bold", fontsize=9)
        if b["cut_off"]:
            ax.text(i, 1.015, f"{b['cut_off']} of {b['n']} cut off", ha="center", va="bottom", fontsize=8, color="#4b5563")
    ns = sorted({b["n"] for b in bars})
    ax.set_ylabel(f"share of {ns[0]} answers" if len(ns) == 1 else "share of answers")
    ax.set_xlabel("task and decoding (noise 1.0, the lesson's setting)")
    ax.set_ylim(0, 1.1)
    ax.yaxis.set_major_formatter(PERCENT)
    ax.set_title("Constrained decoding: every finished answer is valid")
    ax.legend(frameon=False, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return fig


def fig_mask_table(df: pd.DataFrame) -> plt.Figure:
    """The age pattern's mask table: states x (tokens allowed anywhere, plus 'Sure' and 'x')."""
    rows = _rows(df, "mask_table")
    table = rows.pivot_table(index="sample", columns="x", values="y", aggfunc="max").sort_index().sort_index(axis=1)
    tokens = rows.drop_duplicates("x").set_index("x")["label"]
    states = rows.drop_duplicates("sample").set_index("sample")["series"].sort_index()
    shown = [j for j in table.columns if table[j].max() > 0]
    by_token = {t: j for j, t in tokens.items()}
    shown += [by_token[t] for t in ("Sure", "x") if t in by_token and by_token[t] not in shown]
    fig, ax = plt.subplots(figsize=(9, 4.6))
    ax.imshow(table[shown].to_numpy(), cmap="Blues", vmin=0, vmax=1.3, aspect="auto", interpolation="nearest")
    ax.set_xticks(range(len(shown)), [_token_label(tokens[j], spaces=True) for j in shown], rotation=90, fontsize=8)
    ax.set_yticks(range(len(states)), [_visible(s) for s in states], fontsize=8)
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


def fig_distortion(df: pd.DataFrame) -> plt.Figure:
    """Masked decoding vs the model's own odds among valid answers (the two-step model)."""
    rows = _rows(df, "distortion")
    cond = rows[rows["series"] == "conditional"].set_index("label")["y"]
    masked = rows[rows["series"] == "masked"].set_index("label")["y"]
    if cond.empty or masked.empty:
        raise MissingRows("distortion needs series conditional and masked")
    answers = sorted(set(cond.index) | set(masked.index))
    c, m = cond.reindex(answers).fillna(0).to_numpy(), masked.reindex(answers).fillna(0).to_numpy()
    fig, ax = plt.subplots(figsize=(5.8, 3.6))
    x = np.arange(len(answers))
    ax.bar(x - 0.2, c, 0.4, color=MUTED, label="model's own odds among valid answers")
    ax.bar(x + 0.2, m, 0.4, color=BLUE, label="what token-by-token masking produces")
    for xi, (cv, mv) in enumerate(zip(c, m)):
        ax.text(xi - 0.2, cv + 0.02, f"{cv:.2f}", ha="center", fontsize=8.5)
        ax.text(xi + 0.2, mv + 0.02, f"{mv:.2f}", ha="center", fontsize=8.5, color=BLUE)
    ax.set_xticks(x, answers)
    ax.set_xlabel("valid answer (two tokens, must end in y)")
    ax.set_ylim(0, 1.25)
    ax.set_ylabel("probability of the answer")
    ax.set_title("Valid, but not what the model preferred")
    ax.legend(frameon=False, fontsize=8, loc="upper center", ncol=1)
    return fig


def fig_mask_cost(df: pd.DataFrame) -> plt.Figure:
    """The lesson's mask_cost lines: check every token at every step vs build a table once."""
    rows = _rows(df, "mask_cost")
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


def _retry_points(df: pd.DataFrame) -> pd.DataFrame:
    """Per task x noise: p = valid share of unconstrained answers, and the retry answers' mean attempts."""
    out = []
    for (task, noise), g in df.groupby(["task", "noise"], sort=True):
        none, retry = g[g["strategy"] == "none"], g[g["strategy"] == "retry"]
        if none.empty or retry.empty:
            continue
        p = _share(none["category"])
        mean, lo, hi = _mean_ci(retry["attempts"])
        cap = int(retry["max_attempts"].max())
        out.append({"task": task, "noise": noise, "p": p["share"], "p_lo": p["lo"], "p_hi": p["hi"],
                    "attempts": mean, "att_lo": lo, "att_hi": hi, "max_attempts": cap, "n": len(retry),
                    "gave_up": int(((retry["attempts"] >= cap) & (retry["category"] != "valid")).sum())})
    if not out:
        raise MissingRows("no task x noise with both strategy none and strategy retry answers")
    return pd.DataFrame(out)


def _draw_retry(ax, pts: pd.DataFrame, top: float) -> None:
    for task, g in pts.groupby("task", sort=True):
        color = TASK_COLORS.get(task, PURPLE)
        ax.errorbar(g["p"], g["attempts"], xerr=[g["p"] - g["p_lo"], g["p_hi"] - g["p"]],
                    yerr=[g["attempts"] - g["att_lo"], g["att_hi"] - g["attempts"]], fmt="o", color=color,
                    ms=5, capsize=2.5, lw=1, zorder=4,
                    label=f"{task}: measured mean tries vs measured p (noise {g['noise'].min():g}–{g['noise'].max():g}, 95% CI)")
    ax.set_xlim(-0.02, 1.02)  # a point at p = 0 (never valid) stays clear of the axis
    ax.set_ylim(0, top)
    ax.xaxis.set_major_formatter(PERCENT)
    ax.set_xlabel("chance a single try is valid, p (valid share of unconstrained answers)")
    ax.set_ylabel("average tries until valid")


def fig_retry(df: pd.DataFrame) -> plt.Figure:
    """1/p against the retry strategy's measured attempts at the measured p, per task."""
    curve = _rows(df, "retry", "1/p").sort_values("x")
    pts = _retry_points(_rows(df, "retry", "measured"))
    top = max(12.0, math.ceil(float(pts["att_hi"].max()) + 0.5))
    fig, ax = plt.subplots(figsize=(7, 4.4))
    y = curve["y"].to_numpy()
    # Past the top the curve leaves the chart, below the title.
    ax.plot(curve["x"], np.where(y <= top, y, np.nan), color=INK, lw=1.4, label="1/p, the formula")
    _draw_retry(ax, pts, top)
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
    _legend_below(ax, ncol=1, y=-0.16, title=note, title_fontsize=7.5)
    return fig


# ---------------------------------------------------------------------------
# sweep figures
# ---------------------------------------------------------------------------


def _dodge(strategies, width):
    k = len(strategies)
    return {s: (i - (k - 1) / 2) * width for i, s in enumerate(strategies)}


def fig_sweep_noise(df: pd.DataFrame) -> plt.Figure:
    """Valid share vs model noise, per task and strategy, with 95% Wilson intervals."""
    df = df[df["kind"] == "validity"] if "kind" in df else df
    if df.empty:
        raise MissingRows("no validity answers")
    tasks = sorted(df["task"].unique(), key=lambda t: (t not in TASK_COLORS, t))
    strategies = _strategies(df)
    noises = sorted(df["noise"].unique())
    step = min(np.diff(noises)) if len(noises) > 1 else 1.0
    shift = _dodge(strategies, 0.1 * step)
    fig, axes = plt.subplots(1, len(tasks), figsize=(5.2 * len(tasks), 3.9), sharey=True, squeeze=False)
    for ax, task in zip(axes[0], tasks):
        for s in strategies:
            g = df[(df["task"] == task) & (df["strategy"] == s)]
            if g.empty:
                continue
            pts = pd.DataFrame([{"noise": n, **_share(h["category"])} for n, h in g.groupby("noise", sort=True)])
            ax.errorbar(pts["noise"] + shift[s], pts["share"], yerr=[pts["share"] - pts["lo"], pts["hi"] - pts["share"]],
                        fmt=STRATEGY_MARKERS.get(s, "o") + "-", color=STRATEGY_COLORS.get(s, PURPLE), ms=4.5, lw=1.3,
                        capsize=2, label=STRATEGY_LABELS.get(s, s), mfc="white" if s == "naive" else None)
        ax.axvline(1.0, color=MUTED, lw=0.8, ls=":", zorder=0)
        ax.text(1.0, 0.02, " lesson", color="#6b7280", fontsize=7.5, va="bottom")
        n = int(df[df["task"] == task].groupby(["strategy", "noise"]).size().max())
        ax.set_title(f"{task} ({n} answers per point)", fontsize=10)
        ax.set_xlabel("model noise σ (std. dev. of the logit noise)")
        ax.set_ylim(-0.02, 1.04)
        ax.yaxis.set_major_formatter(PERCENT)
    axes[0][0].set_ylabel("share of answers valid (95% CI)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    retry_cap = df.loc[df["strategy"] == "retry", "max_attempts"]
    suffix = f"; retry gives up after {int(retry_cap.max())} tries" if not retry_cap.empty else ""
    experiment = df["experiment"].iloc[0]
    fig.suptitle(f"Valid share as the model gets noisier (experiment {experiment}{suffix})", fontsize=11)
    fig.legend(handles, labels, frameon=False, loc="lower center", ncol=len(labels), bbox_to_anchor=(0.5, -0.02))
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    return fig


def fig_sweep_depth(df: pd.DataFrame) -> plt.Figure:
    """Valid share vs nested-schema depth per strategy (95% Wilson intervals); beside it, how long the answers got."""
    if df.empty:
        raise MissingRows("no answers")
    strategies = _strategies(df)
    shift = _dodge(strategies, 0.1)
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(10.5, 4.0), gridspec_kw={"width_ratios": [3, 2]})
    for s in strategies:
        g = df[df["strategy"] == s]
        rows = []
        for d, h in g.groupby("schema_depth", sort=True):
            tokens = h["n_tokens"].to_numpy(dtype=float)
            rows.append({"depth": d, **_share(h["category"]), "tokens": tokens.mean(), "max": tokens.max()})
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
    handles, labels = ax.get_legend_handles_labels()
    retry_cap = df.loc[df["strategy"] == "retry", "max_attempts"]
    suffix = f"; retry gives up after {int(retry_cap.max())} tries" if not retry_cap.empty else ""
    fig.suptitle(f"Deeper schemas: longer answers, more chances to break{suffix}", fontsize=11)
    fig.legend(handles, labels, frameon=False, loc="lower center", ncol=len(labels), bbox_to_anchor=(0.5, -0.02))
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    return fig


def fig_sweep_vocab_mask_time(df: pd.DataFrame) -> plt.Figure:
    """Mask time per step vs vocabulary size, per task and masking strategy: median with a p95 whisker."""
    df = df[df["mask_us"].map(lambda v: v is not None and len(v) > 0)]
    if df.empty:
        raise MissingRows("no answers with mask timings (unconstrained answers build no masks)")
    tasks = sorted(df["task"].unique(), key=lambda t: ({"age": 0, "person": 1}.get(t, 2), t))
    strategies = _strategies(df)
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
    handles, labels = axes[0][0].get_legend_handles_labels()
    experiment = df["experiment"].iloc[0]
    fig.suptitle(f"Mask time per decoding step as the vocabulary grows (experiment {experiment})", fontsize=11)
    fig.legend(handles, labels, frameon=False, loc="lower center", ncol=len(labels), bbox_to_anchor=(0.5, -0.02))
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    return fig


def fig_sweep_removed_mass(df: pd.DataFrame, min_answers: int = 20) -> plt.Figure:
    """Mean probability mass the mask removed at each step index, per task, noise and masking strategy."""
    masked = df[df["mask_us"].map(lambda v: v is not None and len(v) > 0)]
    if masked.empty:
        raise MissingRows("no masked answers (strategies naive or tabled)")
    tasks = sorted(masked["task"].unique(), key=lambda t: ({"age": 0, "person": 1}.get(t, 2), t))
    noises = sorted(masked["noise"].unique())
    cmap = plt.get_cmap("viridis")
    noise_color = {n: cmap(0.1 + 0.75 * i / max(1, len(noises) - 1)) for i, n in enumerate(noises)}
    strategies = [s for s in _strategies(masked)]
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
    handles = [Line2D([], [], color=noise_color[n], lw=2.2, label=f"noise {n:g}") for n in noises]
    for s in strategies:
        if s == "tabled":
            handles.append(Line2D([], [], color=INK, lw=2.2, label="tabled mask (line)"))
        else:
            handles.append(Line2D([], [], color=INK, ls="none", marker=STRATEGY_MARKERS.get(s, "o"),
                                  mfc="none" if STRATEGY_MARKERS.get(s) != "x" else None, label=f"{s} mask (markers)"))
    unmasked = sorted(set(df["strategy"]) - set(strategies))
    note = (f"Steps with at least {min_answers} answers. " +
            (f"{' and '.join(unmasked)}: no mask, nothing removed. " if unmasked else "") +
            ("naive and tabled build the same masks, so their points coincide." if {"naive", "tabled"} <= set(strategies) else ""))
    fig.suptitle("How much of the model's belief the mask throws away, step by step", fontsize=11)
    fig.legend(handles=handles, frameon=False, loc="lower center", ncol=len(handles), bbox_to_anchor=(0.5, 0.03))
    fig.text(0.5, 0.0, note, ha="center", va="bottom", fontsize=7.5, color="#4b5563")
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    return fig


def fig_sweep_work_vs_formula(df: pd.DataFrame) -> plt.Figure:
    """The measured work counter against the lesson's mask_cost prediction: log-log, with y = x."""
    rows = _rows(df, "work")
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
            color="#4b5563")
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


def fig_sweep_retry(df: pd.DataFrame) -> plt.Figure:
    """Measured retry attempts vs p from the sweep, against 1/p and against 1/p capped by the attempt limit."""
    df = df[df["kind"] == "validity"] if "kind" in df else df
    pts = _retry_points(df)
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
    _draw_retry(ax, pts, top)
    experiment = df["experiment"].iloc[0]
    ax.set_title(f"Retry attempts against 1/p (experiment {experiment})")
    gave_up = int(pts["gave_up"].sum())
    _legend_below(ax, ncol=1, y=-0.16, title=f"{gave_up} of {int(pts['n'].sum())} retry answers gave up",
                  title_fontsize=7.5)
    return fig


SPEED_ORDER = ("naive", "tabled", "xgrammar", "llguidance", "outlines_core")


def fig_speed(df: pd.DataFrame) -> plt.Figure:
    """The speed sweep: mask time per step (median, whisker to p95) and compile time, per task and strategy."""
    rows = df[df["kind"] == "speed"]
    if rows.empty:
        raise MissingRows("no speed rows")
    tasks = [t for t in ("age", "person", "nested", "json_mode") if t in set(rows["task"])] + sorted(
        set(rows["task"]) - {"age", "person", "nested", "json_mode"})
    strategies = [s for s in SPEED_ORDER if s in set(rows["strategy"])]
    vocabs = sorted(rows["vocab"].unique())
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.6))
    width = 0.8 / max(len(strategies), 1)
    for k, strategy in enumerate(strategies):
        xs, med, p95, comp = [], [], [], []
        for i, task in enumerate(tasks):
            g = rows[(rows["task"] == task) & (rows["strategy"] == strategy)]
            if g.empty:
                continue
            steps = np.concatenate([np.asarray(v, dtype=float) for v in g["mask_us"]])
            xs.append(i - 0.4 + width * (k + 0.5))
            med.append(float(np.median(steps)))
            p95.append(float(np.percentile(steps, 95)))
            comp.append(float(g["compile_ms"].median()))
        color = STRATEGY_COLORS.get(strategy, INK)
        left.bar(xs, med, width, color=color, label=strategy)
        left.errorbar(xs, med, yerr=[np.zeros(len(med)), np.array(p95) - np.array(med)], fmt="none", ecolor=INK,
                      elinewidth=0.8, capsize=2)
        right.bar(xs, comp, width, color=color, label=strategy)
    depth = rows.loc[rows["task"] == "nested", "schema_depth"]
    labels = [f"nested (depth {int(depth.iloc[0])})" if t == "nested" and len(depth) else t for t in tasks]
    for ax in (left, right):
        ax.set_yscale("log")
        ax.set_xticks(range(len(tasks)), labels)
        ax.set_xlabel("task")
    left.set_ylabel("mask time per step, µs (log scale)")
    left.set_title("Mask per step: median, whisker to p95")
    right.set_ylabel("compile time, ms (log scale)")
    right.set_title("Compile (tables or index included)")
    handles = [Patch(color=STRATEGY_COLORS.get(s, INK), label=s) for s in strategies]
    fig.legend(handles=handles, frameon=False, loc="lower center", ncol=len(handles), bbox_to_anchor=(0.5, 0.0))
    fig.suptitle(f"Speed on the {', '.join(vocabs)} vocabulary ({int(rows['vocab_size'].iloc[0]):,} tokens): "
                 f"walking one valid answer per task", fontsize=11)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    return fig


MODEL_COLORS = {"toy": AMBER, "smollm2": BLUE}
MODEL_LABELS = {"toy": "toy model (lesson's vocabulary)", "smollm2": "SmolLM2-135M-Instruct (real)"}
TEMPERATURE_MARKERS = {0.0: "o", 1.0: "s"}


def _answer_removed(values) -> float:
    """One answer's mean probability removed per step."""
    v = np.asarray(values if values is not None else [], dtype=float)
    return float(v.mean()) if len(v) else math.nan


def fig_realmodel(df: pd.DataFrame) -> plt.Figure:
    """The realmodel sweep: per task, valid share (95% Wilson intervals) and the mean probability the mask removed
    per step, by strategy, the toy model beside the real one, greedy and sampled; and for the tasks whose facts never
    state the age, the share of answers that wrote one anyway (an invented age)."""
    from structbench.bench.tasks import NO_AGE_TASKS, invented_age

    df = df[df["kind"] == "validity"]
    if df.empty:
        raise MissingRows("no validity answers")
    order = ("age", "person", "nested", "strict_no_age", "nullable_age", "json_mode")
    tasks = [t for t in order if t in set(df["task"])] + sorted(set(df["task"]) - set(order))
    strategies = _strategies(df)
    models = [m for m in ("toy", "smollm2") if m in set(df["model"])] + sorted(set(df["model"]) - {"toy", "smollm2"})
    temps = sorted(df["temperature"].fillna(1.0).unique())
    series = [(m, t) for m in models for t in temps]
    shift = _dodge(series, 0.8 / max(len(series), 1))
    x_of = {s: i for i, s in enumerate(strategies)}
    no_age = [t for t in tasks if t in NO_AGE_TASKS]
    rows = 3 if no_age else 2
    fig, axes = plt.subplots(rows, len(tasks), figsize=(3.3 * len(tasks) + 0.8, 2.9 * rows + 0.9), squeeze=False,
                             sharey="row")
    masked = set()
    for col, task in enumerate(tasks):
        for (model, temp) in series:
            g = df[(df["task"] == task) & (df["model"] == model) & (df["temperature"].fillna(1.0) == temp)]
            if g.empty:
                continue
            style = dict(color=MODEL_COLORS.get(model, PURPLE), marker=TEMPERATURE_MARKERS.get(temp, "D"), ms=5,
                         mfc=MODEL_COLORS.get(model, PURPLE) if temp == 0 else "white", ls="none", capsize=2, lw=1.1)
            valid, removed, invented = [], [], []
            for strategy, h in g.groupby("strategy", sort=False):
                x = x_of[strategy] + shift[(model, temp)]
                valid.append({"x": x, **_share(h["category"])})
                if h["mask_us"].map(lambda v: v is not None and len(v) > 0).any():  # a masked strategy
                    masked.add(strategy)
                    mean, lo, hi = _mean_ci([_answer_removed(v) for v in h["removed_mass"]])
                    removed.append({"x": x, "mean": mean, "lo": max(lo, 0.0), "hi": hi})
                if task in NO_AGE_TASKS:
                    invented.append({"x": x, **_share(h["text"].map(lambda t: "valid" if invented_age(t) else "no"))})
            v = pd.DataFrame(valid)
            axes[0][col].errorbar(v["x"], v["share"], yerr=[v["share"] - v["lo"], v["hi"] - v["share"]], **style)
            if removed:
                r = pd.DataFrame(removed)
                axes[1][col].errorbar(r["x"], r["mean"], yerr=[r["mean"] - r["lo"], r["hi"] - r["mean"]], **style)
            if invented:
                i = pd.DataFrame(invented)
                axes[2][col].errorbar(i["x"], i["share"], yerr=[i["share"] - i["lo"], i["hi"] - i["share"]], **style)
        n = int(df[df["task"] == task].groupby(["model", "temperature", "strategy"]).size().max())
        axes[0][col].set_title(f"{task} ({n} answers per point)", fontsize=10)
    labels = {0: "share of answers valid (95% CI)", 1: "mean probability removed\nper step (95% CI)",
              2: "share with an invented\ninteger age (95% CI)"}
    for r in range(rows):
        for col, task in enumerate(tasks):
            ax = axes[r][col]
            if r == 2 and task not in NO_AGE_TASKS:
                ax.set_visible(False)
                continue
            ax.set_xticks(range(len(strategies)), strategies, fontsize=8)
            ax.set_xlim(-0.6, len(strategies) - 0.4)
            ax.set_ylim(-0.03, 1.05)
            ax.yaxis.set_major_formatter(PERCENT)
            ax.set_xlabel("strategy")
            if col == 0 or (r == 2 and task == no_age[0]):
                ax.set_ylabel(labels[r])
                ax.tick_params(labelleft=True)  # the row's first drawn panel shows the shared scale
    unmasked = [s for s in strategies if s not in masked]
    handles = [Line2D([], [], color=MODEL_COLORS.get(m, PURPLE), lw=0, marker="o", ms=6, label=MODEL_LABELS.get(m, m))
               for m in models]
    handles += [Line2D([], [], color=INK, lw=0, marker=TEMPERATURE_MARKERS.get(t, "D"), ms=6,
                       mfc=INK if t == 0 else "white", label="greedy (temperature 0)" if t == 0 else f"temperature {t:g}")
                for t in temps]
    fig.legend(handles=handles, frameon=False, loc="lower center", ncol=len(handles), bbox_to_anchor=(0.5, 0.015))
    vocab = df.loc[df["model"] != "toy", "vocab_size"]
    toy_noise = sorted(df.loc[df["model"] == "toy", "noise"].dropna().unique())
    note = ((f"{' and '.join(unmasked)}: no mask, nothing removed (not drawn in the second row). " if unmasked else "") +
            (f"Toy model at noise {', '.join(f'{x:g}' for x in toy_noise)}; " if toy_noise else "") +
            (f"SmolLM2 on its own {int(vocab.iloc[0]):,}-token vocabulary; " if len(vocab) else "") +
            "each real answer asks about its own facts; retry gives up after "
            f"{int(df['max_attempts'].max())} tries; budget {int(df['max_tokens'].max())} tokens.")
    fig.text(0.5, 0.0, note, ha="center", va="bottom", fontsize=7.5, color="#4b5563")
    fig.suptitle("A real model beside the toy: valid share, what the mask removed, invented ages", fontsize=11)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    return fig


COVERAGE_ORDER = ("tabled", "llguidance", "xgrammar", "outlines_core")


def fig_coverage(df: pd.DataFrame) -> plt.Figure:
    """The coverage sweep: declared coverage per subset and strategy, invalid-accepted and valid-rejected
    counts, and the distributions of compile time per schema and mask time per step."""
    rows = df[df["kind"] == "coverage"]
    if rows.empty:
        raise MissingRows("no coverage rows")
    strategies = [s for s in COVERAGE_ORDER if s in set(rows["strategy"])] + sorted(set(rows["strategy"]) - set(COVERAGE_ORDER))
    subsets = sorted(rows["subset"].dropna().unique())
    schemas = rows.drop_duplicates(["strategy", "schema_file"])
    fig, (a, b, c) = plt.subplots(1, 3, figsize=(15, 5.2))
    width = 0.8 / max(len(strategies), 1)
    for k, s in enumerate(strategies):
        shares, bad = [], []
        for sub in subsets:
            g = schemas[(schemas["strategy"] == s) & (schemas["subset"] == sub)]
            shares.append((g["outcome"] == "ok").mean() if len(g) else np.nan)
            inst = rows[(rows["strategy"] == s) & (rows["subset"] == sub)]
            bad.append(int((inst["category"] == "invalid_accepted").sum()))
        xs = np.arange(len(subsets)) - 0.4 + width * (k + 0.5)
        n_schemas = schemas[schemas["strategy"] == s]["schema_file"].nunique()
        a.bar(xs, shares, width, color=STRATEGY_COLORS.get(s, INK),
              label=f"{'ours (tabled)' if s == 'tabled' else s}: {n_schemas:,} schemas")
        for x, share, n in zip(xs, shares, bad):
            if n:
                a.text(x, (share if share == share else 0) + 0.02, f"{n}✗", ha="center", fontsize=6.5, color=RED, rotation=90)
    a.set_xticks(range(len(subsets)), subsets, rotation=20, fontsize=8)
    a.set_ylim(0, 1.3)
    a.set_yticks([0, 0.2, 0.4, 0.6, 0.8, 1.0])
    a.yaxis.set_major_formatter(PERCENT)
    a.set_ylabel("schemas compiled (declared coverage)")
    a.set_xlabel("MaskBench subset")
    a.set_title("Coverage per subset (✗: invalid instances accepted)")
    a.legend(frameon=False, fontsize=7.5, ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.2))
    compile_ms = [schemas[(schemas["strategy"] == s) & (schemas["outcome"] == "ok")]["compile_ms"].dropna().to_numpy()
                  for s in strategies]
    masks = [np.concatenate([np.asarray(m, dtype=float) for m in rows[rows["strategy"] == s]["mask_us"]
                             if m is not None and len(m)] or [np.array([np.nan])]) for s in strategies]
    for ax, data, label, title in ((b, compile_ms, "compile time per schema, ms (log)", "Compile"),
                                   (c, masks, "mask time per step, µs (log)", "Mask per step (first accepted walk)")):
        data = [d[np.isfinite(d) & (d > 0)] if len(d) else np.array([1.0]) for d in data]
        parts = ax.boxplot([d if len(d) else np.array([np.nan]) for d in data], whis=(5, 95), showfliers=False,
                           patch_artist=True, widths=0.6)
        for patch, s in zip(parts["boxes"], strategies):
            patch.set_facecolor(STRATEGY_COLORS.get(s, INK))
            patch.set_alpha(0.75)
        ax.set_yscale("log")
        ax.set_xticks(range(1, len(strategies) + 1), strategies, fontsize=8)
        ax.set_ylabel(label)
        ax.set_xlabel("strategy")
        ax.set_title(title + " (box: quartiles, whiskers 5-95%)", fontsize=10)
    vocab = ", ".join(sorted(rows["vocab"].dropna().unique()))
    fig.suptitle(f"JSON Schema coverage on the MaskBench corpus ({schemas['schema_file'].nunique():,} schemas, "
                 f"{vocab} vocabulary, whitespace {', '.join(sorted(rows['whitespace'].dropna().unique()))})",
                 fontsize=11)
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    return fig


# ---------------------------------------------------------------------------
# the command
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class FigureSpec:
    name: str
    sources: tuple[str, ...]  # experiments to draw from, first with rows wins
    draw: Callable[[pd.DataFrame], plt.Figure]
    lesson: bool = False


FIGURES = (
    FigureSpec("validity_vs_length", ("lesson",), fig_validity_vs_length, True),
    FigureSpec("masked_step", ("lesson",), fig_masked_step, True),
    FigureSpec("validity_bars", ("validity",), fig_validity_bars, True),
    FigureSpec("mask_table", ("lesson",), fig_mask_table, True),
    FigureSpec("distortion", ("lesson",), fig_distortion, True),
    FigureSpec("mask_cost", ("lesson",), fig_mask_cost, True),
    FigureSpec("retry", ("lesson",), fig_retry, True),
    FigureSpec("sweep_noise", ("noise", "validity"), fig_sweep_noise),
    FigureSpec("sweep_depth", ("depth",), fig_sweep_depth),
    FigureSpec("sweep_vocab_mask_time", ("vocab",), fig_sweep_vocab_mask_time),
    FigureSpec("speed", ("speed",), fig_speed),
    FigureSpec("coverage", ("coverage",), fig_coverage),
    FigureSpec("sweep_removed_mass", ("validity",), fig_sweep_removed_mass),
    FigureSpec("sweep_work_vs_formula", ("lesson",), fig_sweep_work_vs_formula),
    FigureSpec("sweep_retry", ("noise", "validity"), fig_sweep_retry),
    FigureSpec("realmodel", ("realmodel",), fig_realmodel),
)
LESSON_FIGURES = tuple(s.name for s in FIGURES if s.lesson)


FORMATS = ("svg", "png")
# Nothing in the files that changes from run to run: no date in the SVG, no software version in the PNG.
METADATA = {"svg": {"Date": None}, "png": {"Software": None}}


def save(fig: plt.Figure, out: Path, name: str, formats=FORMATS) -> list[Path]:
    """Write the figure as SVG and PNG, byte-identical for the same rows."""
    paths = []
    with matplotlib.rc_context({"svg.hashsalt": STYLE["svg.hashsalt"]}):
        for fmt in formats:
            path = out / f"{name}.{fmt}"
            fig.savefig(path, format=fmt, bbox_inches="tight", metadata=METADATA[fmt])
            paths.append(path)
    return paths


def make_figures(results_dir="results", out=None, names=None, log=print, formats=FORMATS) -> dict:
    """Draw every figure whose data is stored; return {"made": [...], "skipped": {name: reason}}."""
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
    parser.add_argument("--only", nargs="+", metavar="NAME", choices=[s.name for s in FIGURES],
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


if __name__ == "__main__":
    sys.exit(main())
