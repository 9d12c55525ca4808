"""The distortion sweep's figures (kind=distortion rows): each strategy's distance to the exact conditional p*
against what it costs, and masking's distortion against Z = P(valid). The lesson's two-token example comes
first in both. (The lesson's own two-bar "distortion" figure is lesson.py's.)"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.transforms import Bbox

from structbench.errors import MissingRows
from structbench.report.figures.style import (
    INK,
    MUTED,
    NOTE,
    STRATEGY_COLORS,
    STRATEGY_LABELS,
    STRATEGY_MARKERS,
    drawn_in_style,
)

TV_FLOOR = 1e-3  # the TV axis's bottom: a TV below it (retry's is ~0) is drawn on it, as an open marker
ORDER = ("tabled", "retry", "smc", "awrs", "asap")


def case_label(row) -> str:
    if row["task"] == "two_token":
        return "two-token example"
    task = f"nested {int(row['schema_depth'])}" if row["task"] == "nested" else row["task"]
    return f"{task}, noise {row['noise']:g}"


def distortion_cases(df: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """The cases in the sweep's order: the two-token example, then by task depth and noise."""
    rows = df[df["kind"] == "distortion"] if "kind" in df else df
    if rows.empty or rows["tv"].isna().all():
        raise MissingRows("no distortion rows (run +sweep=distortion)")
    rows = rows.copy()
    rows["case"] = [case_label(r) for _, r in rows.iterrows()]
    rank = {"two_token": 0, "age": 1, "person": 2}  # nested depth d after them (depth 1 is the person schema)
    rows["order"] = [(rank.get(t, 1 + int(d)), -1.0 if pd.isna(n) else float(n))
                     for t, d, n in zip(rows["task"], rows["schema_depth"], rows["noise"])]
    cases = sorted(rows.groupby("case", sort=False), key=lambda kv: kv[1]["order"].iloc[0])
    return list(cases)


def _draw_case(ax, g: pd.DataFrame) -> None:
    floor = g["noise_floor"].iloc[0]
    sd = g["noise_floor_sd"].iloc[0]
    ax.axhspan(max(floor - sd, TV_FLOOR), floor + sd, color=MUTED, alpha=0.25, lw=0)
    ax.axhline(floor, color=NOTE, lw=0.9, ls="--")
    for strategy in ORDER:
        s = g[g["strategy"] == strategy].sort_values("particles")
        if s.empty:
            continue
        x, y = s["model_calls"].to_numpy(float), s["tv"].to_numpy(float)
        low = y < TV_FLOOR
        color, marker = STRATEGY_COLORS[strategy], STRATEGY_MARKERS[strategy]
        ax.plot(x, np.maximum(y, TV_FLOOR), color=color, lw=1.1, marker=marker, ms=6, mfc=color, zorder=3)
        if low.any():
            ax.plot(x[low], np.full(low.sum(), TV_FLOOR), ls="none", marker=marker, ms=8, mfc="white", mec=color,
                    zorder=4)
        if strategy == "smc" and len(s) > 1:  # awrs runs the same counts at about the same cost
            top = g[g["strategy"].isin(["smc", "awrs"])].groupby("particles")["tv"].max()
            for xi, n in zip(x, s["particles"]):
                ax.annotate(f"{int(n)}", (xi, max(top[n], TV_FLOOR)), xytext=(0, 6), textcoords="offset points",
                            fontsize=6.5, ha="center", color=NOTE)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(TV_FLOOR * 0.7, 1.3)


@drawn_in_style
def fig_distortion_cost(df: pd.DataFrame) -> plt.Figure:
    """Per case: TV to p* (log) against model calls per answer (log), per strategy, the noise floor drawn."""
    cases = distortion_cases(df)
    cols = 4
    nrows = math.ceil((len(cases) + 1) / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(12, 2.75 * nrows), sharey=True, squeeze=False)
    for ax, (name, g) in zip(axes.flat, cases):
        _draw_case(ax, g)
        z = g["exact_z"].iloc[0]
        ax.set_title(f"{name}  (Z = {z:.2g})", fontsize=9)
    for ax in axes[:, 0]:
        ax.set_ylabel("TV to p* (log)")
    for ax in axes.flat[:len(cases)]:
        ax.set_xlabel("model calls per answer (log)", fontsize=8)
    spare = list(axes.flat)[len(cases):]
    handles = [plt.Line2D([], [], color=STRATEGY_COLORS[s], marker=STRATEGY_MARKERS[s], lw=1.1, ms=6,
                          label=STRATEGY_LABELS[s]) for s in ORDER]
    handles += [plt.Line2D([], [], color=NOTE, ls="--", lw=0.9, label="noise floor: TV of n exact draws from p*\n"
                                                                      "(band: ± one sd)"),
                plt.Line2D([], [], ls="none", marker="^", mfc="white", mec=INK, ms=8,
                           label=f"TV below {TV_FLOOR:g}, drawn on the axis\n(retry: ~0, its answers are p*)")]
    fig.tight_layout(rect=(0, 0, 1, 0.96))
    # The legend where the first unused panel would be (the panels themselves are removed: none is left empty).
    box = spare[0].get_position() if spare else None
    for ax in spare:
        fig.delaxes(ax)
    fig.legend(handles=handles, frameon=False, fontsize=8, title="numbers: particles N", title_fontsize=8,
               loc="center", bbox_to_anchor=((box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2) if box else (0.5, -0.05))
    n_runs = sorted(int(r) for r in df["runs"].dropna().unique())
    fig.suptitle("Distance to the model's law given validity (p*) against cost; tabled and retry exact, the "
                 f"samplers from {' or '.join(map(str, n_runs))} runs", fontsize=11)
    return fig


OFFSETS = ((6, 2), (6, -10), (-6, 2), (-6, -10), (0, 9), (0, -16))  # points: right, left, above, below


def place_label(ax, text: str, xy, placed: list, **kw) -> None:
    """Annotate a point at the first of OFFSETS where the text overlaps no label placed before (nor, if none
    is free, the first); `placed` collects the labels' boxes."""
    renderer = ax.figure.canvas.get_renderer()
    for dx, dy in OFFSETS:
        label = ax.annotate(text, xy, xytext=(dx, dy), textcoords="offset points",
                            ha="left" if dx > 0 else "right" if dx < 0 else "center", **kw)
        box = label.get_window_extent(renderer).expanded(1.05, 1.1)
        if not any(box.overlaps(other) for other in placed) and ax.bbox.contains(box.x1, box.y1) \
                and ax.bbox.contains(box.x0, box.y0):
            placed.append(box)
            return
        label.remove()
    label = ax.annotate(text, xy, xytext=OFFSETS[0], textcoords="offset points", **kw)
    placed.append(label.get_window_extent(renderer))


def _point_box(ax, x: float, y: float, half: float = 4.0):
    """A marker's box in display units (labels keep clear of it)."""
    px, py = ax.transData.transform((x, max(y, TV_FLOOR)))
    return Bbox([[px - half, py - half], [px + half, py + half]])


@drawn_in_style
def fig_distortion_vs_z(df: pd.DataFrame) -> plt.Figure:
    """Masking's exact distortion (TV and KL(q̃‖p*)) against Z per case; SMC at its largest N beside it."""
    cases = distortion_cases(df)
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.4))
    points = []
    for name, g in cases:
        tabled = g[g["strategy"] == "tabled"]
        smc = g[g["strategy"] == "smc"].sort_values("particles")
        if tabled.empty:
            continue
        points.append({"case": name, "z": g["exact_z"].iloc[0], "tv": tabled["tv"].iloc[0],
                       "kl": tabled["kl_q_pstar"].iloc[0], "floor": g["noise_floor"].iloc[0],
                       "smc": smc["tv"].iloc[-1] if not smc.empty else np.nan,
                       "n": int(smc["particles"].iloc[-1]) if not smc.empty else 0})
    if not points:
        raise MissingRows("distortion_vs_z needs tabled rows")
    pts = pd.DataFrame(points)
    first = pts["case"] == "two-token example"
    left.plot(pts["z"], pts["tv"], ls="none", marker="s", color=STRATEGY_COLORS["tabled"], ms=6,
              label="tabled mask (exact)")
    left.plot(pts["z"], np.maximum(pts["smc"], TV_FLOOR), ls="none", marker="*", color=STRATEGY_COLORS["smc"], ms=8,
              label=f"SMC, N = {pts['n'].max()} (sampled)")
    left.plot(pts["z"], pts["floor"], ls="none", marker="_", color=NOTE, ms=10, mew=1.5,
              label="noise floor of the sampled TV")
    right.plot(pts["z"], pts["kl"], ls="none", marker="s", color=STRATEGY_COLORS["tabled"], ms=6)
    for ax in (left, right):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(pts["z"].min() / 2.5, 1.6)
        ax.set_xlabel("Z = P(valid) under the model (log; smaller Z, more for the mask to remove)")
    left.set_ylim(TV_FLOOR * 0.7, 1.5)
    left.set_ylabel("TV to p* (log)")
    left.set_title("Total variation between texts", fontsize=10)
    left.legend(frameon=False, fontsize=7.5, loc="lower left")
    right.set_ylabel("KL(q̃ ‖ p*), nats (log)")
    right.set_title("KL of masked decoding's valid answers from p* (exact)", fontsize=10)
    fig.suptitle("Smaller Z, more distortion: token-by-token masking against the exact conditional", fontsize=11)
    fig.tight_layout()  # before the labels: they are placed where the axes finally are
    for ax, columns in ((left, ("tv", "smc", "floor")), (right, ("kl",))):
        placed = [_point_box(ax, z, y) for c in columns for z, y in zip(pts["z"], pts[c]) if np.isfinite(y)]
        for i, r in pts.iterrows():
            bold = bool(first.iloc[i])
            text = r["case"] + (":\nthe lesson's 0.091 → 0.9" if bold else "")
            place_label(ax, text, (r["z"], r[columns[0]]), placed, fontsize=6.5, color=INK if bold else NOTE,
                        fontweight="bold" if bold else "normal")
    return fig
