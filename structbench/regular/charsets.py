"""Sets of characters as code-point intervals: what one step of a pattern, NFA or DFA reads.

A set is a tuple of sorted, disjoint, inclusive (lo, hi) intervals of code points, so `.` and `[^...]`
need no enumeration of Unicode. Besides the interval operations, this module holds the sets the pattern
syntax names: `\\d \\w \\s` under ASCII semantics (what JSON Schema's ECMA-262 patterns and the real engines
use), their Unicode readings (Python's `re` without flags), and `.`.
"""

from __future__ import annotations

import bisect
import functools
import re

import numpy as np

MAX_CODE_POINT = 0x10FFFF

Intervals = tuple[tuple[int, int], ...]


def json_plain(codes):
    """Over code points (a NumPy array): whether each is a plain character of a JSON string, held raw and neither
    its quote nor its backslash (U+0020 up): inside a string, what moves its content alone."""
    return (codes >= 0x20) & (codes != 0x22) & (codes != 0x5C)


def json_classes(codes) -> tuple:
    """For a class partition (its boundaries, int64): (which classes are plain, the quote's class, the backslash's
    class, the boundaries with the end appended), read-only and kept for the last few partitions: every string
    and key table of a schema is built over the same one."""
    return _json_classes(codes.tobytes())


@functools.lru_cache(maxsize=64)
def _json_classes(key: bytes) -> tuple:
    import numpy as np

    codes = np.frombuffer(key, dtype=np.int64)
    found = (json_plain(codes), codes == 0x22, codes == 0x5C, np.append(codes, MAX_CODE_POINT + 1))
    for a in found:
        a.flags.writeable = False
    return found


def ascii_own(codes) -> bool:
    """Does a class partition (its boundaries) give every ASCII character a class of its own, class c being
    character c? The checker's partitions do (a schema naming non-ASCII characters cuts only above them). Kept
    for the last few partitions: every string table of a schema asks it of the same one."""
    return _ascii_own(np.asarray(codes, dtype=np.int64).tobytes())


@functools.lru_cache(maxsize=64)
def _ascii_own(key: bytes) -> bool:
    codes = np.frombuffer(key, dtype=np.int64)
    return len(codes) > 128 and np.array_equal(codes[:129], np.arange(129))


def normalise(intervals) -> Intervals:
    """Any (lo, hi) pairs as a set: sorted, overlapping or touching intervals merged."""
    merged: list[list[int]] = []
    for lo, hi in sorted(intervals):
        if merged and lo <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    return tuple((lo, hi) for lo, hi in merged)


def bounds_of(intervals) -> tuple[np.ndarray, np.ndarray]:
    """A set (any (lo, hi) pairs, normalised) as two arrays, its intervals' starts and ends: what `meets` searches."""
    merged = normalise(intervals)
    return np.array([lo for lo, _ in merged], dtype=np.int64), np.array([hi for _, hi in merged], dtype=np.int64)


def meets(lo: np.ndarray, hi: np.ndarray, bounds: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Per k: does the interval lo[k]..hi[k] share a code point with the set `bounds` (bounds_of)? The last of its
    intervals to start at or below hi[k] is the one that ends last of those (they are sorted and disjoint), so
    the two meet where it ends at or above lo[k]."""
    starts, ends = bounds
    last = np.searchsorted(starts, hi, side="right") - 1
    return (last >= 0) & (ends[np.maximum(last, 0)] >= lo)


def complement(intervals: Intervals) -> Intervals:
    """Every code point not in the set."""
    out, nxt = [], 0
    for lo, hi in intervals:
        if lo > nxt:
            out.append((nxt, lo - 1))
        nxt = hi + 1
    if nxt <= MAX_CODE_POINT:
        out.append((nxt, MAX_CODE_POINT))
    return tuple(out)


def of_text(text: str) -> Intervals:
    """The characters of `text` as a set."""
    return normalise((ord(c), ord(c)) for c in text)


def contains(intervals: Intervals, code: int) -> bool:
    k = bisect.bisect_right(intervals, (code, MAX_CODE_POINT + 1)) - 1
    return k >= 0 and intervals[k][0] <= code <= intervals[k][1]


DIGIT = normalise([(ord("0"), ord("9"))])
WORD = normalise([(ord("0"), ord("9")), (ord("A"), ord("Z")), (ord("a"), ord("z")), (ord("_"), ord("_"))])
SPACE = of_text(" \t\n\r\f\v")
CLASS_ESCAPES = {  # ASCII semantics: \d is [0-9]
    "d": DIGIT, "D": complement(DIGIT),
    "w": WORD, "W": complement(WORD),
    "s": SPACE, "S": complement(SPACE),
}
DOT = complement(of_text("\n"))  # any character but newline


@functools.lru_cache(maxsize=3)
def unicode_class(name: str) -> Intervals:
    """Python's Unicode \\d, \\w or \\s (`name`: str.isdecimal, isalnum or "_", isspace: what `re` tests them by)
    as intervals: `re` finds its runs over every code point at once (a Python test per code point took a second, in
    the compile of the first schema that needed them), each class only where one is needed. The text of every
    code point is decoded from its UTF-32 bytes (joining 1.1 million chr() took 0.15 s of that compile)."""
    every = np.arange(MAX_CODE_POINT + 1, dtype="<u4").tobytes().decode("utf-32-le", "surrogatepass")
    return normalise((m.start(), m.end() - 1) for m in re.finditer("\\" + name + "+", every))


def safe_class_escape(ch: str, large: bool) -> Intervals:
    """A class escape read so that the result is a subset under both the ASCII reading (ECMA-262, the
    engines) and the Unicode one (Python's `re` without flags, jsonschema's): \\d is [0-9], \\D everything
    but the Unicode digits. Inside a negated class the larger reading is taken, so its complement is the
    smaller."""
    base = ch.lower()
    ascii_set = CLASS_ESCAPES[base]
    if ch == base:  # \d \w \s (the Unicode sets found only where needed)
        return unicode_class(base) if large else ascii_set
    return complement(ascii_set) if large else complement(unicode_class(base))
