"""The coverage sweep never stops, hangs or blows memory on one corpus file: whatever a file does is that schema's
outcome row, named by what went wrong, and the other files of the corpus get theirs.

Issue 13's coverage part. Each hostile file is written into a temporary MaskBench-format corpus
(`<subset>---<id>.json` holding `{"schema": ..., "tests": [{"data": ..., "valid": ...}]}`, see docs/coverage.md)
and run once directly (a wall-clock bound per file) and once through the real command line as a sweep, under an
address-space cap and a timeout."""

import json
import os
import resource
import subprocess
import sys
import time

import pandas as pd
from helpers import ROOT, require_llama3
from structbench.experiments.coverage import corpus_files, schema_rows

from structbench.bench.referees import UNJUDGED
from structbench.limits import Limits, using
from structbench.lm.vocab import toy_vocabulary
from structbench.report.summary import VERDICTS

GOOD = {"schema": {"type": "integer"}, "tests": [{"data": 3, "valid": True}, {"data": "x", "valid": False}]}
DEPTH = 5000
MEMORY_CAP = 3 * 1024 ** 3  # bytes of address space for the whole sweep


def _deep(depth: int) -> str:
    return '{"type": "object", "properties": {"a": ' * depth + "{}" + "}}" * depth


def _write_corpus(folder):
    """The hostile files (and two good ones around them); returns what each must come out as:
    (outcome or instance category, words its detail must hold)."""
    def put(name, text):
        (folder / f"H---{name}.json").write_text(text)

    put("a_good", json.dumps(GOOD))
    put("deep", '{"schema": ' + _deep(DEPTH) + ', "tests": [{"data": 1}]}')
    put("bigint", '{"schema": {"type": "integer", "maximum": ' + "9" * 5000 + '}, "tests": [{"data": 1}]}')
    put("tinymult", json.dumps({"schema": {"type": "integer", "multipleOf": 1e-300}, "tests": [{"data": 3}]}))
    put("infinity", '{"schema": {"type": "integer", "maximum": Infinity}, "tests": [{"data": 3}]}')
    put("nan", '{"schema": {"type": "integer", "minimum": NaN}, "tests": [{"data": 3}]}')
    put("backtrack", json.dumps({"schema": {"type": "string", "pattern": "^(a+)+$"},
                                 "tests": [{"data": "a" * 41 + "!", "valid": False}, {"data": "aaa", "valid": True}]}))
    os.mkfifo(folder / "H---fifo.json")
    os.symlink("/dev/zero", folder / "H---zero.json")
    put("z_good", json.dumps(GOOD))


# What each file must give. The compile-side cases (tinymult, infinity, nan) either compile, and then every
# instance gets a sound verdict, or fail naming the problem: the exception Python raised or, where the compiler
# checks the bound first, the keyword (an unsupported or invalid schema).
EXPECTED = {
    "a_good": ("ok", ()),
    "z_good": ("ok", ()),
    "deep": ("error", ("RecursionError",)),
    "bigint": ("error", ("ValueError", "digits")),
    "fifo": ("error", ("not a regular file",)),
    "zero": ("error", ("not a regular file",)),
}
COMPILE_SIDE = {"tinymult": "multipleOf", "infinity": "maximum", "nan": "minimum"}


def _named_or_sound(rows, keyword):
    """A compiled schema's instances each have a verdict, none an invalid one accepted; a failed compile's row
    names what failed: the keyword, or an exception's type (`SomeError: ...`)."""
    if rows[0]["outcome"] == "ok":
        return all(r["category"] in VERDICTS and r["category"] != "invalid_accepted" for r in rows)
    detail = rows[0]["outcome_detail"] or ""
    return len(rows) == 1 and rows[0]["outcome"] in ("error", "unsupported") and (
        keyword in detail or detail.split(":")[0].endswith(("Error", "Operation")))


def _check(rows_by_name):
    for name, (outcome, words) in EXPECTED.items():
        rows = rows_by_name[name]
        assert len(rows) >= 1 and rows[0]["outcome"] == outcome, (name, rows)
        assert all(w in (rows[0]["outcome_detail"] or "") for w in words), (name, rows[0]["outcome_detail"])
    assert [r["category"] for r in rows_by_name["a_good"]] == ["valid_accepted", "invalid_rejected"]
    for name, keyword in COMPILE_SIDE.items():
        assert _named_or_sound(rows_by_name[name], keyword), rows_by_name[name]
    near_miss, plain = rows_by_name["backtrack"]
    assert near_miss["category"] == UNJUDGED and pd.isna(near_miss["referee_valid"])
    assert "limits.referee_seconds" in near_miss["outcome_detail"]
    assert near_miss["accepted"] is not None and not near_miss["accepted"]  # still walked: the checker's verdict
    assert plain["category"] == "valid_accepted"


def test_each_hostile_file_is_its_own_named_outcome_row(tmp_path):
    _write_corpus(tmp_path)
    vocab, rows = toy_vocabulary(), {}
    with using(Limits(referee_seconds=1)):
        for path in corpus_files(tmp_path):
            t = time.perf_counter()
            rows[path.stem.split("---")[1]] = schema_rows(path, "tabled", vocab, "lesson", 5, 1)
            assert time.perf_counter() - t < 10, path.name
    assert set(rows) == set(EXPECTED) | set(COMPILE_SIDE) | {"backtrack"}
    _check(rows)


def _capped():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def test_the_coverage_sweep_runs_a_hostile_corpus_to_the_end(tmp_path):
    require_llama3()  # the coverage sweep runs on Llama 3's vocabulary
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    _write_corpus(corpus)
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "structbench", "+sweep=coverage", f"corpus_dir={corpus}",
                          "strategy=tabled", "subset=H", "sample=null", "results_dir=results", "progress=false",
                          "+limits.referee_seconds=1"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=180, preexec_fn=_capped,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr[-2000:]
    assert time.perf_counter() - t < 120
    from structbench.bench.store import read_results

    df = read_results(tmp_path / "results", "coverage")
    rows = {name: [r for r in df.to_dict("records") if r["schema_file"] == f"H---{name}.json"]
            for name in {*EXPECTED, *COMPILE_SIDE, "backtrack"}}
    _check(rows)
    assert "referee_timeout" in out.stdout  # the end-of-sweep table counts it
