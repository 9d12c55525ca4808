"""Our stored rows are what the code writes: the `lazy` strategy's stored speed and fresh (sample) trials, rerun as
they were made (the sweep's command, strategy=lazy, in a new process), give the same stable columns
(structbench.report.compare: every allowed count, the masks built, the characters stepped; timing and provenance
aside). A change that moves a counter must rerun those rows and say so (2026-12-07: eleven stored fresh rows'
work_chars had drifted unnoticed).

A trial's counters are its settings' alone, whichever trials its process ran before (a fresh trial run first used
to count fewer masks built, having read the vocabulary setup's own stored masks: json_syntax.learn_syntax);
the sweeps run in a new process here all the same, as a user reruns them."""

import shutil

import pyarrow.parquet as pq
import pytest
from helpers import CORPUS, ROOT, require_llama3, run_cli

from structbench.report.compare import compare_experiment

SWEEPS = {"speed": ["+sweep=speed", "strategy=lazy"], "fresh": ["+sweep=fresh", "strategy=lazy"]}


@pytest.mark.slow
@pytest.mark.parametrize("experiment", sorted(SWEEPS))
def test_our_stored_rows_are_what_the_code_writes(tmp_path, experiment):
    stored = [path for path in sorted((ROOT / "results" / experiment).glob("part-*.parquet"))
              if pq.read_table(path, columns=["strategy"]).column("strategy")[0].as_py() == "lazy"]
    if not stored:
        pytest.skip(f"no stored lazy {experiment} rows in this checkout")
    require_llama3()
    pytest.importorskip("llguidance")  # (the stored trials walk it beside each schema or cold start: `paired`)
    if experiment == "fresh" and not CORPUS.is_dir():
        pytest.skip("the MaskBench corpus is not here ($STRUCTBENCH_DATA)")
    old, new = tmp_path / "old", tmp_path / "new"
    (old / experiment).mkdir(parents=True)
    for path in stored:
        shutil.copy(path, old / experiment)
    done = run_cli(*SWEEPS[experiment], f"results_dir={new}", timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    assert compare_experiment(old, new, experiment) == [], \
        f"rerun the stored lazy rows ({' '.join(SWEEPS[experiment])} force=true) and say what moved"
