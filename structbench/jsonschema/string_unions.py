"""A union whose branches are all inside strings, checked by one DFA or free: string mode's DFA for all of them.

A union of objects (anyOf, oneOf) writing the same property, a checked string in one branch and a free one in
another (a property of one object, another's additional property; Github o9961: `maxLength` against any value),
is stepped by the checker branch by branch: each character a step per branch, and a lazy mask's walk a checker
step per node of the vocabulary's tree it reads (Llama 3: 1-5 ms a mask, where a string's mask is 30-100 us).
Where every branch's string is checked by the same DFA X at the same state, or is free, a plain character moves
X's branches as X does and leaves the free ones where they are; X's branches end where X refuses it, the free ones
never. So the union reads plain characters as one DFA: X's states, each move X lacks sent to one more state, the
`free_sink` (only the free branches left, every character kept there), every state accepting (a free branch may
close anywhere; the checker's step at the quote closes X's branches only where X accepts). The checker maps a
state of it back to the branches (`SchemaChecker._or_free_at`), exactly as its union step leaves them.
"""

from __future__ import annotations

import weakref

from structbench.regular.dfa import DFA

MAX_STATES = 4096  # X's states at most: its DFA is made once per X (kept on it), a Python pass over its moves
_LAST_CODE = 0x10FFFF


class OrFreeDFA(DFA):
    """or_free's DFA, told from others by its type (a check on the hot path of every string's advance): a DFA with
    `or_free_of` (X) and `free_sink` (its last state) set on it. X keeps it (or_free's cache) and it refers to X
    weakly: a reference each way would be a cycle, which only a collector's pass frees (inside some later schema's
    masks); X outlives it wherever it is read (the schema's node holds X)."""

    @property
    def or_free_of(self) -> DFA:
        found = self.__dict__["_or_free_of"]()
        if found is None:
            raise RuntimeError("or_free's DFA outlived the DFA it was made from")
        return found


def or_free(dfa: DFA) -> OrFreeDFA | None:
    """The union's DFA where its checked branches are at states of `dfa` and the rest are free strings (kept on
    `dfa`); None where `dfa` has more than MAX_STATES states, but for a length counter (any_string's), whose
    states' moves are made at once, however many."""
    found = dfa.__dict__.get("_or_free", False)
    if found is not False:
        return found
    found = None
    sink = dfa.n_states
    if "_length_counter" in dfa.__dict__:  # a maxLength alone (o9961's 32,767): every row but the last is whole
        moves = dfa.moves[:-1] + (_completed(dfa.moves[-1], sink), ((0, _LAST_CODE, sink),))
        found = OrFreeDFA.of_checked_moves(moves, frozenset(range(sink + 1)))
        found.__dict__["_non_ascii_ends"] = frozenset()  # (every move is over every code point)
    elif dfa.n_states <= MAX_STATES:
        moves = [_completed(row, sink) for row in dfa.moves]
        moves.append(((0, _LAST_CODE, sink),))
        found = OrFreeDFA(tuple(moves), frozenset(range(sink + 1)), dfa.start)
    if found is not None:
        found.__dict__["_or_free_of"] = weakref.ref(dfa)
        found.__dict__["free_sink"] = sink
    dfa.__dict__["_or_free"] = found  # (the frozen dataclass's own fields are untouched)
    return found


def _completed(row: tuple, sink: int) -> tuple:
    """A state's moves (sorted, disjoint code-point intervals) with every code point they leave out sent to `sink`."""
    out, at = [], 0
    for lo, hi, target in row:
        if lo > at:
            out.append((at, lo - 1, sink))
        out.append((lo, hi, target))
        at = hi + 1
    if at <= _LAST_CODE:
        out.append((at, _LAST_CODE, sink))
    return tuple(out)
