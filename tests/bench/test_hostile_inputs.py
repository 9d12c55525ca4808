"""Hostile inputs through the command line, each under a wall-clock and a memory bound: every one either runs
(and writes its row) or stops with one line naming what was wrong, never a hang, a traceback or a memory blow-up.

A case is (name, files to write, the arguments, what must happen): "ran", or the words the one-line error says.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time

import pytest
from helpers import ROOT

WALL_SECONDS = 30
MEMORY_BYTES = 3 << 30


def _nested_objects(depth: int) -> str:
    return '{"type": "object", "properties": {"a": ' * depth + '{"type": "string"}' + "}}" * depth


def _properties(n: int) -> str:
    # Names the toy vocabulary can spell (it has no "_").
    return json.dumps({"type": "object", "properties": {f"field{i}": {"type": "string"} for i in range(n)},
                       "additionalProperties": False})


SCHEMA = "task=file"
CASES = [
    # --- patterns ---
    ("subset explosion", {"p.txt": "(a|b)*a(a|b){20}"}, ["task.kind=pattern", "task.reference=ab"],
     ["pattern '(a|b)*a(a|b){20}' needs more than 20,000 states", "+limits.max_dfa_states=N"]),
    ("nested repeats", {"p.txt": "((a{1000}){1000}){1000}"}, ["task.kind=pattern", "task.reference='a'"],
     ["automaton states", "+limits.max_nfa_states=N"]),
    ("deep groups", {"p.txt": "(" * 300 + "a" + ")" * 300}, ["task.kind=pattern", "task.reference='a'"],
     ["nested more than 128 deep", "+limits.max_nesting=N"]),
    ("pattern in a schema", {"s.json": json.dumps({"type": "string", "pattern": "^(a|b)*a(a|b){20}$"})},
     ["task.reference='\"ab\"'"], ["needs more than 20,000 states", "limits.max_dfa_states"]),
    # --- schemas ---
    ("150 nested objects", {"s.json": _nested_objects(150)}, ["task.reference={}"],
     ["nests objects and arrays more than 128 deep", "+limits.max_nesting=N"]),
    ("integer multipleOf 1e-300", {"s.json": '{"type": "integer", "multipleOf": 1e-300}'}, ["task.reference='5'"], "ran"),
    ("maximum Infinity", {"s.json": '{"type": "integer", "maximum": Infinity}'}, ["task.reference='5'"],
     ["maximum must be a finite number (JSON has no Infinity)"]),
    ("NaN minimum", {"s.json": '{"type": "number", "minimum": NaN}'}, ["task.reference='5'"],
     ["minimum must be a finite number (JSON has no NaN)"]),
    ("enum of 100k strings", {"s.json": json.dumps({"enum": [f"value{i}" for i in range(100_000)]})},
     ["task.reference='\"value5\"'"], "ran"),
    ("100 properties", {"s.json": _properties(100)}, ["task.reference='{\"field7\": \"x\"}'"], "ran"),
    ("300 properties", {"s.json": _properties(300)}, ["task.reference='{\"field7\": \"x\"}'"], "ran"),
    ("1,000 properties", {"s.json": _properties(1000)}, ["task.reference='{\"field999\": \"x\"}'"], "ran"),
    ("3 MB schema", {"s.json": json.dumps({"enum": ["x" * 1000] * 3000})}, ["task.reference='\"x\"'"],
     ["larger than 2000000 bytes", "limits.max_schema_bytes"]),
    # --- settings ---
    ("huge vocabulary", {}, ["task=age", "vocab=synthetic", "vocab.size=1000000000"],
     ["a synthetic vocabulary of 1,000,000,000 tokens", "+limits.max_vocab_size=N"]),
    ("a directory as the schema", {"d/x": ""}, ["task.path={tmp}/d", "task.reference='1'"], ["is not a regular file"]),
]


def _limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))


@pytest.mark.parametrize("name, files, args, expect", CASES, ids=[c[0] for c in CASES])
def test_a_hostile_input_runs_or_stops_in_one_line(tmp_path, name, files, args, expect):
    for relative, text in files.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(text)
    task = [] if any(a.startswith("task=") for a in args) else [SCHEMA]
    if files and not any(a.startswith("task.path=") for a in args):
        task.append(f"task.path={tmp_path / next(iter(files))}")
    argv = [*task, *(a.replace("{tmp}", str(tmp_path)) for a in args), "strategy=tabled", "n=1",
            f"results_dir={tmp_path / 'r'}", f"hydra.run.dir={tmp_path / 'h'}"]
    start = time.monotonic()
    out = subprocess.run([sys.executable, "-m", "structbench", *argv], cwd=ROOT, capture_output=True, text=True,
                         timeout=WALL_SECONDS, preexec_fn=_limit_memory, env={**os.environ, "HYDRA_FULL_ERROR": "0"})
    elapsed = time.monotonic() - start
    assert "Traceback" not in out.stderr and "MemoryError" not in out.stderr, out.stderr[-2000:]
    if expect == "ran":
        assert out.returncode == 0, out.stderr[-2000:]
        assert list((tmp_path / "r").rglob("part-*.parquet")), "no row was written"
    else:
        assert out.returncode == 2, (out.returncode, out.stderr[-2000:])
        assert out.stderr.startswith("structbench: error: ") and out.stderr.count("\n") == 1, out.stderr
        for said in expect:
            assert said in out.stderr, out.stderr
        assert not list((tmp_path / "r").rglob("part-*.parquet")), "a failed trial wrote rows"
    assert elapsed < WALL_SECONDS
