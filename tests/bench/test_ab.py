"""The A/B harness (structbench.bench.ab): two checkouts in their own processes walk a corpus alternately, every mask
compared bit for bit; its summary's ratios on rows of known times; the sides it refuses, by name."""

import json
import subprocess

import numpy as np
import pandas as pd
import pytest
from helpers import ROOT

from structbench.bench import ab
from structbench.masking import trie_walk

OK = {"schema": {"type": "object", "properties": {"age": {"type": "integer"}}, "required": ["age"]},
      "tests": [{"data": {"age": 42}, "valid": True}]}
NAMES = {"schema": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 4}}},
         "tests": [{"data": {"name": "ab"}, "valid": True}]}


@pytest.fixture
def corpus(tmp_path):
    folder = tmp_path / "corpus"
    folder.mkdir()
    for name, file in {"Toy---age.json": OK, "Toy---name.json": NAMES, "Toy---none.json": {"schema": {}}}.items():
        (folder / name).write_text(json.dumps(file))
    return folder


def _require_git() -> None:
    if subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], check=False, capture_output=True).returncode:
        pytest.skip("the checkout is not a git repository: no revision to check out")


def _worktrees() -> str:
    return subprocess.run(["git", "-C", str(ROOT), "worktree", "list"], check=False, capture_output=True,
                          text=True).stdout


def test_a_revision_and_a_checkout_walk_the_same_schemas_alternately(corpus, tmp_path, monkeypatch, capsys):
    _require_git()
    before = _worktrees()
    monkeypatch.chdir(ROOT)
    cached = {}
    warm_up = ab.warm_numba_caches

    def warm_up_seen(path, roots, config, scratch):  # each side's numba cache is in its checkout before it is measured
        warm_up(path, roots, config, scratch)
        cached.update({name: sorted((root / "structbench").rglob("*.nbi")) for name, root in roots.items()})

    monkeypatch.setattr(ab, "warm_numba_caches", warm_up_seen)
    out = tmp_path / "rows.parquet"
    code = ab.main(["HEAD", str(ROOT), "--corpus", str(corpus), "--every", "1", "--vocab", "toy", "--out", str(out),
                    "--repeats", "2"])
    printed = capsys.readouterr().out
    assert code == 0, printed
    rows = pd.read_parquet(out)
    assert len(rows) == 12  # 3 schemas x 2 sides x 2 repeats, the failure included
    assert list(rows["side"]) == ["A", "B", "B", "A", "A", "B"] * 2  # the first side alternates
    assert list(rows["repeat"]) == [0] * 6 + [1] * 6
    walked = rows[rows["outcome"] == "ok"]
    assert sorted(set(walked["schema_file"])) == ["Toy---age.json", "Toy---name.json"]
    assert (walked["n_masks"] > 2).all()  # every mask of the cold and the warm walk, digested
    assert set(rows.loc[rows["schema_file"] == "Toy---none.json", "outcome"]) == {"no_instance"}
    assert "2 walked by both" in printed and "per repeat (a new pair of processes each): " in printed
    assert "every schema: the same outcome, allowed counts and mask bits on both sides" in printed
    assert "HEAD (" in printed and f"{ROOT} (working tree)" in printed
    assert _worktrees() == before  # the revision's worktree is removed
    if trie_walk.compiled():  # (the new worktree's kernels compiled and cached by the warm-up, not by a measured side)
        assert cached["A"]  # (B, the working tree, may hold other revisions' cache files too: only A's are asked)


def _row(name, side, compile_ms, masks, advances, bits="x", outcome="ok", instance=0):
    return {"repeat": 0, "schema_file": name, "side": side, "outcome": outcome, "compile_ms": compile_ms, "mask_us": masks,
            "advance_us": advances, "warm_mask_us": None, "warm_advance_us": None, "allowed_counts": [len(masks)],
            "instance": instance, "masks": bits}


def test_the_summary_compares_the_schemas_both_walked():
    rows = pd.DataFrame([
        _row("s1", "A", 1.0, [1000.0, 4000.0], [5000.0]),      # fresh 1 + 10 ms = 11 ms; TBM step: 4,000 µs
        _row("s1", "B", 2.0, [500.0, 2000.0], [2500.0]),       # 2 + 5 = 7 ms; 2,000 µs
        _row("s2", "A", 1.0, [1000.0], []),                   # 2 ms
        _row("s2", "B", 1.0, [3000.0], [], bits="y"),          # 4 ms, other mask bits
        _row("s3", "A", 1.0, [1.0], [], instance=0),           # walked other instances: not compared
        _row("s3", "B", 1.0, [1.0], [], instance=1),
        _row("s4", "A", 1.0, [], [], outcome="unsupported"),
        _row("s4", "B", 1.0, [1.0], []),
    ])
    found = ab.summary(rows)
    assert found["schemas"] == 4 and found["walked_by_both"] == 2
    table = found["table"].set_index(["metric", "stat"])
    assert table.loc[("fresh answer (ms)", "sum"), "A"] == pytest.approx(13.0)
    assert table.loc[("fresh answer (ms)", "sum"), "ratio"] == pytest.approx(11.0 / 13.0)
    assert table.loc[("TBM (µs)", "p50"), "ratio"] == pytest.approx(0.5)  # s1's one step after the first
    assert found["per_schema_median"] == pytest.approx(np.median([7 / 11, 4 / 2]))
    low, high = found["per_schema_interval"]
    assert 7 / 11 <= low <= high <= 2.0
    diff = ab.differences(rows).set_index("schema_file")
    assert diff.loc["s2", "differs"] == "mask bits"
    assert diff.loc["s3", "differs"] == "instance"
    assert diff.loc["s4", "differs"].startswith("outcome")
    assert "s1" not in diff.index


@pytest.mark.parametrize("spec, says", [("no-such-revision-xyz", "neither a directory nor a revision"),
                                        ("{tmp}", "holds no structbench checkout")])
def test_a_side_that_is_no_code_is_named(spec, says, corpus, tmp_path, monkeypatch, capsys):
    _require_git()
    monkeypatch.chdir(ROOT)
    spec = spec.format(tmp=tmp_path)
    code = ab.main([spec, str(ROOT), "--corpus", str(corpus), "--vocab", "toy"])
    err = capsys.readouterr().err
    assert code == 2
    assert says in err and spec in err
