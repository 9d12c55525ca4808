"""The real model's distortion (kind=realdistortion rows): per task, the law of the answers' age under
unconstrained sampling, masking (LCD) and SMC side by side, and below them the estimate of KL(q̃‖p*) with
its 95% interval. Every number comes from structbench.report.real_distortion, i.e. from stored rows."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from structbench.report.figures.style import (
    INK,
    NOTE,
    STRATEGY_COLORS,
    STRATEGY_LABELS,
    drawn_in_style,
)
from structbench.report.real_distortion import (
    FIELD,
    LCD,
    NO_ANSWER,
    Z_SAMPLERS,
    law,
    summarize,
)

ORDER = ("none",) + LCD + Z_SAMPLERS
SHOWN = 6  # values drawn per task (by their largest share under any strategy); the rest are "other"
OTHER = f"other {FIELD}s"
MODEL_NAMES = {"smollm2": "SmolLM2", "toy": "the toy model"}


def _categories(values: dict) -> list[str]:
    """The values drawn, most shared first, then 'other' and 'no valid answer' when they occur."""
    laws = {s: law(v) for s, v in values.items()}
    seen = {v for shares in laws.values() for v in shares} - {NO_ANSWER}
    top = sorted(seen, key=lambda v: (-max(shares.get(v, 0.0) for shares in laws.values()), v))
    drawn = top[:SHOWN]
    if len(top) > SHOWN:
        drawn.append(OTHER)
    if any(NO_ANSWER in shares for shares in laws.values()):
        drawn.append(NO_ANSWER)
    return drawn


def _draw_law(ax, summary) -> None:
    strategies = [s for s in ORDER if s in summary.values]
    categories = _categories(summary.values)
    height = 0.8 / len(strategies)
    y = np.arange(len(categories))
    for i, strategy in enumerate(strategies):
        shares = law(summary.values[strategy])
        kept = set(categories) - {OTHER}
        row = [shares.get(c, 0.0) if c != OTHER else sum(v for k, v in shares.items() if k not in kept)
               for c in categories]
        n = len(summary.values[strategy])
        label = f"{STRATEGY_LABELS.get(strategy, strategy)}" + (
            f", N = {summary.particles}" if strategy in Z_SAMPLERS and summary.particles else "")
        ax.barh(y - 0.4 + (i + 0.5) * height, row, height, color=STRATEGY_COLORS.get(strategy, INK),
                label=f"{label} ({n} runs)")
    ax.set_yticks(y, categories)
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("share of answers")
    ax.set_ylabel(f"the answer's {FIELD}")
    f = summary.field_shift
    if np.isnan(f.value):  # no masked or no SMC answers to compare
        ax.set_title(summary.label, fontsize=9.5)
    else:
        ax.set_title(f"{summary.label}: TV(LCD, SMC) = {f.value:.2f}\n(by chance alone ≈ {f.null_mean:.2f}; "
                     f"p = {f.p_value:.2g})", fontsize=9.5)


def _draw_estimates(ax, summaries) -> None:
    shown = [s for s in summaries if s.estimate is not None]
    y = np.arange(len(shown))
    for i, s in enumerate(shown):
        lo, hi = s.estimate.interval
        ax.errorbar([s.estimate.kl], [i], xerr=[[s.estimate.kl - lo], [hi - s.estimate.kl]], fmt="o", color=INK,
                    capsize=4, lw=1.4)
        lcd = next(x for x in LCD if x in s.tokens)
        smc = next(x for x in Z_SAMPLERS if x in s.tokens)
        ax.annotate(f"{s.estimate.kl:.2f} nats [{lo:.2f}, {hi:.2f}]   (log Ẑ = {s.estimate.log_z.value:.2f}; tokens "
                    f"per answer: LCD {s.tokens[lcd]:.1f}, SMC {s.tokens[smc]:.1f})",
                    (hi, i), xytext=(8, 0), textcoords="offset points", va="center", fontsize=8.5, color=NOTE)
    ax.axvline(0, color=NOTE, lw=0.8, ls="--")
    ax.set_yticks(y, [s.label for s in shown])
    ax.set_ylabel("task")
    ax.invert_yaxis()
    ax.set_ylim(len(shown) - 0.5, -0.5)
    right = max(s.estimate.interval[1] for s in shown)
    left = min(0.0, min(s.estimate.interval[0] for s in shown))
    ax.set_xlim(left - 0.5, right + (right - left) + 1)  # room for the labels right of the intervals
    ax.set_xlabel("KL(q̃‖p*) in nats, between token sequences: log Ẑ − log Q − mean Σ log Z_t (95% interval)")
    ax.set_title("Masking's distortion, estimated from SMC's Ẑ and the masked runs' kept masses", fontsize=10)


@drawn_in_style
def fig_real_distortion(df: pd.DataFrame) -> plt.Figure:
    summaries = summarize(df)
    n = len(summaries)
    fig = plt.figure(figsize=(4.3 * n, 7.2))
    grid = fig.add_gridspec(2, n, height_ratios=[2.2, 1], hspace=0.55, wspace=0.75)
    for i, summary in enumerate(summaries):
        _draw_law(fig.add_subplot(grid[0, i]), summary)
    handles, labels = fig.axes[0].get_legend_handles_labels()
    estimates = fig.add_subplot(grid[1, :])
    if any(s.estimate is not None for s in summaries):
        _draw_estimates(estimates, summaries)
    else:
        estimates.remove()
    fig.legend(handles, labels, loc="upper center", ncol=len(labels), frameon=False, bbox_to_anchor=(0.5, 1.0))
    models = sorted({MODEL_NAMES.get(s.model, s.model) for s in summaries})
    fig.suptitle(f"How far masking moves {' and '.join(models)}'s answers: the {FIELD} each strategy writes", y=1.05,
                 fontsize=11.5)
    return fig
