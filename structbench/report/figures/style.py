"""How every figure looks: colours, labels and markers keyed by the package's own lists of names, and the
matplotlib style, applied only while a figure is drawn and saved (importing this sets nothing).

Strategy names come from `structbench.bench.strategies.STRATEGIES` and answer categories from
`structbench.bench.referees.CATEGORIES`; this module only says how each one is drawn
(tests/report/test_figures.py checks every name has a colour).
"""

from __future__ import annotations

import functools

import matplotlib
from matplotlib.ticker import PercentFormatter

BLUE, RED, GREEN, AMBER, MUTED, INK = "#2563eb", "#dc2626", "#059669", "#d97706", "#9ca3af", "#111827"
PURPLE, TEAL, NAVY = "#7c3aed", "#0f766e", "#172554"
PINK, OLIVE, CYAN = "#db2777", "#65a30d", "#0891b2"  # the samplers
NOTE, SOFT = "#4b5563", "#6b7280"  # explanatory text under a figure; a marker's label

# Keyed by the names in structbench.bench.strategies.STRATEGIES.
STRATEGY_COLORS = {"none": MUTED, "naive": RED, "tabled": BLUE, "lazy": NAVY, "retry": GREEN,
                   "smc": PINK, "awrs": OLIVE, "asap": CYAN,
                   "xgrammar": TEAL, "llguidance": AMBER, "outlines_core": PURPLE}
STRATEGY_LABELS = {"none": "none (unconstrained)", "naive": "naive mask", "tabled": "tabled mask", "retry": "retry",
                   "smc": "SMC (masked proposal)", "awrs": "SMC with AWRS", "asap": "ASAp (grammar-aligned)"}
STRATEGY_MARKERS = {"none": "o", "naive": "x", "tabled": "s", "lazy": "p", "retry": "^", "smc": "*", "awrs": "h",
                    "asap": "<", "xgrammar": "D", "llguidance": "v", "outlines_core": "P"}
MARKER_NAMES = {"o": "○", "x": "×", "s": "□", "p": "⬠", "^": "△", "D": "◇", "v": "▽", "P": "+",
                "*": "☆", "h": "⬡", "<": "◁"}  # a marker, in words

# Keyed by the names in structbench.bench.referees.CATEGORIES.
CATEGORY_COLORS = {"valid": GREEN, "chatter": AMBER, "broken": RED, "cut_off": MUTED}
CATEGORY_LABELS = {"valid": "valid", "chatter": "chatter before the JSON", "broken": "broken inside",
                   "cut_off": "cut off by the token budget"}

TASK_COLORS = {"age": BLUE, "person": RED}
# Keyed by the names in structbench.bench.settings.MODELS.
MODEL_COLORS = {"toy": AMBER, "smollm2": BLUE}
MODEL_LABELS = {"toy": "toy model (lesson's vocabulary)", "smollm2": "SmolLM2-135M-Instruct (real)"}
TEMPERATURE_MARKERS = {0.0: "o", 1.0: "s"}

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

PERCENT = PercentFormatter(1.0, decimals=0)


def styled():
    """The figures' style for the duration of a `with` block; rcParams are restored after it."""
    return matplotlib.rc_context(STYLE)


def drawn_in_style(draw):
    """Decorate a figure function so it draws in the figures' style, whoever calls it."""

    @functools.wraps(draw)
    def wrapper(*args, **kwargs):
        with styled():
            return draw(*args, **kwargs)

    return wrapper
