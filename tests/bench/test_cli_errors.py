"""Errors on the command line path end in one line, `structbench: error: ...`, and exit status 2, even those no
check of ours anticipates (Python's recursion limit, a file the system cannot read)."""

import pytest
from helpers import run_cli


def _one_line(out, *said):
    assert out.returncode == 2, out.stderr
    assert out.stderr.startswith("structbench: error: ") and out.stderr.count("\n") == 1, out.stderr
    for s in said:
        assert s in out.stderr, out.stderr


@pytest.mark.parametrize("args,said", [
    (["task.path=x.json"], "needs task.reference"),
    (["task.reference=1"], "needs task.path"),
    (["task.path=/proc/self/mem", "task.reference=1"], "cannot be read"),
])
def test_a_file_task_missing_what_it_needs_says_so(tmp_path, args, said):
    _one_line(run_cli("task=file", *args, "n=1", f"results_dir={tmp_path / 'r'}"), said)
    assert not (tmp_path / "r").exists()


def test_a_schema_nested_past_pythons_recursion_limit_fails_in_one_line(tmp_path):
    n = 3000
    deep = tmp_path / "deep.json"
    deep.write_text('{"type": "object", "properties": {"a": ' * n + "{}" + "}}" * n)
    out = run_cli("task=file", f"task.path={deep}", "task.reference='{}'", "n=1", f"results_dir={tmp_path / 'r'}")
    _one_line(out, "nests objects and arrays deeper than Python's JSON reader can", "limits.max_nesting")
