"""The DFA value: frozen, checked when it is made, numbered breadth first by the subset construction."""

from __future__ import annotations

import dataclasses

import pytest

from structbench.errors import InvalidAutomaton
from structbench.regular import DFA, MAX_CODE_POINT, compile_pattern


def test_a_dfa_is_frozen_and_compares_by_its_moves():
    dfa = DFA([[(97, 97, 1)], []], {1})
    assert dfa.moves == (((97, 97, 1),), ()) and dfa.accepting == frozenset({1})
    with pytest.raises(dataclasses.FrozenInstanceError):
        dfa.start = 1
    assert dfa == DFA((((97, 97, 1),), ()), frozenset({1})) and hash(dfa) == hash(DFA([[(97, 97, 1)], []], [1]))
    assert dfa.step(0, "a") == 1 and dfa.step(0, "b") is None and dfa.accepts("a")


@pytest.mark.parametrize("moves,accepting,start,problem", [
    ([[(97, 97, 2)], []], {1}, 0, "moves to 2"),
    ([[(97, 98, 1), (98, 99, 1)], []], {1}, 0, "overlaps"),
    ([[(98, 98, 1), (97, 97, 1)], []], {1}, 0, "out of order"),
    ([[(98, 97, 1)], []], {1}, 0, "empty"),
    ([[(0, MAX_CODE_POINT + 1, 1)], []], {1}, 0, "outside the code points"),
    ([[(97, 97, 1)], []], {2}, 0, "accepting state 2"),
    ([[(97, 97, 1)], []], {1}, 2, "start state 2"),
    ([], set(), 0, "start state 0"),
])
def test_a_malformed_dfa_is_refused_when_it_is_made(moves, accepting, start, problem):
    with pytest.raises(InvalidAutomaton, match=problem):
        DFA(moves, accepting, start)


def test_states_are_numbered_breadth_first_from_the_start():
    dfa = compile_pattern("ab|c")
    assert dfa.moves == (((97, 97, 1), (99, 99, 2)), ((98, 98, 3),), (), ())
    assert dfa.accepting == {2, 3}


def test_touching_intervals_to_one_state_are_one_move():
    # Both branches end in the one absorbing state of an open-ended search.
    dfa = compile_pattern("a|b", accept_absorbs=True)
    assert dfa.moves == (((97, 98, 1),), ((0, MAX_CODE_POINT, 1),)) and dfa.accepting == {1}


def test_the_lessons_state_counts():
    # The lesson counts states of the unminimised subset construction; a minimised DFA would change them.
    assert compile_pattern(r'\{"age": [0-9]+\}').n_states == 11
    assert compile_pattern(r"-?[0-9]+").n_states == 3


def _textbook_subset_construction(pattern: str) -> DFA:
    """The subset construction as the textbook states it, slowly: each set's closure from scratch, its moves by
    testing every NFA state's label on every elementary segment of the code points."""
    from structbench.regular.dfa import crawl, merge_adjacent
    from structbench.regular.nfa import NFA
    from structbench.regular.syntax import parse_pattern

    nfa = NFA(pattern)
    start, accept = nfa.build(parse_pattern(pattern, False))

    def moves_of(current):
        labelled = [(label, t) for s in current for label, t in nfa.edges[s] if label is not None]
        cuts = sorted({lo for label, _ in labelled for lo, _ in label} | {hi + 1 for label, _ in labelled for _, hi in label})
        row = []
        for lo, nxt in zip(cuts, cuts[1:]):
            targets = {t for label, t in labelled if any(a <= lo <= b for a, b in label)}
            if targets:
                row.append((lo, nxt - 1, nfa.closure(targets)))
        return merge_adjacent(row)

    return crawl(nfa.closure({start}), moves_of, lambda current: accept in current)


@pytest.mark.parametrize("pattern", [
    r'\{"age": [0-9]+\}', r"-?[0-9]+", "[a-z]{0,40}", "(?:[0-9a-zA-Z_-]{1,60})\n?", "a{2,4}b", "(a|ab){0,3}c",
    "(x{0,2}y?){1,3}", "((ab)*|c){0,4}d", "[^a-c]*(a|bc)+[a-c]{2}", r"(?:\S+\s+){0,9}\S+", "(a?){0,3}b",
])
def test_the_subset_construction_is_the_textbooks(pattern):
    # compile_pattern's construction finds a set's closure in one search and each label's segments once (a counted
    # repeat's copies share their label); its DFA is the textbook's, state for state, numbered alike.
    assert compile_pattern(pattern) == _textbook_subset_construction(pattern)
