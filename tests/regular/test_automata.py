"""Operations on DFAs: trim, intersection and its state cap, emptiness, counting, literals and lengths."""

from __future__ import annotations

import pytest

from structbench.errors import TooComplex
from structbench.limits import Limits, using
from structbench.regular import (
    DFA,
    accepts_at_least,
    any_string,
    compile_pattern,
    intersect_all,
    is_empty,
    literal_dfa,
    trim,
)

WORDS = ["", "a", "b", "ab", "ba", "aab", "abb", "abab", "x", "é", "😀", "a😀"]


def test_trim_drops_the_states_that_cannot_finish():
    # State 2 (after `b`) loops on `c` and never accepts: it goes, and the move into it with it
    dead_end = DFA([((97, 97, 1), (98, 98, 2)), (), ((99, 99, 2),)], {1})
    trimmed = trim(dead_end)
    assert trimmed.n_states == 2 and trimmed.moves == (((97, 97, 1),), ()) and trimmed.accepting == {1}
    assert trimmed.accepts("a") and not trimmed.accepts("b")
    assert trim(DFA([((97, 97, 1),), ((98, 98, 1),)], set())) is None  # nothing accepted: the start is dead too
    assert trim(compile_pattern("a")).moves == (((97, 97, 1),), ())  # every state live: as it was
    # Intersecting `ab` with `a[bc]` leaves nothing after `a` but `b`.
    both = intersect_all([compile_pattern("ab"), compile_pattern("a[bc]")])
    assert both.n_states == 3 and both.accepts("ab") and not both.accepts("ac")


@pytest.mark.parametrize("a,b", [("a*b", "(ab)*"), ("[a-z]+", "a|😀|ab"), (".*", "x?"), ("a+", "b+")])
def test_the_intersection_accepts_what_both_accept(a, b):
    da, db = compile_pattern(a), compile_pattern(b)
    both = intersect_all([da, db])
    for word in WORDS:
        assert (both is not None and both.accepts(word)) == (da.accepts(word) and db.accepts(word)), word
    assert is_empty(da, db) == (both is None)


def test_an_intersection_past_the_state_cap_is_too_complex():
    a, b = compile_pattern("[ab]*a[ab]{6}"), compile_pattern("[ab]*b[ab]{5}")
    assert intersect_all([a, b]) is not None
    with using(Limits(max_dfa_states=50)):
        with pytest.raises(TooComplex, match="limits.max_dfa_states"):
            intersect_all([a, b])


def test_literals_and_lengths():
    words = literal_dfa(["ab", "é😀", ""])
    assert [words.accepts(w) for w in ["ab", "é😀", "", "a", "é"]] == [True, True, True, False, False]
    assert not literal_dfa([]).accepts("")
    between = any_string(1, 3)
    assert [between.accepts("x" * n) for n in range(5)] == [False, True, True, True, False]
    assert any_string(2).accepts("😀" * 40) and not any_string(2).accepts("a")


@pytest.mark.parametrize("bounds", [(0, 0), (0, None), (1, 3), (3, None), (2, 2), (0, 300)])
def test_a_length_counter_is_valid_as_made(bounds):
    """any_string's counter skips the constructor's check of its moves, and states its non-ASCII ends: both are
    what the checked constructor and the scan of its moves find."""
    from structbench.regular import DFA
    from structbench.regular.dfa import non_ascii_ends

    counter = any_string(*bounds)
    assert counter == DFA(counter.moves, counter.accepting)  # (the constructor checks every move)
    assert non_ascii_ends(counter) == frozenset(chr(code) for row in counter.moves for lo, hi, _ in row
                                                for code in (lo, hi) if code >= 128 and (code < 0x10FFFF or code == lo))
    assert non_ascii_ends(counter) == frozenset()  # (its moves are over every code point: no class of its own)


def test_counting():
    assert accepts_at_least(trim(compile_pattern("[a-c]{2}")), 9)
    assert not accepts_at_least(trim(compile_pattern("[a-c]{2}")), 10)
    assert accepts_at_least(trim(compile_pattern("a*")), 10**6)
    assert not accepts_at_least(None, 1) and accepts_at_least(None, 0)


@pytest.mark.parametrize("bounds", [(0, 0), (0, 1), (0, 3), (2, 5), (3, 3), (4, 2), (0, None), (3, None), (0, 40),
                                    (7, 40), (25, None), (6, 9)])
def test_a_length_counters_product_is_the_crawled_one_state_for_state(bounds):
    """intersect's shortcut for a length counter (_counted_product) makes the DFA the product's crawl and trim make,
    numbered alike, with the counter on either side; a cap it passes is refused as the crawl refuses it."""
    from structbench.regular.automata import _product
    from structbench.regular.dfa import non_ascii_ends
    from structbench.regular.formats import format_dfa
    from structbench.regular.search import search_dfa

    counter = any_string(*bounds)
    others = [compile_pattern(p) for p in ("ab|ac(?:d)", "[a-c]+x?", "(?:ab)*", "a{2,4}", "", "(?:ab|c)*d(?:ef)*")]
    others += [literal_dfa(["", "a", "abc", "é😀"]), search_dfa("[0-9]{2}"), format_dfa("email"), any_string(1, 2),
               any_string(2, None)]
    for other in others:
        for a, b in ((counter, other), (other, counter)):
            got, crawled = intersect_all([a, b]), _product(a, b)
            assert got == crawled, (bounds, other)
            # its non-ASCII ends, found from the other's rows and the trimmed ones, are its moves' own
            assert got is None or non_ascii_ends(got) == non_ascii_ends(crawled), (bounds, other)
            if got is not None:
                check_count_levels(got)
    with using(Limits(max_dfa_states=30)):
        with pytest.raises(TooComplex, match="the intersection needs more than 30 states"):
            intersect_all([any_string(0, 40), format_dfa("email")])


def check_count_levels(dfa) -> None:
    """A length counter's product's `count_levels` (what string mode builds its table from, a level at a time): its
    states in levels one count apart, each pairing the count with a state of the other DFA, whose every move is the
    pair's own, to the pair one level up (the top's to the top, where it loops), where that pair is kept, and to
    nowhere where it is not."""
    levels = dfa.__dict__["count_levels"]
    starts, others, other = levels.starts, levels.others, levels.other
    assert starts[0] == 0 and starts[-1] == dfa.n_states and (starts[1:] >= starts[:-1]).all()
    level_of = [c for c in range(len(starts) - 1) for _ in range(starts[c], starts[c + 1])]
    top = len(starts) - 2
    for p, row in enumerate(dfa.moves):
        c = level_of[p]
        up = c + 1 if c < top else c if levels.top_loops else None
        pairs = {} if up is None else {int(others[q]): q for q in range(starts[up], starts[up + 1])}
        expected = tuple((lo, hi, pairs[t]) for lo, hi, t in other.moves[others[p]] if t in pairs)
        assert row == expected, (p, c)
