"""The fresh yardstick's table and figure, from hand-made stored rows: each metric's population and
percentiles checked against numpy, the ratios to llguidance, the same-walks scope, every outcome counted; the
figure drawn from the store; and the speed sweep's fresh answer (compile + walk 0's masks and advances), printed
from a store by python -m structbench.experiments.speed."""

import math

import numpy as np
import pandas as pd
import pytest

from structbench.bench.store import ROW_SCHEMA, part_path, read_results, write_part
from structbench.errors import MissingRows
from structbench.report.figures import make_figures
from structbench.report.figures.fresh import fig_fresh, fig_fresh_paired
from structbench.report.fresh import (
    format_fresh,
    fresh_table,
    outcome_counts,
    paired_ratios,
    paired_table,
    per_schema_table,
    ratio_intervals,
    same_walks,
    weighted_percentiles,
)
from structbench.report.summary import fresh_answer_summary


def row(strategy, schema_file, outcome="ok", compile_ms=None, mask_us=None, warm=None, text="{}", advance=None,
        warm_advance=None, **values):
    base = {name: None for name in ROW_SCHEMA.names}
    base.update(experiment="fresh", kind="fresh", trial_id=f"t-{strategy}", strategy=strategy, vocab="toy",
                vocab_size=83, schema_file=schema_file, subset=schema_file.split("---")[0], outcome=outcome,
                outcome_detail="", compile_ms=compile_ms, mask_us=mask_us, warm_mask_us=warm, advance_us=advance,
                warm_advance_us=warm_advance,
                text=text if outcome == "ok" else None, created_at="2026-01-01T00:00:00+00:00", **values)
    return base


def hand_made(rng) -> list[dict]:
    """Two strategies over five files: three both walked, one only llguidance walked (lazy: unsupported), one
    walked by both on different instances; plus a lazy no_instance (compiled) and an llguidance error."""
    rows = []
    for k in range(5):
        for strategy, scale in (("lazy", 100.0), ("llguidance", 1.0)):
            masks = list(rng.uniform(1, 50, int(rng.integers(2, 9))) * scale)
            outcome = "unsupported" if (k == 3 and strategy == "lazy") else "ok"
            walked = outcome == "ok"  # every step but the end token's has an advance
            rows.append(row(strategy, f"A---{k}.json", outcome, float(rng.uniform(0.5, 30)),
                            masks if walked else None, list(rng.uniform(0.1, 9, len(masks))) if walked else None,
                            text=f"{{{k}}}" if k != 4 else f"{{{k}{strategy}}}",
                            advance=list(rng.uniform(0.5, 20, len(masks) - 1) * scale) if walked else None,
                            warm_advance=list(rng.uniform(0.1, 1, len(masks) - 1)) if walked else None))
    rows.append(row("lazy", "B---nothing.json", "no_instance", 7.0))
    rows.append(row("llguidance", "B---nothing.json", "error", 0.1))
    return rows


@pytest.fixture
def df():
    return pd.DataFrame(hand_made(np.random.default_rng(3)))


def test_each_metric_is_numpys_percentiles_over_its_population(df):
    table = fresh_table(df).set_index(["strategy", "metric"])
    for strategy in ("lazy", "llguidance"):
        own = df[df["strategy"] == strategy]
        ok = own[own["outcome"] == "ok"]
        # A step: its mask and its advance (the end token's step, the last, has none), as MaskBench times them
        cold = [np.array(m) + np.append(a, 0.0) for m, a in zip(ok["mask_us"], ok["advance_us"])]
        warm = [np.array(m) + np.append(a, 0.0) for m, a in zip(ok["warm_mask_us"], ok["warm_advance_us"])]
        populations = {
            "compile": own[own["outcome"].isin(["ok", "no_instance"])]["compile_ms"].to_numpy(),
            "ttfm": np.array([c + m[0] / 1000 for c, m in zip(ok["compile_ms"], ok["mask_us"])]),
            "tbm": np.concatenate([s[1:] for s in cold]),
            "fresh": np.array([c + sum(s) / 1000 for c, s in zip(ok["compile_ms"], cold)]),
            "warm": np.concatenate(warm),
        }
        for metric, values in populations.items():
            got = table.loc[(strategy, metric)]
            assert got["n"] == len(values), (strategy, metric)
            for q in (50, 90, 99):
                assert got[f"p{q}"] == pytest.approx(np.percentile(values, q)), (strategy, metric, q)
            assert got["max"] == pytest.approx(values.max())
    for metric in ("compile", "ttfm", "tbm", "fresh", "warm"):
        for q in ("p50", "p99"):
            ratio = table.loc[("lazy", metric)][q] / table.loc[("llguidance", metric)][q]
            assert table.loc[("lazy", metric)][f"{q}_vs_llguidance"] == pytest.approx(ratio)
            assert table.loc[("llguidance", metric)][f"{q}_vs_llguidance"] == pytest.approx(1.0)


def test_rows_stored_before_advances_were_timed_count_their_masks_alone_and_are_named(df):
    old = df.assign(advance_us=None, warm_advance_us=None)
    table = fresh_table(old).set_index(["strategy", "metric"])
    ok = old[(old["strategy"] == "lazy") & (old["outcome"] == "ok")]
    assert table.loc[("lazy", "tbm")]["p50"] == pytest.approx(np.median(np.concatenate([m[1:] for m in ok["mask_us"]])))
    walked = int((old["outcome"] == "ok").sum())
    assert f"{walked:,} walked rows were stored before advances were timed" in format_fresh(old)
    assert "before advances were timed" not in format_fresh(df)


def test_same_walks_keeps_the_files_every_strategy_walked_on_the_same_instance(df):
    same = same_walks(df)
    assert sorted(same["schema_file"].unique()) == ["A---0.json", "A---1.json", "A---2.json"]
    assert (same["outcome"] == "ok").all() and len(same) == 6
    assert "(3 schemas)" in format_fresh(df)


def test_every_outcome_is_counted_never_dropped(df):
    counts = outcome_counts(df).set_index("strategy")
    assert counts.loc["lazy", "schemas"] == 6 and counts.loc["lazy", "ok"] == 4
    assert counts.loc["lazy", "unsupported"] == 1 and counts.loc["lazy", "no_instance"] == 1
    assert counts.loc["llguidance", "ok"] == 5 and counts.loc["llguidance", "error"] == 1
    assert counts.drop(columns="schemas").sum(axis=1).tolist() == counts["schemas"].tolist()


def paired_lazy(df) -> pd.DataFrame:
    """Lazy's rows carrying llguidance's walk of the same schema (paired_*), as a paired trial stores them; on
    A---4 llguidance walked another instance, on A---3 lazy walked nothing."""
    lazy = df[df["strategy"] == "lazy"].copy()
    other = df[df["strategy"] == "llguidance"].set_index("schema_file")
    instance = {"A---4.json": 7}  # llguidance walked another instance there
    for i, r in lazy.iterrows():
        theirs = other.loc[r["schema_file"]]
        walked = theirs["outcome"] == "ok"
        lazy.at[i, "instance"] = 1 if r["outcome"] == "ok" else -1
        lazy.at[i, "paired_strategy"] = "llguidance"
        lazy.at[i, "paired_compile_ms"] = theirs["compile_ms"]
        lazy.at[i, "paired_instance"] = instance.get(r["schema_file"], 1) if walked else -1
        lazy.at[i, "paired_mask_us"] = theirs["mask_us"] if walked else None
        lazy.at[i, "paired_advance_us"] = theirs["advance_us"] if walked else None
    return lazy


BOTH = ["A---0.json", "A---1.json", "A---2.json"]  # walked by both on the same instance


def test_the_paired_table_compares_each_schemas_two_walks_on_the_same_instance(df):
    """The paired table is each metric's percentiles over the schemas both walked on the same instance, lazy's
    from its own columns and the paired strategy's from the paired ones, and their ratios; a schema the paired
    strategy walked on another instance, or not at all, is left out; without paired rows there is no such table."""
    lazy = paired_lazy(df)
    table = paired_table(lazy).set_index("metric")
    mine = fresh_table(df[df["schema_file"].isin(BOTH)]).set_index(["strategy", "metric"])
    assert list(table.index) == ["compile", "ttfm", "tbm", "fresh"] and (table["paired"] == "llguidance").all()
    for metric in table.index:
        for q in ("p50", "p99"):
            assert table.loc[metric, q] == pytest.approx(mine.loc[("lazy", metric), q])
            assert table.loc[metric, f"paired_{q}"] == pytest.approx(mine.loc[("llguidance", metric), q])
            assert table.loc[metric, f"{q}_vs_paired"] == pytest.approx(
                mine.loc[("lazy", metric), q] / mine.loc[("llguidance", metric), q])
    assert table.loc["fresh", "n"] == 3
    for q in ("p50", "p99"):  # each ratio with its interval over the schemas, seeded
        assert (table[f"{q}_vs_paired_ci95_lo"] <= table[f"{q}_vs_paired_ci95_hi"]).all()
    assert paired_table(lazy).equals(paired_table(lazy))
    printed = format_fresh(lazy)
    assert "### paired: each schema walked by both" in printed and "| p99_vs_paired | p99_ci95 |" in printed
    assert paired_table(df).empty and "### paired" not in format_fresh(df)


def test_a_weighted_percentile_is_numpys_inverted_cdf_over_the_values_repeated():
    rng = np.random.default_rng(7)
    for _ in range(300):
        n = int(rng.integers(1, 30))
        values, weights = rng.exponential(10, n).round(int(rng.integers(0, 3))), rng.integers(0, 4, n)
        if not weights.sum():
            assert all(math.isnan(v) for v in weighted_percentiles(values, weights, [50]))
            continue
        repeated = np.repeat(values, weights)
        qs = [1, 25, 50, 90, 99, 100]
        assert weighted_percentiles(values, weights, qs) == [np.percentile(repeated, q, method="inverted_cdf")
                                                             for q in qs]


def test_a_ratios_interval_resamples_whole_schemas_on_both_sides():
    """ratio_intervals draws schemas, not values: a schema's values come or go together, on both sides. Where every
    value of one side is twice its pair's, every resample's ratio is 2; with two schemas, every resample is one of
    three draws (either schema twice, or each once), and the interval lies within their ratios."""
    rng = np.random.default_rng(0)
    values, of = rng.exponential(10, 50), np.repeat(np.arange(5), 10)
    twice = ratio_intervals((2 * values, of), (values, of), (50, 99), np.random.default_rng(1))
    assert twice[50] == pytest.approx((2.0, 2.0)) and twice[99] == pytest.approx((2.0, 2.0))
    own = (np.array([1.0, 2.0, 30.0, 40.0]), np.array([0, 0, 1, 1]))
    other = (np.array([1.0, 1.0, 10.0, 10.0]), np.array([0, 0, 1, 1]))
    draws = []
    for counts in ((2, 0), (1, 1), (0, 2)):
        weights_a, weights_b = np.repeat(counts, 2), np.repeat(counts, 2)
        draws.append([weighted_percentiles(own[0], weights_a, [q])[0] / weighted_percentiles(other[0], weights_b, [q])[0]
                      for q in (50, 99)])
    got = ratio_intervals(own, other, (50, 99), np.random.default_rng(2))
    for k, q in enumerate((50, 99)):
        lo, hi = got[q]
        assert min(d[k] for d in draws) <= lo <= hi <= max(d[k] for d in draws)
    assert got == ratio_intervals(own, other, (50, 99), np.random.default_rng(2))  # seeded: the same interval
    empty = (np.array([]), np.array([], dtype=int))
    assert all(math.isnan(v) for v in ratio_intervals(empty, other, (99,), rng)[99])


def test_the_per_schema_table_is_each_schemas_ratio_to_its_paired_walk(df):
    """Per metric, one ratio per schema both walked on the same instance: lazy's value over llguidance's from the
    same row (TBM: the median of each walk's steps after the first), their quantiles, a seeded bootstrap interval
    around their median, and the share of schemas where lazy took at most llguidance's time."""
    lazy = paired_lazy(df)
    table = per_schema_table(lazy).set_index("metric")
    assert list(table.index) == ["compile", "ttfm", "tbm", "fresh"] and (table["schemas"] == 3).all()
    own = df[(df["strategy"] == "lazy") & df["schema_file"].isin(BOTH)].set_index("schema_file").loc[BOTH]
    other = df[(df["strategy"] == "llguidance") & df["schema_file"].isin(BOTH)].set_index("schema_file").loc[BOTH]

    def values(rows):
        steps = [np.array(m) + np.append(a, 0.0) for m, a in zip(rows["mask_us"], rows["advance_us"])]
        return {"compile": rows["compile_ms"].to_numpy(),
                "ttfm": np.array([c + m[0] / 1000 for c, m in zip(rows["compile_ms"], rows["mask_us"])]),
                "tbm": np.array([np.median(s[1:]) for s in steps]),
                "fresh": np.array([c + s.sum() / 1000 for c, s in zip(rows["compile_ms"], steps)])}

    mine, theirs = values(own), values(other)
    for metric in table.index:
        ratios = mine[metric] / theirs[metric]
        for q in (10, 25, 50, 75, 90):
            assert table.loc[metric, f"p{q}"] == pytest.approx(np.percentile(ratios, q)), (metric, q)
        assert table.loc[metric, "p50_ci95_lo"] <= table.loc[metric, "p50"] <= table.loc[metric, "p50_ci95_hi"]
        assert ratios.min() <= table.loc[metric, "p50_ci95_lo"] and table.loc[metric, "p50_ci95_hi"] <= ratios.max()
        assert table.loc[metric, "at_most_1_pct"] == pytest.approx(100 * np.mean(ratios <= 1))
    assert table.loc["tbm", "p50"] > 10  # lazy's steps are drawn 100 times llguidance's
    assert per_schema_table(lazy).equals(per_schema_table(lazy))  # seeded: the same rows, the same interval
    assert "### paired, per schema" in format_fresh(lazy) and "### paired, per schema" not in format_fresh(df)
    assert per_schema_table(df).empty
    mixed = lazy.copy()
    mixed.loc[mixed["schema_file"] == "A---0.json", "paired_strategy"] = "xgrammar"
    with pytest.raises(ValueError, match="paired with different strategies"):
        per_schema_table(mixed)


def test_without_llguidance_the_ratios_are_missing_not_made_up(df):
    table = fresh_table(df[df["strategy"] == "lazy"])
    assert table["p50_vs_llguidance"].map(math.isnan).all()


def test_the_figure_draws_four_log_cdf_panels_from_stored_rows(tmp_path):
    rows = hand_made(np.random.default_rng(3))
    for k, strategy in enumerate(("lazy", "llguidance")):
        path = part_path(tmp_path, "fresh", f"{k:016x}")
        path.parent.mkdir(parents=True, exist_ok=True)
        write_part([r for r in rows if r["strategy"] == strategy], path)
    fig = fig_fresh(read_results(tmp_path, "fresh"))
    assert len(fig.axes) == 4
    for ax in fig.axes:
        assert ax.get_xscale() == "log" and len(ax.lines) == 2 + 1  # a CDF per strategy and the median's line
        xs, ys = ax.lines[0].get_data()
        assert ys[-1] == pytest.approx(1.0) and np.all(np.diff(xs) >= 0)
    titles = [ax.get_title() for ax in fig.axes]
    assert [t.split(":")[0] for t in titles] == ["compile", "TTFM", "TBM", "fresh answer"]
    assert make_figures(tmp_path, tmp_path / "figures", ["fresh"], log=lambda _: None)["made"] == ["fresh"]
    assert (tmp_path / "figures" / "fresh.png").stat().st_size > 0
    with pytest.raises(MissingRows):
        fig_fresh(read_results(tmp_path, "fresh").iloc[0:0])


def test_the_paired_figure_draws_each_schemas_ratios_as_cdfs_on_log_axes(df):
    """Four panels, one CDF per strategy walked with a paired one over its per-schema ratios (paired_ratios), the
    line at 1 and the median's; without paired rows there is nothing to draw, and it says so."""
    lazy = paired_lazy(df)
    fig = fig_fresh_paired(lazy)
    ratios = paired_ratios(lazy)["lazy"][1]
    assert len(fig.axes) == 4
    for ax, metric in zip(fig.axes, ("compile", "ttfm", "tbm", "fresh")):
        assert ax.get_xscale() == "log" and len(ax.lines) == 1 + 2  # the strategy's CDF, the line at 1, the median's
        xs, ys = ax.lines[0].get_data()
        assert np.allclose(xs, np.sort(ratios[metric].to_numpy(dtype=float)))
        assert ys[-1] == pytest.approx(1.0)
    assert "lazy over llguidance: 3 schemas" in " ".join(t.get_text() for t in fig.legends[0].get_texts())
    with pytest.raises(MissingRows, match="paired"):
        fig_fresh_paired(df)


def test_the_speed_sweeps_fresh_answer_is_compile_plus_walk_zeros_masks_and_advances():
    rows = pd.DataFrame([
        {"task": "age", "strategy": "tabled", "sample": 0, "compile_ms": 10.0, "mask_us": [1000.0, 500.0],
         "advance_us": [250.0], "vocab_size": 83},
        {"task": "age", "strategy": "tabled", "sample": 1, "compile_ms": 10.0, "mask_us": [1.0, 1.0], "vocab_size": 83},
        {"task": "age", "strategy": "llguidance", "sample": 0, "compile_ms": 2.0, "mask_us": [20.0] * 4,
         "vocab_size": 83},
    ])
    got = fresh_answer_summary(rows).set_index("strategy")
    assert got.loc["tabled", "fresh_answer_ms"] == pytest.approx(11.75)
    assert got.loc["tabled", "cold_walk_masks_ms"] == pytest.approx(1.5)
    assert got.loc["tabled", "cold_walk_advances_ms"] == pytest.approx(0.25)
    assert got.loc["llguidance", "fresh_answer_ms"] == pytest.approx(2.08)  # (no advances stored: none counted)


def test_the_speed_command_prints_the_stored_summary_and_says_when_there_is_none(tmp_path, capsys):
    from structbench.experiments.speed import main

    rows = []
    for strategy, compile_ms, masks in (("tabled", 10.0, [1000.0, 500.0]), ("llguidance", 2.0, [20.0] * 4)):
        for sample in (0, 1):  # a cold walk, then a warm one over the same compile
            r = row(strategy, "-", compile_ms=compile_ms, mask_us=masks if sample == 0 else [3.0] * len(masks))
            r.update(experiment="speed", kind="speed", task="age", sample=sample, cold=sample == 0)
            rows.append(r)
    path = part_path(tmp_path, "speed", "t")
    path.parent.mkdir(parents=True)
    write_part(rows, path)
    assert main([str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "fresh answer per task" in out and "mask time per step (speed: warm walks" in out
    lines = out.splitlines()
    header = lines[lines.index(next(x for x in lines if x.startswith("fresh answer"))) + 1].split()
    fresh = {line.split()[1]: dict(zip(header, line.split())) for line in lines if line.strip().startswith("age ")}
    assert {s: float(v["fresh_answer_ms"]) for s, v in fresh.items()} == pytest.approx({"tabled": 11.5,
                                                                                       "llguidance": 2.08})
    assert float(fresh["tabled"]["vs_llguidance"]) == pytest.approx(11.5 / 2.08, abs=1e-3)
    masks = lines[lines.index(next(x for x in lines if x.startswith("mask time per step"))) + 2:]
    assert [float(x.split()[2]) for x in masks if x.split() and x.split()[0] in ("tabled", "llguidance")] == [3.0, 3.0]
    assert main([str(tmp_path / "empty")]) == 1
    assert "no speed rows" in capsys.readouterr().out
