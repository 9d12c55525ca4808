"""Patterns cannot make the compiler hang or exhaust memory: each cap is reached quickly, with an error naming it."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from structbench.errors import TooComplex
from structbench.limits import Limits, using
from structbench.regular import compile_pattern
from structbench.regular.automata import literal_dfa
from structbench.regular.dfa import crawl


def test_a_subset_explosion_stops_at_max_dfa_states():
    # (a|b)*a(a|b){20}: the DFA must remember the last 21 characters, 2**21 states.
    with pytest.raises(TooComplex, match=r"pattern '\(a\|b\)\*a\(a\|b\)\{20\}' needs more than 20,000 states "
                                         r"\(limits.max_dfa_states"):
        compile_pattern("(a|b)*a(a|b){20}")
    with using(Limits(max_dfa_states=5000)):
        assert compile_pattern("(a|b)*a(a|b){11}").n_states <= 5000  # under the cap: built


def test_nested_counted_repeats_stop_at_max_nfa_states():
    with pytest.raises(TooComplex, match=r"more than 200,000 automaton states .*limits.max_nfa_states"):
        compile_pattern("((a{1000}){1000}){1000}")
    assert compile_pattern("(a{100}){100}").accepts("a" * 10_000)


@pytest.mark.parametrize("depth, ok", [(128, True), (129, False), (5000, False)])
def test_group_nesting_is_capped_below_the_recursion_limit(depth, ok):
    pattern = "(" * depth + "a" + ")" * depth
    if ok:
        assert compile_pattern(pattern).accepts("a")
    else:
        with pytest.raises(TooComplex, match=r"nested more than 128 deep \(at position 128 .*limits.max_nesting"):
            compile_pattern(pattern)


def _alternation_dfa(texts):
    """The literal DFA as it was built before the trie: the subset construction of an escaped alternation."""
    def escaped(t):
        return "(?:" + "".join(f"\\u{ord(c):04x}" if ord(c) <= 0xFFFF else f"[{c}]" for c in t) + ")"
    return compile_pattern("|".join(escaped(t) for t in texts))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from("ab\u00e9\U0001F600\x00"), max_size=5), min_size=1, max_size=12))
def test_the_enum_trie_is_the_alternations_dfa_state_for_state(texts):
    trie, reference = literal_dfa(texts), _alternation_dfa(texts)
    assert trie.moves == reference.moves and trie.accepting == reference.accepting


def test_a_100k_enum_is_a_trie_within_max_literal_states():
    texts = [f"value{i}" for i in range(100_000)]
    dfa = literal_dfa(texts)
    assert dfa.accepts("value99999") and dfa.accepts("value0") and not dfa.accepts("value100000")
    with using(Limits(max_literal_states=1000)), pytest.raises(TooComplex, match="limits.max_literal_states"):
        literal_dfa(texts)


def test_crawl_without_a_cap_name_is_uncapped_and_with_one_is_capped():
    chain = lambda n: [(97, 97, n + 1)] if n < 30 else []  # noqa: E731
    assert crawl(0, chain, lambda n: n == 30).n_states == 31
    with using(Limits(max_dfa_states=10)), pytest.raises(TooComplex, match="the chain needs more than 10 states"):
        crawl(0, chain, lambda n: n == 30, capped_as="the chain")
