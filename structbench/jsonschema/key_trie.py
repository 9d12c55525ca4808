"""A key's plain characters as a DFA: the prefix tree of the property names the key may still become.

Inside an object's key, a plain character (neither the quote, the backslash nor a control character) changes
only the key's text, and only as far as it matters (keys.py): the text while some property name continues it,
else `OTHER`. Where other keys are allowed and no pattern checks them, a key's states are the prefixes of the
object's names plus OTHER: a DFA whose table the lazy strategy reads compiled, as it reads a checked string's
(structbench.masking.string_mode), instead of making a checker state per name prefix.

The tree holds every property name of the object (a used or forbidden one must still be told apart from other
keys), so one tree serves every key of the object. The closing quote is offered anywhere; whether the key may
end there, and what follows, is the checker's own step. (Where no other key may come, or patterns check keys,
the names are crossed with those DFAs and told live per key: structbench.jsonschema.key_patterns.)
"""

from __future__ import annotations

import numpy as np

from structbench.jsonschema.frames import with_text
from structbench.jsonschema.free_text import (
    ESCAPABLE_BOUNDS,
    escape_rows,
    n_escape_states,
)
from structbench.regular.charsets import json_classes, meets


class KeyTrie:
    """The prefix tree of some property names as a DFA: state 0 the empty key, one state per name prefix, and
    `other` last (a key no name continues). `texts[d]` is the key's text at state d, `state_of` the inverse."""

    def __init__(self, names, other: str):
        """names: the names the tree holds; other: the text of a key that is no property name (keys.OTHER)."""
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
        self.other = self.state_of[other] = len(self.texts)
        self.texts.append(other)
        self.accepting = frozenset(range(len(self.texts)))  # the quote: anywhere (the checker decides)
        self._edges = (np.array(src, dtype=np.int64), np.array(chars, dtype=np.int64), np.array(dst, dtype=np.int32))

    def at(self, top) -> int | None:
        """The state of a key frame (its text), or None."""
        return self.state_of.get(top.text)

    def frame_at(self, top, d: int):
        """The key frame `top` at state d."""
        text = self.texts[d]
        return top if top.text == text else with_text(top, text)

    def table_parts(self) -> tuple:
        """What string_tables builds its table from, for string mode's compiled build of the same table
        (structbench.masking.trie_walk.key_trie_tables): (the texts' count, `other`, the tree's edges as (parent,
        character, child) arrays, and per edge whether an escape may stand for its character)."""
        found = self.__dict__.get("_table_parts")
        if found is None:
            src, chars, dst = self._edges
            found = self.__dict__["_table_parts"] = (len(self.texts), self.other, src, chars, dst,
                                                     meets(chars, chars, ESCAPABLE_BOUNDS))
        return found

    @property
    def n_states(self) -> int:
        """The DFA's states: the name prefixes and `other`, then the escape's."""
        return len(self.texts) + n_escape_states()

    @property
    def content_states(self) -> int:
        """The states that are a key's text (texts[d]); those after them read an escape of `other`."""
        return len(self.texts)

    def string_tables(self, codes: np.ndarray, close: int, escape: int, cap: int) -> tuple:
        """String mode's (lex, run, total) (structbench.masking.string_mode.StringContent) over the classes cut at
        `codes` (each character a property name holds a class of its own): lex[d, c] the state after a character of
        class c (-1 refused: control characters; `close` for the quote; `escape` for the backslash); run[d] how
        many plain characters in a row surely keep the key going from d (a state no name goes on from reads any:
        more than `cap`); total[d]: any run of plain characters keeps it going (every state). string_mode keeps
        them per classes.

        Escapes that make some other key are read here too: a backslash leads to the
        escape's states (after the texts), a finished escape to `other`. That is a backslash in `other`, and in
        every state no name goes on from by a character an escape may stand for (the key becomes `other` at the
        backslash: keys._key_step). Some other key's text no longer matters, so its escape is the string syntax
        alone, the checker's string_step with no content DFA, and needs no machine state. Elsewhere the backslash
        is `escape`: the checker reads it."""
        plain, quote, backslash, alone = json_classes(np.asarray(codes, dtype=np.int64))
        n = len(self.texts)
        lex = np.full((self.n_states, len(codes)), -1, dtype=np.int32)
        # A text's row before its names' characters: a character no name continues makes some other key; the
        # backslash is `escape`, the quote `close` (one row, copied to every text: a masked write per column
        # cost more than the table)
        text_row = np.where(plain, np.int32(self.other), np.int32(-1))
        text_row[backslash] = escape
        text_row[quote] = close
        lex[:n] = text_row
        src, chars, dst = self._edges
        cls = np.searchsorted(codes, chars, side="right") - 1
        if not ((alone[cls] == chars) & (alone[cls + 1] == chars + 1)).all():
            raise ValueError("the boundaries do not give every character of a property name a class of its own")
        keep = plain[cls]  # a name's quote, backslash or control character comes escaped only: the checker reads it
        lex[src[keep], cls[keep]] = dst[keep]
        run = np.zeros(self.n_states, dtype=np.int64)
        run[:n] = cap + 1  # no plain child: every plain character leads to `other`, which loops
        run[src[keep]] = 0
        if escape_rows(lex, n, self.other, codes):
            # A backslash makes some other key, in the escape's first state, from `other` and wherever no name
            # goes on by a character an escape may stand for (keys._key_step: the key is `other` then).
            escaped = meets(chars, chars, ESCAPABLE_BOUNDS)
            reads = np.ones(n, dtype=bool)
            reads[src[escaped]] = False
            lex[np.flatnonzero(reads), np.flatnonzero(backslash)[0]] = n
        total = np.zeros(self.n_states, dtype=bool)
        total[:n] = True
        return lex, run, total

