"""validity: sample `n` answers under one strategy and sort each by the referee's verdict."""

from __future__ import annotations

import time

import numpy as np
from tqdm import tqdm

from structbench.referees import categorize
from structbench.strategies import compile_constraint, generate


def run(settings: dict, trial, progress: bool = False) -> list[dict]:
    strategy = settings["strategy"]["name"]
    t0 = time.perf_counter()
    constraint = compile_constraint(trial.task, trial.vocab, strategy)
    compile_ms = (time.perf_counter() - t0) * 1000
    work = constraint.work if constraint is not None else None
    compile_work = work.chars if work else 0
    referee = trial.task.referee()
    rng = np.random.default_rng(settings["seed"])
    rows = []
    for sample in tqdm(range(settings["n"]), desc=trial.label, disable=not progress, leave=False):
        chars0, reads0 = (work.chars, work.reads) if work else (0, 0)
        t = time.perf_counter()
        answer = generate(trial.model, rng, strategy, constraint, referee, settings["max_tokens"], settings["max_attempts"])
        wall_ms = (time.perf_counter() - t) * 1000
        valid = referee(answer.text)
        rows.append({
            "sample": sample,
            "text": answer.text,
            "finished": answer.finished,
            "category": categorize(answer.text, answer.finished, valid, trial.task.opening),
            "n_tokens": answer.n_tokens,
            "attempts": answer.attempts,
            "removed_mass": answer.removed_mass,
            "mask_us": answer.mask_us,
            "allowed_counts": answer.allowed_counts,
            "compile_ms": compile_ms,
            "compile_work_chars": compile_work,
            "work_chars": (work.chars - chars0) if work else 0,
            "work_reads": (work.reads - reads0) if work else 0,
            "wall_ms": wall_ms,
        })
    return rows
