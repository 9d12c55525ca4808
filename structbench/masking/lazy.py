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
from structbench.masking.tabled import (
    LazyDense,
    TabledConstraint,
    machine_boundaries,
    pattern_boundaries,
    steps_taken,
    vocab_codes,
)
from structbench.regular.charsets import MAX_CODE_POINT

_BUSY = 64  # pending nodes on one state in one round that make its whole row worth computing
_QUOTE, _BACKSLASH = 0x22, 0x5C


class StringContent:
    """One string DFA over one class partition, as string mode reads it: `lex[d, c]` the DFA state after a plain
    character of class c (-1 dead, and for control characters; CLOSE for the quote where d accepts, else -1;
    EXIT for the backslash); `run[d]` how many plain characters in a row the DFA surely takes from d (-1 not
    known yet); for the string being walked (see :meth:`at`), `exits` the machine state of each DFA state and
    `closes` the machine state after its closing quote (-1: refused).

    The table is built whole at once where it is small (every DFA state's row in one vectorised pass, kept on the
    DFA for every schema that shares it: the walk then never stops for a row), else a row on first need. A key's
    DFA (structbench.jsonschema.key_trie.KeyTrie) builds its own table."""

    def __init__(self, dfa, boundaries: np.ndarray, cap: int):
        self.dfa, self.cap = dfa, cap  # run lengths are followed up to the deepest token: no walk needs more
        codes = boundaries.astype(np.int64)
        self._codes = codes
        self._plain = (codes >= 0x20) & (codes != _QUOTE) & (codes != _BACKSLASH)
        self._quote, self._backslash = codes == _QUOTE, codes == _BACKSLASH
        self.plain = trie_walk.class_bits(np.flatnonzero(self._plain), (len(codes) + 63) // 64)
        self._exit_maps: dict = {}
        self.exits = self.closes = None
        self._resolve = self._close = None
        whole = _whole_tables(dfa, codes, self._plain, cap)
        if whole is not None:
            self.lex, self.run = whole
            return
        self._accepting = np.zeros(dfa.n_states, dtype=bool)
        self._accepting[list(dfa.accepting)] = True
        self.lex = np.full((dfa.n_states, len(codes)), trie_walk.UNKNOWN, dtype=np.int32)
        self.run = np.full(dfa.n_states, -1, dtype=np.int64)

    def at(self, rest_key, resolve, close) -> None:
        """Walk the string below this stack: `resolve(d)` is the machine state of DFA state d there, `close(d)`
        the machine state after its closing quote (-1: none)."""
        maps = self._exit_maps.get(rest_key)
        if maps is None:
            maps = self._exit_maps[rest_key] = np.full((2, self.dfa.n_states), trie_walk.UNKNOWN, dtype=np.int64)
        self.exits, self.closes = maps
        self._resolve, self._close = resolve, close

    def exits_for(self, ds: np.ndarray) -> None:
        for d in ds.tolist():
            self.exits[d] = self._resolve(d)

    def closes_for(self, ds: np.ndarray) -> None:
        for d in ds.tolist():
            self.closes[d] = self._close(d)

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
        row[self._quote] = trie_walk.CLOSE if self._accepting[d] else -1
        row[self._backslash] = trie_walk.EXIT
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



_WHOLE_CELLS = 1 << 18  # a DFA's table up to this many cells is built whole at once (1 MiB)


def _whole_tables(dfa, codes: np.ndarray, plain: np.ndarray, cap: int):
    """(lex, run) for every state of `dfa` at once, kept on it per class partition; None where its table would be
    too big to build whole (then rows are built as the walk meets them)."""
    key = (codes.tobytes(), cap)
    kept = dfa.__dict__.setdefault("_string_mode_tables", {})
    found = kept.get(key)
    if found is not None:
        return found
    if hasattr(dfa, "lex_table"):
        lex = dfa.lex_table(codes, trie_walk.CLOSE, trie_walk.EXIT)
    elif dfa.n_states * len(codes) <= _WHOLE_CELLS:
        lex = _dfa_lex_table(dfa, codes, plain)
    else:
        return None
    found = kept[key] = (lex, _run_lengths(lex, plain, cap))
    return found


def _dfa_lex_table(dfa, codes: np.ndarray, plain: np.ndarray) -> np.ndarray:
    """StringContent's table for a DFA, every state at once: each (state, class) looked up among all the DFA's
    moves in one sorted search (a class is one character for the DFA: its moves are cut at class boundaries)."""
    n = dfa.n_states
    moves = np.array([(s, lo, hi, t) for s, row in enumerate(dfa.moves) for lo, hi, t in row],
                     dtype=np.int64).reshape(-1, 4)
    lex = np.full((n, len(codes)), -1, dtype=np.int32)
    if len(moves):
        span = MAX_CODE_POINT + 2
        states = np.arange(n, dtype=np.int64)[:, None]
        k = np.searchsorted(moves[:, 0] * span + moves[:, 1], states * span + codes[None, :], side="right") - 1
        kk = np.maximum(k, 0)
        hit = (k >= 0) & (moves[kk, 0] == states) & (codes[None, :] <= moves[kk, 2])
        lex[hit] = moves[kk, 3][hit]
    lex[:, ~plain] = -1
    accepting = np.zeros(n, dtype=bool)
    accepting[list(dfa.accepting)] = True
    lex[:, codes == _QUOTE] = np.where(accepting, trie_walk.CLOSE, -1)[:, None]
    lex[:, codes == _BACKSLASH] = trie_walk.EXIT
    return lex


def _run_lengths(lex: np.ndarray, plain: np.ndarray, cap: int) -> np.ndarray:
    """run[d] for every state at once: a state whose every plain class goes to one next state takes one more
    than that state (a chain: a maxLength counter; a loop: for ever), counted by pointer jumping and capped
    above `cap` (no subtree is deeper)."""
    run = np.zeros(len(lex), dtype=np.int64)
    rows = lex[:, plain]
    if not rows.shape[1]:
        return run
    first = rows[:, 0]
    chained = np.flatnonzero((first >= 0) & (rows == first[:, None]).all(axis=1))
    if not len(chained):
        return run
    where = np.full(len(lex), -1, dtype=np.int64)
    where[chained] = np.arange(len(chained))
    jump = where[first[chained]]  # the next chained state's place, -1 where the chain ends
    total = np.ones(len(chained), dtype=np.int64)
    for _ in range(int(cap + 1).bit_length() + 1):
        on = jump >= 0
        if not on.any():
            break
        total = np.where(on, np.minimum(total + total[np.maximum(jump, 0)], cap + 1), total)
        jump = np.where(on, jump[np.maximum(jump, 0)], jump)
    run[chained] = np.where(jump >= 0, cap + 1, total)  # still jumping: a loop
    return run


class TrieDense(LazyDense):
    """A :class:`LazyDense` whose masks walk the vocabulary's prefix tree (structbench.masking.trie_walk), which
    keeps, per state whose row is complete, the classes it loops on (so the walk takes whole subtrees of string
    content at once), and which reads a checked string's plain characters by its DFA (:class:`StringContent`).
    Without numba its masks are LazyDense's vectorised token walk: the same masks."""

    EXPAND_HINTED = False  # only the cells a walk meets: tokens deep into a state read few of its characters

    def __init__(self, machine: Machine, boundaries: np.ndarray, vocab: Vocabulary):
        self._n_words = (len(boundaries) + 63) // 64
        self._loops = np.zeros((64, self._n_words), dtype=np.uint64)
        self._loops_known = np.zeros(64, dtype=bool)
        self._strings: dict[int, StringContent] = {}
        self._no_strings = trie_walk.NoStringMode(self._n_words)
        self._string_content_of = getattr(machine, "string_content", None)
        self._content: dict[int, tuple | None] = {}  # per state: (its string's tables, DFA state), or None
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
        strings, start, mode = self._string_mode(i)
        if strings is self._no_strings:
            self._expand([i])  # the whole row: the first level needs nearly every class, and the loops come with it
        steps = trie_walk.walk(index, start, mode, lambda: (self._trans, self._loops, self._loops_known), self._fill,
                               strings, allowed)
        return allowed, steps

    def _content_at(self, i: int) -> tuple | None:
        """(the string's tables, its DFA state) where state i is inside a checked string with no escape open (the
        machine's `string_content`), else None; asked once per state."""
        if i in self._content:
            return self._content[i]
        found = self._string_content_of(self.states[i]) if self._string_content_of is not None else None
        if found is not None:
            dfa, at = found
            strings = self._strings.get(id(dfa))
            if strings is None:
                depth = self._token_index(vocab_codes(self.vocab)).trie.depth
                strings = self._strings[id(dfa)] = StringContent(dfa, self.boundaries, depth)
            found = (strings, at)
        self._content[i] = found
        return found

    def _string_mode(self, i: int):
        """Where state i is inside a checked string: that string's tables, the DFA state, string mode."""
        found = self._content_at(i)
        if found is None:
            return self._no_strings, i, trie_walk.MACHINE
        strings, at = found
        stack = self.states[i]
        # Exits are machine states: keyed by the stack with its DFA state at 0 (what lies below the string and the
        # string's own frame: a DFA may be shared by several schema nodes, patterns and lengths being cached).
        strings.at(self.machine.with_string_state(stack, 0),
                   lambda d: self.id_of(self.machine.with_string_state(stack, d)),
                   lambda d: self._after_quote(stack, d))
        return strings, at, trie_walk.STRING

    def _after_quote(self, stack, d: int) -> int:
        """The machine state after the closing quote of the string `stack` is in, its DFA at d (-1: refused).
        The string's own state at d is not numbered: the walk never stands on it."""
        before = steps_taken(self.machine)
        nxt = self.machine.step(self.machine.with_string_state(stack, d), '"')
        if self.fuel is not None:
            self.fuel.spend(steps_taken(self.machine) - before or 1)
        return -1 if nxt is None else self.id_of(nxt)

    def _fill(self, cur: np.ndarray, cls: np.ndarray) -> None:
        states, counts = np.unique(cur, return_counts=True)
        # A state inside a checked string: its whole row from the DFA's (no machine step a plain character).
        strings = [i for i in states[~self._expanded[states]].tolist() if self._content_at(i) is not None]
        if strings:
            self._expand(strings)
        super()._fill(cur, cls)
        # A state many nodes wait on is worth its whole row: once its loops are known, the walk takes the
        # subtrees it loops on whole (a key no property name continues, a string's content).
        busy = states[(counts >= _BUSY) & ~self._expanded[states]]
        if len(busy):
            super()._expand(busy)
        self._note_loops(states)

    def _expand(self, ids) -> None:
        others = []
        for i in ids:
            i = int(i)
            content = None if self._expanded[i] else self._content_at(i)
            if content is None:
                others.append(i)
            else:
                self._expand_string(i, *content)
        super()._expand(others)
        self._note_loops(np.asarray(ids, dtype=np.int64))

    def _expand_string(self, i: int, strings: StringContent, at: int) -> None:
        """State i's row where it is inside a checked string at DFA state `at`: a plain character moves the DFA
        alone (the machine's `with_string_state` of the DFA's next state, one machine state a DFA state, not a
        step a class); control characters are refused, and the quote where the DFA does not accept; the quote
        and the backslash otherwise are the machine's steps."""
        before = steps_taken(self.machine)
        strings.rows(np.array([at]))
        lex = strings.lex[at]
        stack = self.states[i]
        targets = np.unique(lex[lex >= 0])
        ids = np.array([self.id_of(self.machine.with_string_state(stack, int(d))) for d in targets.tolist()],
                       dtype=np.int32)
        row = np.full(len(lex), -1, dtype=np.int32)
        plain = lex >= 0
        row[plain] = ids[np.searchsorted(targets, lex[plain])]
        for c in np.flatnonzero((lex == trie_walk.EXIT) | (lex == trie_walk.CLOSE)).tolist():
            nxt = self._step_class(i, c)
            row[c] = -1 if nxt is None else self.id_of(nxt)
        if self.fuel is not None:  # as LazyDense._expand: after the row, which is all or nothing
            self.fuel.spend(steps_taken(self.machine) - before + len(targets) or 1)
        self._trans[i] = row  # id_of may have grown the table: index it anew
        self._expanded[i] = True

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
