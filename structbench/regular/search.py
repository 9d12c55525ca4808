"""JSON Schema's `pattern` keyword: the text *contains* a match (ECMA-262 search), unless anchored.

A search is a full match of `.*(?:pattern).*` with the anchors taken out: `^` and `$` are read at the two
ends of each top-level branch (also inside a group that is the whole branch), which takes a light scan of
the pattern's groups, alternations and classes before the parser sees it.
"""

from __future__ import annotations

import functools

from structbench.errors import PatternError
from structbench.limits import current as limits
from structbench.regular.automata import trim
from structbench.regular.charsets import MAX_CODE_POINT
from structbench.regular.dfa import DFA, EMPTY, compile_pattern
from structbench.regular.syntax import parse_pattern

_ANY_TEXT = f"[{chr(0)}-{chr(MAX_CODE_POINT)}]*"  # any characters at all, as a pattern


def _scan(pattern: str):
    """(index, character, group depth) of each character outside escapes and character classes."""
    depth, i, n = 0, 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            j = i + 1
            if j < n and pattern[j] == "^":
                j += 1
            if j < n and pattern[j] == "]":  # a leading ] is a literal (Python)
                j += 1
            while j < n and pattern[j] != "]":
                j += 2 if pattern[j] == "\\" else 1
            i = j + 1
            continue
        if c == ")":
            depth -= 1
        yield i, c, depth
        if c == "(":
            depth += 1
        i += 1


def _top_level_branches(pattern: str) -> list[str]:
    cuts = [i for i, c, depth in _scan(pattern) if c == "|" and depth == 0]
    bounds = [-1] + cuts + [len(pattern)]
    return [pattern[bounds[k] + 1: bounds[k + 1]] for k in range(len(bounds) - 1)]


def _whole_group(pattern: str) -> str | None:
    """The inside of a pattern that is one plain or non-capturing group from end to end, else None."""
    if not pattern.startswith("(") or not pattern.endswith(")"):
        return None
    if pattern.startswith("(?") and not pattern.startswith("(?:"):
        return None  # lookarounds, named groups, flags: the parser decides
    close = next((i for i, c, depth in _scan(pattern) if c == ")" and depth == 0), None)
    if close != len(pattern) - 1:
        return None
    return pattern[3:-1] if pattern.startswith("(?:") else pattern[1:-1]


def _ends_with_anchor(pattern: str) -> bool:
    if not pattern.endswith("$"):
        return False
    backslashes = len(pattern) - 1 - len(pattern[:-1].rstrip("\\"))
    return backslashes % 2 == 0


def _search_branches(pattern: str) -> list[tuple[bool, str, bool]]:
    """The pattern as a union of (anchored at the start, body, anchored at the end) branches: `^` and `$`
    are read at the two ends of each top-level branch, also inside a group that is the whole branch
    (`^a|b$`, `^$|(^x+$)`). An anchor anywhere else stays in the body, and the parser refuses it."""
    branches = _top_level_branches(pattern)
    if len(branches) > 1:
        return [leaf for b in branches for leaf in _search_branches(b)]
    inner = _whole_group(pattern)
    if inner is not None and ("^" in inner or "$" in inner):
        return _search_branches(inner)
    start = pattern.startswith("^")
    end = _ends_with_anchor(pattern) and len(pattern) > int(start)
    return [(start, pattern[int(start): len(pattern) - int(end)], end)]


def search_dfa(pattern: str) -> DFA:
    """JSON Schema's `pattern`: the text *contains* a match (ECMA-262 search), unless anchored. Kept per process
    under the limits it was built with (real schemas share their patterns: dates, identifiers, versions; a DFA
    is immutable), so a pattern met again costs nothing."""
    return _search_dfa(pattern, limits())


@functools.lru_cache(maxsize=512)
def _search_dfa(pattern: str, _limits) -> DFA:
    branches = _search_branches(pattern)
    # With no branch anchored at the end, a complete match accepts whatever follows: the DFA makes that
    # one absorbing state (compile_pattern's accept_absorbs) instead of spelling out a trailing "anything".
    # "Anything" is every code point (not [\s\S], which the safe reading of \s and \S narrows), and `$`
    # is Python's: the end, or before a final newline.
    open_end = not any(end for _, _, end in branches)
    text = "|".join(("" if start else _ANY_TEXT) + f"(?:{body})" + ("\n?" if end else "" if open_end else _ANY_TEXT)
                    for start, body, end in branches)
    try:
        return trim(compile_pattern(text, safe_classes=True, accept_absorbs=open_end)) or EMPTY
    except PatternError as e:
        # Its position is in the rewritten text: parse the pattern as written for one in the original.
        parse_pattern(pattern, safe_classes=True)
        raise PatternError(pattern, 0, e.problem) from None
