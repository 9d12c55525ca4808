"""Figures: the registry is complete, each one drawn from a small synthetic store (and a clear MissingRows
without its rows), the style applied only while drawing, the command's files, byte-identical reruns, clear
messages for missing experiments, and the fixes to masked_step, speed, coverage, realmodel and
sweep_removed_mass."""

import hashlib
import inspect
import json
import subprocess
import sys

import matplotlib
import numpy as np
import pandas as pd
import pytest
from helpers import ROOT

from structbench.bench.referees import CATEGORIES
from structbench.bench.settings import MODELS
from structbench.bench.store import ROW_SCHEMA, part_path, read_results, write_part
from structbench.bench.strategies import STRATEGIES
from structbench.errors import MissingRows
from structbench.report import figures
from structbench.report.figures import (
    coverage,
    exact_distortion,
    fresh,
    lesson,
    real_distortion,
    realmodel,
    speed,
    style,
    sweeps,
)

LESSON_FIGURES = ["validity_vs_length", "masked_step", "validity_bars", "mask_table", "distortion", "mask_cost", "retry"]
SWEEP_FIGURES = ["sweep_noise", "sweep_depth", "sweep_vocab_mask_time", "sweep_removed_mass", "sweep_work_vs_formula",
                 "sweep_retry", "speed", "speed_steps", "coverage", "realmodel", "distortion_cost", "distortion_vs_z",
                 "real_distortion", "fresh", "fresh_paired"]


def row(**values) -> dict:
    base = {name: None for name in ROW_SCHEMA.names}
    base.update(seed=0, sample=0, task="age", schema_depth=0, strategy="none", model="toy", noise=1.0, skill=8.0,
                chatter=6.0, vocab="toy", vocab_size=83, max_tokens=40, max_attempts=10, text="", finished=True,
                category="valid", n_tokens=5, attempts=1, removed_mass=[], mask_us=[], allowed_counts=[],
                compile_ms=0.1, compile_work_chars=0, work_chars=0, work_reads=0, compile_masks=0, masks_built=0,
                wall_ms=1.0, created_at="2026-01-01T00:00:00+00:00")
    base.update(values)
    return base


def answers(n, valid_share, rng, **values) -> list[dict]:
    """n answer rows, the first round(n * valid_share) valid, the rest split over the failure kinds."""
    k = int(round(n * valid_share))
    masked = values.get("strategy") in ("naive", "tabled")
    out = []
    for i in range(n):
        steps = int(rng.integers(3, 9))
        category = "valid" if i < k else ("chatter", "broken", "cut_off")[i % 3]
        out.append(row(sample=i, category=category, finished=category != "cut_off", n_tokens=steps - 1,
                       removed_mass=list(rng.uniform(0, 0.3, steps)) if masked else [0.0] * steps,
                       mask_us=list(rng.uniform(1, 50, steps)) if masked else [],
                       attempts=int(rng.integers(1, 4)) if values.get("strategy") == "retry" else 1, **values))
    return out


def store(results, experiment, trials: dict) -> None:
    """One part per trial: {trial_id: rows}."""
    for trial_id, rows in trials.items():
        rows = [{**r, "experiment": experiment, "kind": r.get("kind") or "validity", "trial_id": trial_id} for r in rows]
        path = part_path(results, experiment, trial_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_part(rows, path)


def point(figure, series, label, x, y, **values):
    return row(figure=figure, series=series, label=label, x=float(x), y=float(y), kind="lesson", task="lesson", **values)


def lesson_trials(rng) -> dict:
    tokens = ["{", "}", "Sure", "4", "2", "x", "<eos>"]
    first = [point("masked_step", s, t, i, p) for s, probs in (("before", [0.7, 0.02, 0.2, 0.05, 0.02, 0.01, 0.0]),
                                                                 ("after", [1, 0, 0, 0, 0, 0, 0]))
             for i, (t, p) in enumerate(zip(tokens, probs))]
    states = ["(start)", "{", "{4", "{42"]
    allowed = {0: {0}, 1: {3}, 2: {4}, 3: {1, 6}}
    table = [{**point("mask_table", s, t, j, float(j in allowed[i])), "sample": i}
             for i, s in enumerate(states) for j, t in enumerate(tokens)]
    distortion = [point("distortion", s, a, i, y) for s, ys in (("conditional", (0.09, 0.91)), ("masked", (0.9, 0.1)))
                  for i, (a, y) in enumerate(zip(("Ay", "By"), ys))]
    formulas = [point("validity_vs_length", f"p={p}", f"{p:.1%} per token", n, p ** n)
                for p in (0.999, 0.99, 0.98, 0.95) for n in range(1, 201)]
    formulas += [point("retry", "1/p", "", p, 1 / p) for p in np.linspace(0.05, 1, 40)]
    formulas += [point("mask_cost", s, f"{s} line", a, a * slope + base)
                 for s, slope, base in (("naive", 100, 0), ("table", 20, 30)) for a in range(11)]
    length = []
    for n_digits in (1, 4, 16):
        length += [{**r, "figure": "validity_vs_length", "series": "measured", "x": float(n_digits + 1), "kind": "lesson",
                    "task": f"copy{n_digits}"} for r in answers(30, 0.94 ** (n_digits + 1), rng)]
    retry = []
    for task, noises in (("age", (0.5, 1.0)), ("person", (1.0, 1.5))):
        for noise in noises:
            for strategy in ("none", "retry"):
                retry += [{**r, "figure": "retry", "series": "measured", "x": noise, "kind": "lesson", "max_attempts": 60}
                          for r in answers(20, 0.6 / noise if task == "age" else 0.3 / noise, rng, task=task,
                                           strategy=strategy, noise=noise)]
    work = [row(figure="work", series=f"{t}/{s}", label=f"|V|={v}", x=float(v * 100 * m), y=float(v * 60 * m),
                kind="lesson", task=t, strategy=s, vocab_size=v)
            for t, m in (("age", 1), ("person", 4)) for s in ("naive", "tabled") for v in (83, 1000)]
    work += answers(5, 1.0, rng, strategy="tabled", kind="lesson")
    return {"first_step": first, "mask_table": table, "distortion": distortion, "formulas": formulas,
            "length": length, "retry": retry, "work": work}


def validity_trials(rng, noises=(0.5, 1.0, 2.0), experiment_noise_share=None) -> dict:
    trials = {}
    for task in ("age", "person"):
        for strategy in ("none", "naive", "tabled", "retry"):
            for noise in noises:
                share = {"none": 0.7 / max(noise, 0.5), "retry": 0.95}.get(strategy, 0.97)
                trials[f"{task}-{strategy}-{noise}"] = answers(20, min(1.0, share / (2 if task == "person" else 1)),
                                                                rng, task=task, strategy=strategy, noise=noise)
    return trials


def distortion_trials() -> dict:
    """Per case (the two-token example, age at two noise levels) and strategy, rows as the distortion experiment
    writes them."""
    trials = {}
    for task, noise, z in (("two_token", None, 0.099), ("age", 0.5, 0.74), ("age", 2.0, 0.21)):
        common = dict(kind="distortion", task=task, noise=noise, exact_z=z, noise_floor=0.02, noise_floor_sd=0.005)
        trials[f"{task}-{noise}-tabled"] = [row(strategy="tabled", tv=0.8 * (1 - z), tv_error=0.0, kl_q_pstar=2 - z,
                                                model_calls=7.0, **common)]
        trials[f"{task}-{noise}-retry"] = [row(strategy="retry", tv=0.0, kl_q_pstar=0.0, model_calls=7 / z, **common)]
        for strategy in ("smc", "awrs"):
            trials[f"{task}-{noise}-{strategy}"] = [
                row(strategy=strategy, sample=i, particles=n, runs=200, tv=0.8 * (1 - z) / n, model_calls=7.0 * n,
                    **common) for i, n in enumerate((1, 4, 16, 64))]
        trials[f"{task}-{noise}-asap"] = [row(strategy="asap", runs=200, tv=0.1, model_calls=7.0, **common)]
    return trials


def realdistortion_trials(rng) -> dict:
    """Per task, masked (tabled) and SMC answers with their kept masses and log Ẑ, and unconstrained ones."""
    trials = {}
    for task in ("age", "person"):
        common = {"kind": "realdistortion", "task": task, "model": "smollm2", "noise": None, "config_json": "{}"}
        ages = {"tabled": (42, 42, 7, 5), "smc": (42, 42, 42, 7), "none": (42, None, None, None)}
        for strategy, values in ages.items():
            trials[f"{task}-{strategy}"] = [
                row(strategy=strategy, sample=i, text="Sure" if a is None else f'{{"age": {a}}}',
                    category="chatter" if a is None else "valid", removed_mass=list(rng.uniform(0, 0.9, 4)),
                    log_z_hat=float(rng.normal(-3, 0.3)) if strategy == "smc" else None,
                    particles=8 if strategy == "smc" else None, model_calls=4.0, **common)
                for i, a in enumerate(values)]
    return trials


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """A small store holding every experiment the figures read."""
    root = tmp_path_factory.mktemp("results")
    rng = np.random.default_rng(0)
    store(root, "lesson", lesson_trials(rng))
    store(root, "validity", validity_trials(rng))
    store(root, "noise", validity_trials(rng, noises=(0.0, 1.0, 2.0, 3.0)))
    depth = {}
    for d in (1, 2, 3):
        for strategy in ("none", "tabled", "retry"):
            depth[f"d{d}-{strategy}"] = answers(15, {"none": 0.5 / d, "tabled": 1.0, "retry": 0.9 / d}[strategy], rng,
                                                task="nested", schema_depth=d, strategy=strategy, max_tokens=400)
    store(root, "depth", depth)
    vocab = {f"{task}-{strategy}-{size}": answers(8, 1.0, rng, task=task, strategy=strategy, vocab_size=size,
                                                  vocab=f"synthetic-{size}")
             for task in ("age", "person") for strategy in ("none", "naive", "tabled") for size in (83, 1000, 16000)}
    store(root, "vocab", vocab)
    speed = {f"{task}-{strategy}": [row(kind="speed", task=task, strategy=strategy, vocab="llama3", vocab_size=128257,
                                        sample=k, mask_us=list(rng.uniform(0.3, 30.0, 12)), compile_ms=float(rng.uniform(5, 900)),
                                        schema_depth=5 if task == "nested" else 0) for k in range(2)]
             for task in ("age", "person", "nested", "json_mode")
             for strategy in ("naive", "tabled", "xgrammar", "llguidance", "outlines_core")}
    store(root, "speed", speed)
    coverage = {f"{strategy}-{subset}": [row(kind="coverage", strategy=strategy, subset=subset, vocab="llama3",
                                             schema_file=f"{subset}---{k}.json", whitespace="lesson", instance=0,
                                             outcome="ok" if k % 3 else "unsupported", category="valid_accepted",
                                             compile_ms=float(rng.uniform(0.5, 90)),
                                             mask_us=list(rng.uniform(2.0, 3e4, 8))) for k in range(6)]
                for strategy in ("tabled", "llguidance") for subset in ("A", "B")}
    store(root, "coverage", coverage)
    realmodel = {}
    for model in ("toy", "smollm2"):
        for task in ("person", "strict_no_age", "nullable_age"):
            for strategy in ("none", "tabled", "retry"):
                for temperature in (0.0, 1.0):
                    rows = answers(6, {"none": 0.3, "tabled": 1.0, "retry": 0.6}[strategy], rng, task=task,
                                   strategy=strategy, model=model, temperature=temperature,
                                   noise=1.0 if model == "toy" else None, vocab_size=83 if model == "toy" else 49152)
                    rows = [{**r, "text": '{"age": 3}' if i % 2 else '{"age": null}'} for i, r in enumerate(rows)]
                    realmodel[f"{model}-{task}-{strategy}-{temperature}"] = rows
    store(root, "realmodel", realmodel)
    store(root, "distortion", distortion_trials())
    store(root, "realdistortion", realdistortion_trials(rng))
    # lazy's rows carry a paired llguidance walk of each schema (fresh_paired); llguidance's own trial walks alone
    paired = {"lazy": lambda: {"paired_strategy": "llguidance", "paired_instance": 0,
                               "paired_compile_ms": float(rng.uniform(0.5, 9)),
                               "paired_mask_us": list(rng.uniform(2.0, 3e3, 8)),
                               "paired_advance_us": list(rng.uniform(1.0, 9.0, 7))},
              "llguidance": dict}
    store(root, "fresh", {f"fresh-{strategy}": [
        row(kind="fresh", strategy=strategy, vocab="llama3", schema_file=f"A---{k}.json", subset="A", outcome="ok",
            instance=0, text=f"{{{k}}}", compile_ms=float(rng.uniform(0.5, 90)), mask_us=list(rng.uniform(2.0, 3e4, 8)),
            warm_mask_us=list(rng.uniform(0.3, 30, 8)), **paired[strategy]()) for k in range(5)]
        for strategy in ("lazy", "llguidance")})
    return root


@pytest.fixture(autouse=True)
def close_figures():
    yield
    matplotlib.pyplot.close("all")


def has_data(ax) -> bool:
    return bool(ax.lines or ax.patches or ax.collections or ax.images)


def test_the_registry_names_every_figure_function_once():
    """Every fig_<name> of the family modules is registered under its name, and the README's files exist."""
    functions = {name: f
                 for module in (lesson, sweeps, speed, coverage, fresh, realmodel, exact_distortion, real_distortion)
                 for name, f in inspect.getmembers(module, inspect.isfunction) if name.startswith("fig_")}
    assert {f"fig_{s.name}": s.draw for s in figures.FIGURES} == functions
    assert sorted(figures.BY_NAME) == sorted(LESSON_FIGURES + SWEEP_FIGURES)
    assert list(figures.LESSON_FIGURES) == LESSON_FIGURES
    for spec in figures.FIGURES:
        assert (ROOT / "results" / "figures" / f"{spec.name}.png").is_file(), spec.name


def test_every_strategy_category_and_model_has_its_look():
    """The style is keyed by the package's one list of each kind of name."""
    assert set(style.STRATEGY_COLORS) == set(STRATEGIES) == set(style.STRATEGY_MARKERS)
    assert set(style.CATEGORY_COLORS) == set(CATEGORIES) == set(style.CATEGORY_LABELS)
    assert set(style.MODEL_COLORS) == set(MODELS) == set(style.MODEL_LABELS)
    assert set(style.STRATEGY_MARKERS.values()) <= set(style.MARKER_NAMES)


def test_importing_the_figures_sets_no_style():
    """rcParams change only while a figure is drawn or saved, never on import."""
    code = ("import json, matplotlib; before = {k: repr(v) for k, v in matplotlib.rcParams.items()}; "
            "import structbench.report.figures; "
            "print(json.dumps([k for k, v in matplotlib.rcParams.items() if repr(v) != before[k]]))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == []


def test_a_figure_is_drawn_in_the_style_and_leaves_rcparams_alone(results):
    before = dict(matplotlib.rcParams)
    fig = lesson.fig_mask_cost(read_results(results, "lesson"))
    assert fig.dpi == style.STYLE["figure.dpi"]
    assert not fig.axes[0].spines["top"].get_visible()
    assert dict(matplotlib.rcParams) == before


@pytest.mark.parametrize("spec", figures.FIGURES, ids=lambda s: s.name)
def test_each_figure_has_a_title_labelled_axes_and_data(results, spec):
    df = read_results(results, spec.sources[0])
    fig = spec.draw(df)
    assert isinstance(fig, matplotlib.figure.Figure)
    titles = [fig._suptitle.get_text() if fig._suptitle else ""] + [ax.get_title() for ax in fig.axes]
    assert any(t.strip() for t in titles), "no title"
    assert fig.axes
    for ax in fig.axes:
        assert ax.get_visible(), f"a hidden panel leaves a hole: {ax.get_title()!r}"
        assert has_data(ax), f"empty panel {ax.get_title()!r}"
        assert ax.get_xlabel().strip() and (ax.get_ylabel().strip() or ax.get_shared_y_axes().get_siblings(ax) != [ax])
    assert fig.axes[0].get_ylabel().strip()


@pytest.mark.parametrize("spec", figures.FIGURES, ids=lambda s: s.name)
def test_each_figure_without_its_rows_says_so(spec):
    """An experiment with no rows for the figure gives MissingRows with a message, never a bare KeyError."""
    empty = pd.DataFrame({name: pd.Series(dtype=object) for name in ROW_SCHEMA.names})
    with pytest.raises(MissingRows, match=r"\w"):
        spec.draw(empty)


def test_masked_step_shows_only_tokens_with_mass(results):
    """No pair of bars both at 0.00: the model's likeliest tokens with 1% or more, the allowed ones, the rest summed."""
    fig = lesson.fig_masked_step(read_results(results, "lesson"))
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["'{'", "'Sure'", "'4'", "'}'"]
    labels = [t.get_text() for t in ax.texts]
    pairs = list(zip(labels[0::2], labels[1::2]))
    assert ("0.00", "0.00") not in pairs
    assert "the other 3 tokens: 0.03 together before the mask, 0.00 after" in ax.get_xlabel()


def test_speed_draws_points_not_bars_on_its_log_axes(results):
    fig = speed.fig_speed(read_results(results, "speed"))
    for ax in fig.axes:
        assert ax.get_yscale() == "log"
        assert not ax.patches, "a bar on a log axis has an arbitrary length"
        assert ax.lines
    assert "cold" in " ".join(t.get_text() for t in fig.texts)


def test_speed_steps_draws_each_tasks_cold_walk_with_its_compiles_left_of_it(results):
    """A panel per task, each strategy's cold walk a line over the answer's steps on a log axis, and its compile a
    point at the tick named compile, left of every step (in µs, as the steps)."""
    df = read_results(results, "speed")
    fig = speed.fig_speed_steps(df)
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in panels] == ["age", "person", "nested (depth 5)", "json_mode"]
    for ax in panels:
        assert ax.get_yscale() == "log"
        walks = [line for line in ax.lines if len(line.get_xdata()) == 12]  # (the fixture's walks: 12 steps)
        assert len(walks) == 5 and all(list(line.get_xdata()) == list(range(12)) for line in walks)
        compiles = [line for line in ax.lines if len(line.get_xdata()) == 1 and line.get_xdata()[0] < 0]
        assert len(compiles) == 5
        labels = {t.get_text(): t.get_position()[0] for t in ax.get_xticklabels()}
        assert labels["compile"] == compiles[0].get_xdata()[0] < min(v for k, v in labels.items() if k != "compile")
    cold = df[df["sample"] == 0]  # (the fixture's parts predate `cold`: walk 0 was the cold one)
    age_naive = cold[(cold["task"] == "age") & (cold["strategy"] == "naive")].iloc[0]
    ax = panels[0]
    drawn = [line for line in ax.lines if len(line.get_xdata()) == 1 and line.get_ydata()[0] == pytest.approx(
        age_naive["compile_ms"] * 1000)]
    assert drawn, "naive's compile on age, in µs"


def test_coverage_says_its_mask_times_are_a_cold_first_walk(results):
    fig = coverage.fig_coverage(read_results(results, "coverage"))
    masks = fig.axes[2]
    assert "cold" in masks.get_title()
    assert "speed figure" in " ".join(t.get_text() for t in masks.texts)


def test_realmodel_has_no_empty_panels_or_strategies_without_masks(results):
    """The mask panel lists only the masking strategies' tasks; the invented-age panels only the no-age tasks."""
    fig = realmodel.fig_realmodel(read_results(results, "realmodel"))
    titles = [ax.get_title() for ax in fig.axes]
    assert titles[3:] == ["What the mask removed (tabled)", "strict_no_age: invented ages",
                          "nullable_age: invented ages"]
    removed = fig.axes[3]
    assert [t.get_text() for t in removed.get_xticklabels()] == ["person", "strict_no_age", "nullable_age"]


def test_removed_mass_legend_matches_the_lines(results):
    """Each legend entry is drawn in its noise's colour (no black line for lines coloured by noise)."""
    fig = sweeps.fig_sweep_removed_mass(read_results(results, "validity"))
    legend = fig.legends[0]
    line_colors = {matplotlib.colors.to_hex(line.get_color()) for ax in fig.axes for line in ax.lines}
    handles = legend.legend_handles
    assert [t.get_text() for t in legend.get_texts()] == ["noise 0.5", "noise 1", "noise 2"]
    assert {matplotlib.colors.to_hex(h.get_color()) for h in handles} == line_colors
    assert all(h.get_linestyle() == "-" and h.get_marker() == "x" for h in handles)  # tabled line, naive ×
    assert "line: tabled mask, ×: naive mask" in legend.get_title().get_text()


def test_validity_bars_tell_the_lessons_story(results, tmp_path):
    """The lesson's counts, stored as rows, come out as the lesson's bars."""
    counts = {("age", "none"): (133, 37, 30, 0), ("person", "none"): (36, 41, 123, 0),
              ("age", "tabled"): (200, 0, 0, 0), ("person", "tabled"): (195, 0, 0, 5)}
    trials = {}
    for (task, strategy), numbers in counts.items():
        cats = [c for c, k in zip(("valid", "chatter", "broken", "cut_off"), numbers) for _ in range(k)]
        trials[f"{task}-{strategy}"] = [row(sample=i, task=task, strategy=strategy, category=c, finished=c != "cut_off")
                                        for i, c in enumerate(cats)]
    store(tmp_path, "validity", trials)
    fig = lesson.fig_validity_bars(read_results(tmp_path, "validity"))
    texts = {t.get_text() for t in fig.axes[0].texts}
    assert {"66.5%", "100%", "18%", "97.5%", "5 of 200 cut off"} <= texts
    assert fig.axes[0].get_ylabel() == "share of 200 answers"


def run_figures(*args):
    return subprocess.run([sys.executable, "-m", "structbench.report.figures", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=False)


def svg_hashes(folder):
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.glob("*.svg"))}


def test_command_writes_every_figure_and_reruns_byte_identical(results, tmp_path):
    out = tmp_path / "figs"
    assert figures.main(["--results-dir", str(results), "--out", str(out)]) == 0
    names = LESSON_FIGURES + SWEEP_FIGURES
    assert sorted(p.name for p in out.iterdir()) == sorted(f"{n}.{ext}" for n in names for ext in ("svg", "png"))
    first = svg_hashes(out)
    pngs = {p.name: p.read_bytes() for p in out.glob("*.png")}
    # The rerun is the real command, in a fresh process, over the same files (SVG only, to keep the test fast).
    proc = run_figures("--results-dir", results, "--out", out, "--formats", "svg")
    assert proc.returncode == 0, proc.stderr
    assert f"wrote {len(names)} figure(s) as SVG to" in proc.stdout
    assert svg_hashes(out) == first
    assert {p.name: p.read_bytes() for p in out.glob("*.png")} == pngs  # untouched
    svg = (out / "validity_bars.svg").read_text()
    assert "<dc:date>" not in svg


def test_missing_experiments_are_named_and_the_rest_still_made(results, tmp_path):
    partial = tmp_path / "results"
    for experiment in ("lesson", "validity"):
        (partial / experiment).mkdir(parents=True)
        for f in (results / experiment).glob("part-*.parquet"):
            (partial / experiment / f.name).write_bytes(f.read_bytes())
    # A few figures keep the test fast: two whose data is missing, one lesson figure, one falling back.
    proc = run_figures("--results-dir", partial, "--only", "validity_bars", "sweep_noise", "sweep_depth",
                       "sweep_vocab_mask_time")
    assert proc.returncode == 0, proc.stderr
    assert f"skipped sweep_depth: no rows in {partial / 'depth'} — run: python -m structbench +sweep=depth" in proc.stdout
    assert "skipped sweep_vocab_mask_time" in proc.stdout and "+sweep=vocab" in proc.stdout
    assert "sweep_noise drawn from" in proc.stdout  # falls back to the validity grid
    made = {p.stem for p in (partial / "figures").glob("*.svg")}
    assert made == {"validity_bars", "sweep_noise"}


def test_nothing_to_draw_fails_clearly(tmp_path):
    proc = run_figures("--results-dir", tmp_path / "empty", "--out", tmp_path / "figs")
    assert proc.returncode != 0
    assert "no figure could be made" in proc.stderr
    assert "python -m structbench +sweep=lesson" in proc.stdout + proc.stderr
    assert not (tmp_path / "figs").exists()


def test_missing_lesson_rows_fail_even_when_sweeps_are_drawn(results, tmp_path):
    only_validity = tmp_path / "results"
    (only_validity / "validity").mkdir(parents=True)
    for f in (results / "validity").glob("part-*.parquet"):
        (only_validity / "validity" / f.name).write_bytes(f.read_bytes())
    assert figures.main(["--results-dir", str(only_validity), "--only", "validity_bars", "masked_step"]) != 0
    assert (only_validity / "figures" / "validity_bars.svg").exists()
    assert not (only_validity / "figures" / "masked_step.svg").exists()


def test_a_trial_stored_twice_is_drawn_once(tmp_path):
    """A part written before the trial id changed repeats another's settings: only the newest counts."""
    rows = [row(sample=i, config_json='{"n": 200, "task": {"name": "age"}}') for i in range(4)]
    old = [{**r, "config_json": '{"n": 200, "part": null, "task": {"name": "age"}}', "created_at": "2025-01-01"} for r in rows]
    store(tmp_path, "validity", {"new": rows, "old": old})
    df, dropped = figures.newest_trials(read_results(tmp_path, "validity"))
    assert dropped == 1 and set(df["trial_id"]) == {"new"} and len(df) == 4
