"""Free text in string mode: the escapes of a text whose characters no longer matter, and a free string's content.

Where a string's content is free (no DFA checks it), or a key's text no longer matters (some other key), an escape
is the string syntax alone: the checker's string_step with no content DFA, a few states (after the backslash,
after \\u, then the hex digits left) that end back where the escape began. The lazy strategy's string mode reads
them from table rows placed after a DFA's own states (:func:`escape_rows`), so an escape costs no machine state and
no round of its walk. A free string's content is then a DFA of one state (:class:`FreeString`), read in string mode
like a checked string's.
"""

from __future__ import annotations

import functools

import numpy as np

from structbench.jsonschema.strings import (
    END,
    SIMPLE_ESCAPES,
    escape_candidates,
    string_step,
)
from structbench.regular.charsets import ascii_own, bounds_of, json_classes

_DONE = -9  # free_escapes: the escape is finished, the text reads on
# What an escape may stand for (strings.escape_candidates), as charsets.meets searches it: string mode's tables
# (a checked string's backslash, a key trie's escaped characters) test many code points against it at once.
ESCAPABLE_BOUNDS = bounds_of(escape_candidates("\\"))
ANY_CHAR_BOUNDS = bounds_of(escape_candidates("u"))  # what a `\\u` escape may stand for (strings.ANY_CHAR)


@functools.cache
def free_escapes() -> tuple[np.ndarray, tuple[str, ...]]:
    """The escape of free text as a DFA over the ASCII characters: (moves, states), states[j] the escape code
    (strings.py) of state j, states[0] just after the backslash; moves[j, c] the next state, _DONE where the escape
    ends there, -1 where c is refused. Found by stepping the checker's own string_step."""
    states, index, moves = ["\\"], {"\\": 0}, []
    for esc in states:  # grows as new escape codes are met
        row = []
        for c in range(128):
            got = string_step(esc, 0, chr(c), None)
            if got is None or got is END:  # (inside an escape the quote is \" : END is never an answer there)
                row.append(-1)
            elif got.esc == "":
                row.append(_DONE)
            else:
                row.append(index.setdefault(got.esc, len(index)))
                if len(index) > len(states):
                    states.append(got.esc)
        moves.append(row)
    return np.array(moves, dtype=np.int32), tuple(states)


def checked_escape_rows(after: np.ndarray, by_code: np.ndarray, escape: int) -> np.ndarray:
    """The rows after a backslash where the text is checked (a checked string's DFA, a key checked by its names and
    key DFAs), every ASCII character a class of its own (class c is character c): `after[d, c]` is where state d
    goes by the character of class c, so a simple escape moves as the character it stands for (`\\n` as a newline),
    as the checker's string_step does; `u` is `escape` (the checker reads its hex digits) where `by_code` (the state
    goes on by a character a `\\u` may stand for), and anything else is refused."""
    rows = np.full(after.shape, -1, dtype=np.int32)
    rows[:, _SIMPLE_ESCAPE_CODES] = after[:, _SIMPLE_ESCAPED_CODES]
    rows[:, ord("u")] = np.where(by_code, escape, -1)
    return rows


_SIMPLE_ESCAPE_CODES = np.array([ord(escape) for escape in SIMPLE_ESCAPES], dtype=np.int64)
_SIMPLE_ESCAPED_CODES = np.array([ord(char) for char in SIMPLE_ESCAPES.values()], dtype=np.int64)
# For compiled builds of the same rows (structbench.masking.trie_walk): per simple escape, the ASCII code after the
# backslash and the code it stands for; and free_escapes' mark of a finished escape.
SIMPLE_ESCAPE_COLUMNS = (_SIMPLE_ESCAPE_CODES, _SIMPLE_ESCAPED_CODES)
ESCAPE_FINISHED = _DONE


def n_escape_states() -> int:
    return len(free_escapes()[1])


def escape_rows(lex: np.ndarray, first: int, back: int, codes: np.ndarray) -> bool:
    """Fill lex[first:first + n_escape_states()] with the escape's rows (a finished escape goes to state `back`),
    where every ASCII character is a class of its own (no escape holds another); returns whether it did (else the
    rows stay refused and the caller leaves the backslash to the checker)."""
    if not ascii_own(codes):
        return False
    moves = free_escapes()[0]
    lex[first:first + len(moves), :128] = np.where(moves == _DONE, back, np.where(moves >= 0, first + moves, -1))
    return True


class FreeString:
    """A free string's content as a DFA: state 0, where every plain character stays and the quote may close it,
    and the escape's states after it (escape_rows). The checker's free string frames stay at state 0
    (string_step with no DFA leaves `at` as it is)."""

    accepting = frozenset({0})
    content_states = 1

    @property
    def n_states(self) -> int:
        return 1 + n_escape_states()

    def frame_at(self, top, d: int):
        """A key's frame at state d, where the key's text is not kept (the checker's string_content): the frame
        itself, which plain characters leave as it is (d is 0, the one content state)."""
        return top

    def string_tables(self, codes: np.ndarray, close: int, escape: int, cap: int) -> tuple:
        """String mode's (lex, run, total) (structbench.masking.string_mode.StringContent): any run of plain
        characters is read at state 0; the quote closes; the backslash opens the escape's rows (or is `escape`,
        the checker's to read, where the classes do not allow them)."""
        plain, quote, backslash, _ = json_classes(np.asarray(codes, dtype=np.int64))
        lex = np.full((self.n_states, len(codes)), -1, dtype=np.int32)
        lex[0, plain] = 0
        lex[0, quote] = close
        lex[0, backslash] = 1 if escape_rows(lex, 1, 0, codes) else escape
        run = np.zeros(self.n_states, dtype=np.int64)
        run[0] = cap + 1
        total = np.zeros(self.n_states, dtype=bool)
        total[0] = True
        return lex, run, total


FREE_STRING = FreeString()  # every checker's (it holds nothing of a schema)
