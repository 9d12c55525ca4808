"""Masked sampling: softmax over the allowed tokens, one token at a time."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np


def masked_softmax(logits: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """Softmax over the allowed tokens only; forbidden tokens get exactly 0."""
    if not allowed.any():
        raise ValueError("the mask allows no token at all: the constraint has no way to continue")
    z = np.where(allowed, logits, -np.inf)
    z = z - z[allowed].max()  # the largest allowed logit becomes 0, so exp never overflows
    e = np.exp(z)
    return e / e.sum()


@dataclass
class Decoded:
    """One generated answer: its text, the tokens that spelled it, whether it ended by choice,
    and per step the model's belief the mask threw away and the microseconds the mask took."""

    text: str = ""
    tokens: list[str] = field(default_factory=list)
    token_ids: list[int] = field(default_factory=list)
    finished: bool = False
    removed_mass: list[float] = field(default_factory=list)
    mask_us: list[float] = field(default_factory=list)
    allowed_counts: list[int] = field(default_factory=list)
    attempts: int = 1

    @property
    def n_tokens(self) -> int:
        return len(self.tokens)


def check_budget(max_tokens: int) -> int:
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, (int, np.integer)) or max_tokens < 1:
        raise ValueError(f"the token budget max_tokens must be an integer >= 1, got {max_tokens!r}")
    return int(max_tokens)


def check_temperature(temperature) -> float:
    if (isinstance(temperature, bool) or not isinstance(temperature, (int, float, np.integer, np.floating))
            or not np.isfinite(temperature) or temperature < 0):
        raise ValueError(f"temperature must be a finite number >= 0 (0 = greedy), got {temperature!r}")
    return float(temperature)


def greedy_choice(logits: np.ndarray, allowed: np.ndarray) -> int:
    """Temperature 0: the allowed token with the highest logit (the lowest id among equals)."""
    if not allowed.any():
        raise ValueError("the mask allows no token at all: the constraint has no way to continue")
    return int(np.argmax(np.where(allowed, logits, -np.inf)))


def sample_answer(model, rng: np.random.Generator, constraint=None, max_tokens: int = 40,
                  temperature: float = 1.0) -> Decoded:
    """Draw one answer token by token; with a constraint, mask every token that can't continue a valid output.

    Per step: one `model.logits` call (one normal draw of vocabulary size for the
    toy model), then one `rng.choice`: the lesson's draws, in the lesson's order.
    The constraint is incremental: its state advances by the chosen token, the
    prefix is never re-read.

    `temperature` divides the logits before the masked softmax; at 1.0 (the default) the
    logits are used as they are, exactly the lesson's code path and draws. At 0 the
    allowed token with the highest logit is taken and the sampler draws nothing (the
    model may still draw: the toy model's noise). `removed_mass` is always measured on
    the model's own distribution (temperature 1), whatever the sampling temperature.

    A model is anything with `vocab`, `start() -> state`, `logits(state, rng) -> array`
    and `advance(state, token_id) -> state` (the toy model's state is the text so far;
    a real model's holds its token ids and key-value cache).
    """
    max_tokens = check_budget(max_tokens)
    temperature = check_temperature(temperature)
    vocab = model.vocab
    if constraint is not None and constraint.vocab is not vocab and constraint.vocab.tokens != vocab.tokens:
        raise ValueError(f"the constraint was compiled for {constraint.vocab!r}, the model writes {vocab!r}")
    out = Decoded()
    everything = np.ones(len(vocab), dtype=bool)
    state = constraint.start() if constraint is not None else None
    model_state = model.start()
    raw = b""
    for _ in range(max_tokens):
        logits = model.logits(model_state, rng)
        if constraint is None:
            allowed = everything  # no mask, so no mask time either: mask_us stays empty
        else:
            t0 = time.perf_counter_ns()
            allowed = constraint.mask(state)
            out.mask_us.append((time.perf_counter_ns() - t0) / 1000.0)
        out.allowed_counts.append(int(np.count_nonzero(allowed)))
        # How much of the model's own belief the mask throws away at this step (exactly 0 with no mask).
        removed = 0.0 if constraint is None else float(1 - masked_softmax(logits, everything)[allowed].sum())
        out.removed_mass.append(removed)
        if temperature == 1.0:  # the lesson's path, untouched
            token_id = int(rng.choice(len(logits), p=masked_softmax(logits, allowed)))
        elif temperature == 0.0:
            token_id = greedy_choice(logits, allowed)
        else:
            token_id = int(rng.choice(len(logits), p=masked_softmax(logits / temperature, allowed)))
        if token_id == vocab.eos_id:
            out.finished = True
            break
        if constraint is not None:
            state = constraint.advance(state, token_id)
        model_state = model.advance(model_state, token_id)
        out.token_ids.append(token_id)
        out.tokens.append(vocab.tokens[token_id] or vocab.token_bytes[token_id].decode("utf-8", "replace"))
        raw += vocab.token_bytes[token_id]
        # The text is the bytes so far: a real token may be part of a character, completed by the next.
        out.text = raw.decode("utf-8", "replace") if vocab.has_partial_tokens else out.text + out.tokens[-1]
    return out
