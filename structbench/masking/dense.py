"""Vectorised masks: the fast path at real vocabulary sizes.

A machine (a pattern's DFA, a schema's pushdown checker) is seen through
character classes: code-point ranges on which it cannot tell characters apart.
:class:`LazyDense` numbers the machine's states as they are met and keeps a
transition table `trans[state, class]` (-1: dead), each row computed on first
need. A mask is then one vectorised walk of the whole vocabulary: the tokens
whose first character can be read are followed one character position at a
time with NumPy gathers, dropping every token that gets stuck. No Python loop
runs over the vocabulary. Finite machines (patterns, non-recursive schemas)
are enumerated and tabled up front; the rest are tabled state by state.
"""

from __future__ import annotations

import bisect

import numpy as np

from structbench.errors import TooManyStates
from structbench.lm.vocab import Vocabulary
from structbench.regular.patterns import DFA, MAX_CODE_POINT


def pattern_boundaries(dfa: DFA) -> np.ndarray:
    """Classes on which the DFA's every row is constant."""
    cuts = {0}
    for row in dfa.moves:
        for lo, hi, _ in row:
            cuts.add(lo)
            if hi < MAX_CODE_POINT:
                cuts.add(hi + 1)
    return np.array(sorted(cuts), dtype=np.int64)


def machine_boundaries(special_chars=()) -> np.ndarray:
    """For the schema checker: every ASCII character its own class, every non-ASCII character the
    schema names (in a key or an enum value) too; it treats all other characters alike."""
    cuts = set(range(129)) | {0xD800, 0xE000}
    for ch in special_chars:
        cuts.add(ord(ch))
        if ord(ch) < MAX_CODE_POINT:
            cuts.add(ord(ch) + 1)
    return np.array(sorted(c for c in cuts if c <= MAX_CODE_POINT), dtype=np.int64)


class VocabCodes:
    """A vocabulary's text tokens as code points, flattened, grouped for vectorised walks."""

    def __init__(self, vocab: Vocabulary):
        ids = [i for i, t in enumerate(vocab.tokens) if t is not None and i != vocab.eos_id]
        texts = [vocab.tokens[i] for i in ids]
        lengths = np.array([len(t) for t in texts], dtype=np.int64)
        order = np.argsort(lengths, kind="stable")  # shortest first: tokens that end early leave a prefix
        self.token_ids = np.array(ids, dtype=np.int64)[order]
        self.lengths = lengths[order]
        self.offsets = np.concatenate([[0], np.cumsum(self.lengths)[:-1]]).astype(np.int64)
        joined = "".join(texts[i] for i in order)
        self.codes = np.frombuffer(joined.encode("utf-32-le"), dtype=np.uint32).astype(np.int64)
        self.max_len = int(self.lengths.max()) if len(self.lengths) else 0
        self.size = len(vocab)
        self.eos_id = vocab.eos_id


def vocab_codes(vocab: Vocabulary) -> VocabCodes:
    codes = vocab.__dict__.get("_codes")
    if codes is None:
        codes = vocab.__dict__["_codes"] = VocabCodes(vocab)
    return codes


def pack_bits(mask: np.ndarray) -> np.ndarray:
    """Boolean mask(s) -> int32 words, token i at bit i % 32 of word i // 32 (xgrammar's, llguidance's and
    outlines-core's layout)."""
    mask = np.asarray(mask, dtype=bool)
    pad = (-mask.shape[-1]) % 32
    if pad:
        mask = np.concatenate([mask, np.zeros(mask.shape[:-1] + (pad,), dtype=bool)], axis=-1)
    return np.packbits(mask, axis=-1, bitorder="little").view("<i4")


def unpack_bits(words: np.ndarray, size: int) -> np.ndarray:
    return np.unpackbits(np.asarray(words, dtype="<i4").view(np.uint8), axis=-1, bitorder="little")[..., :size].astype(bool)


class LazyDense:
    """A machine's states numbered as they are met, its transition rows computed on first need.

    Serves machines with unboundedly many states (JSON mode, recursive schemas) and
    the finite ones alike: a vectorised mask walk expands only the rows it meets.
    Rows are cached, so the cost of a state is paid once per compiled constraint.
    """

    UNEXPANDED = -2

    def __init__(self, machine, boundaries: np.ndarray):
        self.machine, self.boundaries = machine, boundaries
        self.reps = [chr(int(b)) for b in boundaries]
        self._bounds = [int(b) for b in boundaries]  # bisect on a list: far cheaper than NumPy for one character
        self.states: list = []
        self.ids: dict = {}
        self.trans = np.full((64, len(boundaries)), self.UNEXPANDED, dtype=np.int32)
        self.expanded = np.zeros(64, dtype=bool)
        self.accepting = np.zeros(64, dtype=bool)
        self.start = self.id_of(machine.start())

    def id_of(self, state) -> int:
        i = self.ids.get(state)
        if i is None:
            i = self.ids[state] = len(self.states)
            self.states.append(state)
            if i >= len(self.expanded):
                grow = len(self.expanded)
                self.trans = np.concatenate([self.trans, np.full((grow, self.trans.shape[1]), self.UNEXPANDED, np.int32)])
                self.expanded = np.concatenate([self.expanded, np.zeros(grow, dtype=bool)])
                self.accepting = np.concatenate([self.accepting, np.zeros(grow, dtype=bool)])
            self.accepting[i] = self.machine.can_end(state)
        return i

    def expand(self, ids) -> None:
        step = self.machine.step
        for i in ids:
            i = int(i)
            if self.expanded[i]:
                continue
            state = self.states[i]
            row = np.full(len(self.reps), -1, dtype=np.int32)
            for k, ch in enumerate(self.reps):
                nxt = step(state, ch)
                if nxt is not None:
                    row[k] = self.id_of(nxt)
            self.trans[i] = row
            self.expanded[i] = True

    def expand_all(self, max_states: int) -> None:
        """Enumerate every reachable state (a finite machine); TooManyStates past the cap."""
        i = 0
        while i < len(self.states):
            if len(self.states) > max_states:
                raise TooManyStates(f"more than {max_states} reachable states")
            self.expand([i])
            i += 1

    def class_of(self, ch: str) -> int:
        return bisect.bisect_right(self._bounds, ord(ch)) - 1

    def step(self, i: int, ch: str) -> int | None:
        if not self.expanded[i]:
            self.expand([i])
        nxt = int(self.trans[i, self.class_of(ch)])
        return None if nxt < 0 else nxt

    def _classes(self, vc: "VocabCodes") -> np.ndarray:
        key = ("classes", self.boundaries.tobytes())
        classes = vc.__dict__.get(key)
        if classes is None:
            classes = vc.__dict__[key] = (np.searchsorted(self.boundaries, vc.codes, side="right") - 1).astype(np.int32)
        return classes

    def walk(self, vocab: Vocabulary, start, positions, offsets, stop: int | None = None):
        """Walk tokens (positions in the vocabulary's shortest-first order) from their start states,
        each from its own character offset, all at once.

        Returns the positions of the tokens read to their end, the positions and character offsets of
        the tokens that reached the `stop` state (where the walk hands over), and the steps taken."""
        vc = vocab_codes(vocab)
        classes = self._classes(vc)
        alive = np.asarray(positions, dtype=np.int64)
        offs = np.asarray(offsets, dtype=np.int64)
        cur = np.broadcast_to(np.asarray(start, dtype=np.int32), alive.shape).copy()
        rem = vc.lengths[alive] - offs
        order = np.argsort(rem, kind="stable")
        alive, offs, cur, rem = alive[order], offs[order], cur[order], rem[order]
        done, stopped, stopped_at, steps, j = [], [], [], 0, 0
        while alive.size:
            cut = np.searchsorted(rem, j, side="right")  # tokens with nothing left to read are complete
            done.append(alive[:cut])
            alive, offs, cur, rem = alive[cut:], offs[cut:], cur[cut:], rem[cut:]
            if not alive.size:
                break
            unexpanded = ~self.expanded[cur]
            if unexpanded.any():
                self.expand(np.unique(cur[unexpanded]))
            nxt = self.trans[cur, classes[vc.offsets[alive] + offs + j]]
            steps += alive.size
            keep = nxt >= 0
            if stop is not None:
                hit = nxt == stop
                if hit.any():
                    stopped.append(alive[hit])
                    stopped_at.append(offs[hit] + j)  # this character was not read: it belongs below
                    keep &= ~hit
            alive, offs, cur, rem = alive[keep], offs[keep], nxt[keep], rem[keep]
            j += 1
        cat = lambda parts: np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)  # noqa: E731
        return cat(done), cat(stopped), cat(stopped_at), steps

    def mask(self, i: int, vocab: Vocabulary) -> tuple[np.ndarray, int]:
        """The allowed tokens at state i, walked for the whole vocabulary at once; and the steps taken."""
        vc = vocab_codes(vocab)
        allowed = np.zeros(vc.size, dtype=bool)
        allowed[vc.eos_id] = bool(self.accepting[i])
        if not len(vc.token_ids):
            return allowed, 0
        self.expand([i])
        # First characters for the whole vocabulary in one gather; only the tokens that survive it walk on.
        first = self.trans[i, self._classes(vc)[vc.offsets]]
        live = np.flatnonzero(first >= 0)
        done, _, _, steps = self.walk(vocab, first[live], live, np.ones(len(live), dtype=np.int64))
        allowed[vc.token_ids[done]] = True
        return allowed, steps + len(vc.token_ids)
