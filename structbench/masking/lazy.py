"""The lazy strategy: a schema never seen before, masked at once. Nothing is tabled ahead; each state's mask is
built when first met (by a compiled walk of the vocabulary's prefix tree) and kept, so a state met again is a
table read as in `tabled`.

What a fresh schema pays is the machine's rows for the states its answer meets, and the walks: everything that
depends on the vocabulary alone (the prefix tree, the classes below each node, the compiled walk) is built once
per vocabulary by :func:`structbench.masking.tabled.index_vocabulary` and shared by every schema.
"""

from __future__ import annotations

import numpy as np

from structbench.lm.vocab import Vocabulary
from structbench.masking import trie_walk
from structbench.masking.protocol import Machine, PatternMachine
from structbench.masking.tabled import LazyDense, TabledConstraint, machine_boundaries, pattern_boundaries, vocab_codes

_BUSY = 64  # pending nodes on one state in one round that make its whole row worth computing


class TrieDense(LazyDense):
    """A :class:`LazyDense` whose masks walk the vocabulary's prefix tree (structbench.masking.trie_walk) and
    which keeps, per state whose row is complete, the classes it loops on (so the walk takes whole subtrees of
    string content at once). Without numba its masks are LazyDense's vectorised token walk: the same masks."""

    def __init__(self, machine: Machine, boundaries: np.ndarray, vocab: Vocabulary):
        self._n_words = (len(boundaries) + 63) // 64
        self._loops = np.zeros((64, self._n_words), dtype=np.uint64)
        self._loops_known = np.zeros(64, dtype=bool)
        self.compiled = trie_walk.compiled()
        super().__init__(machine, boundaries, vocab)

    def id_of(self, state) -> int:
        i = super().id_of(state)
        if len(self._loops_known) < len(self._expanded):  # the table grew: grow the loop bits with it
            grow = len(self._expanded) - len(self._loops_known)
            self._loops = np.concatenate([self._loops, np.zeros((grow, self._n_words), dtype=np.uint64)])
            self._loops_known = np.concatenate([self._loops_known, np.zeros(grow, dtype=bool)])
        return i

    def mask(self, i: int) -> tuple[np.ndarray, int]:
        """The allowed tokens at state i, and the trie nodes looked at."""
        if not self.compiled:
            return super().mask(i)
        vc = vocab_codes(self.vocab)
        allowed = np.zeros(vc.size, dtype=bool)
        allowed[vc.eos_id] = bool(self._accepting[i])
        if not len(vc.token_ids):
            return allowed, 0
        self._expand([i])  # the whole row: the first level needs nearly every class, and the loops come with it
        index = self._token_index(vc)
        reached, steps = trie_walk.walk(index, i, lambda: (self._trans, self._loops, self._loops_known), self._fill)
        allowed[vc.token_ids] = reached[index.trie.node_of]
        return allowed, steps

    def _fill(self, cur: np.ndarray, cls: np.ndarray) -> None:
        super()._fill(cur, cls)
        states, counts = np.unique(cur, return_counts=True)
        # A state many nodes wait on is worth its whole row: once its loops are known, the walk takes the
        # subtrees it loops on whole (a key no property name continues, a string's content).
        busy = states[(counts >= _BUSY) & ~self._expanded[states]]
        if len(busy):
            super()._expand(busy)
        self._note_loops(states)

    def _expand(self, ids) -> None:
        super()._expand(ids)
        self._note_loops(np.asarray(ids, dtype=np.int64))

    def _note_loops(self, ids: np.ndarray) -> None:
        """The loop bits of the states among `ids` whose rows have just become complete."""
        ids = ids[~self._loops_known[ids]]
        if not len(ids):
            return
        complete = ids[(self._trans[ids] != self.UNEXPANDED).all(axis=1)]
        for i in complete.tolist():
            self._loops[i] = trie_walk.loop_bits(self._trans[i], i, self._n_words)
            self._loops_known[i] = True


def lazy_constraint(machine: Machine, vocab: Vocabulary) -> TabledConstraint:
    """The lazy strategy's constraint over a pattern's DFA or a schema's checker."""
    boundaries = pattern_boundaries(machine.dfa) if isinstance(machine, PatternMachine) else \
        machine_boundaries(machine.special_chars())
    return TabledConstraint(machine, vocab, boundaries, eager=False, split=False, dense=TrieDense)
