"""A key checked by key DFAs (patternProperties, propertyNames) as a DFA, for the lazy strategy's string mode.

Where DFAs check an object's keys, a key's state is its text as far as it matters (a prefix of some property
name, or `other` once none continues it; keys.py) together with each key DFA's state: the product of the name
tree (key_trie.py) and the DFAs. Without it, every character of such a key is a checker step in a mask's walk
(Snowplow's events: some 130 property names and two patterns, a few milliseconds a key mask).

The product's states are found once per object (:class:`KeyPatternStates`): every name prefix with the DFA states
its text leads to, then every combination of DFA states a key no name continues reaches. Which name prefixes are
live depends on the key's context (the object's used keys and count decide the names that may still come), so an
object's contexts share one table (:class:`KeyPatternDFA`, every prefix live) and each context has rows of its own
only where a move leads to a prefix dead in it: the parents of the names used so far.
"""

from __future__ import annotations

import math
from functools import cached_property

import numpy as np

from structbench.jsonschema.frames import with_text_ks
from structbench.jsonschema.free_text import (
    ANY_CHAR_BOUNDS,
    ESCAPABLE_BOUNDS,
    checked_escape_rows,
)
from structbench.regular.charsets import MAX_CODE_POINT, ascii_own, json_classes, meets
from structbench.regular.dfa import next_states

MAX_OTHERS = 4096  # a product with more combinations of DFA states is left to the checker's own steps
MAX_CELLS = 1 << 22  # and one with more (state, part of the DFAs' characters) pairs


class KeyPatternStates:
    """The states of a key checked by DFAs, for one object: states 0..n_texts-1 are the name prefixes (`texts[d]`,
    each with the DFA states `ks[d]` its text leads to: the tree of every property name, so text 0 is the empty key),
    then the combinations of DFA states a key of text `other_text` reaches (keys.OTHER; the empty text where the
    object tracks no names, whose keys keep their text). `ks(d)` is a tuple per state, None for a dead DFA, as the
    checker's frames hold it; `state_of(text, ks)` the inverse. `complete` is False where there are more than
    `limit` combinations (then the object's keys are left to the checker)."""

    def __init__(self, names, dfas, other_text: str, limit: int = MAX_OTHERS):
        self.dfas = list(dfas)
        cuts = {0}
        for dfa in self.dfas:
            for row in dfa.moves:
                for lo, hi, _ in row:
                    cuts.update((lo, hi + 1))
        cuts.discard(MAX_CODE_POINT + 1)
        self.cuts = np.array(sorted(cuts), dtype=np.int64)  # parts [cuts[p], cuts[p + 1]): each DFA moves alike
        # Per DFA, its next state per part (-1 none), and a last row of -1 so that a dead DFA (-1) stays dead.
        self._tables = [np.vstack([next_states(dfa, self.cuts), np.full(len(self.cuts), -1, dtype=np.int64)])
                        for dfa in self.dfas]
        sizes = [dfa.n_states + 1 for dfa in self.dfas]
        radix = [1]  # (in Python's integers: exact, and on a few numbers NumPy's calls cost more than the work)
        for size in sizes[:-1]:
            radix.append(radix[-1] * size)
        self.complete = math.prod(sizes) < 2 ** 62  # combinations coded as one int64
        self._radix = np.array(radix[:len(sizes)], dtype=np.int64) if self.complete else None
        self.other_text = other_text
        self._tables_by_classes: dict[bytes, np.ndarray] = {}
        self._raw_by_classes: dict[bytes, np.ndarray] = {}  # (escape_moves)
        self._names_tree(sorted(set(names)))
        if self.complete:
            self._find_others(limit)

    def _names_tree(self, names: list[str]) -> None:
        """The name prefixes, numbered in preorder (names sorted), with their parents, characters, subtree sizes and
        DFA states."""
        texts, text_of, parent, chars, depth = [""], {"": 0}, [-1], [-1], [0]
        self.name_end = {}
        for name in names:
            at = 0
            for k in range(1, len(name) + 1):
                prefix = name[:k]
                d = text_of.get(prefix)
                if d is None:
                    d = text_of[prefix] = len(texts)
                    texts.append(prefix)
                    parent.append(at)
                    chars.append(ord(name[k - 1]))
                    depth.append(k)
                at = d
            self.name_end[name] = at
        if not names and self.other_text == "":  # no names tracked: the empty key's text never changes, and
            texts, text_of, parent, chars, depth = [], {}, [], [], []  # it is one of the combinations below
        self.texts, self._text_index = texts, text_of
        self.parent_list = parent  # (a context's live prefixes are walked up it in Python: keys._context_dfa)
        n = len(texts)
        size = [1] * n  # preorder: the subtree of d is d .. d + size[d] - 1
        for d in range(n - 1, 0, -1):
            size[parent[d]] += size[d]
        self.size = np.array(size, dtype=np.int64)
        self.subtree_end = np.arange(n, dtype=np.int64) + self.size  # per prefix: where its subtree ends
        self.parent = np.array(parent, dtype=np.int64)
        self.chars = np.array(chars, dtype=np.int64)
        # Per prefix: does it end in a character an escape may stand for (as key_trie asks)? A context whose dead
        # names end in none has the shared table's escape rows (KeyPatternDFA.overrides). (The root's is -1: no.)
        self.escapable_end = (self.chars >= 0) & meets(self.chars, self.chars, ESCAPABLE_BOUNDS)
        self._starts = np.array([dfa.start for dfa in self.dfas], dtype=np.int64)
        ks = np.empty((n, len(self.dfas)), dtype=np.int64)
        if n and self.dfas:
            ks[0] = self._starts
            depth = np.array(depth, dtype=np.int64)
            parts = np.searchsorted(self.cuts, self.chars, side="right") - 1
            for k in range(1, int(depth.max()) + 1):  # a level at a time: parents come first
                level = np.flatnonzero(depth == k)
                for i, table in enumerate(self._tables):
                    ks[level, i] = table[ks[self.parent[level], i], parts[level]]
        self._text_ks = ks

    def _find_others(self, limit: int) -> None:
        """Every combination of DFA states a key no name continues reaches: after any character from a name
        prefix (an over-count: a character that continues a name goes on in the tree), then onwards, breadth first.
        Where there are no names, from the DFAs' starts."""
        n = len(self.texts)
        if not self.dfas:  # one combination: no DFA
            found = np.zeros(1, dtype=np.int64)
        elif len(self.dfas) == 1:
            found = self._one_dfa_others(limit, n)
        else:
            found = self._product_others(limit, n)
        if len(found) > limit or (len(found) + n) * len(self.cuts) > MAX_CELLS:
            self.complete = False
            return
        self._other_codes = found  # sorted
        self._other_ks = self._decode(found)
        self.n_states = n + len(found)
        self.ks_array = np.vstack([self._text_ks, self._other_ks])  # (-1 for a dead DFA)
        self._ks: dict[int, tuple] = {}

    def _product_others(self, limit: int, n: int) -> np.ndarray:
        """_find_others' combinations of several DFAs' states, a level of the search at a time in NumPy (sorted
        codes; more than `limit`, or past MAX_CELLS, where the search stopped there)."""
        found = np.unique(self._codes(self._steps(self._text_ks if n else self._starts[None, :])))
        frontier = found
        while len(frontier) and len(found) <= limit and (len(found) + n) * len(self.cuts) <= MAX_CELLS:
            nxt = np.unique(self._codes(self._steps(self._decode(frontier))))
            frontier = nxt[~_sorted_has(found, nxt)]
            found = np.union1d(found, frontier)
        return found

    def _one_dfa_others(self, limit: int, n: int) -> np.ndarray:
        """_find_others' combinations where one DFA checks keys: its states (code d + 1, 0 for dead) reached from the
        name prefixes' states by one character or more, searched breadth first over its moves in Python (a counted
        pattern is a chain of hundreds of states, which the NumPy search took a level, and half a dozen calls, at a
        time); sorted codes, more than `limit` or past MAX_CELLS where the search stopped there (as _product_others)."""
        dfa, cap = self.dfas[0], min(limit, MAX_CELLS // len(self.cuts) - n)
        everything = MAX_CODE_POINT + 1

        def after(d: int):  # the states one character leads to from d (-1: a character no move takes)
            if d < 0:
                return (-1,)
            row = dfa.moves[d]
            targets = [t for _, _, t in row]
            if sum(hi - lo + 1 for lo, hi, _ in row) < everything:
                targets.append(-1)
            return targets

        found: set[int] = set()
        frontier = list(set(self._text_ks[:, 0].tolist())) if n else [dfa.start]  # (reached only by a character)
        while frontier:
            nxt = []
            for d in frontier:
                for t in after(d):
                    if t not in found:
                        found.add(t)
                        nxt.append(t)
            if len(found) > cap:
                break
            frontier = nxt
        return np.array(sorted(d + 1 for d in found), dtype=np.int64)

    def ks(self, d: int) -> tuple:
        """State d's DFA states as a key frame holds them (None for a dead DFA)."""
        found = self._ks.get(d)
        if found is None:
            found = self._ks[d] = tuple(None if s < 0 else s for s in self.ks_array[d].tolist())
        return found

    def state_of(self, text: str, ks: tuple) -> int | None:
        """The state of a key frame's text and DFA states, or None."""
        if text != self.other_text:
            d = self._text_index.get(text)
            return d if d is not None and self.ks(d) == ks else None
        if len(ks) != len(self.dfas):
            return None
        code = sum((-1 if s is None else s) * r for s, r in zip(ks, self._radix.tolist())) + int(self._radix.sum())
        j = int(np.searchsorted(self._other_codes, code))
        if j < len(self._other_codes) and self._other_codes[j] == code:
            return len(self.texts) + j
        return None

    def _steps(self, ks: np.ndarray) -> np.ndarray:
        """(rows, parts, DFAs): each row's DFA states after a character of each part."""
        if not self._tables:  # no DFA: names alone (an object no other key may come to)
            return np.zeros((len(ks), len(self.cuts), 0), dtype=np.int64)
        return np.stack([table[ks[:, i]] for i, table in enumerate(self._tables)], axis=-1)

    def _codes(self, ks: np.ndarray) -> np.ndarray:
        return ((ks + 1) * self._radix).sum(axis=-1).ravel()

    def _decode(self, codes: np.ndarray) -> np.ndarray:
        sizes = np.array([dfa.n_states + 1 for dfa in self.dfas], dtype=np.int64)
        return (codes[:, None] // self._radix[None, :]) % sizes[None, :] - 1

    def accepted(self, i: int, accepting) -> np.ndarray:
        """Per state: is DFA i in one of its `accepting` states?"""
        ends = np.zeros(self.dfas[i].n_states + 1, dtype=bool)  # (the last: a dead DFA, -1)
        ends[list(accepting)] = True
        return ends[self.ks_array[:, i]]

    def text_of(self, d: int) -> str:
        return self.texts[d] if d < len(self.texts) else self.other_text

    def table(self, codes: np.ndarray) -> np.ndarray:
        """next[d, c]: the state after a plain character of class c (classes cut at `codes`, each character a
        property name holds a class of its own) from state d, in any context (-1: no DFA alive, no name goes on and
        no other key is taken; the quote, the backslash and control characters too). Made once per classes."""
        key = codes.tobytes()
        found = self._tables_by_classes.get(key)
        if found is not None:
            return found
        plain, _, _, alone = json_classes(codes)
        table = self._raw_table(codes, alone).copy()
        table[:, ~plain] = -1  # (a name's quote, backslash or control character comes escaped only: escape_moves)
        self._tables_by_classes[key] = table
        return table

    def escape_moves(self, codes: np.ndarray) -> np.ndarray:
        """next[d, c] as `table` gives it, where a character of class c comes escaped (the checker decodes an escape
        and reads its character as any other): the quote, the backslash and control characters move too. Made once
        per classes, with `table`."""
        return self._raw_table(codes, json_classes(codes)[3])

    def _raw_table(self, codes: np.ndarray, alone: np.ndarray) -> np.ndarray:
        key = codes.tobytes()
        found = self._raw_by_classes.get(key)
        if found is not None:
            return found
        n = len(self.texts)
        if not self.dfas:  # names alone: a character no name continues makes the one other combination
            table = np.full((self.n_states, len(codes)), n, dtype=np.int32)
        else:
            if not _sorted_has(codes, self.cuts).all():
                raise ValueError("the boundaries do not cut the characters where the key DFAs' moves do")
            ks = self.ks_array
            combos = self._codes(self._steps(ks)).reshape(len(ks), -1)
            per_part = np.searchsorted(self._other_codes, combos)
            if not _sorted_has(self._other_codes, combos).all():
                raise AssertionError("a key's combinations of DFA states were not all found")  # (the search is closed)
            per_part += n
            table = per_part[:, np.searchsorted(self.cuts, codes, side="right") - 1].astype(np.int32)
        if n > 1:
            cls = np.searchsorted(codes, self.chars[1:], side="right") - 1
            if not ((alone[cls] == self.chars[1:]) & (alone[cls + 1] == self.chars[1:] + 1)).all():
                raise ValueError("the boundaries do not give every character of a property name a class of its own")
            table[self.parent[1:], cls] = np.arange(1, n, dtype=np.int32)  # a name goes on: in the tree
        self._raw_by_classes[key] = table
        return table


def _sorted_has(sorted_values: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per value, is it in `sorted_values`?"""
    at = np.minimum(np.searchsorted(sorted_values, values), len(sorted_values) - 1)
    return sorted_values[at] == values


class KeyPatternDFA:
    """A key checked by DFAs in one context, as string mode reads it (structbench.masking.string_mode): the states of
    its object's :class:`KeyPatternStates`, with moves only to live states (a name prefix some name that may still
    come continues, or a state where the key can still be some other key: keys._key_live).

    An object's contexts differ only in which name prefixes are live (the names used so far), so they share one
    table: the object's own (`shared` None: every name prefix live), where the quote is offered wherever the key may
    end in some context (an over-count: the checker's own step at the quote decides) and the backslash always (the
    checker reads escapes, and refuses those that kill the key). A context (`shared`, that table's DFA) has rows
    of its own only where a move leads to a prefix dead in it (`overrides`): the parents of the names used."""

    def __init__(self, states: KeyPatternStates, live: np.ndarray, may_end: np.ndarray | None = None,
                 shared: KeyPatternDFA | None = None, alive: np.ndarray | None = None):
        """live: per state; may_end (the shared DFA): where the quote is offered; alive (the shared DFA): the
        states where the key can still be some other key, whatever names may still come."""
        self.states, self.live, self.may_end, self.shared, self.alive = states, live, may_end, shared, alive
        self.n_states = self.content_states = states.n_states

    @property
    def counted_from(self) -> int | None:
        """The shared DFA's: its first state past the name prefixes (the other keys' states, whose rows no
        context's differ in: keys._context_dfa), where string mode may read a pattern's counted repetitions as a
        count (string_mode._find_chains); None for a context, which reads the shared table."""
        return len(self.states.texts) if self.shared is None else None

    @cached_property
    def live_prefixes(self) -> frozenset[int]:
        """The live name prefixes (states below len(states.texts)), as a set."""
        return frozenset(np.flatnonzero(self.live[:len(self.states.texts)]).tolist())

    @cached_property
    def alive_prefixes(self) -> frozenset[int]:
        """The shared DFA's: the name prefixes where the key can still be some other key, as a set."""
        return frozenset(np.flatnonzero(self.alive[:len(self.states.texts)]).tolist())

    def same_tail(self, others: bool) -> bool:
        """The shared DFA's: whether a context's states past the name prefixes are live as here, where other keys
        may come (`others`: they are `alive`'s) or not (none is)."""
        found = self.__dict__.setdefault("_same_tail", {}).get(others)
        if found is None:
            n = len(self.states.texts)
            tail = self.alive[n:] if others else np.zeros(len(self.live) - n, dtype=bool)
            found = self.__dict__["_same_tail"][others] = bool((tail == self.live[n:]).all())
        return found

    def at(self, top) -> int | None:
        """The state of a key frame (its text and DFA states), or None."""
        return self.states.state_of(top.text, top.ks)

    def frame_at(self, top, d: int):
        """The key frame `top` at state d."""
        text, ks = self.states.text_of(d), self.states.ks(d)
        return top if top.text == text and top.ks == ks else with_text_ks(top, text, ks)

    def string_table(self, codes: np.ndarray, close: int, escape: int) -> np.ndarray:
        """The shared table, as string mode's lex (StringContent.lex) over the classes cut at `codes`: moves to
        live states, `close` for the quote where the key may end. The backslash at state d leads to row n + d, after
        the n states' rows, where a simple escape moves by the character it stands for (the checker decodes it and
        reads it as any other) and `u` is `escape` (the checker reads its hex digits) where some character may come
        there at all; the backslash is refused where no escape can go on (the checker's `_key_live`), so it costs
        a machine state only for a `\\u`. Where an escape's letters and characters are not classes of their own, the
        backslash is `escape` everywhere: the checker reads escapes, and refuses those that kill the key."""
        _, quote, backslash, _ = json_classes(codes)
        table = self.states.table(codes)
        live = np.append(self.live, False)  # (-1, no move, indexes the last: not live)
        lex = np.where(live[table], table, -1).astype(np.int32)
        lex[:, quote] = np.where(self.may_end, close, -1)[:, None]
        if not ascii_own(codes):
            lex[:, backslash] = escape
            return lex
        if not self.states.dfas and not self.states.escapable_end.any():
            # Names alone (no other key may come), none holding a character an escape may stand for: no escape
            # goes on anywhere (most strict objects), so no escape rows either
            lex[:, backslash] = -1
            return lex
        ds = np.arange(len(lex))
        rows, escapable = self._escape_rows(codes, live, ds, escape)
        lex[:, _BACKSLASH] = np.where(escapable, len(lex) + ds, -1)
        return np.concatenate([lex, rows])

    def _escape_rows(self, codes: np.ndarray, live: np.ndarray, ds: np.ndarray, escape: int) -> tuple:
        """(the rows after a backslash at states ds, whether a backslash may be read there at all), given `live`
        (per state, and a last False that -1 indexes)."""
        moves = self.states.escape_moves(codes)[ds]
        after = np.where(live[moves], moves, -1)  # the state after each character, escaped (-1: refused)
        # \u may stand for any character but printable ASCII (strings.ANY_CHAR): the key goes on by one of those
        his = np.append(codes[1:] - 1, MAX_CODE_POINT)
        by_code = (after[:, meets(codes, his, ANY_CHAR_BOUNDS)] >= 0).any(axis=1)
        return checked_escape_rows(after, by_code, escape), by_code | (after[:, _ESCAPED_PRINTABLE] >= 0).any(axis=1)

    def overrides(self, lex: np.ndarray, codes: np.ndarray, escape: int, context_rows) -> tuple[np.ndarray, np.ndarray]:
        """(states, their rows): where this context's rows differ from the shared table `lex` (the shared DFA's
        string_table over `codes`): a live state's moves to name prefixes dead here, refused; and where the
        table has escape rows, the backslash's and its escape row's (row n + d) the same way. context_rows(shared
        live, live, parents, lex) -> the former (structbench.masking.trie_walk.context_rows: one compiled pass)."""
        ds, rows = context_rows(self.shared.live, self.live, self.states.parent, lex)
        n = len(self.live)
        if len(lex) == n:  # no escape rows: the backslash is the checker's, or refused in every context
            return ds, rows
        # Escape rows (and the backslash) differ only where a dead prefix's last character may come escaped: at its
        # parent (most names are printable ASCII without a quote, a slash or a backslash: none differ)
        dead_ids = np.flatnonzero(self.shared.live & ~self.live)
        ends = dead_ids[self.states.escapable_end[dead_ids]]
        if not len(ends):
            return ds, rows
        es = np.unique(self.states.parent[ends])
        es = es[es >= 0]
        es = es[self.live[es]]  # (as ds: the live parents)
        if not len(es):
            return ds, rows
        escape_rows, escapable = self._escape_rows(codes, np.append(self.live, False), es, escape)
        rows[np.searchsorted(ds, es), _BACKSLASH] = np.where(escapable, n + es, -1)
        return np.concatenate([ds, n + es]), np.concatenate([rows, escape_rows])


_BACKSLASH = ord("\\")
_ESCAPED_PRINTABLE = np.array([ord(char) for char in '"/\\'], dtype=np.int64)  # what else an escape may stand for
