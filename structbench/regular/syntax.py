"""The pattern syntax: a regular expression -> its syntax tree (Chars, Concat, Alternation, Repeat).

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
"""

from __future__ import annotations

from dataclasses import dataclass

from structbench.errors import PatternError, TooComplex
from structbench.limits import current as limits
from structbench.limits import exceeded
from structbench.regular.charsets import (
    CLASS_ESCAPES,
    DOT,
    Intervals,
    complement,
    normalise,
    of_text,
    safe_class_escape,
)

_CONTROL_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "0": "\0", "a": "\a"}


# --- the syntax tree ----------------------------------------------------------------


@dataclass(frozen=True)
class Chars:
    """One character from a set."""

    intervals: Intervals


@dataclass(frozen=True)
class Concat:
    """The parts one after another; no parts is the empty string."""

    parts: tuple


@dataclass(frozen=True)
class Alternation:
    """Any one of the branches."""

    branches: tuple


@dataclass(frozen=True)
class Repeat:
    """`inner` at least `lo` and at most `hi` times."""

    inner: object
    lo: int
    hi: int | None  # None: no upper bound


class _Parser:
    """Recursive descent over the pattern; every error names its position."""

    def __init__(self, pattern: str, safe_classes: bool = False):
        self.pattern, self.i = pattern, 0
        self.safe_classes = safe_classes
        self.negated = False  # inside a negated class [^...]
        self.depth, self.max_depth = 0, limits().max_nesting  # groups open here: the parser recurses per group

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
            if self.depth >= self.max_depth:
                raise exceeded("max_nesting", f"pattern groups nested more than {self.max_depth} deep "
                               f"(at position {start} of {len(self.pattern):,})", TooComplex)
            self.depth += 1
            inner = self.alternation()
            self.depth -= 1
            if self.at_end() or self.take() != ")":
                self.fail("unclosed group", start)
            return inner
        if ch == "[":
            return Chars(self.char_class(start))
        if ch == ".":
            return Chars(DOT)
        if ch == "\\":
            return Chars(self.escape(start, in_class=False))
        if ch in ")|":
            self.fail(f"unexpected {ch!r}", start)
        if ch == "^":
            self.fail("'^' is only supported as the first character", start)
        if ch == "$":
            self.fail("'$' is only supported as the last character", start)
        return Chars(of_text(ch))

    def escape(self, start: int, in_class: bool) -> Intervals:
        if self.i >= self.end:
            self.fail("pattern ends with a lone backslash", start)
        ch = self.take()
        if ch in CLASS_ESCAPES:
            if self.safe_classes:
                return safe_class_escape(ch, large=in_class and self.negated)
            return CLASS_ESCAPES[ch]
        if ch in _CONTROL_ESCAPES:
            if ch == "0" and self.peek() is not None and self.peek().isdigit():
                self.fail("octal escapes are not supported", start)
            return of_text(_CONTROL_ESCAPES[ch])
        if ch == "b" and in_class:
            return of_text("\b")
        if ch in "xu":
            width = 2 if ch == "x" else 4
            digits = self.pattern[self.i : self.i + width]
            if len(digits) != width or any(c not in "0123456789abcdefABCDEF" for c in digits):
                self.fail(f"\\{ch} needs {width} hex digits", start)
            self.i += width
            return of_text(chr(int(digits, 16)))
        if ch.isalnum():  # unknown letter or digit escapes are errors in Python; \_ is a literal
            self.fail(f"escape \\{ch} is not supported", start)
        return of_text(ch)  # an escaped punctuation character stands for itself

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
            lo_set = self.escape(item_start, in_class=True) if ch == "\\" else of_text(ch)
            is_single = len(lo_set) == 1 and lo_set[0][0] == lo_set[0][1]
            if self.peek() == "-" and self.peek(1) not in ("]", None) and not is_single:
                self.fail("a range cannot start at a class escape", item_start)  # as Python's re: [\d-z]
            if self.peek() == "-" and self.peek(1) not in ("]", None) and is_single:
                self.take()
                hi_start = self.i
                hi_ch = self.take()
                hi_set = self.escape(hi_start, in_class=True) if hi_ch == "\\" else of_text(hi_ch)
                if not (len(hi_set) == 1 and hi_set[0][0] == hi_set[0][1]):
                    self.fail("a range cannot end in a class escape", hi_start)
                lo, hi = lo_set[0][0], hi_set[0][0]
                if hi < lo:
                    self.fail("bad character range", item_start)
                pieces.append((lo, hi))
            else:
                pieces.extend(lo_set)
        intervals = normalise(pieces)
        return complement(intervals) if negated else intervals


def parse_pattern(pattern: str, safe_classes: bool = False):
    """The syntax tree of `pattern`; PatternError (with the position) for anything outside the subset.
    safe_classes: see compile_pattern."""
    if not isinstance(pattern, str):
        raise TypeError(f"a pattern must be a string, not {type(pattern).__name__}")
    return _Parser(pattern, safe_classes).parse()
