"""What the figure families share: picking a lesson figure's rows, ordering names by the package's own lists,
shares and means with their 95% intervals, the retry points, and a few drawing helpers."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from structbench.bench.settings import MODELS, TASKS
from structbench.bench.strategies import STRATEGIES
from structbench.errors import MissingRows
from structbench.lm.vocab import EOS
from structbench.report.figures.style import BLUE, MUTED, PERCENT, PURPLE, TASK_COLORS
from structbench.report.summary import Z95, wilson_interval


def figure_rows(df: pd.DataFrame, figure: str, series: str | None = None) -> pd.DataFrame:
    """The lesson's stored points for one figure (and series); MissingRows when there are none."""
    out = df[df["figure"] == figure]
    if series is not None:
        out = out[out["series"] == series]
    if out.empty:
        raise MissingRows(f"no rows with figure={figure!r}" + (f", series={series!r}" if series else ""))
    return out


def in_order(present, order) -> list:
    """The names present, in the package's order, then any others sorted."""
    present = set(present)
    return [name for name in order if name in present] + sorted(present - set(order))


def strategies_in(df: pd.DataFrame) -> list[str]:
    return in_order(df["strategy"].dropna(), STRATEGIES)


def tasks_in(df: pd.DataFrame) -> list[str]:
    return in_order(df["task"].dropna(), TASKS)


def models_in(df: pd.DataFrame) -> list[str]:
    return in_order(df["model"].dropna(), MODELS)


def has_masks(mask_us: pd.Series) -> pd.Series:
    """Which answers built masks (unconstrained ones store an empty list)."""
    return mask_us.map(lambda v: v is not None and len(v) > 0)


def valid_share(categories: pd.Series) -> dict:
    """Valid share of a group of answers with its 95% Wilson interval."""
    n, k = len(categories), int((categories == "valid").sum())
    lo, hi = wilson_interval(k, n)
    value = k / n if n else math.nan
    # Rounding can leave the share a hair outside its interval at 0 and n: keep the error bars non-negative.
    return {"n": n, "valid": k, "share": value, "lo": min(lo, value), "hi": max(hi, value)}


def mean_ci(values) -> tuple[float, float, float]:
    """Mean and its normal-approximation 95% interval."""
    v = np.asarray(values, dtype=float)
    mean = float(v.mean())
    half = Z95 * float(v.std(ddof=1)) / math.sqrt(len(v)) if len(v) > 1 else 0.0
    return mean, mean - half, mean + half


def legend_below(ax_or_fig, handles=None, ncol=4, y=-0.18, **kw):
    """A legend under the axes, outside the data."""
    kwargs = dict(frameon=False, loc="upper center", ncol=ncol, bbox_to_anchor=(0.5, y), **kw)
    return ax_or_fig.legend(handles=handles, **kwargs) if handles is not None else ax_or_fig.legend(**kwargs)


def before_and_after_bars(ax, before, after, labels: tuple[str, str], fontsize: float) -> np.ndarray:
    """Two bars per x, what the model wanted (grey) beside what came out (blue), each with its value written on
    top; returns the x positions."""
    x = np.arange(len(before))
    ax.bar(x - 0.2, before, 0.4, color=MUTED, label=labels[0])
    ax.bar(x + 0.2, after, 0.4, color=BLUE, label=labels[1])
    for xi, (bv, av) in enumerate(zip(before, after)):
        ax.text(xi - 0.2, bv + 0.02, f"{bv:.2f}", ha="center", fontsize=fontsize)
        ax.text(xi + 0.2, av + 0.02, f"{av:.2f}", ha="center", fontsize=fontsize, color=BLUE)
    return x


def dodge(names, width) -> dict:
    """Horizontal offsets that set points of the same x side by side."""
    k = len(names)
    return {s: (i - (k - 1) / 2) * width for i, s in enumerate(names)}


def visible(text: str) -> str:
    """State text with its spaces shown (two states differ only by a trailing space)."""
    return text.replace(" ", "\u2423")


def token_label(token: str, spaces: bool = False) -> str:
    if token == EOS:
        return "end"
    return repr(visible(token)) if spaces else repr(token)


def retry_points(df: pd.DataFrame) -> pd.DataFrame:
    """Per task x noise: p = valid share of unconstrained answers, and the retry answers' mean attempts."""
    out = []
    for (task, noise), g in df.groupby(["task", "noise"], sort=True):
        none, retry = g[g["strategy"] == "none"], g[g["strategy"] == "retry"]
        if none.empty or retry.empty:
            continue
        p = valid_share(none["category"])
        mean, lo, hi = mean_ci(retry["attempts"])
        cap = int(retry["max_attempts"].max())
        out.append({"task": task, "noise": noise, "p": p["share"], "p_lo": p["lo"], "p_hi": p["hi"],
                    "attempts": mean, "att_lo": lo, "att_hi": hi, "max_attempts": cap, "n": len(retry),
                    "gave_up": int(((retry["attempts"] >= cap) & (retry["category"] != "valid")).sum())})
    if not out:
        raise MissingRows("no task x noise with both strategy none and strategy retry answers")
    return pd.DataFrame(out)


def draw_retry(ax, pts: pd.DataFrame, top: float) -> None:
    """The measured mean tries against the measured p, per task, with both intervals."""
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

