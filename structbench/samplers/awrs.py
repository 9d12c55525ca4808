"""awrs: SMC whose proposal is adaptive weighted rejection sampling (Lipkin et al., COLM 2025).

No mask is built. Per step, tokens are visited in Gumbel-key order (log p + Gumbel noise, sorted: a draw of
the whole vocabulary without replacement from the model's softmax) and checked against the constraint one at
a time; the first accepted token is the sample, which is then exactly a draw from the masked softmax.

Its weight is genlm-control's recursive AWRS estimator of the kept mass Z_t. With R_k the model's mass on the
tokens not yet visited when the accepted token t_k (probability p_k) comes up, and B whether the next token in
key order is accepted too (one more check), the estimate is

    Ŵ = p_k + B · R_{k+1}          (= R_k · (q + (1 - q)·B) with q = p_k / R_k)

Each rejected token contributes its factor (1 - its share of what remained); at the first accepted one the
rest, E[f | remaining] = q·1 + (1 - q)·E[f | remaining without t_k], is estimated by one Bernoulli draw. The
identity holds whichever token comes first, so Ŵ is unbiased for Z_t, and (token, Ŵ) is properly weighted.
R is computed as suffix sums in log space over the sorted probabilities, so a tiny kept mass stays exact.
With no accepted token the particle gets weight 0. Tokens that are not text (special tokens, partial
characters) are rejected without asking the constraint; constraint_checks counts the tokens it was asked.
The toy model's noise is an auxiliary variable here as in smc.py.
"""

from __future__ import annotations

import math
import time

import numpy as np

from structbench.errors import TokenRejected
from structbench.samplers.particles import (
    DEFAULT_ESS_THRESHOLD,
    DEFAULT_PARTICLES,
    run_particles,
)
from structbench.samplers.result import SampledAnswer


def awrs(model, rng: np.random.Generator, constraint, particles: int = DEFAULT_PARTICLES,
         ess_threshold: float = DEFAULT_ESS_THRESHOLD, resampling: str = "systematic",
         max_tokens: int = 40) -> SampledAnswer:
    """One answer from SMC with `particles` AWRS proposals (see structbench.samplers)."""
    return run_particles(model, rng, constraint, awrs_step, "awrs", particles, ess_threshold, resampling,
                         max_tokens)


def awrs_token(logits: np.ndarray, check, rng: np.random.Generator) -> tuple[int | None, float, object, int]:
    """One AWRS draw. `check(token_id) -> (accepted, next_state)` asks the constraint about one token.

    Returns (token id or None when nothing is accepted, log Ŵ, the accepted token's next state, checks made)."""
    top = logits.max()
    log_p = logits - (top + math.log(np.exp(logits - top).sum()))
    keys = log_p + rng.gumbel(size=len(log_p))
    finite = int(np.count_nonzero(np.isfinite(keys)))  # tokens of probability 0 sort last and are never visited
    return awrs_estimate(log_p, np.argsort(-keys, kind="stable")[:finite], check)


def awrs_estimate(log_p: np.ndarray, order: np.ndarray, check) -> tuple[int | None, float, object, int]:
    """The rejection loop and weight for one visiting order (the tokens of positive probability, in key order)."""
    # log R_k: the mass of the tokens from position k on, summed from the small end (no cancellation).
    log_rest = np.logaddexp.accumulate(log_p[order][::-1])[::-1]
    checks = 0
    for k, tid in enumerate(order):
        accepted, state = check(int(tid))
        checks += accepted is not None
        if not accepted:
            continue
        if k + 1 == len(order):
            return int(tid), float(log_p[tid]), state, checks
        next_accepted, _ = check(int(order[k + 1]))
        checks += next_accepted is not None
        log_w = float(log_rest[k]) if next_accepted else float(log_p[tid])
        return int(tid), log_w, state, checks
    return None, -math.inf, None, checks


def token_check(constraint, vocab, state):
    """The per-token check: the end token where the answer may end, a text token where the constraint advances.
    Returns (accepted, next state); accepted is None for a token rejected without asking (not text)."""

    def check(token_id: int):
        if token_id == vocab.eos_id:
            return constraint.can_end(state), None
        if vocab.tokens[token_id] is None:
            return None, None
        try:
            return True, constraint.advance(state, token_id)
        except TokenRejected:
            return False, None

    return check


def awrs_step(model, constraint, particle, logits: np.ndarray, rng: np.random.Generator, cost) -> None:
    """One AWRS step for one particle: token, weight, states and path updated."""
    vocab = model.vocab
    t0 = time.perf_counter_ns()
    token_id, log_w, state, checks = awrs_token(logits, token_check(constraint, vocab, particle.constraint_state),
                                                rng)
    particle.mask_us.append((time.perf_counter_ns() - t0) / 1000.0)
    cost.constraint_checks += checks
    particle.removed_mass.append(float(-math.expm1(log_w)))  # an estimate: 1 - Ŵ
    if token_id is None:
        particle.log_weight = -math.inf
        return
    particle.log_weight += log_w
    cost.tokens_drawn += 1
    if token_id == vocab.eos_id:
        particle.finished = True
        return
    particle.constraint_state = state
    particle.model_state = model.advance(particle.model_state, token_id)
    particle.write(vocab, token_id)
