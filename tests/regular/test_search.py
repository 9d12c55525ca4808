"""JSON Schema's `pattern`: search semantics, anchors read per top-level branch, checked against
`re.search` (and, off ASCII, against both Python's readings of the class escapes)."""

from __future__ import annotations

import re

import pytest

from structbench.errors import PatternError
from structbench.regular import accepts_at_least, search_dfa

SEARCH_PATTERNS = ['^allow|deny$', r'^$|(^(?:\S+\s+){0,99}\S+$)', '^(mbox_sha1sum|account|openid)$', 'abc',
                   '^abc', 'a|b', r'x\$', r'x\\$', '^[a|b]$', '(?:^a$)|b', '^(a|b)c$', '^$', '(a|^b)', 'ab$|^c']
SEARCH_WORDS = ['allow\n', 'a\n', 'a\n\n', '\n', '\u00a0x', 'abc\n', 'allow', 'xallow', 'allowx', 'deny', 'xdeny', 'denyx',
                '', 'a b', 'ab', 'a', 'b', 'mbox_sha1sum',
                'account', 'accountx', 'abc', 'xabcx', 'x$', 'x\\', 'x\\\\', '|', 'c', 'ac', 'bc', 'zbz', 'x', 'ba', 'cab']


@pytest.mark.parametrize("pattern", SEARCH_PATTERNS)
def test_search_semantics_with_anchors_per_branch(pattern):
    dfa = search_dfa(pattern)
    regex = re.compile(pattern, re.ASCII)
    for word in SEARCH_WORDS:
        if word.isascii():
            assert dfa.accepts(word) == bool(regex.search(word)), (pattern, word)
        else:  # \s \S \d \w are read safely: never more than Python's ASCII and Unicode readings both match
            assert not dfa.accepts(word) or (regex.search(word) and re.search(pattern, word)), (pattern, word)


def test_an_anchor_after_text_is_declared_not_guessed():
    with pytest.raises(PatternError, match="only supported as the first character"):
        search_dfa("a(^b)")


def test_an_open_ended_search_stays_small():
    # Eleven `Area/[A-Za-z]+` branches (a real schema's time-zone pattern): without an absorbing
    # accept state the subset construction followed every partial match and grew past 8,000 states.
    areas = ["Africa", "America", "Antarctica", "Arctic", "Asia", "Atlantic", "Australia", "Europe", "Indian",
             "Pacific"]
    pattern = "UTC|" + "|".join(f"({a}/[A-Za-z]+)" for a in areas)
    dfa = search_dfa(pattern)
    assert dfa.n_states < 200
    regex = re.compile(pattern, re.ASCII)
    for word in ["UTC", "Europe/Paris", "xx Asia/T yy", "Asia/", "Europe", "utc", "America/ 1", "PacificX/a"]:
        assert dfa.accepts(word) == bool(regex.search(word)), word


def test_counting_a_finite_language():
    # 6 words, each also with Python's `$` before a final newline
    assert accepts_at_least(search_dfa("^(ab|cd)(e|f)?$"), 12)
    assert not accepts_at_least(search_dfa("^(ab|cd)(e|f)?$"), 13)
    assert accepts_at_least(search_dfa("^[a-z]{0,250}$"), 10**300)  # finite, but far more than needed
    assert accepts_at_least(search_dfa("^a+$"), 10**9)  # a cycle: infinitely many
