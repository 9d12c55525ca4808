"""smc: sequential Monte Carlo with the masked proposal (Loula et al., ICLR 2025).

Each particle proposes its next token from the masked softmax, exactly as masked sampling does, and is
weighted by the step's kept mass Z_t = Σ_{t allowed} softmax(logits)_t. Proposal × weight is then the model's
own probability of the token with invalid tokens zeroed, so the weighted particles target p*(y) ∝ p(y)·[y ∈ L]
and Ẑ estimates Z = P(valid) without bias (structbench.samplers.particles has the loop and resampling).

The toy model's noise: each `model.logits` call draws fresh Normal noise ε on every logit, and the model's law
for the next token is E_ε[softmax(base + ε)]. We treat ε as an auxiliary variable the proposal draws: given ε
the proposal is masked_softmax(base + ε) and the weight Z_t(ε), so weight × proposal = softmax(base + ε)_t·[t
allowed], whose expectation over ε is the model's law restricted to allowed tokens. Hence Ẑ stays unbiased and
the answers still target p*, with the noise adding only variance.
"""

from __future__ import annotations

import math
import time

import numpy as np

from structbench.lm.sampling import masked_softmax
from structbench.samplers.particles import (
    DEFAULT_ESS_THRESHOLD,
    DEFAULT_PARTICLES,
    RESAMPLING,
    run_particles,
)
from structbench.samplers.result import SampledAnswer

__all__ = ["DEFAULT_ESS_THRESHOLD", "DEFAULT_PARTICLES", "RESAMPLING", "masked_step", "smc"]


def smc(model, rng: np.random.Generator, constraint, particles: int = DEFAULT_PARTICLES,
        ess_threshold: float = DEFAULT_ESS_THRESHOLD, resampling: str = "systematic",
        max_tokens: int = 40) -> SampledAnswer:
    """One answer from SMC with `particles` masked proposals (see structbench.samplers)."""
    return run_particles(model, rng, constraint, masked_step, "smc", particles, ess_threshold, resampling,
                         max_tokens)


def masked_step(model, constraint, particle, logits: np.ndarray, rng: np.random.Generator, cost) -> None:
    """One masked-sampling step for one particle, weighted by the kept mass. The draws are sample_answer's:
    one `rng.choice` over the masked softmax, so one particle reproduces masked sampling draw for draw."""
    vocab = model.vocab
    t0 = time.perf_counter_ns()
    allowed = constraint.mask(particle.constraint_state)
    particle.mask_us.append((time.perf_counter_ns() - t0) / 1000.0)
    cost.constraint_checks += len(allowed)
    particle.allowed_counts.append(int(np.count_nonzero(allowed)))
    log_kept = _log_kept_mass(logits, allowed)
    particle.removed_mass.append(float(-math.expm1(log_kept)))
    if log_kept == -math.inf:  # no token may continue (a dead end of the constraint): this particle is done
        particle.log_weight = -math.inf
        return
    particle.log_weight += log_kept
    token_id = int(rng.choice(len(logits), p=masked_softmax(logits, allowed)))
    cost.tokens_drawn += 1
    if token_id == vocab.eos_id:
        particle.finished = True
        return
    particle.constraint_state = constraint.advance(particle.constraint_state, token_id)
    particle.model_state = model.advance(particle.model_state, token_id)
    particle.write(vocab, token_id)


def _log_kept_mass(logits: np.ndarray, allowed: np.ndarray) -> float:
    """log Σ_{allowed} softmax(logits), computed in log space so a tiny kept mass does not round to 0."""
    if not allowed.any():
        return -math.inf
    top = logits.max()
    kept = logits[allowed]
    kept_top = kept.max()
    if kept_top == -math.inf:
        return -math.inf
    log_all = top + math.log(np.exp(logits - top).sum())
    return float(kept_top + math.log(np.exp(kept - kept_top).sum()) - log_all)
