"""Distances between distributions over answers, with the outcomes that are not valid answers named.

An outcome is an answer's text (str) or a :class:`Bucket`: the answer was invalid, unfinished when the
token budget ran out, or stopped at a dead end (a mask that allowed nothing, or kept none of the model's
belief). The exact conditional p* gives every bucket probability 0, so a sampler's bucket mass counts in
full toward its total variation, and makes KL(q‖p*) infinite: the experiment reports KL on q conditioned
on a valid answer and the lost mass separately (structbench.distortion.exact).
"""

from __future__ import annotations

import enum
import math
from collections import Counter
from collections.abc import Callable, Hashable, Iterable

MASS_TOLERANCE = 1e-9  # how far a distribution's total may miss 1


class Bucket(enum.Enum):
    INVALID = "invalid"        # finished, but not in the language
    UNFINISHED = "unfinished"  # the token budget ran out first
    DEAD_END = "dead_end"      # the mask allowed nothing the model could write


def empirical(outcomes: Iterable[Hashable]) -> dict:
    """The empirical distribution of sampled outcomes."""
    counts = Counter(outcomes)
    total = sum(counts.values())
    if total == 0:
        raise ValueError("an empirical distribution needs at least one outcome")
    return {y: c / total for y, c in counts.items()}


def _check_distribution(d: dict, name: str) -> None:
    if any(not (m >= 0) for m in d.values()):
        raise ValueError(f"{name} has a negative or NaN mass")
    total = math.fsum(d.values())
    if abs(total - 1.0) > MASS_TOLERANCE:
        raise ValueError(f"{name} sums to {total!r}, not 1: name the missing mass with a Bucket")


def tv(a: dict, b: dict) -> float:
    """Total variation between two distributions given in full (each sums to 1, buckets included)."""
    _check_distribution(a, "the first distribution")
    _check_distribution(b, "the second distribution")
    return 0.5 * math.fsum(abs(a.get(y, 0.0) - b.get(y, 0.0)) for y in set(a) | set(b))


def tv_to_exact(sample: dict, exact: Callable[[Hashable], float]) -> float:
    """TV(sample, p) = 1 - Σ_y min(sample(y), p(y)), which needs p only on the sample's support: `exact`
    gives p of one outcome (0 for a bucket, when p is the exact conditional)."""
    _check_distribution(sample, "the sample's distribution")
    return max(0.0, 1.0 - math.fsum(min(m, exact(y)) for y, m in sample.items()))


def kl(a: dict, b: dict) -> float:
    """KL(a‖b) = Σ a log(a / b) in nats; infinite when a puts mass where b puts none."""
    _check_distribution(a, "the first distribution")
    _check_distribution(b, "the second distribution")
    terms = []
    for y, m in a.items():
        if m == 0:
            continue
        other = b.get(y, 0.0)
        if other == 0:
            return math.inf
        terms.append(m * math.log(m / other))
    return max(0.0, math.fsum(terms))
