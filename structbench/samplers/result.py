"""What a sampler returns: one answer (a Decoded) plus its estimate of Z, the ESS and what it cost."""

from __future__ import annotations

from dataclasses import dataclass, field

from structbench.lm.sampling import Decoded


@dataclass
class SampledAnswer(Decoded):
    """One answer of smc, awrs or asap. The Decoded fields describe the returned answer's own path; the rest
    describe the whole run (every particle). See structbench.samplers for each field's meaning per sampler."""

    sampler: str = ""
    log_z: float = float("-inf")
    ess: list[float] = field(default_factory=list)
    final_ess: float = 0.0
    resamples: int = 0
    particles: int = 1
    model_calls: int = 0
    constraint_checks: int = 0
    tokens_drawn: int = 0
    wall_ms: float = 0.0
