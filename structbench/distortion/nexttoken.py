"""The exact next-token law of a model, masked or not: what the exact distributions are built from.

The toy model draws fresh Normal(0, noise²) noise on every logit at every step and then samples from the
softmax, which is the argmax of (base logit + Normal + Gumbel(0, 1)). A mask makes that argmax run over the
allowed tokens only, so under noise the masked law is NOT the unmasked law renormalised: given the noise
the softmax renormalises, but averaging over the noise does not commute with dividing by the kept mass.
The chance that token i wins over the allowed set A is the one-dimensional integral

    P(i | A) = ∫ f(x - a_i) Π_{j ∈ A, j ≠ i} F(x - a_j) dx

with f, F the density and distribution function of Normal(0, σ²) + Gumbel(0, 1). Base logits take few
distinct values, so tokens are grouped by value: a group of c tokens at value v contributes F(x - v)^c.

Quadrature (:class:`NoisyArgmax`): F and f are Gaussian averages of the Gumbel's, each a trapezoid sum over
the noise (step min(0.1, σ/4) over ±10σ); the outer integral is a trapezoid sum over x with step 0.05 on
[max a - 6 - 9σ, max a + 40 + σ² + 9σ], all in log space. Both integrands are smooth and decay fast, where
the trapezoid rule converges geometrically: the group probabilities agree with those at half the steps to
about 1e-12 for σ ≤ 4 (tests/distortion check it), and at σ = 0 they equal the plain softmax to ~1e-15.
A law whose probabilities miss 1 by more than 1e-9 raises :class:`~structbench.errors.QuadratureError`.

A *law* here is a Markov chain over small hashable model states (what the exact dynamic programming in
structbench.distortion.exact walks): `start()`, `advance(state, token_id)`, and `probs(state, allowed)`,
the next-token probabilities over the whole vocabulary (zero outside `allowed`). :class:`ToyLaw` is the toy
model's; :class:`TableLaw` a model given by explicit tables (the lesson's two-token example), whose masked
law is the plain renormalisation.
"""

from __future__ import annotations

import math

import numpy as np

from structbench.errors import QuadratureError
from structbench.lm.toy_model import ToyModel
from structbench.lm.vocab import Vocabulary

X_STEP = 0.05  # the outer integral's trapezoid step (the Gumbel's scale is 1)
NOISE_STEP = 0.1  # the noise average's step, at most a quarter of σ
SUM_TOLERANCE = 1e-9  # how far from 1 a law's probabilities may sum before the quadrature counts as failed


def _logsumexp(a: np.ndarray, axis: int) -> np.ndarray:
    top = a.max(axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        return (np.log(np.exp(a - top).sum(axis=axis, keepdims=True)) + top).squeeze(axis)


class NoisyArgmax:
    """P(argmax over a multiset of base logits of (logit + Normal(0, σ²) + Gumbel) falls in each group).

    `group_probs(values, counts)` gives, per distinct base value, the chance that one of its `counts` tokens
    wins (the group's total); results are cached per (values, counts). log F and log f are tabulated once
    per distinct base value on one grid of x (multiples of X_STEP), so each new allowed set costs only the
    combination of its groups' rows."""

    def __init__(self, sigma: float):
        if not isinstance(sigma, (int, float)) or not math.isfinite(sigma) or sigma < 0:
            raise ValueError(f"noise must be a finite standard deviation >= 0, got {sigma!r}")
        self.sigma = float(sigma)
        self.below = 6.0 + 9.0 * self.sigma  # how far under the top value the winner can still be
        self.above = 40.0 + self.sigma**2 + 9.0 * self.sigma  # ... and how far above it
        if self.sigma > 0:
            step = min(NOISE_STEP, self.sigma / 4)
            half = math.ceil(10 * self.sigma / step)
            self._noise = np.arange(-half, half + 1) * step
            self._log_weights = -0.5 * (self._noise / self.sigma) ** 2 + math.log(step / (self.sigma * math.sqrt(2 * math.pi)))
        else:
            self._noise, self._log_weights = np.zeros(1), np.zeros(1)
        self._rows: dict[float, tuple[int, np.ndarray, np.ndarray]] = {}
        self._groups: dict[tuple, np.ndarray] = {}

    def _tabulate(self, value: float) -> tuple[int, np.ndarray, np.ndarray]:
        """log F(x - value) and log f(x - value) on x = j * X_STEP, j from the returned first index."""
        row = self._rows.get(value)
        if row is None:
            first = math.floor((value - self.below) / X_STEP) - 1
            last = math.ceil((value + self.above) / X_STEP) + 1
            t = np.arange(first, last + 1) * X_STEP - value
            u = np.maximum(t[:, None] - self._noise[None, :], -700.0)  # exp(700) still fits a double
            e = np.exp(-u)
            log_cdf = _logsumexp(self._log_weights - e, axis=1)
            log_density = _logsumexp(self._log_weights - u - e, axis=1)
            row = self._rows[value] = (first, log_cdf, log_density)
        return row

    def _window(self, value: float, first: int, n: int) -> tuple[np.ndarray, np.ndarray]:
        """The rows of `value` on grid indices first .. first + n - 1 (F = 1, f = 0 above its table)."""
        start, log_cdf, log_density = self._tabulate(value)
        lo = first - start  # >= 0: the window starts at the top value's lower edge, above this value's
        cdf = np.zeros(n)
        density = np.full(n, -np.inf)
        take = max(0, min(n, len(log_cdf) - lo))
        cdf[:take] = log_cdf[lo:lo + take]
        density[:take] = log_density[lo:lo + take]
        return cdf, density

    def group_probs(self, values, counts) -> np.ndarray:
        key = (tuple(float(v) for v in values), tuple(int(c) for c in counts))
        found = self._groups.get(key)
        if found is not None:
            return found
        values, counts = np.array(key[0]), np.array(key[1], dtype=float)
        if len(values) == 0 or (counts < 1).any():
            raise ValueError("the argmax needs at least one token, every group with a positive count")
        if len(values) == 1:
            result = np.ones(1)
        else:
            top = values.max()
            first = math.floor((top - self.below) / X_STEP)
            n = math.ceil((top + self.above) / X_STEP) - first + 1
            log_cdf = np.empty((len(values), n))
            log_density = np.empty((len(values), n))
            for k, v in enumerate(values):
                log_cdf[k], log_density[k] = self._window(v, first, n)
            log_all_below = (counts[:, None] * log_cdf).sum(axis=0)  # log P(every allowed token is below x)
            # A group wins at x: one of its c tokens sits at x, the other c - 1 and every other group below.
            integrand = np.exp(np.log(counts)[:, None] + log_density - log_cdf + log_all_below[None, :])
            result = integrand.sum(axis=1) * X_STEP  # trapezoid: the ends are ~0, so plain sums
            total = result.sum()
            if not abs(total - 1.0) < SUM_TOLERANCE:
                raise QuadratureError(f"the argmax law at noise {self.sigma:g} sums to {total!r}, not 1 within "
                                      f"{SUM_TOLERANCE:g} (values {key[0]}, counts {key[1]})")
            result = result / total
        result.flags.writeable = False
        self._groups[key] = result
        return result

    def probs(self, base: np.ndarray, allowed: np.ndarray) -> np.ndarray:
        """Per token over the vocabulary: the chance it is the argmax over `allowed` (0 outside it)."""
        ids = np.flatnonzero(allowed)
        if len(ids) == 0:
            raise ValueError("the mask allows no token: there is no argmax")
        values, inverse, counts = np.unique(base[ids], return_inverse=True, return_counts=True)
        per_token = self.group_probs(values, counts) / counts
        out = np.zeros(len(base))
        out[ids] = per_token[inverse]
        return out


class ToyLaw:
    """The toy model's next-token law as a chain over small states.

    The toy model's logits depend on the text only through: is it empty (the chatter bonus), has the anchor
    (the reference's first character) been written, and how many characters since the anchor (capped at
    the reference's length, where only the end token is favoured). States are ints: 0 the empty text, 1 a
    text without the anchor, 1 + k an offset of k characters. Base logits come from
    :meth:`ToyModel.base_logits` on a representative text of each state, so they are the model's own."""

    EMPTY, NO_ANCHOR = 0, 1

    def __init__(self, model: ToyModel):
        self.model, self.vocab = model, model.vocab
        self.argmax = NoisyArgmax(model.noise)
        self.reference_length = len(model.reference)
        texts = [model.vocab.text_of(i) for i in range(len(model.vocab))]
        self._lengths = np.array([len(t) for t in texts], dtype=np.int64)
        # Characters from the anchor's first occurrence in a token to its end (-1: no anchor in it).
        self._after_anchor = np.array([len(t) - t.find(model.anchor) if model.anchor in t else -1 for t in texts])
        self._texts: dict[int, str] = {self.EMPTY: ""}  # a representative text per state seen
        self._next: dict[int, np.ndarray] = {}
        self._probs: dict[tuple[int, bytes], np.ndarray] = {}

    def start(self) -> int:
        return self.EMPTY

    def advance_all(self, state: int) -> np.ndarray:
        """The state after each token (the end token's entry is the state itself)."""
        nxt = self._next.get(state)
        if nxt is None:
            if state >= 2:
                nxt = 1 + np.minimum(state - 1 + self._lengths, self.reference_length)
            else:
                nxt = np.where(self._after_anchor >= 0, 1 + np.minimum(self._after_anchor, self.reference_length),
                               self.NO_ANCHOR)
            nxt = np.where(self._lengths == 0, state, nxt)  # the end token, or a token that writes no text
            nxt.flags.writeable = False
            self._next[state] = nxt
            for token_id in np.unique(nxt, return_index=True)[1]:  # a representative text for each new state
                self._texts.setdefault(int(nxt[token_id]), self._texts[state] + self.vocab.text_of(int(token_id)))
        return nxt

    def advance(self, state: int, token_id: int) -> int:
        return int(self.advance_all(state)[token_id])

    def base_logits(self, state: int) -> np.ndarray:
        self.advance_all(state)  # (states are only reached through advance_all, which names their text)
        return self.model.base_logits(self._texts[state])

    def probs(self, state: int, allowed: np.ndarray) -> np.ndarray:
        key = (state, np.packbits(allowed).tobytes())
        found = self._probs.get(key)
        if found is None:
            found = self._probs[key] = self.argmax.probs(self.base_logits(state), allowed)
        return found


class TableLaw:
    """A model given by explicit next-token tables: `tables[prefix]` maps a token to its probability, the
    prefix being the tuple of token texts so far (a missing prefix ends the answer: all on the end token).
    Its masked law is the renormalised one. States are the prefixes themselves."""

    def __init__(self, vocab: Vocabulary, tables: dict[tuple, dict[str, float]]):
        for prefix, table in tables.items():
            unknown = [t for t in table if t not in vocab.index]
            if unknown:
                raise ValueError(f"table for prefix {prefix!r} names tokens not in the vocabulary: {unknown}")
            if abs(sum(table.values()) - 1.0) > 1e-12:
                raise ValueError(f"table for prefix {prefix!r} sums to {sum(table.values())}, not 1")
        self.vocab, self.tables = vocab, tables

    def start(self) -> tuple:
        return ()

    def advance(self, state: tuple, token_id: int) -> tuple:
        return state + (self.vocab.tokens[token_id],)

    def advance_all(self, state: tuple) -> list:
        return [self.advance(state, i) for i in range(len(self.vocab))]

    def probs(self, state: tuple, allowed: np.ndarray) -> np.ndarray:
        p = np.zeros(len(self.vocab))
        for token, prob in self.tables.get(state, {self.vocab.eos: 1.0}).items():
            p[self.vocab.index[token]] = prob
        p = np.where(allowed, p, 0.0)
        kept = p.sum()
        return p / kept if kept > 0 else p  # all zero: the mask kept none of the model's belief (a dead end)
