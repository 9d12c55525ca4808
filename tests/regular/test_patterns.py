"""Patterns -> DFA, checked against the referee `re.fullmatch(pattern, text, re.ASCII)`.

Every supported feature appears in PATTERNS; hypothesis draws texts that match
(via `st.from_regex`), near misses (a match with one edit), and free texts over
an alphabet relevant to the pattern plus a few strangers (non-ASCII, newline).
"""

from __future__ import annotations

import re
from collections import deque

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from structbench.errors import PatternError
from structbench.limits import DEFAULT
from structbench.regular import DFA, compile_pattern, parse_pattern

MAX_REPEAT = DEFAULT.max_repeat

# (pattern, the feature it exercises)
PATTERNS = [
    (r"abc", "literals"),
    (r"a\.b\{\}\*\+\?\|\(\)\[\]\\\^\$-", "escaped punctuation"),
    (r"\n\t\r\f\v\0\a", "control escapes"),
    (r"a.c", "dot"),
    (r".*", "dot star: anything without a newline"),
    (r"[a-c_]+", "class with a range"),
    (r"[a-]x[-b]", "class with a literal hyphen at either end"),
    (r"[\]\\.^]+", "escapes and metacharacters inside a class"),
    (r'"[^"\\]*"', "negated class"),
    (r"[^\d\s]+", "negated class of class escapes"),
    (r"[\b]", "backspace inside a class"),
    (r"\d+", r"\d"),
    (r"\w+\s\w*", r"\w and \s"),
    (r"\D\W\S", r"\D \W \S"),
    (r"(ab|cd)*e", "group, alternation, star"),
    (r"(?:xy)+z?", "non-capturing group, plus, optional"),
    (r"cat|car|dog", "top-level alternation"),
    (r"(a|)b", "empty alternative"),
    (r"()a(?:)", "empty groups"),
    (r"a*b+c?", "star plus optional"),
    (r"a{3}", "counted {m}"),
    (r"a{2,4}b", "counted {m,n}"),
    (r"(ab){2,}", "counted {m,}"),
    (r"x{,2}y", "counted {,n}"),
    (r"x{,}y", "counted {,} is a star"),
    (r"a{0}b{0,0}c", "counted zero"),
    (r"a*?b+?c??", "lazy star, plus, optional"),
    (r"(a|b){1,3}?c{2}?", "lazy counted"),
    (r"^ab$", "leading ^ and trailing $"),
    (r"^[0-9]+$", "anchored class"),
    (r"a\$", "escaped trailing dollar is a literal"),
    (r"a\\$", "escaped backslash then an anchor"),
    (r"\x41\x7a\x7B", r"\xhh"),
    (r"\u00e9+\u0041", r"\uhhhh"),
    (r"a{", "a literal { that is not a repeat"),
    (r"x{1,a}", "a malformed repeat is literal text"),
    (r"a{1", "an unclosed repeat is literal text"),
    (r"b{}", "an empty brace pair is literal text"),
    (r"{a", "a literal { at the start"),
    (r'\{"age": [0-9]+\}', "the lesson's age pattern"),
    (r"-?(0|[1-9][0-9]*)(\.[0-9]+)?", "JSON numbers"),
    (r"[\n\t]\n?", "newline in a class"),
    (r"(a(b(c|d)*)?)+", "nested groups"),
]

EXTRAS = "aZ0_ é\n\t-{}.,😀"


def _alphabet(pattern: str) -> str:
    chars = set(EXTRAS)
    # The literal characters of the pattern, plus what its escapes and classes stand for.
    chars.update(ch for ch in pattern if ch not in "\\")
    chars.update("ABcdxyz19\x0b\x0c\r\b\x00\x07eA\x7b\u00e9\"")
    return "".join(sorted(chars))


def _one_edit(text: str, alphabet: str):
    """Strategy: `text` with one character inserted, deleted or replaced."""
    if not text:
        return st.sampled_from(alphabet)

    def edit(args):
        kind, i, ch = args
        i %= len(text) + (kind == "insert")
        if kind == "insert":
            return text[:i] + ch + text[i:]
        if kind == "delete":
            return text[:i] + text[i + 1 :]
        return text[:i] + ch + text[i + 1 :]

    return st.tuples(st.sampled_from(["insert", "delete", "replace"]), st.integers(0, 64), st.sampled_from(alphabet)).map(edit)


def _texts(pattern: str):
    alphabet = _alphabet(pattern)
    matching = st.from_regex(re.compile(pattern, re.ASCII), fullmatch=True)
    return st.one_of(
        matching,
        matching.flatmap(lambda t: _one_edit(t, alphabet)),
        st.text(alphabet=alphabet, max_size=12),
    )


_DFAS: dict[str, DFA] = {}


def _dfa(pattern: str) -> DFA:
    if pattern not in _DFAS:
        _DFAS[pattern] = compile_pattern(pattern)
    return _DFAS[pattern]


def _shortest_completion(dfa: DFA, state: int) -> str | None:
    """A shortest text leading from `state` into an accepting state, by the DFA's own moves."""
    parent = {state: None}
    queue = deque([state])
    while queue:
        s = queue.popleft()
        if s in dfa.accepting:
            out = []
            while parent[s] is not None:
                s, ch = parent[s]
                out.append(ch)
            return "".join(reversed(out))
        for lo, hi, target in dfa.moves[s]:
            if target not in parent:
                # Prefer a plain printable character of the interval where it has one.
                code = lo if not (0xD800 <= lo <= 0xDFFF) else hi
                parent[target] = (s, chr(code))
                queue.append(target)
    return None


def test_the_pattern_list_covers_every_feature():
    assert len(PATTERNS) >= 30
    for pattern, _ in PATTERNS:
        re.compile(pattern, re.ASCII)  # every pattern is also valid Python
        compile_pattern(pattern)


@pytest.mark.parametrize("pattern", [p for p, _ in PATTERNS], ids=[f for _, f in PATTERNS])
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data())
def test_dfa_agrees_with_re_fullmatch(pattern, data):
    dfa = _dfa(pattern)
    text = data.draw(_texts(pattern), label="text")
    expected = re.fullmatch(pattern, text, re.ASCII) is not None
    assert dfa.accepts(text) == expected, (pattern, text)


@pytest.mark.parametrize("pattern", [p for p, _ in PATTERNS], ids=[f for _, f in PATTERNS])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_prefix_of_a_match_is_live(pattern, data):
    dfa = _dfa(pattern)
    text = data.draw(st.from_regex(re.compile(pattern, re.ASCII), fullmatch=True), label="text")
    assert dfa.accepts(text)
    state = dfa.start
    for i, ch in enumerate(text):
        assert state is not None, (pattern, text[:i])
        assert dfa.walk(dfa.start, text[:i]) == state  # walk is step repeated
        state = dfa.step(state, ch)
    assert state in dfa.accepting


@pytest.mark.parametrize("pattern", [p for p, _ in PATTERNS], ids=[f for _, f in PATTERNS])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data())
def test_a_live_prefix_can_be_completed(pattern, data):
    """The other direction, checked by the referee: wherever the walk is not stuck, the DFA's own
    shortest way to an accepting state spells a text that re.fullmatch accepts."""
    dfa = _dfa(pattern)
    text = data.draw(_texts(pattern), label="text")
    prefix = text[: data.draw(st.integers(0, len(text)), label="cut")]
    state = dfa.walk(dfa.start, prefix)
    assume(state is not None)
    tail = _shortest_completion(dfa, state)
    assert tail is not None, f"{prefix!r} is live under {pattern!r} but no accepting state is reachable"
    assert re.fullmatch(pattern, prefix + tail, re.ASCII), (pattern, prefix, tail)


def test_dead_prefixes_are_dead():
    dfa = compile_pattern(r'\{"age": [0-9]+\}')
    assert dfa.walk(dfa.start, '{"age": ') is not None
    assert dfa.walk(dfa.start, '{"age": x') is None
    assert dfa.walk(None, "") is None and dfa.step(None, "a") is None
    assert not dfa.can_end(None)


def test_non_ascii_is_outside_the_ascii_classes():
    # ASCII semantics: \d is [0-9], \w is [A-Za-z0-9_], \s is [ \t\n\r\f\v].
    assert not compile_pattern(r"\d").accepts("٣")  # ARABIC-INDIC DIGIT THREE
    assert not compile_pattern(r"\w").accepts("é")
    assert not compile_pattern(r"\s").accepts("\u00a0")
    assert compile_pattern(r"\D").accepts("٣") and compile_pattern(r"\W").accepts("é")
    assert compile_pattern(r"\S").accepts("\u00a0")
    assert compile_pattern(r".").accepts("😀") and not compile_pattern(r".").accepts("\n")


def test_unicode_classes_are_pythons_per_character_tests():
    """The Unicode \\d, \\w and \\s that the safe reading of class escapes takes (found by `re` over every code
    point at once) are str.isdecimal, isalnum or "_", and isspace, character by character."""
    import random

    from structbench.regular.charsets import MAX_CODE_POINT, contains, unicode_class

    tests = {"d": str.isdecimal, "w": lambda c: c.isalnum() or c == "_", "s": str.isspace}
    codes = list(range(0x3100)) + random.Random(0).sample(range(0x3100, MAX_CODE_POINT + 1), 30_000)
    for name in tests:
        intervals = unicode_class(name)
        assert [contains(intervals, code) for code in codes] == [tests[name](chr(code)) for code in codes], name


def test_laziness_does_not_change_full_matches():
    for greedy, lazy in [("a*b", "a*?b"), ("(ab)+", "(ab)+?"), ("x?y", "x??y"), ("a{1,3}", "a{1,3}?")]:
        g, z = compile_pattern(greedy), compile_pattern(lazy)
        for text in ["", "b", "ab", "aab", "abab", "y", "xy", "a", "aa", "aaa", "aaaa"]:
            assert g.accepts(text) == z.accepts(text) == (re.fullmatch(greedy, text) is not None)


def test_a_repeat_at_the_limit_is_allowed():
    parse_pattern("a{%d}" % MAX_REPEAT)
    parse_pattern("a{0,%d}" % MAX_REPEAT)
    assert compile_pattern("(?:ab){40}").accepts("ab" * 40)
    assert not compile_pattern("(?:ab){40}").accepts("ab" * 39)


# --- errors ----------------------------------------------------------------------------

# (pattern, position, words the problem mentions)
BAD_PATTERNS = [
    (r"a\1", 1, "escape"),  # backreference
    (r"(a)\1", 3, "escape"),
    (r"a(?=b)", 1, "group extensions"),  # lookahead
    (r"a(?!b)", 1, "group extensions"),
    (r"(?<=a)b", 0, "group extensions"),  # lookbehind
    (r"(?<!a)b", 0, "group extensions"),
    (r"a\bc", 1, "escape"),  # word boundary outside a class
    (r"\Bx", 0, "escape"),
    (r"x(?P<x>a)", 1, "group extensions"),  # named group
    (r"(?i)a", 0, "group extensions"),  # inline flag
    (r"a*+", 2, "possessive"),
    (r"a{2}+", 4, "possessive"),
    (r"a**", 2, "multiple repeat"),
    (r"a{2}{3}", 4, "multiple repeat"),
    (r"a+?*", 3, "multiple repeat"),
    (r"*a", 0, "nothing to repeat"),
    (r"a|+b", 2, "nothing to repeat"),
    (r"({2})", 1, "nothing to repeat"),
    (r"^*", 1, "nothing to repeat"),
    (r"(ab", 0, "unclosed group"),
    (r"a(b(c)", 1, "unclosed group"),
    (r"[ab", 0, "unterminated"),
    (r"x[ab", 1, "unterminated"),
    (r"[]", 0, "empty"),
    (r"a[^]", 1, "empty"),
    (r"[z-a]", 1, "bad character range"),
    (r"x[az-a]", 3, "bad character range"),
    (r"[a-\d]", 3, "range"),
    (r"a{3,1}", 1, "minimum above its maximum"),
    (r"a{%d}" % (MAX_REPEAT + 1), 1, "exceeds"),
    (r"ab{2,%d}" % (MAX_REPEAT + 1), 2, "exceeds"),
    (r"a^b", 1, "'^'"),
    (r"a$b", 1, "'$'"),
    (r"(a$)", 2, "'$'"),
    ("ab\\", 2, "lone backslash"),
    (r"\p{L}", 0, "escape"),
    (r"\01", 0, "octal"),
    (r"[[:alpha:]]", 1, "POSIX"),
    (r"a)", 1, "unexpected"),
    (r"\x4g", 0, "hex"),
    (r"\u12", 0, "hex"),
]


@pytest.mark.parametrize("pattern,position,problem", BAD_PATTERNS, ids=[p for p, _, _ in BAD_PATTERNS])
def test_unsupported_or_malformed_syntax_names_its_position(pattern, position, problem):
    with pytest.raises(PatternError) as info:
        compile_pattern(pattern)
    err = info.value
    assert err.position == position, (pattern, err.problem, err.position)
    assert problem.lower() in err.problem.lower()
    assert err.pattern == pattern
    assert f"position {position}" in str(err)
    assert isinstance(err, ValueError)


def test_a_pattern_must_be_a_string():
    with pytest.raises(TypeError):
        compile_pattern(42)


@pytest.mark.parametrize("pattern", [r"[\d-z]", r"[\w-a]", r"x[a\s-z]"])
def test_a_range_cannot_start_at_a_class_escape(pattern):
    with pytest.raises(re.error):
        re.compile(pattern, re.ASCII)  # the referee cannot even compile it
    with pytest.raises(PatternError):
        compile_pattern(pattern)
