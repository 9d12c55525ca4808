"""The Constraint protocol: what every masking strategy answers, and the extension point for your own.

    constraint.start()             -> state
    constraint.mask(state)         -> boolean array over the vocabulary (the end token included)
    constraint.mask_bits(state)    -> the same mask as int32 words (structbench.masking.bitmask's layout)
    constraint.advance(state, t)   -> the state after token t; TokenRejected if t is not allowed there
    constraint.can_end(state)      -> whether the answer may finish here
    constraint.work                -> a WorkCounter of what building masks cost (zeros if not counted)
    constraint.vocab               -> the Vocabulary it was compiled for (the sampler checks the model writes it)

The sampler (structbench.lm.sampling), the harness (structbench.bench) and the experiments use nothing
else, so a class that meets :class:`Constraint` (ours in naive.py and tabled.py, the engine adapters in
engines/, or your own strategy or engine) runs everywhere the built-in ones do. The README's section
"Add a strategy or engine" says how to choose yours from the command line.

Ours wrap a :class:`Machine`: anything with `start()`, `step(state, ch)` (None when stuck) and
`can_end(state)` over hashable states: a pattern's DFA (:class:`PatternMachine`) or a schema's pushdown
checker (structbench.jsonschema.checker.SchemaChecker).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from structbench.lm.vocab import Vocabulary
from structbench.regular import DFA


@dataclass
class WorkCounter:
    """What a constraint spent: `chars`, the machine steps (one character each) taken building masks, the
    quantity the lesson's mask_cost formula predicts; `reads`, the table entries read back; `masks_built`; and
    `masks_shared`, the masks read back from another state's (structbench.masking.shared_masks), not built."""

    chars: int = 0
    reads: int = 0
    masks_built: int = 0
    masks_shared: int = 0


@runtime_checkable
class Constraint(Protocol):
    """A masking strategy over one vocabulary and one task. States are whatever the constraint chooses
    (ours are hashable; an engine's is its matcher); the sampler only hands them back."""

    work: WorkCounter
    vocab: Vocabulary

    def start(self) -> Any: ...

    def mask(self, state) -> np.ndarray: ...

    def mask_bits(self, state) -> np.ndarray: ...

    def advance(self, state, token_id: int) -> Any: ...

    def can_end(self, state) -> bool: ...


class Machine(Protocol):
    """A character-level recogniser: what our constraints walk tokens through."""

    def start(self) -> Hashable: ...

    def step(self, state, ch: str) -> Hashable | None: ...

    def can_end(self, state) -> bool: ...


class PatternMachine:
    """A DFA seen as a machine; its states are the DFA's state numbers."""

    def __init__(self, dfa: DFA):
        self.dfa = dfa

    def start(self) -> int:
        return self.dfa.start

    def step(self, state, ch: str):
        return self.dfa.step(state, ch)

    def can_end(self, state) -> bool:
        return state in self.dfa.accepting

    def rows(self, states, boundaries: np.ndarray) -> np.ndarray:
        """The DFA state after one character of each class, for each of `states` at once (-1: stuck): a table's
        rows in one vectorised pass, not a step per class. Class c is the characters from boundaries[c] up to the
        next boundary, all alike for the DFA (its moves are cut at class boundaries), so its first stands for it."""
        keys, targets = _move_keys(self.dfa)
        codes = np.asarray(boundaries, dtype=np.int64)
        his = targets[:, 0]
        at = np.asarray(states, dtype=np.int64)[:, None] * _SPAN + codes[None, :]
        k = np.searchsorted(keys, at, side="right") - 1  # the last move starting at or before the class, in its state
        kk = np.maximum(k, 0)
        hit = (k >= 0) & (keys[kk] // _SPAN == at // _SPAN) & (codes[None, :] <= his[kk])
        return np.where(hit, targets[kk, 1], -1)


_SPAN = 0x110000 + 1  # above every code point: (state, code) as one sortable key


def _move_keys(dfa: DFA) -> tuple[np.ndarray, np.ndarray]:
    """Every move of the DFA as a sorted key state * _SPAN + lo, with (hi, target) beside it; kept on the DFA."""
    found = dfa.__dict__.get("_move_keys")
    if found is None:
        moves = np.array([(s, lo, hi, t) for s, row in enumerate(dfa.moves) for lo, hi, t in row],
                         dtype=np.int64).reshape(-1, 4)
        found = (moves[:, 0] * _SPAN + moves[:, 1], moves[:, 2:].copy())
        dfa.__dict__["_move_keys"] = found
    return found
