"""The lazy strategy: a schema never seen before, masked at once. Nothing is tabled ahead; each state's mask is
built when first met (by a compiled walk of the vocabulary's prefix tree, structbench.masking.trie_walk) and
kept, so a state met again is a table read as in `tabled`.

What a fresh schema pays is the machine's rows for the states its answer meets, and the walks: everything that
depends on the vocabulary alone (the prefix tree, the classes below each node, the compiled walk) is built once
per vocabulary by :func:`structbench.masking.tabled.index_vocabulary` and shared by every schema. Inside a
string whose content a DFA checks (maxLength, pattern, format, enum), plain characters are read by that DFA's
own table (:class:`StringContent`), not by the machine: no machine state is made per character.
"""

from __future__ import annotations

import numpy as np

from structbench.lm.vocab import Vocabulary
from structbench.masking import trie_walk
from structbench.masking.protocol import Machine, PatternMachine
from structbench.masking.tabled import LazyDense, TabledConstraint, machine_boundaries, pattern_boundaries, vocab_codes

_BUSY = 64  # pending nodes on one state in one round that make its whole row worth computing
_QUOTE, _BACKSLASH = 0x22, 0x5C


class StringContent:
    """One string DFA over one class partition, as string mode reads it: `lex[d, c]` the DFA state after a plain
    character of class c (-1 dead; EXIT for the quote and the backslash, -1 for control characters), rows
    computed on first need; `run[d]` how many plain characters in a row the DFA surely takes from d (-1 not
    known yet); `exits` the machine state of each DFA state for the string being walked (see :meth:`at`)."""

    def __init__(self, dfa, boundaries: np.ndarray, cap: int):
        self.dfa, self.cap = dfa, cap  # run lengths are followed up to the deepest token: no walk needs more
        codes = boundaries.astype(np.int64)
        self._codes = codes
        self._plain = (codes >= 0x20) & (codes != _QUOTE) & (codes != _BACKSLASH)
        self._exit = (codes == _QUOTE) | (codes == _BACKSLASH)
        self.plain = trie_walk.class_bits(np.flatnonzero(self._plain), (len(codes) + 63) // 64)
        self.lex = np.full((dfa.n_states, len(codes)), trie_walk.UNKNOWN, dtype=np.int32)
        self.run = np.full(dfa.n_states, -1, dtype=np.int64)
        self._exit_maps: dict = {}
        self.exits = None
        self._resolve = None

    def at(self, rest_key, resolve) -> None:
        """Walk the string below this stack: `resolve(d)` is the machine state of DFA state d there."""
        maps = self._exit_maps.get(rest_key)
        if maps is None:
            maps = self._exit_maps[rest_key] = np.full(self.dfa.n_states, trie_walk.UNKNOWN, dtype=np.int64)
        self.exits, self._resolve = maps, resolve

    def exits_for(self, ds: np.ndarray) -> None:
        for d in ds.tolist():
            self.exits[d] = self._resolve(d)

    def rows(self, ds: np.ndarray) -> None:
        for d in ds.tolist():
            self._row(d)
            self._run(d)

    def _row(self, d: int) -> None:
        if self.lex[d, 0] != trie_walk.UNKNOWN:
            return
        moves = self.dfa.moves[d]
        row = np.full(len(self._codes), -1, dtype=np.int32)
        if moves:
            los = np.array([m[0] for m in moves], dtype=np.int64)
            his = np.array([m[1] for m in moves], dtype=np.int64)
            targets = np.array([m[2] for m in moves], dtype=np.int32)
            k = np.searchsorted(los, self._codes, side="right") - 1  # a class is one character for the DFA
            inside = k >= 0
            inside[inside] = self._codes[inside] <= his[k[inside]]
            row[inside] = targets[k[inside]]
        row[~self._plain] = -1
        row[self._exit] = trie_walk.EXIT
        self.lex[d] = row

    def _run(self, d: int) -> None:
        """run[d]: plain characters the DFA surely takes in a row from d: a chain of states each sending every
        plain class to one next state (a maxLength counter), followed up to `cap`; a loop is unbounded."""
        chain, seen = [], set()
        e = d
        while self.run[e] < 0 and e not in seen and len(chain) <= self.cap:
            self._row(e)
            nxt = np.unique(self.lex[e][self._plain])
            chain.append(e)
            seen.add(e)
            if len(nxt) != 1 or nxt[0] < 0:
                self.run[e] = 0
                chain.pop()
                break
            e = int(nxt[0])
        else:
            if e in seen:  # back to a state of this chain: plain characters are taken for ever
                self.run[e] = 1 << 40
        tail = max(int(self.run[e]), 0)
        for state in reversed(chain):
            tail = min(tail + 1, 1 << 40)
            self.run[state] = tail


class TrieDense(LazyDense):
    """A :class:`LazyDense` whose masks walk the vocabulary's prefix tree (structbench.masking.trie_walk), which
    keeps, per state whose row is complete, the classes it loops on (so the walk takes whole subtrees of string
    content at once), and which reads a checked string's plain characters by its DFA (:class:`StringContent`).
    Without numba its masks are LazyDense's vectorised token walk: the same masks."""

    def __init__(self, machine: Machine, boundaries: np.ndarray, vocab: Vocabulary):
        self._n_words = (len(boundaries) + 63) // 64
        self._loops = np.zeros((64, self._n_words), dtype=np.uint64)
        self._loops_known = np.zeros(64, dtype=bool)
        self._strings: dict[int, StringContent] = {}
        self._no_strings = trie_walk.NoStringMode(self._n_words)
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
        index = self._token_index(vc)
        strings, start, mode = self._string_mode(i, index.trie.depth)
        if strings is self._no_strings:
            self._expand([i])  # the whole row: the first level needs nearly every class, and the loops come with it
        steps = trie_walk.walk(index, start, mode, lambda: (self._trans, self._loops, self._loops_known), self._fill,
                               strings, allowed)
        return allowed, steps

    def _string_mode(self, i: int, depth: int):
        """Where state i is inside a checked string: that string's tables, the DFA state, string mode."""
        content = getattr(self.machine, "string_content", None)
        found = content(self.states[i]) if content is not None else None
        if found is None:
            return self._no_strings, i, trie_walk.MACHINE
        dfa, at = found
        strings = self._strings.get(id(dfa))
        if strings is None:
            strings = self._strings[id(dfa)] = StringContent(dfa, self.boundaries, depth)
        stack = self.states[i]
        # Exits are machine states: keyed by what lies below the string and by the string's own frame but its DFA
        # state (a DFA may be shared by several schema nodes: patterns and lengths are cached per process).
        strings.at((stack[:-1], stack[-1]._replace(at=0)),
                   lambda d: self.id_of(self.machine.with_string_state(stack, d)))
        return strings, at, trie_walk.STRING

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
