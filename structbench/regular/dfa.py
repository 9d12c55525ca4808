"""The DFA, and how every DFA here is built: by crawling the states reachable from a start.

:func:`crawl` is the one construction loop: the subset construction below, and the product and trim in
:mod:`structbench.regular.automata`, each only say what a state's moves are. It numbers states breadth
first, the start 0 and the others in the order first reached, so a DFA's numbering is a function of its
inputs (mask tables and the lesson's state counts depend on it).

:func:`compile_pattern` is pattern -> NFA (Thompson) -> DFA (subset construction), not minimised: the
lesson counts these states (8, 11 and 3 for its three patterns).
"""

from __future__ import annotations

import bisect
import functools
from dataclasses import dataclass, field
from itertools import chain

import numpy as np

from structbench.errors import InvalidAutomaton, TooComplex
from structbench.limits import Fuel, exceeded
from structbench.limits import current as limits
from structbench.regular.charsets import MAX_CODE_POINT
from structbench.regular.nfa import NFA
from structbench.regular.syntax import parse_pattern

Move = tuple[int, int, int]  # (lo, hi, target): the code points lo..hi lead to state target

_MISS = object()


@dataclass(frozen=True)
class DFA:
    """A deterministic machine: one state at a time, one move per character.

    `moves[s]` is a sorted tuple of disjoint (lo, hi, target) code-point intervals; a character in no
    interval is the dead end. `accepting` holds the states where a text may end. Lists and sets given
    to the constructor are frozen into tuples and a frozenset, and the machine is checked as it is made:
    a malformed one raises InvalidAutomaton there, not as a wrong answer later.
    """

    moves: tuple[tuple[Move, ...], ...]
    accepting: frozenset[int]
    start: int = 0
    # Per state, made when first stepped (most states of a big counter or product never are): its moves' starts,
    # for the search, and {character: target}.
    _los: list = field(init=False, repr=False, compare=False)
    _cache: list = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        moves = tuple([tuple(map(tuple, row)) for row in self.moves])
        accepting = frozenset(self.accepting)
        _check(moves, accepting, self.start)
        object.__setattr__(self, "moves", moves)
        object.__setattr__(self, "accepting", accepting)
        object.__setattr__(self, "_los", [None] * len(moves))
        object.__setattr__(self, "_cache", [None] * len(moves))

    @classmethod
    def of_checked_moves(cls, moves: tuple[tuple[Move, ...], ...], accepting: frozenset[int]) -> DFA:
        """A DFA, start 0, whose moves are valid by their construction: a checked DFA's moves (their intervals, in
        order) with targets the construction numbered below len(moves) itself, or a length counter's. Made without
        checking them again (automata.py's length counter and its product, whose tests check them against the
        checked constructions: a maxLength of 1,024 over the email format has 66,000 moves, and checking them took
        as long as making them)."""
        dfa = object.__new__(cls)
        for name, value in (("moves", moves), ("accepting", accepting), ("start", 0), ("_los", [None] * len(moves)),
                            ("_cache", [None] * len(moves))):
            object.__setattr__(dfa, name, value)
        return dfa

    @property
    def n_states(self) -> int:
        return len(self.moves)

    def step(self, state: int | None, ch: str) -> int | None:
        """One character; None means stuck."""
        if state is None:
            return None
        cache = self._cache[state]
        if cache is None:
            cache = self._cache[state] = {}
        target = cache.get(ch, _MISS)
        if target is _MISS:
            row, code = self.moves[state], ord(ch)
            los = self._los[state]
            if los is None:
                los = self._los[state] = [lo for lo, _, _ in row]
            k = bisect.bisect_right(los, code) - 1
            target = row[k][2] if k >= 0 and row[k][1] >= code else None
            cache[ch] = target
        return target

    def walk(self, state: int | None, text: str) -> int | None:
        """Follow `text` one character at a time; None means the machine is stuck."""
        for ch in text:
            if state is None:
                return None
            state = self.step(state, ch)
        return state

    def accepts(self, text: str) -> bool:
        return self.walk(self.start, text) in self.accepting

    def can_end(self, state: int | None) -> bool:
        return state in self.accepting


def _check(moves: tuple[tuple[Move, ...], ...], accepting: frozenset[int], start: int) -> None:
    n = len(moves)
    if not 0 <= start < n:
        raise InvalidAutomaton(f"the start state {start} is not one of the {n} states")
    stray = sorted(s for s in accepting if not 0 <= s < n)
    if stray:
        raise InvalidAutomaton(f"the accepting state {stray[0]} is not one of the {n} states")
    for s, row in enumerate(moves):
        previous_hi = -1
        for lo, hi, target in row:
            if not previous_hi < lo <= hi <= MAX_CODE_POINT:
                raise InvalidAutomaton(f"state {s}: the move ({lo}, {hi}, {target}) is empty, out of order, "
                                       "overlaps the one before or lies outside the code points")
            if not 0 <= target < n:
                raise InvalidAutomaton(f"state {s} moves to {target}, which is not one of the {n} states")
            previous_hi = hi


EMPTY = DFA([[]], set())  # no string at all


def crawl(start, moves_of, accepts, capped_as: str | None = None) -> DFA:
    """The DFA over every state reachable from `start`.

    States are any hashable keys (sets of NFA states, pairs of states, old state numbers):
    `moves_of(key)` lists its (lo, hi, key) moves in order, `accepts(key)` says whether a text may end
    there. Numbering is breadth first, the start 0. With `capped_as` (what the error calls the
    construction), more than limits.max_dfa_states states is TooComplex.
    """
    cap = limits().max_dfa_states if capped_as is not None else None
    ids, order, moves = {start: 0}, [start], []
    for key in order:  # breadth first: `order` grows as new keys are found
        row = []
        for lo, hi, target in moves_of(key):
            number = ids.get(target)
            if number is None:
                if cap is not None and len(order) >= cap:
                    raise exceeded("max_dfa_states", f"{capped_as} needs more than {cap:,} states", TooComplex)
                number = ids[target] = len(order)
                order.append(target)
            row.append((lo, hi, number))
        moves.append(row)
    return DFA(moves, {ids[key] for key in order if accepts(key)})


def non_ascii_ends(dfa: DFA) -> frozenset[str]:
    """The characters past ASCII where one of the DFA's moves starts or ends (row_non_ascii_codes; kept on the DFA:
    schemas share them)."""
    found = dfa.__dict__.get("_non_ascii_ends")
    if found is None:
        found = dfa.__dict__["_non_ascii_ends"] = frozenset(
            chr(code) for row in dfa.moves for code in row_non_ascii_codes(row))
    return found


def non_ascii_codes(dfa: DFA, state: int) -> frozenset[int]:
    """The code points past ASCII where one of the state's moves starts or ends (kept on the DFA per state)."""
    kept = dfa.__dict__.setdefault("_state_non_ascii", {})
    found = kept.get(state)
    if found is None:
        found = kept[state] = row_non_ascii_codes(dfa.moves[state])
    return found


def row_non_ascii_codes(row) -> frozenset[int]:
    """The code points past ASCII where one of these moves (lo, hi, target) starts or ends; not the last code point
    where a move only ends there. The checker's classes are cut at these (tabled.machine_boundaries), and the
    code points' end is a cut already: a maxLength counter's moves, or `[^"]`'s, name none, so such a schema's
    classes are the shared ones (with the last code point named, 579 of the corpus's 4,530 compiled schemas had
    classes of their own, and each built its own index of the vocabulary in its first mask, about 2 ms)."""
    return frozenset(code for lo, hi, _ in row for code in (lo, hi)
                     if code >= 128 and (code < MAX_CODE_POINT or code == lo))


def merge_adjacent(row) -> list[Move]:
    """Moves in order, with touching intervals that lead to the same target joined into one."""
    out: list[Move] = []
    for lo, hi, target in row:
        if out and out[-1][1] + 1 == lo and out[-1][2] == target:
            out[-1] = (out[-1][0], hi, target)
        else:
            out.append((lo, hi, target))
    return out


def moves_array(dfa: DFA) -> np.ndarray:
    """Every move of `dfa` as a row (state, lo, hi, target), by state then lo: what vectorised lookups search. (The
    moves' numbers are read straight into the array: a tuple made per move cost twice as much.)"""
    counts = np.fromiter(map(len, dfa.moves), dtype=np.int64, count=len(dfa.moves))
    out = np.empty((int(counts.sum()), 4), dtype=np.int64)
    out[:, 0] = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    out[:, 1:] = np.fromiter(chain.from_iterable(chain.from_iterable(dfa.moves)), dtype=np.int64,
                             count=3 * len(out)).reshape(-1, 3)
    return out


def next_states(dfa: DFA, codes, moves: np.ndarray | None = None) -> np.ndarray:
    """next[s, k]: the state `dfa` moves to from state s on the code point codes[k] (-1: none), every state at
    once (`moves_array`, made here unless the caller has it): a move (lo, hi) covers the codes in lo..hi, found by
    two sorted searches, and all moves' cells are written in one go. Where codes start classes the DFA does not
    cut (each class one character for it), that is the move of every character of the class."""
    codes = np.asarray(codes, dtype=np.int64)
    moves = moves_array(dfa) if moves is None else moves
    out = np.full((dfa.n_states, len(codes)), -1, dtype=np.int64)
    first = np.searchsorted(codes, moves[:, 1], side="left")  # per move: the first code it covers, and how many
    count = np.searchsorted(codes, moves[:, 2], side="right") - first
    covered = int(count.sum())
    if covered:  # cell j of move m: column first[m] + (j - where m's cells start)
        starts = np.cumsum(count) - count
        columns = np.arange(covered, dtype=np.int64) + np.repeat(first - starts, count)
        out[np.repeat(moves[:, 0], count), columns] = np.repeat(moves[:, 3], count)
    return out


def move_shape(dfa: DFA, state: int) -> tuple[tuple, list[int]]:
    """State's moves with their targets renumbered in order of appearance, and the targets in that order: two
    states of one shape move alike but for where they go (a maxLength counter's states, all but its last)."""
    ranks: dict[int, int] = {}
    shape = tuple((lo, hi, ranks.setdefault(target, len(ranks))) for lo, hi, target in dfa.moves[state])
    return shape, list(ranks)


def compile_pattern(pattern: str, safe_classes: bool = False, accept_absorbs: bool = False) -> DFA:
    """Pattern -> NFA (Thompson's construction) -> DFA (subset construction), kept per pattern under the limits
    it was built with (a DFA is immutable; every schema's numbers, formats and common patterns repeat).

    safe_classes: read \\d \\w \\s and their negations so that the DFA accepts only texts that match under
    both ASCII and Unicode semantics (JSON Schema's `pattern`, judged by Python's `re`).
    accept_absorbs: once a match is complete, any continuation is accepted too (a search with an open
    end). Every accepting set becomes one absorbing state, instead of a subset construction that keeps
    following the other, now pointless, partial matches (exponentially many for `a/x+|b/x+|...`)."""
    return _compile_pattern(pattern, safe_classes, accept_absorbs, limits())


@functools.lru_cache(maxsize=1024)
def _compile_pattern(pattern: str, safe_classes: bool, accept_absorbs: bool, _limits) -> DFA:
    what = f"pattern {_shown(pattern)}"
    fuel = Fuel("pattern_steps", f"building the automaton of {what}")  # states under the cap can still be huge sets
    nfa = NFA(what)
    nfa_start, nfa_accept = nfa.build(parse_pattern(pattern, safe_classes))
    edges = nfa.edges
    absorbing = frozenset({-1})
    # A set of targets met again settles as before: the same sets, so the same DFA, its states numbered alike. Its
    # closure is one search from all its members (a union of each member's closure went over a counted repeat's
    # chain once per member: [a-z]{0,250} took 150 ms). Fuel is spent as if each set were found anew, so what a
    # budget refuses does not depend on what was met first.
    settled: dict[frozenset[int], frozenset[int]] = {}
    # Per NFA state, its labelled moves (Thompson's states have at most one): found once, not per set.
    labelled_of = [tuple((label, t) for label, t in out if label is not None) for out in edges]

    def settle(states) -> frozenset[int]:
        states = frozenset(states)
        reached = settled.get(states)
        if reached is None:
            reached = settled[states] = nfa.closure(states)
        fuel.spend(len(reached))
        return absorbing if accept_absorbs and nfa_accept in reached else reached

    def moves_of(current: frozenset[int]) -> list[tuple[int, int, frozenset[int]]]:
        if current is absorbing:
            return [(0, MAX_CODE_POINT, absorbing)]
        fuel.spend(len(current))
        # The targets per label (a counted repeat's copies share theirs), so each label's segments are found once.
        by_label: dict[int, tuple] = {}
        for s in current:
            for label, t in labelled_of[s]:
                found = by_label.get(id(label))
                if found is None:
                    by_label[id(label)] = (label, [t])
                else:
                    found[1].append(t)
        # Cut the code points into elementary segments on which every label agrees; each label's intervals then
        # cover whole segments, found by the cuts' positions (not a search of every label per segment).
        cuts = sorted({lo for label, _ in by_label.values() for lo, _ in label}
                      | {hi + 1 for label, _ in by_label.values() for _, hi in label})
        at = {cut: k for k, cut in enumerate(cuts)}
        targets: list[set[int] | None] = [None] * (len(cuts) - 1)
        for label, ts in by_label.values():
            for lo, hi in label:
                for k in range(at[lo], at[hi + 1]):
                    found = targets[k]
                    if found is None:
                        targets[k] = set(ts)
                    else:
                        found.update(ts)
        row = [(lo, cuts[k + 1] - 1, settle(found)) for k, (lo, found) in enumerate(zip(cuts, targets)) if found]
        return merge_adjacent(row)

    return crawl(settle({nfa_start}), moves_of, lambda current: current is absorbing or nfa_accept in current,
                 capped_as=what)


def _shown(pattern: str, width: int = 60) -> str:
    """A pattern as an error message quotes it: whole when short, its start otherwise."""
    return repr(pattern) if len(pattern) <= width else repr(pattern[:width]) + f"... ({len(pattern):,} characters)"
