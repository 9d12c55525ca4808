"""Operations on the pattern compiler's DFAs, and the regular languages JSON Schema's string and number
keywords need: intersections, dead-state pruning, numeric ranges, divisibility, and the formats.

Every DFA returned here is *trimmed*: each of its states can still reach an accepting state, so a
machine that steps through it and refuses the moves that are not listed never walks into a dead end
(the schema checker's promise that every live prefix can be finished).
"""

from __future__ import annotations

import functools
from decimal import Decimal

from structbench.errors import TooComplex
from structbench.limits import current as limits
from structbench.regular.patterns import DFA, MAX_CODE_POINT, compile_pattern


def trim(dfa: DFA) -> DFA | None:
    """The DFA with every state that cannot reach acceptance removed (and the moves into it); None if the
    start state itself is dead: the language is empty."""
    n = dfa.n_states
    reverse: list[set[int]] = [set() for _ in range(n)]
    for s, row in enumerate(dfa.moves):
        for _, _, t in row:
            reverse[t].add(s)
    live = set(dfa.accepting)
    todo = list(live)
    while todo:
        for s in reverse[todo.pop()]:
            if s not in live:
                live.add(s)
                todo.append(s)
    if dfa.start not in live:
        return None
    order, ids = [dfa.start], {dfa.start: 0}
    for s in order:
        for _, _, t in dfa.moves[s]:
            if t in live and t not in ids:
                ids[t] = len(order)
                order.append(t)
    moves = [[(lo, hi, ids[t]) for lo, hi, t in dfa.moves[s] if t in live] for s in order]
    return DFA(moves, {ids[s] for s in order if s in dfa.accepting})


def intersect(a: DFA, b: DFA) -> DFA | None:
    """The product automaton: strings both accept. Trimmed; None when no string is accepted by both."""
    start = (a.start, b.start)
    ids, order, moves = {start: 0}, [start], []
    for sa, sb in order:
        row = []
        ra, rb = a.moves[sa], b.moves[sb]
        i = j = 0
        while i < len(ra) and j < len(rb):
            lo, hi = max(ra[i][0], rb[j][0]), min(ra[i][1], rb[j][1])
            if lo <= hi:
                pair = (ra[i][2], rb[j][2])
                if pair not in ids:
                    if len(order) >= limits().max_dfa_states:
                        raise TooComplex(f"the intersection needs more than {limits().max_dfa_states} states "
                                         "(limits.max_dfa_states)")
                    ids[pair] = len(order)
                    order.append(pair)
                row.append((lo, hi, ids[pair]))
            if ra[i][1] < rb[j][1]:
                i += 1
            else:
                j += 1
        moves.append(row)
    accepting = {ids[p] for p in order if p[0] in a.accepting and p[1] in b.accepting}
    return trim(DFA(moves, accepting))


def intersect_all(dfas) -> DFA | None:
    out = None
    for d in dfas:
        out = d if out is None else intersect(out, d)
        if out is None:
            return None
    return out


def is_empty(a: DFA, b: DFA) -> bool:
    return intersect(a, b) is None


def literal_dfa(texts) -> DFA:
    """Exactly these strings."""
    return compile_pattern("|".join(_escape(t) for t in texts) if texts else "(?:)") if texts else _EMPTY()


def _EMPTY() -> DFA:
    return DFA([[]], set())


def _escape(text: str) -> str:
    return "(?:" + "".join(f"\\u{ord(c):04x}" if ord(c) <= 0xFFFF else _astral(c) for c in text) + ")"


def _astral(c: str) -> str:
    # \\u holds four hex digits: a character beyond the BMP is a one-character class.
    return f"[{c}]"


def any_string(min_len: int = 0, max_len: int | None = None) -> DFA:
    """Any characters (code points), between min_len and max_len of them."""
    cap = limits().max_string_length
    if max_len is not None and max_len > cap or min_len > cap:
        raise TooComplex(f"a string length bound above {cap:,} characters (limits.max_string_length)")
    # A counted repeat copies the machine, so build it directly: one state per length.
    top = max_len if max_len is not None else min_len
    moves = []
    for k in range(top + 1):
        nxt = k + 1 if k < top else (k if max_len is None else None)
        moves.append([(0, MAX_CODE_POINT, nxt)] if nxt is not None else [])
    return DFA(moves, {k for k in range(top + 1) if k >= min_len})


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


def has_infinitely_many(dfa: DFA | None) -> bool:
    """Does the (trimmed) DFA accept infinitely many strings: is there a cycle among its states?"""
    if dfa is None:
        return False
    colour = [0] * dfa.n_states
    stack = [(dfa.start, iter(dfa.moves[dfa.start]))]
    colour[dfa.start] = 1
    while stack:
        state, moves = stack[-1]
        for _, _, t in moves:
            if colour[t] == 1:
                return True
            if colour[t] == 0:
                colour[t] = 1
                stack.append((t, iter(dfa.moves[t])))
                break
        else:
            colour[state] = 2
            stack.pop()
    return False


def accepts_at_least(dfa: DFA | None, k: int) -> bool:
    """Does the (trimmed) DFA accept at least k strings? Infinitely many when it has a cycle; otherwise
    its paths are counted (each move stands for as many strings as its interval has characters)."""
    if k <= 0:
        return True
    if dfa is None:
        return False
    if has_infinitely_many(dfa):
        return True
    counts: dict[int, int] = {}  # strings accepted from a state, capped at k; acyclic, so post-order
    stack = [(dfa.start, False)]
    while stack:
        state, expanded = stack.pop()
        if state in counts:
            continue
        if not expanded:
            stack.append((state, True))
            stack += [(t, False) for _, _, t in dfa.moves[state] if t not in counts]
            continue
        total = 1 if state in dfa.accepting else 0
        for lo, hi, t in dfa.moves[state]:
            total = min(k, total + (hi - lo + 1) * counts[t])
        counts[state] = total
    return counts[dfa.start] >= k


ANY_TEXT = f"[{chr(0)}-{chr(MAX_CODE_POINT)}]*"  # any characters at all, as a pattern


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
    """JSON Schema's `pattern`: the text *contains* a match (ECMA-262 search), unless anchored."""
    from structbench.regular.patterns import PatternError, parse_pattern

    branches = _search_branches(pattern)
    # With no branch anchored at the end, a complete match accepts whatever follows: the DFA makes that
    # one absorbing state (compile_pattern's accept_absorbs) instead of spelling out a trailing "anything".
    # "Anything" is every code point (not [\s\S], which the safe reading of \s and \S narrows), and `$`
    # is Python's: the end, or before a final newline.
    open_end = not any(end for _, _, end in branches)
    text = "|".join(("" if start else ANY_TEXT) + f"(?:{body})" + ("\n?" if end else "" if open_end else ANY_TEXT)
                    for start, body, end in branches)
    try:
        return trim(compile_pattern(text, safe_classes=True, accept_absorbs=open_end)) or _EMPTY()
    except PatternError as e:
        # Its position is in the rewritten text: parse the pattern as written for one in the original.
        parse_pattern(pattern, safe_classes=True)
        raise PatternError(pattern, 0, e.problem) from None


# --- numbers ---------------------------------------------------------------------------------------

DIGITS_RE = r"(?:0|[1-9][0-9]*)"


def _digits_at_least(n: int) -> str:
    """Canonical non-negative integers (no leading zeros) >= n."""
    if n <= 0:
        return DIGITS_RE
    s = str(n)
    parts = []
    # Same length, greater or equal, digit by digit.
    for i in range(len(s)):
        head, d = s[:i], int(s[i])
        if i == len(s) - 1:
            parts.append(head + f"[{d}-9]")
        elif d < 9:
            parts.append(head + f"[{d + 1}-9]" + "[0-9]" * (len(s) - i - 1))
    parts.append(f"[1-9][0-9]{{{len(s)},}}")  # longer
    return "(?:" + "|".join(parts) + ")"


def _digits_at_most(n: int) -> str | None:
    """Canonical non-negative integers <= n; None when n < 0."""
    if n < 0:
        return None
    s = str(n)
    parts = ["0"]
    for length in range(1, len(s)):  # shorter, no leading zero
        parts.append("[1-9]" + "[0-9]" * (length - 1))
    for i in range(len(s)):
        head, d = s[:i], int(s[i])
        lo = 1 if i == 0 else 0
        if i == len(s) - 1:
            if d >= lo:
                parts.append(head + (f"[{lo}-{d}]"))
        elif d > lo:
            parts.append(head + f"[{lo}-{d - 1}]" + "[0-9]" * (len(s) - i - 1))
    return "(?:" + "|".join(dict.fromkeys(parts)) + ")"


def _digits_between(lo: int | None, hi: int | None) -> str | None:
    """Canonical non-negative integers in [lo, hi] (either end open with None); None if empty."""
    lo = max(lo or 0, 0)
    if hi is not None and hi < lo:
        return None
    if hi is None:
        return _digits_at_least(lo)
    if len(str(hi)) > limits().max_bound_digits:
        raise TooComplex(f"an integer bound with more than {limits().max_bound_digits} digits (limits.max_bound_digits)")
    parts = []
    # Split by length so each piece is a plain at-least / at-most pair of equal width.
    for length in range(len(str(lo)), len(str(hi)) + 1):
        a = max(lo, 10 ** (length - 1) if length > 1 else 0)
        b = min(hi, 10 ** length - 1)
        if a <= b:
            parts.append(_same_length_range(str(a), str(b)))
    return "(?:" + "|".join(parts) + ")" if parts else None


def _same_length_range(a: str, b: str) -> str:
    """Strings of digits of this length between a and b inclusive (same length). Linear in the length:
    a full block (0...0 to 9...9) is written as [0-9]{n}, never split further."""
    n = len(a)
    if a == b:
        return a
    if a == "0" * n and b == "9" * n:
        return f"[0-9]{{{n}}}"
    if n == 1:
        return f"[{a}-{b}]"
    if a[0] == b[0]:
        return a[0] + "(?:" + _same_length_range(a[1:], b[1:]) + ")"
    parts = []
    first, last = int(a[0]), int(b[0])
    if a[1:] != "0" * (n - 1):  # a partial block under a's first digit
        parts.append(a[0] + "(?:" + _same_length_range(a[1:], "9" * (n - 1)) + ")")
        first += 1
    tail = b[1:] != "9" * (n - 1)  # a partial block under b's first digit
    if tail:
        last -= 1
    if first <= last:
        parts.append(f"[{first}-{last}][0-9]{{{n - 1}}}")
    if tail:
        parts.append(b[0] + "(?:" + _same_length_range("0" * (n - 1), b[1:]) + ")")
    return "(?:" + "|".join(parts) + ")"


def integer_regex(lo: int | None, hi: int | None) -> str | None:
    """Integer spellings (JSON: -?(0|[1-9][0-9]*)) with lo <= value <= hi; None if none."""
    parts = []
    # Non-negative part.
    if hi is None or hi >= 0:
        pos = _digits_between(max(lo, 0) if lo is not None else 0, hi)
        if pos:
            parts.append(pos)
    # Negative part: -k with k >= 1, lo <= -k <= hi  <=>  max(1, -hi) <= k <= -lo.
    if lo is None or lo < 0:
        k_lo = max(1, -hi) if hi is not None else 1
        k_hi = -lo if lo is not None else None
        neg = _digits_between(k_lo, k_hi)
        if neg:
            parts.append("-" + neg)
        if hi is None or hi >= 0:
            if lo is None or lo <= 0:
                parts.append("-0")  # -0 is 0
    return "(?:" + "|".join(parts) + ")" if parts else None


def multiple_of_regex(k: int) -> str | None:
    """Integer spellings divisible by k, as a regex: only k = 1 (every integer); None otherwise, where the
    k-state remainder automaton is built directly (multiple_of_dfa)."""
    if k == 1:
        return r"-?" + DIGITS_RE
    return None


@functools.lru_cache(maxsize=256)
def multiple_of_dfa(k: int) -> DFA:
    """-?(0|[1-9][0-9]*) whose value is divisible by k: states are remainders."""
    # state 0: start; 1: after '-'; 2: "0" (complete); 3 + r: nonzero digits so far, remainder r
    moves = [[], [], [], ]
    moves[0] = [(ord("-"), ord("-"), 1), (ord("0"), ord("0"), 2)]
    moves[1] = [(ord("0"), ord("0"), 2)]
    rem_rows = [[] for _ in range(k)]
    for d in range(1, 10):
        moves[0].append((ord(str(d)), ord(str(d)), 3 + d % k))
        moves[1].append((ord(str(d)), ord(str(d)), 3 + d % k))
    for r in range(k):
        rem_rows[r] = [(ord(str(d)), ord(str(d)), 3 + (r * 10 + d) % k) for d in range(10)]
    moves = moves + rem_rows
    moves = [_merge_row(sorted(row)) for row in moves]
    return trim(DFA(moves, {2, 3}))


def _merge_row(row):
    out = []
    for lo, hi, t in row:
        if out and out[-1][2] == t and out[-1][1] + 1 == lo:
            out[-1] = (out[-1][0], hi, t)
        else:
            out.append((lo, hi, t))
    return out


def as_int(x) -> int | None:
    """x as an int if it is integral, else None (bool is not a number here)."""
    if isinstance(x, bool):
        return None
    if isinstance(x, int):
        return x
    if isinstance(x, float) and x.is_integer():
        return int(x)
    return None


def ceil_int(x) -> int:
    d = Decimal(str(x))
    return int(d.to_integral_value(rounding="ROUND_CEILING"))


def floor_int(x) -> int:
    d = Decimal(str(x))
    return int(d.to_integral_value(rounding="ROUND_FLOOR"))


# --- formats ----------------------------------------------------------------------------------------

_YEAR = r"(?:[0-9]{3}[1-9]|[0-9]{2}[1-9][0-9]|[0-9][1-9][0-9]{2}|[1-9][0-9]{3})"  # 0001-9999
_LEAP = r"(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:0[48]|[2468][048]|[13579][26])00)"
_DATE = (rf"(?:{_YEAR}-(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])|(?:0[13-9]|1[0-2])-(?:29|30)"
         rf"|(?:0[13578]|1[02])-31)|{_LEAP}-02-29)")
_TIME = r"(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]+)?(?:[zZ]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])"
_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_IPV4 = rf"{_OCTET}(?:\.{_OCTET}){{3}}"
_H16 = r"[0-9a-fA-F]{1,4}"
_LS32 = rf"(?:{_H16}:{_H16}|{_IPV4})"
_IPV6 = ("(?:" + "|".join([
    rf"(?:{_H16}:){{6}}{_LS32}",
    rf"::(?:{_H16}:){{5}}{_LS32}",
    rf"(?:{_H16})?::(?:{_H16}:){{4}}{_LS32}",
    rf"(?:(?:{_H16}:){{0,1}}{_H16})?::(?:{_H16}:){{3}}{_LS32}",
    rf"(?:(?:{_H16}:){{0,2}}{_H16})?::(?:{_H16}:){{2}}{_LS32}",
    rf"(?:(?:{_H16}:){{0,3}}{_H16})?::{_H16}:{_LS32}",
    rf"(?:(?:{_H16}:){{0,4}}{_H16})?::{_LS32}",
    rf"(?:(?:{_H16}:){{0,5}}{_H16})?::{_H16}",
    rf"(?:(?:{_H16}:){{0,6}}{_H16})?::",
]) + ")")
_HEX = "[0-9a-fA-F]"
_UUID = rf"{_HEX}{{8}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{12}}"
# RFC 3986 URI (absolute, with a scheme), without IP-literal hosts: a subset of what rfc3986-validator accepts.
_PCT = rf"%{_HEX}{_HEX}"
_UNRES_SUB = r"[A-Za-z0-9\-._~!$&'()*+,;=]"
_PCHAR = rf"(?:{_UNRES_SUB}|{_PCT}|[:@])"
_URI = (rf"[A-Za-z][A-Za-z0-9+\-.]*:"
        rf"(?://(?:(?:{_UNRES_SUB}|{_PCT}|:)*@)?(?:{_UNRES_SUB}|{_PCT})*(?::[0-9]*)?(?:/{_PCHAR}*)*"
        rf"|/(?:{_PCHAR}+(?:/{_PCHAR}*)*)?|{_PCHAR}+(?:/{_PCHAR}*)*|)"
        rf"(?:\?(?:{_PCHAR}|[/?])*)?(?:#(?:{_PCHAR}|[/?])*)?")
# The referee's email check is only "contains @"; this is a stricter, usual address shape.
_EMAIL = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~\-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~\-]+)*@[A-Za-z0-9](?:[A-Za-z0-9\-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9\-]*[A-Za-z0-9])?)*"

FORMAT_PATTERNS = {
    "date": _DATE,
    "time": _TIME,
    "date-time": rf"{_DATE}[tT]{_TIME}",
    "ipv4": _IPV4,
    "ipv6": _IPV6,
    "uuid": _UUID,
    "uri": _URI,
    "email": _EMAIL,
}


@functools.lru_cache(maxsize=None)
def format_dfa(name: str) -> DFA:
    return trim(compile_pattern(FORMAT_PATTERNS[name]))
