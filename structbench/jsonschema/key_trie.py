"""A key's plain characters as a DFA: the prefix tree of the property names the key may still become.

Inside an object's key, a plain character (neither the quote, the backslash nor a control character) changes
only the key's text, and only as far as it matters (keys.py): the text while some property name continues it,
else `OTHER` (where other keys are allowed) or nothing (where they are not). So for one key context (the object
frame at the key's opening quote: its node, the keys seen, the count) the key's states are the prefixes of the
names it may still become, plus OTHER: a DFA whose table the lazy strategy reads compiled, as it reads a checked
string's (structbench.masking.lazy.StringContent), instead of making a checker state per name prefix.

Where other keys are allowed, the tree holds every property name (a used or forbidden one must still be told
apart from other keys); where they are not, only the names that may come next (the checker refuses a key no
such name continues). The closing quote is offered where the text may end a key (an available name, or any key
that is no property name where other keys are allowed); what follows it is the checker's own step.
"""

from __future__ import annotations

import numpy as np

from structbench.regular.charsets import MAX_CODE_POINT

_QUOTE, _BACKSLASH = 0x22, 0x5C


class NameTree:
    """The prefix tree of some property names, as a DFA's states: state 0 the empty key, one state per name
    prefix, and `other` last (a key no name continues) where such keys may come. What depends on the names
    alone, shared by every key context with the same names (free keys: every context of the object)."""

    def __init__(self, names, other: str | None):
        self.texts = [""]
        self.state_of = {"": 0}
        src, chars, dst = [], [], []
        for name in names:
            parent = 0
            for k in range(1, len(name) + 1):
                prefix = name[:k]
                d = self.state_of.get(prefix)
                if d is None:
                    d = self.state_of[prefix] = len(self.texts)
                    self.texts.append(prefix)
                    src.append(parent)
                    chars.append(ord(name[k - 1]))
                    dst.append(d)
                parent = d
        self.other = -1
        if other is not None:
            self.other = self.state_of[other] = len(self.texts)
            self.texts.append(other)
        self._edges = (np.array(src, dtype=np.int64), np.array(chars, dtype=np.int64), np.array(dst, dtype=np.int32))
        self._tables: dict = {}

    def tables(self, codes: np.ndarray, escape: int, cap: int) -> tuple[np.ndarray, np.ndarray]:
        """(table, run) over the classes cut at `codes` (each character a property name holds a class of its
        own): table[d, c] the state after a character of class c (-1 refused: control characters, a character
        no name continues where no other key may come; `escape` for the backslash; the quote's column left to
        the key context); run[d] how many plain characters in a row surely keep the key going from d (a state
        no name goes on from, where other keys may come, reads any: more than `cap`). Kept per classes."""
        key = (codes.tobytes(), cap)
        found = self._tables.get(key)
        if found is not None:
            return found
        plain = (codes >= 0x20) & (codes != _QUOTE) & (codes != _BACKSLASH)
        table = np.full((len(self.texts), len(codes)), -1, dtype=np.int32)
        if self.other >= 0:  # a character no name continues makes some other key
            table[:, plain] = self.other
        src, chars, dst = self._edges
        cls = np.searchsorted(codes, chars, side="right") - 1
        alone = np.append(codes, MAX_CODE_POINT + 1)
        if not ((alone[cls] == chars) & (alone[cls + 1] == chars + 1)).all():
            raise ValueError("the boundaries do not give every character of a property name a class of its own")
        keep = plain[cls]  # a name's quote, backslash or control character comes escaped only: the checker reads it
        table[src[keep], cls[keep]] = dst[keep]
        table[:, codes == _BACKSLASH] = escape
        run = np.zeros(len(self.texts), dtype=np.int64)
        if self.other >= 0:  # no plain child: every plain character leads to `other`, which loops
            run[:] = cap + 1
            run[src[keep]] = 0
        found = self._tables[key] = (table, run)
        return found


class KeyTrie:
    """The DFA of one key context: a :class:`NameTree`, and where the key may end (`accepting`: an available
    name, or any key that is no property name where such keys may come). `texts[d]` is the key's text at state
    d, `state_of` the inverse."""

    def __init__(self, tree: NameTree, available, others: bool, all_names):
        """available: the names that may come next; others: whether a key that is no property name may come;
        all_names: every property name of the object."""
        self.tree, self.texts, self.state_of = tree, tree.texts, tree.state_of
        available = set(available)
        self.accepting = frozenset(d for d, text in enumerate(self.texts)
                                   if text in available or others and text not in all_names)
        self._tables: dict = {}

    @property
    def n_states(self) -> int:
        return len(self.texts)

    def string_tables(self, codes: np.ndarray, close: int, escape: int, cap: int) -> tuple[np.ndarray, np.ndarray]:
        """String mode's (lex, run) (structbench.masking.string_mode.StringContent): the tree's, with `close` for
        the quote where the key may end and -1 where it may not. Kept per classes."""
        key = (codes.tobytes(), cap)
        found = self._tables.get(key)
        if found is None:
            table, run = self.tree.tables(codes, escape, cap)
            table = table.copy()
            accepting = np.zeros(self.n_states, dtype=bool)
            accepting[list(self.accepting)] = True
            table[:, codes == _QUOTE] = np.where(accepting, close, -1)[:, None]
            found = self._tables[key] = (table, run)
        return found
