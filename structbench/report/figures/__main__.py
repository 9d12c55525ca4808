"""python -m structbench.report.figures [--results-dir results] [--out results/figures] [--only NAME ...]
[--formats svg png]: draw the figures from stored rows (see command.py)."""

import sys

import matplotlib

matplotlib.use("Agg")  # files only, never a window: chosen here, by the command, not by importing the package

from structbench.report.figures.command import main

sys.exit(main())
