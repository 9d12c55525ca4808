"""Every figure by name: the experiments it is drawn from (the first with rows wins) and the function that
draws it. The order here is the order the command draws and reports them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import matplotlib.pyplot as plt
import pandas as pd

from structbench.report.figures import (
    coverage,
    exact_distortion,
    fresh,
    lesson,
    real_distortion,
    realmodel,
    speed,
    sweeps,
)


@dataclass(frozen=True)
class FigureSpec:
    name: str
    sources: tuple[str, ...]  # experiments to draw from, first with rows wins
    draw: Callable[[pd.DataFrame], plt.Figure]
    lesson: bool = False  # one of the lesson's seven: the command fails when one cannot be made


FIGURES = (
    FigureSpec("validity_vs_length", ("lesson",), lesson.fig_validity_vs_length, True),
    FigureSpec("masked_step", ("lesson",), lesson.fig_masked_step, True),
    FigureSpec("validity_bars", ("validity",), lesson.fig_validity_bars, True),
    FigureSpec("mask_table", ("lesson",), lesson.fig_mask_table, True),
    FigureSpec("distortion", ("lesson",), lesson.fig_distortion, True),
    FigureSpec("mask_cost", ("lesson",), lesson.fig_mask_cost, True),
    FigureSpec("retry", ("lesson",), lesson.fig_retry, True),
    FigureSpec("sweep_noise", ("noise", "validity"), sweeps.fig_sweep_noise),
    FigureSpec("sweep_depth", ("depth",), sweeps.fig_sweep_depth),
    FigureSpec("sweep_vocab_mask_time", ("vocab",), sweeps.fig_sweep_vocab_mask_time),
    FigureSpec("speed", ("speed",), speed.fig_speed),
    FigureSpec("speed_steps", ("speed",), speed.fig_speed_steps),
    FigureSpec("coverage", ("coverage",), coverage.fig_coverage),
    FigureSpec("fresh", ("fresh",), fresh.fig_fresh),
    FigureSpec("fresh_paired", ("fresh",), fresh.fig_fresh_paired),
    FigureSpec("sweep_removed_mass", ("validity",), sweeps.fig_sweep_removed_mass),
    FigureSpec("sweep_work_vs_formula", ("lesson",), sweeps.fig_sweep_work_vs_formula),
    FigureSpec("sweep_retry", ("noise", "validity"), sweeps.fig_sweep_retry),
    FigureSpec("realmodel", ("realmodel",), realmodel.fig_realmodel),
    FigureSpec("distortion_cost", ("distortion",), exact_distortion.fig_distortion_cost),
    FigureSpec("distortion_vs_z", ("distortion",), exact_distortion.fig_distortion_vs_z),
    FigureSpec("real_distortion", ("realdistortion",), real_distortion.fig_real_distortion),
)
BY_NAME = {spec.name: spec for spec in FIGURES}
LESSON_FIGURES = tuple(s.name for s in FIGURES if s.lesson)
