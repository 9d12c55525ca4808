"""Figures drawn only from stored rows: the lesson's seven, and one per sweep.

    python -m structbench.report.figures [--results-dir results] [--out results/figures] [--only NAME ...]
                                         [--formats svg png]

Every `fig_<name>(df)` takes the DataFrame `structbench.bench.store.read_results` returned for one experiment
and draws it; nothing here reruns an experiment.

    style.py      colours, labels and markers keyed by the package's lists of names; the matplotlib style
    common.py     selecting rows, ordering names, shares and means with 95% intervals, retry points
    lesson.py     the lesson's seven figures
    sweeps.py     noise, depth, vocabulary size, removed mass, work against the formula, retry
    speed.py      the speed sweep            coverage.py   the coverage sweep
    realmodel.py  the real model beside the toy
    registry.py   figure name -> (experiments, function)
    command.py    reading the store, saving SVG and PNG, the command line
"""

from structbench.report.figures.command import main, make_figures, newest_trials
from structbench.report.figures.registry import (
    BY_NAME,
    FIGURES,
    LESSON_FIGURES,
    FigureSpec,
)

__all__ = ["BY_NAME", "FIGURES", "LESSON_FIGURES", "FigureSpec", "main", "make_figures", "newest_trials"]
