"""JSON string text, one character at a time: escapes, surrogate pairs, and the content checked by a DFA.

The checker reads a string's characters as written (`\\n`, `\\u00e9`, `\\ud83d\\ude00`) and its DFA
reads the decoded characters. Between the two sits the escape being read, kept in the frame as a short
code (immutable and hashable: part of the stack, so of the memo keys):

    ""              no escape open
    "\\\\"            after a backslash
    "u" + digits    inside \\uXXXX, the hex digits so far (lowercase)
    "p" + HHHH ...  a high surrogate read, waiting for its low half: then "\\\\", "u" and the low digits so far
    "=" + rest + ">" + state
                    an escape whose every completion leads the DFA to the same `state` (-1: no DFA):
                    remembered by the syntax still to read (h any hex digit, D [dD], C [c-fC-F], or the
                    characters themselves), not by its digits, so equal futures share one state.

What can still be decoded is tracked as code point intervals, so an escape the content cannot accept is
refused at its first impossible digit.
"""

from __future__ import annotations

from typing import NamedTuple

SIMPLE_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_HEX = "0123456789abcdefABCDEF"
# What one escape can stand for where the content is checked: no lone surrogates, and no printable ASCII
# (which JSON never needs to escape: "\\u0061" for "a" is refused there, a sound restriction that keeps
# the states few).
ANY_CHAR = ((0, 0x1F), (0x7F, 0xD7FF), (0xE000, 0x10FFFF))


class _End:
    """The closing quote of a string."""

    def __repr__(self):
        return "END"


END = _End()


class Decoded(NamedTuple):
    """A character of the string's content, decoded (the escape, if any, is complete)."""

    char: str


class Pending(NamedTuple):
    """Inside an escape: the escape code to remember (see the module)."""

    esc: str


class InString(NamedTuple):
    """Still inside a string value: the escape code and the content DFA's state."""

    esc: str
    at: int


def read_char(esc: str, ch: str, strict: bool):
    """One character of a JSON string's text after escape `esc`: None (not JSON), END, Decoded or Pending.
    strict: surrogates must pair up (the content is checked character by character); otherwise any escape
    is read (its content is free)."""
    if esc == "":
        if ch == '"':
            return END
        if ch == "\\":
            return Pending("\\")
        if ord(ch) < 32:
            return None
        return Decoded(ch)
    if esc == "\\":
        if ch in SIMPLE_ESCAPES:
            return Decoded(SIMPLE_ESCAPES[ch])
        return Pending("u") if ch == "u" else None
    if ch not in _HEX:
        if esc.startswith("p") and len(esc) == 5 and ch == "\\":
            return Pending(esc + "\\")
        if esc.startswith("p") and len(esc) == 6 and ch == "u":
            return Pending(esc + "u")
        return None
    if esc.startswith("u"):
        digits = esc[1:] + ch.lower()
        if len(digits) < 4:
            return Pending("u" + digits)
        code = int(digits, 16)
        if not strict:
            return Decoded(chr(code))
        if 0xD800 <= code <= 0xDBFF:
            return Pending("p" + digits)
        if 0xDC00 <= code <= 0xDFFF or 0x20 <= code <= 0x7E:
            return None  # a lone low surrogate, or printable ASCII (see ANY_CHAR)
        return Decoded(chr(code))
    if esc.startswith("p") and len(esc) >= 7:
        digits = esc[7:] + ch.lower()
        if not escape_candidates(esc[:7] + digits):
            return None
        if len(digits) < 4:
            return Pending(esc[:7] + digits)
        high, low = int(esc[1:5], 16), int(digits, 16)
        return Decoded(chr(0x10000 + (high - 0xD800) * 0x400 + (low - 0xDC00)))
    return None


def string_step(esc: str, at: int, ch: str, dfa):
    """One character of a string value's text, its content checked by `dfa` (None: any content).
    Returns END, None (refused) or InString. An escape whose every completion reaches the same DFA
    state is remembered by what is left to read (see the module), not by its digits."""
    if esc.startswith("="):
        prog, target = esc[1:].split(">")
        if not _syntax_ok(prog[0], ch):
            return None
        if len(prog) == 1:
            return InString("", int(target) if dfa is not None else at)
        return InString("=" + prog[1:] + ">" + target, at)
    got = read_char(esc, ch, dfa is not None)
    if got is None:
        return None
    if got is END:
        return None if esc or (dfa is not None and at not in dfa.accepting) else END
    if isinstance(got, Decoded):
        if dfa is None:
            return InString("", at)
        nxt = dfa.step(at, got.char)
        return None if nxt is None else InString("", nxt)
    new = got.esc
    if dfa is None:
        return InString(("=" + _remaining(new) + ">-1") if new.startswith("u") and len(new) > 1 else new, at)
    cands = escape_candidates(new)
    if not dfa_live_on(dfa, at, cands):
        return None
    prog = collapsible(new)
    if prog is not None:
        # Collapsed, the escape is read by its syntax alone, which any digit completes: so every code point its
        # digits may still spell must lead to the one state, printable ASCII included (which the digits read one by
        # one refuse: "\\u0070" where only DEL may come, 2026-12-07)
        target = _uniform_target(dfa, at, spelled_candidates(new))
        if target is not None:
            return InString("=" + prog + ">" + str(target), at)
    return InString(new, at)


def escape_candidates(esc: str):
    """The code points a partly read escape can still stand for (no lone surrogates), as intervals."""
    if esc == "\\":  # a simple escape (\\" \\\\ \\/ and controls) or the start of \\u
        return tuple(sorted(ANY_CHAR + ((0x22, 0x22), (0x2F, 0x2F), (0x5C, 0x5C))))
    if esc == "u":
        return ANY_CHAR
    if esc.startswith("u"):
        (lo, hi), = _bmp_range(esc)
        return _bmp_candidates(lo, hi)
    if esc.startswith("p"):  # pending high surrogate ("pHHHH"), then "\\", "u" and part of the low one
        high = int(esc[1:5], 16)
        low = esc[7:]
        if low:
            width = 16 ** (4 - len(low))
            lo = max(int(low, 16) * width, 0xDC00)
            hi = min(int(low, 16) * width + width - 1, 0xDFFF)
        else:
            lo, hi = 0xDC00, 0xDFFF
        if lo > hi:
            return ()
        base = 0x10000 + (high - 0xD800) * 0x400
        return ((base + lo - 0xDC00, base + hi - 0xDC00),)
    return ANY_CHAR


def spelled_candidates(esc: str):
    """The code points a partly read \\u escape's remaining digits may spell, printable ASCII included (what its
    collapsed syntax reads: collapsible), lone surrogates left out; else escape_candidates."""
    if esc.startswith("u") and len(esc) > 1:
        (lo, hi), = _bmp_range(esc)
        return _bmp_candidates(lo, hi, printable=True)
    return escape_candidates(esc)


def free_read_candidates(esc: str):
    """What a partly read escape may still stand for where it is read on freely (a key become some other key: its
    escapes decode whatever they spell, printable ASCII included): after a backslash or `u` alone any character but
    a lone surrogate; else spelled_candidates."""
    if esc == "\\" or esc == "u":
        return ((0, 0xD7FF), (0xE000, 0x10FFFF))
    return spelled_candidates(esc)


def collapsible(esc: str) -> str | None:
    """What is left to read after this partial escape, if its digits no longer decide between a
    character of the BMP and a surrogate pair; None if they still do."""
    if esc.startswith("p"):
        return _remaining(esc)
    if not esc.startswith("u") or len(esc) == 1:
        return None
    (lo, hi), = _bmp_range(esc)
    if hi < 0xD800 or lo > 0xDFFF:
        return _remaining(esc)
    if 0xD800 <= lo and hi <= 0xDBFF:
        return _remaining(esc) + "\\uDChh"
    return None


def dfa_live_on(dfa, state: int, intervals) -> bool:
    """Does the (trimmed) DFA have a move from `state` on some code point in `intervals`?"""
    for lo, hi, _ in dfa.moves[state]:
        for a, b in intervals:
            if lo <= b and a <= hi:
                return True
    return False


def in_intervals(intervals, code: int) -> bool:
    return any(a <= code <= b for a, b in intervals)


def _bmp_range(esc: str):
    """The code points a partial \\u escape ("u" + digits) spans, as one interval."""
    digits = esc[1:]
    width = 16 ** (4 - len(digits))
    lo = int(digits, 16) * width
    return ((lo, lo + width - 1),)


def _bmp_candidates(lo: int, hi: int, printable: bool = False):
    """Of the code points lo..hi of a \\u escape, those it may stand for (a high surrogate: the pairs); with
    `printable`, printable ASCII too."""
    out = []
    for a, b in ((0, 0xD7FF),) if printable else ((0, 0x1F), (0x7F, 0xD7FF)):
        if lo <= b and hi >= a:
            out.append((max(lo, a), min(hi, b)))
    if hi >= 0xE000:
        out.append((max(lo, 0xE000), hi))
    a, b = max(lo, 0xD800), min(hi, 0xDBFF)
    if a <= b:  # a high surrogate: the pair stands for a character beyond the BMP
        out.append((0x10000 + (a - 0xD800) * 0x400, 0x10000 + (b - 0xD800) * 0x400 + 0x3FF))
    return tuple(sorted(out))


def _remaining(esc: str) -> str:
    """The syntax still to read after a partly read \\u escape: h any hex digit, D [dD], C [c-fC-F]."""
    if esc.startswith("u"):
        return "h" * (5 - len(esc))
    low = esc[7:]  # a pending pair "pHHHH", "\\", "u", then low digits
    tail = "\\u"[len(esc) - 5:] if len(esc) < 7 else ""
    return tail + "DChh"[len(low):]


def escape_reads(esc: str) -> str | None:
    """The characters that can come next inside escape `esc` (a superset; None outside an escape): what
    `read_char` and `string_step` could accept there."""
    if not esc:
        return None
    if esc == "\\":
        return '"\\/bfnrtu'
    if esc.startswith("="):
        c = esc[1]
        return _HEX if c == "h" else "dD" if c == "D" else "cdefCDEF" if c == "C" else c
    if esc.startswith("p") and len(esc) == 5:
        return "\\"
    if esc.startswith("p") and len(esc) == 6:
        return "u"
    return _HEX


def _syntax_ok(c: str, ch: str) -> bool:
    """Does `ch` match one place of the remaining syntax (see _remaining)?"""
    if c == "h":
        return ch in _HEX
    if c == "D":
        return ch in "dD"
    if c == "C":
        return ch in "cdefCDEF"
    return ch == c


def _uniform_target(dfa, state: int, intervals):
    """The one DFA state every code point in `intervals` leads to, or None if they differ or some is refused."""
    target = None
    for a, b in intervals:
        covered = a
        for lo, hi, t in dfa.moves[state]:
            if hi < a or lo > b:
                continue
            if lo > covered or (target is not None and t != target):
                return None
            target = t
            covered = hi + 1
            if covered > b:
                break
        if covered <= b:
            return None
    return target
