"""The particle system smc and awrs share: particles, effective sample size, resampling, the run loop.

A proposal (smc's masked step, awrs's rejection step) moves one particle by one token and returns the log
of its incremental weight; this module does everything else. Ẑ is the standard SMC estimate: at each
resampling the mean weight is folded into log Ẑ and the weights reset to 1, and at the end the mean of the
final weights (0 for a particle that never finished) closes it. Each factor is an unbiased estimate given
the past, so Ẑ is unbiased for Z = P(valid, ended within max_tokens) whatever the ESS threshold.
"""

from __future__ import annotations

import copy
import math
import time
from dataclasses import dataclass, field

import numpy as np

from structbench.errors import SettingsError
from structbench.limits import current as limits
from structbench.lm.sampling import check_budget
from structbench.samplers.result import SampledAnswer

DEFAULT_PARTICLES = 16
DEFAULT_ESS_THRESHOLD = 0.5
RESAMPLING = ("systematic", "multinomial")


@dataclass
class Cost:
    """What a run spent, all particles together."""

    model_calls: int = 0
    constraint_checks: int = 0
    tokens_drawn: int = 0


@dataclass
class Particle:
    """One partial answer: its model and constraint states, what it wrote, its log weight, and per step the
    removed mass, the constraint's time and the allowed count (None where the proposal built no mask)."""

    model_state: object
    constraint_state: object
    log_weight: float = 0.0
    finished: bool = False
    token_ids: list[int] = field(default_factory=list)
    tokens: list[str] = field(default_factory=list)
    raw: bytes = b""
    text: str = ""
    removed_mass: list[float] = field(default_factory=list)
    mask_us: list[float] = field(default_factory=list)
    allowed_counts: list[int] = field(default_factory=list)

    @property
    def alive(self) -> bool:
        return not self.finished and self.log_weight > -math.inf

    def clone(self) -> Particle:
        """An independent copy: a real model's state (its key-value cache) is used once, so a duplicate
        particle gets its own deep copy; the toy model's (a string) and our constraints' (values) copy for free."""
        return Particle(copy.deepcopy(self.model_state), copy.deepcopy(self.constraint_state), self.log_weight,
                        self.finished, list(self.token_ids), list(self.tokens), self.raw, self.text,
                        list(self.removed_mass), list(self.mask_us), list(self.allowed_counts))

    def write(self, vocab, token_id: int) -> None:
        """Append a text token (the same bookkeeping as structbench.lm.sampling.sample_answer)."""
        self.token_ids.append(token_id)
        self.tokens.append(vocab.tokens[token_id] or vocab.token_bytes[token_id].decode("utf-8", "replace"))
        self.raw += vocab.token_bytes[token_id]
        self.text = self.raw.decode("utf-8", "replace") if vocab.has_partial_tokens else self.text + self.tokens[-1]


def check_settings(particles, ess_threshold, resampling) -> tuple[int, float, str]:
    if isinstance(particles, bool) or not isinstance(particles, (int, np.integer)) or particles < 1:
        raise SettingsError(f"particles must be an integer >= 1, got {particles!r}")
    if particles > limits().max_particles:
        raise SettingsError(f"particles={particles} is above limits.max_particles={limits().max_particles}")
    if (isinstance(ess_threshold, bool) or not isinstance(ess_threshold, (int, float, np.integer, np.floating))
            or not 0 <= ess_threshold <= 1):
        raise SettingsError(f"ess_threshold is a fraction of the particles, in [0, 1]; got {ess_threshold!r}")
    if resampling not in RESAMPLING:
        raise SettingsError(f"resampling must be one of {', '.join(RESAMPLING)}, got {resampling!r}")
    return int(particles), float(ess_threshold), resampling


def check_pair(model, constraint) -> None:
    """The constraint must be compiled for the model's vocabulary, and its states must be values: particles
    branch from one state, which a mutable matcher (the engines' adapters) cannot do."""
    from structbench.masking.engines.adapter import EngineConstraint

    if constraint is None:
        raise SettingsError("the samplers need a constraint: they sample valid answers")
    if isinstance(constraint, EngineConstraint):
        raise SettingsError(f"the samplers branch constraint states, and {constraint.name}'s matcher is one mutable "
                            f"state; use our naive or tabled constraint")
    vocab = model.vocab
    if constraint.vocab is not vocab and constraint.vocab.tokens != vocab.tokens:
        raise SettingsError(f"the constraint was compiled for {constraint.vocab!r}, the model writes {vocab!r}")


def log_sum_exp(log_weights: np.ndarray) -> float:
    top = np.max(log_weights)
    if top == -math.inf:
        return -math.inf
    return float(top + np.log(np.exp(log_weights - top).sum()))


def effective_sample_size(log_weights: np.ndarray) -> float:
    """(Σw)² / Σw²: N for equal weights, 1 when one particle holds everything, 0 when all weigh 0."""
    total = log_sum_exp(log_weights)
    if total == -math.inf:
        return 0.0
    w = np.exp(log_weights - total)
    return float(1.0 / np.sum(w * w))


def resample_indices(weights: np.ndarray, rng: np.random.Generator, scheme: str) -> np.ndarray:
    """N ancestors drawn ∝ weights (normalised). Systematic: one uniform u, pointers (u + i)/N through the
    cumulative weights (lower variance); multinomial: N independent draws."""
    n = len(weights)
    if scheme == "multinomial":
        return rng.choice(n, size=n, p=weights)
    pointers = (rng.random() + np.arange(n)) / n
    cumulative = np.cumsum(weights)
    cumulative[-1] = 1.0  # rounding must not leave the last pointer past the end
    return np.searchsorted(cumulative, pointers, side="right")


def run_particles(model, rng: np.random.Generator, constraint, propose, sampler: str, particles: int,
                  ess_threshold: float, resampling: str, max_tokens: int) -> SampledAnswer:
    """The SMC loop. `propose(model, constraint, particle, logits, rng, cost)` moves one particle by one
    token (its weight, finished flag, states and path updated) after the loop called the model once for it."""
    particles, ess_threshold, resampling = check_settings(particles, ess_threshold, resampling)
    max_tokens = check_budget(max_tokens)
    check_pair(model, constraint)
    t0 = time.perf_counter()
    cost = Cost()
    swarm = [Particle(model.start(), constraint.start()) for _ in range(particles)]
    log_z, ess_log, resamples = 0.0, [], 0
    for step in range(max_tokens):
        active = [p for p in swarm if p.alive]
        if not active:
            break
        for p in active:
            logits = model.logits(p.model_state, rng)
            cost.model_calls += 1
            propose(model, constraint, p, logits, rng, cost)
        log_weights = np.array([p.log_weight for p in swarm])
        ess = effective_sample_size(log_weights)
        ess_log.append(ess)
        more = step + 1 < max_tokens and any(p.alive for p in swarm)
        if more and ess > 0 and ess < ess_threshold * particles:
            total = log_sum_exp(log_weights)
            log_z += total - math.log(particles)
            ancestors = resample_indices(np.exp(log_weights - total), rng, resampling)
            swarm = _offspring(swarm, ancestors)
            resamples += 1
    # A particle still writing after max_tokens steps never gave a valid answer: weight 0.
    final = np.array([p.log_weight if p.finished else -math.inf for p in swarm])
    total = log_sum_exp(final)
    log_z = log_z + total - math.log(particles) if total > -math.inf else -math.inf
    if total == -math.inf:
        chosen = swarm[0]  # no valid answer: return the first particle, unfinished (or dead) as it is
    elif particles == 1:
        chosen = swarm[0]  # nothing to choose: no draw, so N = 1 draws exactly what masked sampling draws
    else:
        chosen = swarm[int(rng.choice(particles, p=np.exp(final - total)))]
    return SampledAnswer(
        text=chosen.text, tokens=chosen.tokens, token_ids=chosen.token_ids, finished=chosen.finished,
        removed_mass=chosen.removed_mass, mask_us=chosen.mask_us, allowed_counts=chosen.allowed_counts,
        sampler=sampler, log_z=log_z, ess=ess_log, final_ess=effective_sample_size(final), resamples=resamples,
        particles=particles, model_calls=cost.model_calls, constraint_checks=cost.constraint_checks,
        tokens_drawn=cost.tokens_drawn, wall_ms=(time.perf_counter() - t0) * 1000)


def _offspring(swarm: list[Particle], ancestors: np.ndarray) -> list[Particle]:
    """The resampled swarm, weights reset to 1: an ancestor's first child is the ancestor itself, further
    children are clones (taken before any child moves on)."""
    children, taken = [], set()
    for i in ancestors:
        i = int(i)
        child = swarm[i] if i not in taken else swarm[i].clone()
        taken.add(i)
        children.append(child)
    for child in children:
        child.log_weight = 0.0
    return children
