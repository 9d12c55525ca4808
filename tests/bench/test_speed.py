"""The speed experiment's cold starts: each compile from a new process's caches, walked once cold, the first
compile walked again warm; the summary's fresh answer is the median over the starts."""

import pandas as pd
import pytest

from structbench.bench.runner import run_trial
from structbench.bench.settings import Settings
from structbench.bench.store import read_results
from structbench.errors import LimitExceeded, SettingsError
from structbench.report.summary import cold_steps, fresh_answer_summary
from tests.helpers import settings_of

from structbench.experiments.speed import format_steps
from structbench.experiments.speed import main as speed_main


def _settings(compose, tmp_path, *extra):
    return Settings.from_dict(settings_of(compose(["kind=speed", "experiment=s", "task=person", "strategy=lazy",
                                                   "vocab=toy", "key_order=schema", "n=3", f"results_dir={tmp_path}",
                                                   "progress=false", *extra])))


def test_each_cold_start_compiles_anew_and_walks_once_cold(compose, tmp_path):
    run_trial(_settings(compose, tmp_path, "+cold_starts=4"))
    df = read_results(tmp_path, "s")
    assert df["sample"].tolist() == list(range(6))
    assert df["cold"].tolist() == [True, False, False, True, True, True]
    # The warm walks read the first compile's masks, each cold walk builds its own, the same ones.
    assert (df.loc[~df["cold"], "masks_built"] == 0).all()
    built = df.loc[df["cold"], "masks_built"]
    assert (built > 0).all() and built.nunique() == 1
    assert df["allowed_counts"].map(tuple).nunique() == 1  # every walk, cold or warm, the same masks
    cold = df[df["cold"]]
    assert cold["compile_ms"].nunique() == 4  # a compile each, timed on its own
    assert (df.loc[~df["cold"], "compile_ms"] == cold["compile_ms"].iloc[0]).all()
    got = fresh_answer_summary(df).iloc[0]
    assert got["cold_starts"] == 4
    assert got["fewest_ms"] <= got["fresh_answer_ms"] <= got["most_ms"]


def test_one_cold_start_is_the_default_and_bad_counts_are_named(compose, tmp_path):
    run_trial(_settings(compose, tmp_path))
    assert read_results(tmp_path, "s")["cold"].tolist() == [True, False, False]
    for bad in ("0", "1.5", "true"):
        with pytest.raises(SettingsError, match="cold_starts"):
            run_trial(_settings(compose, tmp_path / bad, f"+cold_starts={bad}"))
    with pytest.raises(LimitExceeded, match="max_answers"):
        run_trial(_settings(compose, tmp_path / "many", "+cold_starts=10", "+limits.max_answers=11"))
    assert not (tmp_path / "0").exists() and not (tmp_path / "many").exists()  # nothing written


def test_the_fresh_answer_is_the_median_over_cold_walks_with_its_range_and_ratio():
    def walk(strategy, sample, cold, compile_ms, masks, advances=None):
        return {"task": "age", "strategy": strategy, "sample": sample, "cold": cold, "compile_ms": compile_ms,
                "mask_us": masks, "advance_us": advances, "vocab_size": 83}

    rows = pd.DataFrame([
        walk("lazy", 0, True, 1.0, [1000.0], [1000.0]),  # 3 ms
        walk("lazy", 1, False, 1.0, [1.0], [1.0]),  # warm: not a fresh answer
        walk("lazy", 2, True, 2.0, [2000.0], [1000.0]),  # 5 ms
        walk("lazy", 3, True, 1.0, [9000.0], [0.0]),  # 10 ms
        walk("llguidance", 0, True, 1.0, [500.0], [500.0]),  # 2 ms
        walk("llguidance", 1, None, 9.0, [1.0]),  # a part from before the column: walk 1 was warm
    ])
    got = fresh_answer_summary(rows).set_index("strategy")
    assert got.loc["lazy", ["cold_starts", "fresh_answer_ms", "fewest_ms", "most_ms"]].tolist() == [3, 5.0, 3.0, 10.0]
    assert got.loc["lazy", "compile_ms"] == 1.0 and got.loc["lazy", "cold_walk_masks_ms"] == 2.0
    assert got.loc["lazy", "vs_llguidance"] == pytest.approx(2.5)
    assert got.loc["llguidance", "cold_starts"] == 1 and got.loc["llguidance", "vs_llguidance"] == 1.0


def test_a_paired_strategy_is_walked_cold_at_each_start_and_stored_on_the_cold_rows(compose, tmp_path):
    run_trial(_settings(compose, tmp_path, "+cold_starts=3", "+paired=tabled"))
    df = read_results(tmp_path, "s")
    cold = df[df["cold"]]
    assert (cold["paired_strategy"] == "tabled").all() and (cold["paired_fresh_ms"] > 0).all()
    assert df.loc[~df["cold"], "paired_strategy"].isna().all() and df.loc[~df["cold"], "paired_fresh_ms"].isna().all()
    # The pairing does not touch this strategy's own walks: the same masks as a trial without it.
    run_trial(_settings(compose, tmp_path / "alone", "+cold_starts=3"))
    alone = read_results(tmp_path / "alone", "s")
    assert alone["paired_strategy"].isna().all()
    assert df["allowed_counts"].map(tuple).tolist() == alone["allowed_counts"].map(tuple).tolist()
    assert df["masks_built"].tolist() == alone["masks_built"].tolist()
    got = fresh_answer_summary(df).iloc[0]
    assert got["paired"] == "tabled" and got["vs_paired"] > 0
    # Its walk is stored step by step beside this one's: a mask per step, an advance per token taken, and its
    # fresh answer is its compile and those.
    for _, r in cold.iterrows():
        assert len(r["paired_mask_us"]) == len(r["mask_us"]) and len(r["paired_advance_us"]) == len(r["advance_us"])
        assert r["paired_compile_ms"] > 0 and r["paired_fresh_ms"] == pytest.approx(
            r["paired_compile_ms"] + (sum(r["paired_mask_us"]) + sum(r["paired_advance_us"])) / 1000)
    assert df.loc[~df["cold"], "paired_mask_us"].isna().all()
    steps = cold_steps(df)
    assert steps["step"].tolist() == list(range(len(cold["mask_us"].iloc[0])))
    assert (steps["paired"] == "tabled").all() and (steps["cold_starts"] == 3).all()


def test_cold_steps_are_each_steps_median_over_the_cold_starts_beside_the_paired_walks():
    def walk(sample, cold, masks, advances, paired=None):
        return {"task": "age", "strategy": "lazy", "sample": sample, "cold": cold, "compile_ms": 1.0,
                "mask_us": masks, "advance_us": advances, "vocab_size": 83, "vocab": "toy", "text": '{"age": 3}',
                "paired_strategy": None if paired is None else "llguidance",
                "paired_mask_us": None if paired is None else paired[0],
                "paired_advance_us": None if paired is None else paired[1]}

    rows = pd.DataFrame([
        walk(0, True, [10.0, 40.0, 5.0], [1.0, 2.0], ([5.0, 4.0, 1.0], [1.0, 1.0])),
        walk(1, False, [0.1, 0.1, 0.1], [0.1, 0.1]),  # warm: not a cold step
        walk(2, True, [30.0, 90.0, 7.0], [3.0, 2.0], ([9.0, 6.0, 1.0], [1.0, 1.0])),
        walk(3, True, [20.0, 60.0, 6.0], [2.0, 2.0], ([7.0, 2.0, 1.0], [3.0, 2.0])),
    ])
    got = cold_steps(rows).set_index("step")
    assert got["us"].tolist() == [22.0, 62.0, 6.0]  # the step's mask and the advance by its token; the end's alone
    assert got["paired_us"].tolist() == [10.0, 5.0, 1.0]
    # The median of each start's ratio at the step (11/6, 33/10, 22/10 at step 0): walks seconds apart, not the
    # medians' ratio (2.2 here, 22/10 too; at step 1 the ratios 8.4, 13.1, 15.5 against 62/5 = 12.4)
    assert got.loc[0, "vs_paired"] == pytest.approx(2.2) and got.loc[1, "vs_paired"] == pytest.approx(92 / 7)
    assert (got["cold_starts"] == 3).all()
    # Without pairs (the paired strategy's own trial, parts written before the columns): no paired columns
    alone = cold_steps(rows.drop(columns=["paired_strategy", "paired_mask_us", "paired_advance_us"]))
    assert "paired_us" not in alone and alone["us"].tolist() == [22.0, 62.0, 6.0]
    table = format_steps(rows)
    assert "| 1 | '\"age\"' | 62.0 | 5.0 | 13.14 |" in table  # the toy vocabulary spells it: step 1 is `"age"`
    # The steps holding the difference: 74 µs in all, step 1 alone 57 of it
    assert ("lazy takes 74 µs more than llguidance over the steps where it is slower, 0 µs less over the others; the "
            "3 it is slowest at hold 100% of the former: 1 ('\"age\"': +57 µs), 0 ('{': +12 µs)") in table
    # Two vocabulary sizes (a vocab sweep's speed trials): a table each, not their steps mixed
    both = format_steps(pd.concat([rows, rows.assign(vocab_size=100, sample=rows["sample"] + 10)]))
    assert both.count("### age (83 tokens): lazy") == 1 and both.count("### age (100 tokens): lazy") == 1
    assert both.count("| 1 | '\"age\"' | 62.0 | 5.0 | 13.14 |") == 2
    # A vocabulary that cannot be loaded here (a synthetic one: its seed is not in the rows): steps by number alone
    unnamed = format_steps(rows.assign(vocab="synthetic"))
    assert "| 1 |  | 62.0 | 5.0 | 13.14 |" in unnamed and "hold 100% of the former: 1 (+57 µs), 0 (+12 µs)" in unnamed


def test_the_steps_command_names_what_it_cannot_show(compose, tmp_path, capsys):
    run_trial(_settings(compose, tmp_path, "+cold_starts=2", "+paired=tabled"))
    (tmp_path / "s").rename(tmp_path / "speed")  # (the command reads a results folder's speed experiment)
    assert speed_main([str(tmp_path), "--steps", "--task", "person"]) == 0
    out = capsys.readouterr().out
    assert "### person: lazy beside tabled" in out and "| 0 | '{' |" in out.replace('"', "'")
    with pytest.raises(SystemExit):
        speed_main([str(tmp_path), "--task", "person"])  # --task chooses what --steps shows
    assert "add --steps" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        speed_main([str(tmp_path), "--steps", "--task", "nosuch"])
    assert "no speed rows of task 'nosuch'" in capsys.readouterr().err
    run_trial(_settings(compose, tmp_path / "alone", "+cold_starts=2"))
    (tmp_path / "alone" / "s").rename(tmp_path / "alone" / "speed")
    assert speed_main([str(tmp_path / "alone"), "--steps"]) == 1
    assert "paired strategy's steps" in capsys.readouterr().out


def test_pairing_with_itself_walks_alone_and_a_bad_pair_is_named(compose, tmp_path):
    run_trial(_settings(compose, tmp_path, "+paired=lazy"))  # the paired strategy's own trial
    assert read_results(tmp_path, "s")["paired_strategy"].isna().all()
    for bad in ("retry", "smc", "nosuch", "3"):
        with pytest.raises(SettingsError, match="paired"):
            run_trial(_settings(compose, tmp_path / bad, f"+paired={bad}"))
        assert not (tmp_path / bad).exists()  # nothing written


def test_vs_paired_is_the_median_of_each_starts_ratio():
    def walk(strategy, sample, cold, answer_ms, paired_ms=None):
        return {"task": "age", "strategy": strategy, "sample": sample, "cold": cold, "compile_ms": 0.0,
                "mask_us": [answer_ms * 1000], "advance_us": [0.0], "vocab_size": 83,
                "paired_strategy": None if paired_ms is None else "llguidance", "paired_fresh_ms": paired_ms}

    rows = pd.DataFrame([
        walk("lazy", 0, True, 4.0, 2.0),  # 2x
        walk("lazy", 1, False, 0.1),  # warm: no pair
        walk("lazy", 2, True, 9.0, 3.0),  # 3x
        walk("lazy", 3, True, 5.0, 5.0),  # 1x: the host was slow for both
        walk("llguidance", 0, True, 2.0),
    ])
    got = fresh_answer_summary(rows).set_index("strategy")
    assert got.loc["lazy", "paired"] == "llguidance" and got.loc["lazy", "vs_paired"] == pytest.approx(2.0)
    assert got.loc["lazy", "vs_llguidance"] == pytest.approx(2.5)  # across trials: 5 ms over 2 ms
    assert got.loc["llguidance", "paired"] == "llguidance" and got.loc["llguidance", "vs_paired"] == 1.0
    # the spread of the starts' ratios beside their median: 1x to 3x, where the median alone says 2x
    assert got.loc["lazy", "vs_paired_fewest"] == pytest.approx(1.0)
    assert got.loc["lazy", "vs_paired_most"] == pytest.approx(3.0)
    assert got.loc["llguidance", ["vs_paired_fewest", "vs_paired_most"]].tolist() == [1.0, 1.0]
    assert list(got.columns[-4:]) == ["paired", "vs_paired", "vs_paired_fewest", "vs_paired_most"]


def test_rows_record_the_interpreter_and_array_libraries_that_timed_them(compose, tmp_path):
    """runtime: the Python that ran the trial, told apart from another build of the same version (its build date and
    compiler), and NumPy's and numba's versions: on one host two CPython 3.11 builds time our cold path a tenth
    apart (docs/running.md), and a row must say which one timed it."""
    import importlib.metadata
    import json
    import platform

    run_trial(_settings(compose, tmp_path))
    got = read_results(tmp_path, "s")["runtime"].map(json.loads)
    try:
        numba = importlib.metadata.version("numba")
    except importlib.metadata.PackageNotFoundError:
        numba = None
    expected = {"python": platform.python_version(), "implementation": platform.python_implementation(),
                "build": " ".join(platform.python_build()), "compiler": platform.python_compiler(),
                "numpy": importlib.metadata.version("numpy"), "numba": numba}
    assert got.tolist() == [expected] * len(got) and len(got) == 3


def test_rows_record_the_engines_they_ran_and_their_versions(compose, tmp_path):
    """engine_versions: the installed version of each engine a trial ran (its strategy, or the one paired with it),
    null where it ran none: an engine's new release moves its times, and a row must say which one it timed."""
    import importlib.metadata
    import json

    pytest.importorskip("llguidance")
    run_trial(_settings(compose, tmp_path / "ours", "+paired=tabled"))
    assert read_results(tmp_path / "ours", "s")["engine_versions"].isna().all()
    run_trial(_settings(compose, tmp_path / "paired", "+paired=llguidance"))
    run_trial(_settings(compose, tmp_path / "engine", "strategy=llguidance"))
    installed = {"llguidance": importlib.metadata.version("llguidance")}
    for folder in ("paired", "engine"):
        got = read_results(tmp_path / folder, "s")["engine_versions"]
        assert got.map(json.loads).tolist() == [installed] * len(got)
