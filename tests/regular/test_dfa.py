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
