"""A timed walk of a token sequence under a constraint: every mask and every advance timed, as the speed and fresh
experiments time them (MaskBench's compute_mask and commit_token), each mask checked to allow the next token."""

from __future__ import annotations

import gc
import time
from dataclasses import dataclass, field

from structbench.errors import TokenRejected
from structbench.masking.bitmask import allows, count_allowed


@dataclass
class Walk:
    """One walk of a token sequence: each mask's microseconds and allowed count, and each advance's microseconds
    (every step's but the end token's), up to where it was refused."""

    mask_us: list = field(default_factory=list)
    advance_us: list = field(default_factory=list)
    allowed_counts: list = field(default_factory=list)
    refused_at: int | None = None  # the step whose mask (or advance) refused the walk's token
    # Where timed with a Collections: the garbage collector's µs inside each mask and each advance
    mask_gc_us: list = field(default_factory=list)
    advance_gc_us: list = field(default_factory=list)


class Collections:
    """The garbage collector's time since it was installed (`ns`), summed over its passes by gc.callbacks: a
    context manager. The passes land in whichever step allocates when one is due, so a step's time can be told from
    the collector's inside it (structbench.bench.steps). Installed only where asked for: the experiments' timed
    walks run without the callback."""

    def __init__(self):
        self.ns = 0
        self._start = 0

    def _callback(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._start = time.perf_counter_ns()
        else:
            self.ns += time.perf_counter_ns() - self._start

    def __enter__(self) -> "Collections":
        gc.callbacks.append(self._callback)
        return self

    def __exit__(self, *exc) -> None:
        gc.callbacks.remove(self._callback)


def timed_walk(constraint, token_ids, vocab, before_mask=None, collections: Collections | None = None) -> Walk:
    """Every mask of the walk timed (`mask_bits`, as the speed experiment times it), each checked to allow the
    next token, and every advance by that token timed (MaskBench times a step as compute_mask and commit_token);
    the end token is the last one, so its mask is timed too (it has no advance). before_mask(step, state), where
    given, is called untimed before each mask (structbench.bench.steps reads the constraint's state there);
    collections, where given (installed), tells the collector's time inside each mask and advance."""
    walk, state = Walk(), constraint.start()
    for step, tid in enumerate(token_ids):
        if before_mask is not None:
            before_mask(step, state)
        gc_ns = collections.ns if collections is not None else 0
        t = time.perf_counter_ns()
        bits = constraint.mask_bits(state)
        walk.mask_us.append((time.perf_counter_ns() - t) / 1000.0)
        if collections is not None:
            walk.mask_gc_us.append((collections.ns - gc_ns) / 1000.0)
        if not allows(bits, tid):  # the check, untimed, on the words themselves: no boolean array over the
            walk.refused_at = step  # vocabulary written between two timed calls (MaskBench reads the words too)
            return walk
        walk.allowed_counts.append(count_allowed(bits, len(vocab)))
        if tid != vocab.eos_id:
            gc_ns = collections.ns if collections is not None else 0
            t = time.perf_counter_ns()
            try:
                state = constraint.advance(state, tid)
            except TokenRejected:
                walk.refused_at = step
                return walk
            finally:
                walk.advance_us.append((time.perf_counter_ns() - t) / 1000.0)
                if collections is not None:
                    walk.advance_gc_us.append((collections.ns - gc_ns) / 1000.0)
    return walk
