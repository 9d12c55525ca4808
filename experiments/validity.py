"""validity: sample `n` answers under one strategy and sort each by the referee's verdict."""

from __future__ import annotations

import time

import numpy as np
from tqdm import tqdm

from structbench.bench.referees import categorize, judge
from structbench.bench.strategies import compile_constraint, generate


def answer_rows(task, vocab, model, strategy: str, n: int, seed: int, max_tokens: int, max_attempts: int,
                progress: bool = False, desc: str = "", key_order: str = "any", temperature: float = 1.0,
                whitespace: str = "lesson", sampling: dict | None = None) -> list[dict]:
    """n answers from a generator seeded `seed`, one row each (the columns that vary per answer).

    A real model is asked each answer's own prompt (`model.for_sample`: its own facts, see
    structbench.bench.prompts), stored in the row; the toy model copies its reference and has none.
    `sampling`: a sampler strategy's options (smc, awrs: particles, ess_threshold, resampling)."""
    t0 = time.perf_counter()
    constraint = compile_constraint(task, vocab, strategy, key_order, whitespace)
    compile_ms = (time.perf_counter() - t0) * 1000
    work = constraint.work if constraint is not None else None
    compile_work, compile_masks = (work.chars, work.masks_built) if work else (0, 0)
    referee = task.referee()
    rng = np.random.default_rng(seed)
    rows = []
    for sample in tqdm(range(n), desc=desc, disable=not progress, leave=False):
        chars0, reads0, built0 = (work.chars, work.reads, work.masks_built) if work else (0, 0, 0)
        asked = model.for_sample(sample) if hasattr(model, "for_sample") else model
        t = time.perf_counter()
        answer = generate(asked, rng, strategy, constraint, referee, max_tokens, max_attempts, temperature,
                          **(sampling or {}))
        wall_ms = (time.perf_counter() - t) * 1000
        valid = judge(referee, answer.text)  # None: the referee timed out, filed as its own category
        rows.append({
            "sample": sample,
            "text": answer.text,
            "finished": answer.finished,
            "category": categorize(answer.text, answer.finished, valid, task.opening),
            "n_tokens": answer.n_tokens,
            "attempts": answer.attempts,
            "removed_mass": answer.removed_mass,
            "mask_us": answer.mask_us,
            "allowed_counts": answer.allowed_counts,
            "compile_ms": compile_ms,
            "compile_work_chars": compile_work,
            "work_chars": (work.chars - chars0) if work else 0,
            "work_reads": (work.reads - reads0) if work else 0,
            "compile_masks": compile_masks,
            "masks_built": (work.masks_built - built0) if work else 0,
            "wall_ms": wall_ms,
            "prompt": getattr(asked, "prompt", None),
        })
    return rows


def run(settings, trial, progress: bool = False) -> list[dict]:
    """settings: the trial's structbench.bench.settings.Settings."""
    return answer_rows(trial.task, trial.vocab, trial.model, settings.strategy.name, settings.n, settings.seed,
                       settings.max_tokens, settings.max_attempts, progress, trial.label, settings.key_order,
                       settings.temperature, settings.whitespace, settings.strategy.sampling)
