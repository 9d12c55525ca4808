"""Operations on DFAs: dead-state pruning, intersection, emptiness, counting, and the small languages
(literals, lengths) JSON Schema's keywords start from.

Every DFA returned here is *trimmed*: each of its states can still reach an accepting state, so a
machine that steps through it and refuses the moves that are not listed never walks into a dead end
(the schema checker's promise that every live prefix can be finished). A trimmed empty language is None.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np

from structbench.errors import TooComplex
from structbench.limits import current as limits
from structbench.limits import exceeded
from structbench.regular.charsets import MAX_CODE_POINT
from structbench.regular.dfa import (
    DFA,
    EMPTY,
    crawl,
    non_ascii_codes,
    row_non_ascii_codes,
)


def _live(rows, accepting) -> list[bool]:
    """Per state, whether an accepting state can be reached from it; rows[s] holds state s's moves (lo, hi, target),
    `accepting` the accepting states."""
    into: list[list[int]] = [[] for _ in rows]
    for s, row in enumerate(rows):
        for _, _, t in row:
            into[t].append(s)
    live = [False] * len(rows)
    todo = list(accepting)
    for s in todo:
        live[s] = True
    while todo:
        for s in into[todo.pop()]:
            if not live[s]:
                live[s] = True
                todo.append(s)
    return live


def trim(dfa: DFA) -> DFA | None:
    """The DFA with every state that cannot reach acceptance removed (and the moves into it); None if the
    start state itself is dead: the language is empty."""
    live = _live(dfa.moves, dfa.accepting)
    if not live[dfa.start]:
        return None
    return crawl(dfa.start, lambda s: [move for move in dfa.moves[s] if live[move[2]]], dfa.accepting.__contains__)


def intersect(a: DFA, b: DFA) -> DFA | None:
    """The product automaton: strings both accept. Trimmed; None when no string is accepted by both."""
    for counter, other in ((a, b), (b, a)):
        bounds = counter.__dict__.get("_length_counter")
        if bounds is not None:
            return _counted_product(bounds, other)
    return _product(a, b)


def _product(a: DFA, b: DFA) -> DFA | None:
    """intersect, by the crawl every construction uses."""

    def moves_of(pair: tuple[int, int]) -> list[tuple[int, int, tuple[int, int]]]:
        ra, rb = a.moves[pair[0]], b.moves[pair[1]]
        # One side takes every character to one state (a search's absorbing state, a trimmed counter's): the other
        # side's moves, paired. (An untrimmed length counter never gets here: intersect's _counted_product.)
        if len(ra) == 1 and ra[0][0] == 0 and ra[0][1] == MAX_CODE_POINT:
            ta = ra[0][2]
            return [(lo, hi, (ta, tb)) for lo, hi, tb in rb]
        if len(rb) == 1 and rb[0][0] == 0 and rb[0][1] == MAX_CODE_POINT:
            tb = rb[0][2]
            return [(lo, hi, (ta, tb)) for lo, hi, ta in ra]
        row, i, j = [], 0, 0
        while i < len(ra) and j < len(rb):  # both rows are sorted: walk them side by side
            lo, hi = max(ra[i][0], rb[j][0]), min(ra[i][1], rb[j][1])
            if lo <= hi:
                row.append((lo, hi, (ra[i][2], rb[j][2])))
            if ra[i][1] < rb[j][1]:
                i += 1
            else:
                j += 1
        return row

    def accepts(pair: tuple[int, int]) -> bool:
        return pair[0] in a.accepting and pair[1] in b.accepting

    return trim(crawl((a.start, b.start), moves_of, accepts, capped_as="the intersection"))


class CountLevels(NamedTuple):
    """How a length counter's product (_counted_product) is laid out: its states come in levels, one per count, level
    c being states starts[c] to starts[c + 1] - 1, and state p pairs the count with `other`'s state others[p]. A move
    from level c leads into level c + 1 (at the top: into the top itself where `top_loops`, else nowhere), to the
    pair of the move's target in `other`, where that pair is kept. String mode builds such a table a level at a
    time from `other`'s (structbench.masking.string_mode)."""

    other: DFA
    starts: np.ndarray
    others: np.ndarray
    top_loops: bool


def _counted_product(bounds: tuple[int, int | None], other: DFA) -> DFA | None:
    """intersect(a length counter, other): the same DFA, state for state, as the product's crawl and trim make
    (the counter's every state moves on every character, so a pair's moves are `other`'s, and the pairs are numbered
    alike), without their per-pair work: a maxLength of 1,024 over the email format is 11,225 pairs. The pairs come
    in levels, one per count (every move counts one more, up to the top), so each step is done per level over
    `other`'s few states: which states a level holds (for the cap), which of them can still be finished (trim), and
    the kept pairs numbered breadth first, level after level, as the crawls number them."""
    min_len, max_len = bounds
    top = max_len if max_len is not None else min_len
    rows_of, accepting, cap = other.moves, other.accepting, limits().max_dfa_states
    loops = max_len is None  # at the top the count stays: the top level is closed under other's moves

    def targets_in_order(states, keep=None) -> list[int]:
        """The states the moves of `states` lead to (those in `keep`), in the order a breadth-first crawl meets
        them."""
        found: dict[int, None] = {}
        for state in states:
            for _, _, t in rows_of[state]:
                if keep is None or t in keep:
                    found[t] = None
        return list(found)

    def closed(states, keep=None) -> list[int]:
        """`states`, then what their moves (into `keep`) reach, in crawl order: the top level where the count loops."""
        found = dict.fromkeys(states)
        order = list(found)
        for state in order:
            for _, _, t in rows_of[state]:
                if t not in found and (keep is None or t in keep):
                    found[t] = None
                    order.append(t)
        return order

    # The untrimmed product's size, level by level (a level that repeats the one before repeats to the top): the cap
    # is on it, as the crawl's.
    level, size, count = [other.start], 0, 0
    while True:
        if count == top:
            size += len(closed(level) if loops else level)
            break
        nxt = targets_in_order(level)
        if nxt == level:  # every level from here to the top is this one: on to the top
            size += len(level) * (top - count)
            count = top
            continue
        size += len(level)
        level, count = nxt, count + 1
        if size > cap:
            break
    if size > cap:
        raise exceeded("max_dfa_states", f"the intersection needs more than {cap:,} states", TooComplex)

    # Which states can still be finished at each count (live[c]), from the top down: at the top, those that reach
    # acceptance (where the count loops) or accept; below, those that accept (count >= min_len) or move to a live one.
    # Below min_len and above, each level's set stays the one above it once it repeats.
    if loops:
        live_top = frozenset(s for s, ok in enumerate(_live(rows_of, accepting)) if ok)
    else:
        live_top = frozenset(accepting) if top >= min_len else frozenset()
    live: list[frozenset[int]] = [frozenset()] * (top + 1)
    live[top] = live_top
    c = top - 1
    while c >= 0:
        above = live[c + 1]
        here = frozenset(s for s, row in enumerate(rows_of) if (c >= min_len and s in accepting)
                         or any(t in above for _, _, t in row))
        live[c] = here
        if here == above:  # a fixed point: the levels below repeat it down to where acceptance stops counting
            low = min_len if c >= min_len else 0
            live[low:c] = [here] * (c - low)
            c = low
        c -= 1
    if other.start not in live[0]:
        return None

    # The kept pairs, numbered breadth first level by level, and their moves: a move kept where its target is live.
    # count_steps[s]: the pair one count on with the same state of `other`, where `other` loops there (its own loop,
    # read with the count: string mode takes a subtree of such characters whole while the count has room); at a top
    # where the count stays, the pair itself; -1 where `other` does not loop or that pair is not kept.
    moves, final, ends, whole_rows, count_steps = [], [], set(), set(), []
    self_loops = [any(t == s for _, _, t in row) for s, row in enumerate(rows_of)]
    level_starts, others = [], []  # (count_levels)
    level, base, count = [other.start], 0, 0
    while True:
        at_top = count == top
        keep = live[count] if at_top else live[count + 1]
        if at_top:
            level = closed(level, keep) if loops else level
            nxt_base, position = base, {s: k for k, s in enumerate(level)}
        else:
            nxt = targets_in_order(level, keep)
            nxt_base, position = base + len(level), {s: k for k, s in enumerate(nxt)}
        level_starts.append(base)
        others.extend(level)
        for k, state in enumerate(level):
            if count >= min_len and state in accepting:
                final.append(base + k)
            if at_top and not loops:
                row = ()
            else:
                row = tuple((lo, hi, nxt_base + position[t]) for lo, hi, t in rows_of[state] if t in keep)
            moves.append(row)
            if not self_loops[state]:
                count_steps.append(-1)
            elif at_top:
                count_steps.append(base + k if loops else -1)
            else:
                count_steps.append(nxt_base + position[state] if state in position else -1)
            if len(row) == len(rows_of[state]):
                whole_rows.add(state)
            else:
                ends.update(row_non_ascii_codes(row))
        if at_top:
            break
        level, base, count = nxt, nxt_base, count + 1
    dfa = DFA.of_checked_moves(tuple(moves), frozenset(final))
    dfa.__dict__["count_steps"] = np.array(count_steps, dtype=np.int64)
    dfa.__dict__["count_levels"] = CountLevels(other, np.array(level_starts + [len(moves)], dtype=np.int64),
                                               np.array(others, dtype=np.int64), loops)
    # Its moves' non-ASCII ends (dfa.non_ascii_ends, which the checker's classes are cut at), from other's rows
    # (each once) and the rows trimmed, not from its every move.
    for state in whole_rows:
        ends.update(non_ascii_codes(other, state))
    dfa.__dict__["_non_ascii_ends"] = frozenset(map(chr, ends))
    return dfa


def intersect_all(dfas) -> DFA | None:
    """Strings every one of the DFAs accepts (None when there are none); None for no DFAs at all."""
    out = None
    for d in dfas:
        out = d if out is None else intersect(out, d)
        if out is None:
            return None
    return out


def is_empty(a: DFA, b: DFA) -> bool:
    """Do the two languages have no string in common?"""
    return intersect(a, b) is None


def _postorder(dfa: DFA) -> list[int] | None:
    """The states reachable from the start, each after every state it moves to; None if they have a
    cycle (depth first, iteratively: a long chain of states must not exhaust Python's stack)."""
    colour = [0] * dfa.n_states  # 0: not seen, 1: on the current path, 2: done
    order: list[int] = []
    stack = [(dfa.start, iter(dfa.moves[dfa.start]))]
    colour[dfa.start] = 1
    while stack:
        state, moves = stack[-1]
        for _, _, t in moves:
            if colour[t] == 1:
                return None
            if colour[t] == 0:
                colour[t] = 1
                stack.append((t, iter(dfa.moves[t])))
                break
        else:
            colour[state] = 2
            order.append(state)
            stack.pop()
    return order


def accepts_at_least(dfa: DFA | None, k: int) -> bool:
    """Does the (trimmed) DFA accept at least k strings? Infinitely many when it has a cycle; otherwise
    its paths are counted (each move stands for as many strings as its interval has characters)."""
    if k <= 0:
        return True
    if dfa is None:
        return False
    order = _postorder(dfa)
    if order is None:
        return True
    counts: dict[int, int] = {}  # strings accepted from a state, capped at k
    for state in order:
        total = 1 if state in dfa.accepting else 0
        for lo, hi, t in dfa.moves[state]:
            total = min(k, total + (hi - lo + 1) * counts[t])
        counts[state] = total
    return counts[dfa.start] >= k


def literal_dfa(texts) -> DFA:
    """Exactly these strings: their trie, one state per distinct prefix, built in time linear in their length
    (the subset construction of their alternation gives the same machine, far more slowly: an enum of
    100,000 strings took minutes). Past `limits.max_literal_states` prefixes, TooComplex."""
    texts = list(texts)
    if not texts:
        return EMPTY
    cap = limits().max_literal_states
    what = f"an enum (or const) of {len(texts):,} strings"
    children: list[dict[str, int]] = [{}]
    ends = set()
    for text in texts:
        node = 0
        for ch in text:
            nxt = children[node].get(ch)
            if nxt is None:
                if len(children) >= cap:
                    raise exceeded("max_literal_states", f"{what} needs more than {cap:,} states", TooComplex)
                nxt = children[node][ch] = len(children)
                children.append({})
            node = nxt
        ends.add(node)
    return crawl(0, lambda n: [(ord(c), ord(c), k) for c, k in sorted(children[n].items())], ends.__contains__)


def any_string(min_len: int = 0, max_len: int | None = None) -> DFA:
    """Any characters (code points), between min_len and max_len of them."""
    cap = limits().max_string_length
    if max_len is not None and max_len > cap or min_len > cap:
        raise TooComplex(f"a string length bound above {cap:,} characters (limits.max_string_length)")
    return _counted(min_len, max_len)


@lru_cache(maxsize=64)
def _counted(min_len: int, max_len: int | None) -> DFA:
    """any_string's machine, built directly (a counted repeat would copy the machine): one state per length.
    Kept for reuse: a DFA is immutable, and real schemas repeat their bounds (maxLength 255 in many properties)."""
    top = max_len if max_len is not None else min_len
    moves = [((0, MAX_CODE_POINT, k + 1),) for k in range(top)]
    moves.append(((0, MAX_CODE_POINT, top),) if max_len is None else ())
    # Valid as made (one move over every code point, to the next state): not checked move by move (a maxLength of
    # 50,000 took 0.2 s to check and scan), and it has no non-ASCII ends (dfa.row_non_ascii_codes: every move is
    # over all code points).
    dfa = DFA.of_checked_moves(tuple(moves), frozenset(range(min_len, top + 1)))
    dfa.__dict__["_non_ascii_ends"] = frozenset()
    dfa.__dict__["_length_counter"] = (min_len, max_len)  # what intersect's shortcut reads (_counted_product)
    return dfa
