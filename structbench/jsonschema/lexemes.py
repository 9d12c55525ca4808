"""Numbers and literals in string mode: read by their DFAs compiled, like a string's content.

A number's characters move its DFA alone (the checker's `_step_number`) until one it does not move on: there, where
the DFA accepts, the number is finished and that character is its parent's (after a value: a comma, a closing
bracket, whitespace), else it is refused. The lazy strategy's string mode reads a number by that DFA's table
(:class:`NumberLexeme`), so no machine state is made per digit, and at such a character it goes on in the machine
from the state after the number (`END`: the character is read again there), one per number, not one per DFA state.

A literal (true, false, null) is its word's letters in order (the checker's `_step_literal`); its last letter
closes it, as a quote closes a string (:class:`LiteralLexeme`: `CLOSE`, then the machine from the state after it).
Its letters between make no machine state.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from structbench.regular.dfa import DFA

MAX_STATES = 4096  # a number DFA with more states is left to the machine (its table would be megabytes)


class NumberLexeme:
    """A number's DFA as string mode reads it (structbench.masking.string_mode): its states are the number's
    content, and `ends_open`: a character the DFA does not move on ends the number where it accepts, and is read
    again after it (no character closes it: `closing` None)."""

    ends_open = True
    closing = None

    def __init__(self, dfa: DFA):
        # Its DFA's moves, not the DFA: the lexeme is kept on its DFA (number_lexeme), and a reference back would
        # be a cycle, freed only by a collector's pass (inside some later schema's masks) for a schema's own bounds
        self.moves = dfa.moves
        self.accepting = dfa.accepting
        self.n_states = self.content_states = dfa.n_states

    def lexeme_tables(self, codes: np.ndarray, close: int, end: int, cap: int) -> tuple:
        """String mode's (lex, run, total) over the classes cut at `codes` (a class is one character for the DFA:
        every character a number holds is ASCII, a class of its own): lex[d, c] the DFA's next state, else `end`
        where d accepts (the number is finished and the character its parent's), else -1. No run of plain
        characters is read (run 0, total False: a number's masks are walked, its loops taken whole by `loops`)."""
        codes = np.asarray(codes, dtype=np.int64)
        lex = np.full((self.n_states, len(codes)), -1, dtype=np.int32)
        lex[list(self.accepting)] = end
        for d, moves in enumerate(self.moves):  # a few moves a state: the classes whose first character is in
            for lo, hi, target in moves:  # lo..hi (as regular.dfa.next_states reads a class)
                lex[d, np.searchsorted(codes, lo):np.searchsorted(codes, hi, side="right")] = target
        return lex, np.zeros(self.n_states, dtype=np.int64), np.zeros(self.n_states, dtype=bool)


def number_lexeme(dfa: DFA) -> NumberLexeme | None:
    """The number DFA's lexeme, kept on it (nodes of one type and bounds share their DFA, and string mode keeps the
    lexeme's tables on it); None for a DFA too big to table (MAX_STATES). An unbounded integer's or number's is
    one for every schema (`_unbounded`): JSON's number syntax, like a free string, holds nothing of a schema, so
    its tables are made once per class partition, and a cold start does not forget them."""
    found = dfa.__dict__.get("_number_lexeme", False)
    if found is False:
        found = _unbounded().get((dfa.moves, dfa.accepting, dfa.start))
        if found is None and dfa.n_states <= MAX_STATES:
            found = NumberLexeme(dfa)
        dfa.__dict__["_number_lexeme"] = found  # (a frozen dataclass: its __dict__ written directly)
    return found


@cache
def _unbounded() -> dict[tuple, NumberLexeme]:
    """The lexemes of the numbers no keyword bounds (an integer; a number in either syntax), by their DFA's moves,
    accepting states and start (number_language returns unbounded_number_dfa for them)."""
    from structbench.jsonschema.scalars import UNBOUNDED_NUMBERS

    found = {}
    for pattern in UNBOUNDED_NUMBERS:
        dfa = unbounded_number_dfa(pattern)
        found[(dfa.moves, dfa.accepting, dfa.start)] = NumberLexeme(dfa)
    return found


@cache
def unbounded_number_dfa(pattern: str) -> DFA:
    """The trimmed DFA of a number no keyword bounds (`pattern` one of scalars.UNBOUNDED_NUMBERS): JSON's number
    syntax, nothing of a schema, so one for every schema, built once per process and kept through a cold start as
    its lexeme is (a fresh schema's integer does not compile JSON's number grammar again: a fifth of a compile)."""
    from structbench.regular.automata import trim
    from structbench.regular.dfa import compile_pattern

    return trim(compile_pattern(pattern))


class LiteralLexeme:
    """A literal's word as string mode reads it: state d has read d letters (a literal frame's `at`, 1 up to the
    word's length less one; the checker closes it at its last letter), and `closing` is that last letter."""

    ends_open = False

    def __init__(self, word: str):
        self.word, self.closing = word, word[-1]
        self.n_states = self.content_states = len(word)

    def lexeme_tables(self, codes: np.ndarray, close: int, end: int, cap: int) -> tuple:
        """String mode's (lex, run, total): from d, its next letter's class to d + 1, the last letter's to `close`,
        any other refused; no run of plain characters claimed."""
        codes = np.asarray(codes, dtype=np.int64)
        lex = np.full((self.n_states, len(codes)), -1, dtype=np.int32)
        for d, letter in enumerate(self.word):  # (a letter is a class of its own: every ASCII character is)
            c = int(np.searchsorted(codes, ord(letter), side="right")) - 1
            lex[d, c] = d + 1 if d + 1 < len(self.word) else close
        return lex, np.zeros(self.n_states, dtype=np.int64), np.zeros(self.n_states, dtype=bool)


@cache
def literal_lexeme(word: str) -> LiteralLexeme:
    """The literal's lexeme: one per word for every schema (true, false, null: JSON's syntax, nothing of a schema),
    its tables made once per class partition and kept through a cold start."""
    return LiteralLexeme(word)
