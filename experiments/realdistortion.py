"""realdistortion: how far masking moves a real model's answers (SmolLM2), where p* cannot be summed.

On the toy model kind=distortion computes p*, the model's law given validity, exactly. A real model's p*
cannot be summed, but for locally constrained decoding (LCD: tabled or naive) one quantity still can be
estimated from runs: with a model whose next-token law is the softmax of logits fixed by the prefix, at
temperature 1, an LCD answer y has q(y) = p(y) / Π_t Z_t(y), Z_t the kept mass at step t (1 - the row's
removed_mass). With Q = q's chance of finishing within the budget and q̃ = q given that,

    KL(q̃‖p*) = log Z - log Q - E_q̃[Σ_t log Z_t]        (Z = P(valid, ended within max_tokens) under p)

(Q = 1 gives the issue's KL(q‖p*) = log Z - E_q[Σ log Z_t]). SMC's Ẑ is unbiased for Z; the LCD runs give
Q and the mean. structbench.report.real_distortion computes the estimate with its interval, and the law of
the answers under each strategy, from this experiment's stored rows only.

One trial = task x strategy: `n` independent runs, every one asked the same prompt, the task's reference
facts (a real model's sample 0; the distortion is that of one question, asked n times), one row per answer:

    every strategy   text, finished, category (the referee's), n_tokens, removed_mass, allowed_counts,
                     mask_us, wall_ms, prompt, model_calls, tokens_drawn, constraint_checks (one model call
                     and one token per step; a full mask counts the whole vocabulary, none checks nothing)
    smc, awrs        the run's log_z_hat (log Ẑ), particles, final_ess, resamples; model_calls,
                     tokens_drawn and constraint_checks count all particles

Strategies: none (the valid share of unconstrained answers, for context), tabled and naive (LCD), smc and
awrs (Ẑ, and answers that approach p* as particles grow). Each strategy draws from a generator of its own,
seeded by (seed, strategy), so the trials of one task are independent and the same settings give the same
rows (timing columns aside).

The identity needs the kept masses to be q's own: temperature 1, and a model whose logits are a function
of the prefix (SmolLM2; the toy model at model.noise=0, where the tests check the estimate against the
exact solver). The toy model's noise breaks it (kind=distortion measures that case exactly).
"""

from __future__ import annotations

import time
import zlib

import numpy as np
from tqdm import tqdm

from structbench.bench.referees import categorize, judge
from structbench.bench.strategies import compile_constraint, generate
from structbench.errors import SettingsError

LCD_STRATEGIES = ("tabled", "naive")
Z_STRATEGIES = ("smc", "awrs")  # unbiased Ẑ
STRATEGIES = ("none",) + LCD_STRATEGIES + Z_STRATEGIES


def _check(settings, trial) -> str:
    strategy = settings.strategy.name
    if strategy not in STRATEGIES:
        raise SettingsError(f"kind=realdistortion runs the strategies {', '.join(STRATEGIES)}, not {strategy!r}")
    if settings.temperature != 1.0:
        raise SettingsError(f"kind=realdistortion estimates the distortion of the model's own law (temperature 1): "
                            f"the kept masses are q's only then; got temperature={settings.temperature:g}")
    model = trial.model
    if not (getattr(model, "deterministic", False) or getattr(model, "noise", None) == 0):
        raise SettingsError(f"kind=realdistortion needs a model whose logits are fixed by the prefix (model=smollm2, "
                            f"or the toy model at model.noise=0), got {type(model).__name__} with noise "
                            f"{getattr(model, 'noise', None)!r}: noise makes the kept masses differ from q's "
                            f"(kind=distortion measures the toy model's noise exactly)")
    return strategy


def _stream(seed: int, strategy: str) -> np.random.Generator:
    """A generator per (seed, strategy): the strategies of one task draw independently (crc32 is stable
    across processes, unlike hash())."""
    return np.random.default_rng([seed, zlib.crc32(strategy.encode())])


def run(settings, trial, progress: bool = False) -> list[dict]:
    """settings: the trial's structbench.bench.settings.Settings."""
    strategy = _check(settings, trial)
    task, vocab, model = trial.task, trial.vocab, trial.model
    constraint = compile_constraint(task, vocab, strategy, settings.key_order, settings.whitespace)
    referee = task.referee()
    sampling = settings.strategy.sampling
    rng = _stream(settings.seed, strategy)
    rows = []
    for sample in tqdm(range(settings.n), desc=trial.label, disable=not progress, leave=False):
        t0 = time.perf_counter()
        answer = generate(model, rng, strategy, constraint, None, settings.max_tokens, 1, 1.0, **sampling)
        wall_ms = (time.perf_counter() - t0) * 1000
        steps = len(answer.removed_mass)
        row = {
            "sample": sample,
            "text": answer.text,
            "finished": answer.finished,
            "category": categorize(answer.text, answer.finished, judge(referee, answer.text), task.opening),
            "n_tokens": answer.n_tokens,
            "attempts": 1,
            "removed_mass": answer.removed_mass,
            "mask_us": answer.mask_us,
            "allowed_counts": answer.allowed_counts,
            "wall_ms": wall_ms,
            "prompt": getattr(model, "prompt", None),
            "model_calls": float(steps),
            "tokens_drawn": float(steps),
            "constraint_checks": float(steps * len(vocab) if constraint is not None else 0),
        }
        if strategy in Z_STRATEGIES:
            row.update(log_z_hat=answer.log_z, particles=answer.particles, final_ess=answer.final_ess,
                       resamples=float(answer.resamples), model_calls=float(answer.model_calls),
                       tokens_drawn=float(answer.tokens_drawn), constraint_checks=float(answer.constraint_checks))
        rows.append(row)
    return rows
