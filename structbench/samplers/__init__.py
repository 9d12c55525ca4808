"""Samplers that remove a mask's distortion: answers drawn from (or converging to) the exact conditional
p*(y) ∝ p(y)·[y ∈ L], not from token-by-token masking's law q.

A layer above masking (they walk any :class:`structbench.masking.Constraint` whose states are values) and
below bench (strategies.py registers them as the strategies ``smc``, ``awrs`` and ``asap``).

    smc(model, rng, constraint, particles=16, ess_threshold=0.5, resampling="systematic", max_tokens=40)
        Sequential Monte Carlo (Loula et al., ICLR 2025). N particles, each proposing its next token from the
        masked softmax (one mask per particle per step); incremental weight = the step's kept mass (the allowed
        share of the model's softmax). Resampled when ESS < ess_threshold·N ("systematic": one uniform, N
        evenly spaced pointers; "multinomial": N independent draws). Finished particles stay finished; a
        particle with no allowed token, or unfinished after max_tokens steps, gets weight 0. Returns one
        answer drawn from the final weighted particles, log Ẑ (an unbiased Ẑ of Z = P(valid, ended within
        max_tokens)) and the ESS. With particles=1 it draws exactly what masked sampling
        (structbench.lm.sampling.sample_answer) draws, draw for draw.

    awrs(model, rng, constraint, particles=16, ess_threshold=0.5, resampling="systematic", max_tokens=40)
        The same SMC with adaptive weighted rejection sampling as each particle's proposal (Lipkin et al.,
        COLM 2025; genlm-control's AWRS, recursive estimator): tokens in Gumbel-key order (sampling without
        replacement), each checked against the constraint alone (`advance`, `can_end` for the end token), the
        first accepted is the token; its weight is an unbiased estimate of the step's kept mass. No mask is
        ever built: constraint_checks counts the tokens checked.

    asap(model, rng, constraint, guide=None, max_tokens=40)
        Grammar-aligned decoding, ASAp (Park et al., NeurIPS 2024): a trie of the prefixes sampled so far,
        each storing its estimated expected future validity (EFG); the next token is drawn ∝ p(t|w)·EFG(wt)
        (EFG = the mask's 0/1 where unseen). After each answer the EFGs on its path are recomputed from their
        children. The guide (:class:`AsapGuide`) persists across runs, so answers converge to p* as samples
        accrue. guide=None uses the guide kept for this (constraint, model) pair (:func:`guide_for`): one per
        compiled constraint, so one trial's runs share it. log_z is the guide's current estimate of Z (not
        unbiased: it starts from the mask's over-estimate).

Every sampler returns a :class:`SampledAnswer`: a structbench.lm.sampling.Decoded (text, tokens, finished,
removed_mass / mask_us / allowed_counts along the returned answer's own path) plus

    log_z              log Ẑ (smc, awrs: unbiased Ẑ; asap: its EFG estimate); -inf when every particle died
    ess                per step, the ESS before the resampling decision (smc, awrs; empty for asap)
    final_ess          ESS of the final weights (unfinished particles weigh 0); 1.0 for asap
    resamples          resampling steps taken
    particles          N (1 for asap)
    model_calls        model.logits calls, all particles together
    constraint_checks  tokens checked against the constraint (a full mask counts the whole vocabulary)
    tokens_drawn       tokens drawn by all particles, the end token included
    wall_ms            wall time of the run

For awrs, removed_mass is 1 - the step's *estimated* kept mass and allowed_counts is empty (no mask).
When no valid answer was reached (Ẑ = 0), the answer returned is unfinished (finished=False) and invalid.

Settings, as keyword arguments of structbench.bench.strategies.generate (and the strategy's options,
strategy.particles / strategy.ess_threshold / strategy.resampling): ``particles`` (int >= 1),
``ess_threshold`` (in [0, 1]; 0 never resamples, 1 resamples whenever any weight differs), ``resampling``
("systematic" or "multinomial"), ``guide`` (asap only). The samplers run at temperature 1 only.

The toy model's noise: its logits carry fresh Normal noise at every call, so its next-token law is the
softmax averaged over the noise. SMC and AWRS treat the noise as an auxiliary variable drawn by the
proposal, which keeps Ẑ unbiased (see smc.py); ASAp averages the softmaxes it sees at each trie node.

Building blocks: `awrs_token(logits, check, rng)` is one AWRS draw and `awrs_estimate(log_p, order, check)` its
loop for a given visiting order (the tests enumerate every order to check the weight is unbiased).
genlm_anchor.py (optional, not imported here) runs genlm-control 0.4.1's own AWRS-SMC on our model and
constraint through two potential adapters, as the cross-check of issue 14; its install line is INSTALL there.

Models follow structbench.lm.sampling's protocol (vocab, start, logits, advance). A particle that is copied
at resampling gets a deep copy of its model state, so a real model's key-value cache (SmolLM2Model: states are
used once) is never shared between particles.
"""

from structbench.samplers.asap import AsapGuide, asap, guide_for
from structbench.samplers.awrs import awrs, awrs_estimate, awrs_token
from structbench.samplers.result import SampledAnswer
from structbench.samplers.smc import (
    DEFAULT_ESS_THRESHOLD,
    DEFAULT_PARTICLES,
    RESAMPLING,
    smc,
)

SAMPLERS = ("smc", "awrs", "asap")

__all__ = [
    "DEFAULT_ESS_THRESHOLD", "DEFAULT_PARTICLES", "RESAMPLING", "SAMPLERS", "AsapGuide", "SampledAnswer", "asap",
    "awrs", "awrs_estimate", "awrs_token", "guide_for", "smc",
]
