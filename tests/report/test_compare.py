"""Comparing two result stores on their stable columns (structbench.report.compare)."""

import shutil

import pyarrow.parquet as pq
from helpers import settings_of

from structbench.bench.runner import run_trial
from structbench.bench.store import part_files
from structbench.report.compare import compare_experiment, main


def _store(compose, folder, n=6):
    for strategy in ("none", "tabled"):
        run_trial(settings_of(compose([f"strategy={strategy}", f"results_dir={folder}", "experiment=t",
                                       f"n={n}", "progress=false"])))
    return folder


def _rewrite(part, column, value):
    table = pq.read_table(part)
    i = table.schema.get_field_index(column)
    values = table.column(column).to_pylist()
    values[0] = value
    table = table.set_column(i, table.schema.field(i), [values])
    pq.write_table(table, part)


def test_a_rerun_is_identical_and_timing_does_not_count(compose, tmp_path):
    old = _store(compose, tmp_path / "old")
    new = _store(compose, tmp_path / "new")  # the same settings again: other times, same rows
    assert compare_experiment(old, new, "t") == []
    _rewrite(part_files(new, "t")[0], "wall_ms", 1e9)
    assert compare_experiment(old, new, "t") == []
    assert main([str(old), str(new), "t"]) == 0


def test_a_changed_answer_or_a_missing_part_is_reported(compose, tmp_path):
    old = _store(compose, tmp_path / "old")
    new = tmp_path / "new"
    shutil.copytree(old, new)
    _rewrite(part_files(new, "t")[0], "text", "something else")
    problems = compare_experiment(old, new, "t")
    assert len(problems) == 1 and "'text': 1" in problems[0]
    part_files(new, "t")[1].unlink()
    problems = compare_experiment(old, new, "t")
    assert any("part files differ" in p for p in problems)
    assert main([str(old), str(new), "t"]) == 1
    assert compare_experiment(old, tmp_path / "empty", "t") == [f"t: no parts in {tmp_path / 'empty'}"]


def test_floats_that_differ_in_their_last_bits_are_reported_apart(compose, tmp_path):
    """Another NumPy build sums in another order: the last bits of a float are not behaviour, and are told apart
    from a real difference of the same column."""
    old = _store(compose, tmp_path / "old")
    new = tmp_path / "new"
    shutil.copytree(old, new)
    part = next(p for p in part_files(new, "t") if pq.read_table(p).column("removed_mass").to_pylist()[0])
    masses = pq.read_table(part).column("removed_mass").to_pylist()  # tabled's: lists of floats, one a step
    _rewrite(part, "removed_mass", [m * (1 + 4e-16) for m in masses[0]])
    problems = compare_experiment(old, new, "t")
    assert len(problems) == 1 and "last bits alone" in problems[0] and "'removed_mass': 1" in problems[0]
    assert main([str(old), str(new), "t"]) == 0
    _rewrite(part, "removed_mass", [m * 1.001 for m in masses[0]])
    problems = compare_experiment(old, new, "t")
    assert len(problems) == 1 and "rows differing per column: {'removed_mass': 1}" in problems[0]
    assert main([str(old), str(new), "t"]) == 1
