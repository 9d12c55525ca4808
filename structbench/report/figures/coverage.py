"""The coverage sweep's figure: declared coverage per MaskBench subset and strategy, with the invalid instances
accepted, and the compile and first-walk mask times. The mask times are cold: ours builds each state's mask on
its first visit, so a first walk pays for building; the speed figure's walks reuse them."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from structbench.errors import MissingRows
from structbench.report.figures.common import strategies_in
from structbench.report.figures.style import (
    INK,
    NOTE,
    PERCENT,
    RED,
    STRATEGY_COLORS,
    drawn_in_style,
)


@drawn_in_style
def fig_coverage(df: pd.DataFrame) -> plt.Figure:
    """The coverage sweep: declared coverage per subset and strategy, invalid-accepted and valid-rejected
    counts, and the distributions of compile time per schema and mask time per step."""
    rows = df[df["kind"] == "coverage"]
    if rows.empty:
        raise MissingRows("no coverage rows")
    strategies = strategies_in(rows)
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
              label=f"{f'ours ({s})' if s in ('tabled', 'lazy') else s}: {n_schemas:,} schemas")
        for x, share, n in zip(xs, shares, bad):
            if n:
                a.text(x, (0 if np.isnan(share) else share) + 0.02, f"{n}✗", ha="center", fontsize=6.5, color=RED, rotation=90)
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
                                   (c, masks, "mask time per step, µs (log)", "Mask per step, first walk: cold")):
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
    c.text(0.5, -0.15, "Cold: each schema's first accepted instance, timed with nothing built before it.\n"
           "Ours builds each state's mask on its first visit, so its steps here include building it;\n"
           "the speed figure's repeated walks reuse built masks (warm), so its times are far lower.",
           transform=c.transAxes, ha="center", va="top", fontsize=7.5, color=NOTE)
    vocab = ", ".join(sorted(rows["vocab"].dropna().unique()))
    fig.suptitle(f"JSON Schema coverage on the MaskBench corpus ({schemas['schema_file'].nunique():,} schemas, "
                 f"{vocab} vocabulary, whitespace {', '.join(sorted(rows['whitespace'].dropna().unique()))})",
                 fontsize=11)
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    return fig
