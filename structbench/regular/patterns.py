"""Patterns: a regular expression -> NFA (Thompson) -> DFA (subset construction).

The pattern language is a declared subset of Python's `re` with ASCII semantics
(the semantics JSON Schema's ECMA-262 patterns and the real engines use):

* literals, escapes of punctuation (`\\{`, `\\.`), `\\n \\t \\r \\f \\v \\0`,
  `\\xhh`, `\\uhhhh`;
* `.` (any character but newline), classes `[a-z_]`, negated classes `[^"\\\\]`,
  `\\d \\w \\s` and their negations `\\D \\W \\S` (ASCII: `\\d` is `[0-9]`);
* groups `( )` and `(?: )`, alternation `|`;
* repeats `* + ?`, counted repeats `{m}`, `{m,n}`, `{m,}`, `{,n}`, each
  optionally lazy (`*?`): laziness does not change which strings match in full;
* `^` as the very first and `$` as the very last character (no-ops, because a
  pattern here always matches the whole text).

Anything else (backreferences, lookaround, word boundaries, possessive repeats,
inline flags, ...) raises :class:`PatternError` naming the position. The
referee for pattern tasks is `re.fullmatch(pattern, text, re.ASCII)`.

Characters are sets of code points kept as sorted, disjoint, inclusive
intervals, so `.` and `[^...]` need no enumeration of Unicode; the DFA's moves
are interval lists, looked up with bisect and cached per character.
"""

from __future__ import annotations

import bisect
import functools
from dataclasses import dataclass, field

from structbench.errors import PatternError
from structbench.limits import current as limits

MAX_CODE_POINT = 0x10FFFF

Intervals = tuple[tuple[int, int], ...]


# --- character sets as interval tuples ------------------------------------------


def _normalise(intervals) -> Intervals:
    merged: list[list[int]] = []
    for lo, hi in sorted(intervals):
        if merged and lo <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    return tuple((lo, hi) for lo, hi in merged)


def _complement(intervals: Intervals) -> Intervals:
    out, nxt = [], 0
    for lo, hi in intervals:
        if lo > nxt:
            out.append((nxt, lo - 1))
        nxt = hi + 1
    if nxt <= MAX_CODE_POINT:
        out.append((nxt, MAX_CODE_POINT))
    return tuple(out)


def _chars(text: str) -> Intervals:
    return _normalise((ord(c), ord(c)) for c in text)


_DIGIT = _normalise([(ord("0"), ord("9"))])
_WORD = _normalise([(ord("0"), ord("9")), (ord("A"), ord("Z")), (ord("a"), ord("z")), (ord("_"), ord("_"))])
_SPACE = _chars(" \t\n\r\f\v")
_CLASS_ESCAPES = {
    "d": _DIGIT, "D": _complement(_DIGIT),
    "w": _WORD, "W": _complement(_WORD),
    "s": _SPACE, "S": _complement(_SPACE),
}
_CONTROL_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "0": "\0", "a": "\a"}
_DOT = _complement(_chars("\n"))


# --- the syntax tree ----------------------------------------------------------------


@dataclass(frozen=True)
class Chars:
    intervals: Intervals


@dataclass(frozen=True)
class Concat:
    parts: tuple


@dataclass(frozen=True)
class Alternation:
    branches: tuple


@dataclass(frozen=True)
class Repeat:
    inner: object
    lo: int
    hi: int | None  # None: no upper bound


class _Parser:
    """Recursive descent over the pattern; every error names its position."""

    def __init__(self, pattern: str, safe_classes: bool = False):
        self.pattern, self.i = pattern, 0
        self.safe_classes = safe_classes
        self.negated = False  # inside a negated class [^...]

    def fail(self, problem: str, position: int | None = None):
        raise PatternError(self.pattern, self.i if position is None else position, problem)

    def peek(self, offset: int = 0) -> str | None:
        j = self.i + offset
        return self.pattern[j] if j < len(self.pattern) else None

    def take(self) -> str:
        if self.i >= len(self.pattern):
            self.fail("unexpected end of pattern")
        self.i += 1
        return self.pattern[self.i - 1]

    def parse(self):
        body_start, body_end = 0, len(self.pattern)
        if self.pattern.startswith("^"):
            body_start = 1
        if self.pattern.endswith("$") and not self._escaped(len(self.pattern) - 1) and len(self.pattern) > body_start:
            body_end = len(self.pattern) - 1
        self.end = body_end
        self.i = body_start
        tree = self.alternation()
        if self.i < self.end:
            self.fail(f"unexpected {self.pattern[self.i]!r}")
        return tree

    def _escaped(self, j: int) -> bool:
        backslashes = 0
        while j - 1 - backslashes >= 0 and self.pattern[j - 1 - backslashes] == "\\":
            backslashes += 1
        return backslashes % 2 == 1

    def at_end(self) -> bool:
        return self.i >= self.end

    def alternation(self):
        branches = [self.sequence()]
        while not self.at_end() and self.peek() == "|":
            self.take()
            branches.append(self.sequence())
        return branches[0] if len(branches) == 1 else Alternation(tuple(branches))

    def sequence(self):
        parts = []
        while not self.at_end() and self.peek() not in "|)":
            parts.append(self.repeat())
        return parts[0] if len(parts) == 1 else Concat(tuple(parts))

    def quantifier(self) -> tuple[int, int | None] | None:
        """Read a quantifier if one starts here; None (and nothing consumed) if not."""
        ch = self.peek()
        if ch == "*":
            self.take()
            return 0, None
        if ch == "+":
            self.take()
            return 1, None
        if ch == "?":
            self.take()
            return 0, 1
        if ch == "{":
            bounds = self._counted()
            if bounds is not None:
                return bounds
        return None

    def _counted(self) -> tuple[int, int | None] | None:
        # Python reads "{" as a literal unless it starts a well-formed {m}, {m,n}, {m,} or {,n}.
        close = self.pattern.find("}", self.i, self.end)
        if close < 0:
            return None
        body = self.pattern[self.i + 1 : close]
        lo_text, comma, hi_text = body.partition(",")
        if not (lo_text.isdigit() or lo_text == "") or not (hi_text.isdigit() or hi_text == ""):
            return None
        if not comma and not lo_text:
            return None
        if not (lo_text.isascii() and hi_text.isascii()):
            return None
        start = self.i
        lo = int(lo_text) if lo_text else 0
        hi = (int(hi_text) if hi_text else None) if comma else lo
        if hi is not None and hi < lo:
            self.fail(f"repeat {{{body}}} has its minimum above its maximum", start)
        cap = limits().max_repeat  # counted repeats are expanded by copying; beyond this the automaton would explode
        if max(lo, hi or 0) > cap:
            self.fail(f"repeat {{{body}}} exceeds the supported maximum of {cap} (limits.max_repeat)", start)
        self.i = close + 1
        return lo, hi

    def repeat(self):
        start = self.i
        if self.quantifier() is not None:
            self.fail("nothing to repeat", start)
        node = self.atom()
        bounds = self.quantifier()
        if bounds is None:
            return node
        if not self.at_end() and self.peek() == "?":
            self.take()  # lazy: the same set of full matches
        elif not self.at_end() and self.peek() == "+":
            self.fail("possessive repeats are not supported")
        if not self.at_end():
            q_start = self.i
            if self.quantifier() is not None:
                self.fail("multiple repeat", q_start)
        return Repeat(node, *bounds)

    def atom(self):
        start = self.i
        ch = self.take()
        if ch == "(":
            if self.peek() == "?":
                if self.peek(1) == ":":
                    self.i += 2
                else:
                    self.fail("group extensions other than (?: ) are not supported", start)
            inner = self.alternation()
            if self.at_end() or self.take() != ")":
                self.fail("unclosed group", start)
            return inner
        if ch == "[":
            return Chars(self.char_class(start))
        if ch == ".":
            return Chars(_DOT)
        if ch == "\\":
            return Chars(self.escape(start, in_class=False))
        if ch in ")|":
            self.fail(f"unexpected {ch!r}", start)
        if ch == "^":
            self.fail("'^' is only supported as the first character", start)
        if ch == "$":
            self.fail("'$' is only supported as the last character", start)
        return Chars(_chars(ch))

    def escape(self, start: int, in_class: bool) -> Intervals:
        if self.i >= self.end:
            self.fail("pattern ends with a lone backslash", start)
        ch = self.take()
        if ch in _CLASS_ESCAPES:
            if self.safe_classes:
                return _safe_class_escape(ch, large=in_class and self.negated)
            return _CLASS_ESCAPES[ch]
        if ch in _CONTROL_ESCAPES:
            if ch == "0" and self.peek() is not None and self.peek().isdigit():
                self.fail("octal escapes are not supported", start)
            return _chars(_CONTROL_ESCAPES[ch])
        if ch == "b" and in_class:
            return _chars("\b")
        if ch in "xu":
            width = 2 if ch == "x" else 4
            digits = self.pattern[self.i : self.i + width]
            if len(digits) != width or any(c not in "0123456789abcdefABCDEF" for c in digits):
                self.fail(f"\\{ch} needs {width} hex digits", start)
            self.i += width
            return _chars(chr(int(digits, 16)))
        if ch.isalnum():  # unknown letter or digit escapes are errors in Python; \_ is a literal
            self.fail(f"escape \\{ch} is not supported", start)
        return _chars(ch)  # an escaped punctuation character stands for itself

    def char_class(self, start: int) -> Intervals:
        negated = False
        if self.peek() == "^":
            self.take()
            negated = True
        self.negated = negated
        if self.peek() == "]":
            self.fail("empty character class", start)
        pieces: list[tuple[int, int]] = []
        while True:
            if self.i >= len(self.pattern):
                self.fail("unterminated character class", start)
            item_start = self.i
            ch = self.take()
            if ch == "]":
                break
            if ch == "[" and self.peek() in (":", "=", "."):
                self.fail("POSIX classes are not supported", item_start)
            lo_set = self.escape(item_start, in_class=True) if ch == "\\" else _chars(ch)
            is_single = len(lo_set) == 1 and lo_set[0][0] == lo_set[0][1]
            if self.peek() == "-" and self.peek(1) not in ("]", None) and not is_single:
                self.fail("a range cannot start at a class escape", item_start)  # as Python's re: [\d-z]
            if self.peek() == "-" and self.peek(1) not in ("]", None) and is_single:
                self.take()
                hi_start = self.i
                hi_ch = self.take()
                hi_set = self.escape(hi_start, in_class=True) if hi_ch == "\\" else _chars(hi_ch)
                if not (len(hi_set) == 1 and hi_set[0][0] == hi_set[0][1]):
                    self.fail("a range cannot end in a class escape", hi_start)
                lo, hi = lo_set[0][0], hi_set[0][0]
                if hi < lo:
                    self.fail("bad character range", item_start)
                pieces.append((lo, hi))
            else:
                pieces.extend(lo_set)
        intervals = _normalise(pieces)
        return _complement(intervals) if negated else intervals


# --- Thompson's construction -----------------------------------------------------------


class _NFA:
    """States are numbers; `edges[s]` lists (label, target), label None for a free jump."""

    def __init__(self):
        self.edges: list[list[tuple[Intervals | None, int]]] = []

    def new(self) -> int:
        self.edges.append([])
        return len(self.edges) - 1

    def build(self, node) -> tuple[int, int]:
        if isinstance(node, Chars):
            s, e = self.new(), self.new()
            self.edges[s].append((node.intervals, e))
            return s, e
        if isinstance(node, Concat):
            pieces = [self.build(p) for p in node.parts]
            if not pieces:  # the empty pattern matches the empty string
                s = self.new()
                return s, s
            for (_, prev_end), (next_start, _) in zip(pieces, pieces[1:]):
                self.edges[prev_end].append((None, next_start))
            return pieces[0][0], pieces[-1][1]
        if isinstance(node, Alternation):
            s, e = self.new(), self.new()
            for b_start, b_end in (self.build(b) for b in node.branches):
                self.edges[s].append((None, b_start))
                self.edges[b_end].append((None, e))
            return s, e
        if isinstance(node, Repeat):
            return self._repeat(node)
        raise AssertionError(f"unknown pattern node {node!r}")

    def _loop(self, inner, at_least_once: bool) -> tuple[int, int]:
        s, e = self.new(), self.new()
        i_start, i_end = self.build(inner)
        self.edges[s].append((None, i_start))
        self.edges[i_end].append((None, e))
        self.edges[i_end].append((None, i_start))  # another round
        if not at_least_once:
            self.edges[s].append((None, e))  # or none at all
        return s, e

    def _optional(self, inner) -> tuple[int, int]:
        s, e = self.new(), self.new()
        i_start, i_end = self.build(inner)
        self.edges[s].append((None, i_start))
        self.edges[i_end].append((None, e))
        self.edges[s].append((None, e))
        return s, e

    def _repeat(self, node: Repeat) -> tuple[int, int]:
        lo, hi = node.lo, node.hi
        if (lo, hi) == (0, None):
            return self._loop(node.inner, at_least_once=False)
        if (lo, hi) == (1, None):
            return self._loop(node.inner, at_least_once=True)
        if (lo, hi) == (0, 1):
            return self._optional(node.inner)
        # Counted repeats: lo mandatory copies, then either a star or (hi - lo) optional copies.
        pieces = [self.build(node.inner) for _ in range(lo)]
        if hi is None:
            pieces.append(self._loop(node.inner, at_least_once=False))
        else:
            pieces.extend(self._optional(node.inner) for _ in range(hi - lo))
        if not pieces:  # {0} or {0,0}: the empty string
            s = self.new()
            return s, s
        for (_, prev_end), (next_start, _) in zip(pieces, pieces[1:]):
            self.edges[prev_end].append((None, next_start))
        return pieces[0][0], pieces[-1][1]


# --- the DFA ---------------------------------------------------------------------------


_MISS = object()


@dataclass
class DFA:
    """A deterministic machine: one state at a time, one move per character.

    `moves[s]` is a sorted list of (lo, hi, target) code-point intervals; a
    character in no interval is the dead end. State 0 is the start.
    """

    moves: list[list[tuple[int, int, int]]]
    accepting: set[int]
    start: int = 0
    _los: list[list[int]] = field(default_factory=list, repr=False)
    _cache: list[dict] = field(default_factory=list, repr=False)

    def __post_init__(self):
        self._los = [[lo for lo, _, _ in row] for row in self.moves]
        self._cache = [{} for _ in self.moves]

    @property
    def n_states(self) -> int:
        return len(self.moves)

    def step(self, state: int | None, ch: str) -> int | None:
        """One character; None means stuck."""
        if state is None:
            return None
        cache = self._cache[state]
        target = cache.get(ch, _MISS)
        if target is _MISS:
            row, code = self.moves[state], ord(ch)
            k = bisect.bisect_right(self._los[state], code) - 1
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


def parse_pattern(pattern: str, safe_classes: bool = False):
    if not isinstance(pattern, str):
        raise TypeError(f"a pattern must be a string, not {type(pattern).__name__}")
    return _Parser(pattern, safe_classes).parse()


@functools.lru_cache(maxsize=1)
def _unicode_classes() -> dict[str, Intervals]:
    """Python's Unicode \\d, \\w and \\s (str.isdecimal, isalnum or "_", isspace) as intervals."""
    found: dict[str, list] = {"d": [], "w": [], "s": []}
    tests = {"d": str.isdecimal, "w": lambda c: c.isalnum() or c == "_", "s": str.isspace}
    for code in range(MAX_CODE_POINT + 1):
        ch = chr(code)
        for name, test in tests.items():
            if test(ch):
                found[name].append((code, code))
    return {name: _normalise(v) for name, v in found.items()}


def _safe_class_escape(ch: str, large: bool) -> Intervals:
    """A class escape read so that the result is a subset under both the ASCII reading (ECMA-262, the
    engines) and the Unicode one (Python's `re` without flags, jsonschema's): \\d is [0-9], \\D everything
    but the Unicode digits. Inside a negated class the larger reading is taken, so its complement is the
    smaller."""
    base = ch.lower()
    ascii_set = _CLASS_ESCAPES[base]
    unicode_set = _unicode_classes()[base]
    if ch == base:  # \d \w \s
        return unicode_set if large else ascii_set
    return _complement(ascii_set) if large else _complement(unicode_set)


def compile_pattern(pattern: str, safe_classes: bool = False, accept_absorbs: bool = False) -> DFA:
    """Pattern -> NFA (Thompson's construction) -> DFA (subset construction).

    safe_classes: read \\d \\w \\s and their negations so that the DFA accepts only texts that match under
    both ASCII and Unicode semantics (JSON Schema's `pattern`, judged by Python's `re`).
    accept_absorbs: once a match is complete, any continuation is accepted too (a search with an open
    end). Every accepting set becomes one absorbing state, instead of a subset construction that keeps
    following the other, now pointless, partial matches (exponentially many for `a/x+|b/x+|...`)."""
    nfa = _NFA()
    nfa_start, nfa_accept = nfa.build(parse_pattern(pattern, safe_classes))
    edges = nfa.edges

    def closure(states) -> frozenset[int]:
        # Everywhere these states reach by free jumps alone.
        stack, seen = list(states), set(states)
        while stack:
            for label, target in edges[stack.pop()]:
                if label is None and target not in seen:
                    seen.add(target)
                    stack.append(target)
        return frozenset(seen)

    first = closure({nfa_start})
    absorbing = frozenset({-1})
    if accept_absorbs and nfa_accept in first:
        first = absorbing
    ids, order, moves = {first: 0}, [first], []
    for current in order:  # breadth first: `order` grows as new sets are found
        if current is absorbing:
            moves.append([(0, MAX_CODE_POINT, ids[absorbing])])
            continue
        labelled = [(label, t) for s in current for label, t in edges[s] if label is not None]
        # Cut the code points into elementary segments on which every label agrees.
        cuts = sorted({lo for label, _ in labelled for lo, _ in label} | {hi + 1 for label, _ in labelled for _, hi in label})
        row: list[tuple[int, int, int]] = []
        for lo, nxt in zip(cuts, cuts[1:]):
            targets = {t for label, t in labelled if _contains(label, lo)}
            if not targets:
                continue
            dest = closure(targets)
            if accept_absorbs and nfa_accept in dest:
                dest = absorbing
            if dest not in ids:
                ids[dest] = len(order)
                order.append(dest)
            if row and row[-1][2] == ids[dest] and row[-1][1] == lo - 1:
                row[-1] = (row[-1][0], nxt - 1, ids[dest])
            else:
                row.append((lo, nxt - 1, ids[dest]))
        moves.append(row)
    accepting = {ids[s] for s in order if nfa_accept in s or s is absorbing}
    return DFA(moves, accepting)


def _contains(intervals: Intervals, code: int) -> bool:
    k = bisect.bisect_right(intervals, (code, MAX_CODE_POINT + 1)) - 1
    return k >= 0 and intervals[k][0] <= code <= intervals[k][1]
