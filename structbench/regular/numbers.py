"""Numbers as regular languages over their JSON spellings: integer ranges, multiples, decimal bounds.

JSON Schema's numeric keywords become languages the checker can step through. Integers are written
`-?(0|[1-9][0-9]*)`; a range of them is a regex built digit by digit, a whole `multipleOf` an automaton
whose states are remainders.

A number with a bound (`minimum`, `exclusiveMinimum`, `maximum`, `exclusiveMaximum`) or a decimal
`multipleOf` is written in plain decimal, `-?(0|[1-9][0-9]*)(\\.[0-9]+)?`, without an exponent: the
bound is then a comparison of digit strings, which a finite automaton can make. This is a restriction
of the output language (a value such as 1e3 must be written 1000), never a loosening.

Bounds are exact decimals (`Decimal(repr(x))`, so 0.1 means one tenth, not the binary float nearest
to it); each side is its own regex and the caller intersects them.
"""

from __future__ import annotations

import functools
from decimal import Decimal

from structbench.errors import TooComplex
from structbench.limits import current as limits
from structbench.regular.automata import trim
from structbench.regular.dfa import DFA, merge_adjacent

# --- integers ----------------------------------------------------------------------------------------

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


@functools.lru_cache(maxsize=256)
def multiple_of_dfa(k: int) -> DFA:
    """-?(0|[1-9][0-9]*) whose value is divisible by k: states are remainders."""

    def digit(d: int, target: int) -> tuple[int, int, int]:
        return ord(str(d)), ord(str(d)), target

    # state 0: start; 1: after '-'; 2: "0" (complete); 3 + r: nonzero digits so far, remainder r
    leading = [digit(d, 3 + d % k) for d in range(1, 10)]
    moves = [[(ord("-"), ord("-"), 1), digit(0, 2), *leading], [digit(0, 2), *leading], []]
    moves += [[digit(d, 3 + (r * 10 + d) % k) for d in range(10)] for r in range(k)]
    return trim(DFA([merge_adjacent(sorted(row)) for row in moves], {2, 3}))


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
    """The least integer >= the number x (exact for floats: read through their shortest repr)."""
    d = Decimal(str(x))
    return int(d.to_integral_value(rounding="ROUND_CEILING"))


def floor_int(x) -> int:
    """The greatest integer <= the number x."""
    d = Decimal(str(x))
    return int(d.to_integral_value(rounding="ROUND_FLOOR"))


# --- plain decimals ----------------------------------------------------------------------------------

ANY_FRACTION = r"(?:\.[0-9]+)?"  # the optional fraction of a plain decimal


def exact_decimal(x) -> Decimal:
    """The JSON number x as the decimal it was written as (ints exact, floats by their shortest repr)."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise TypeError(f"not a number: {x!r}")
    return Decimal(x) if isinstance(x, int) else Decimal(repr(x))


def _split(d: Decimal) -> tuple[int, str]:
    """|d| as (integer part, fraction digits without trailing zeros)."""
    text = format(abs(d), "f")
    whole, _, frac = text.partition(".")
    cap = limits().max_bound_digits
    if len(whole) + len(frac) > cap:
        raise TooComplex(f"a numeric bound with more than {cap} digits (limits.max_bound_digits)")
    return int(whole), frac.rstrip("0")


def _fraction_at_least(digits: str, exclusive: bool) -> str | None:
    """Nonempty digit strings F with 0.F >= 0.digits (> when exclusive)."""
    if not digits:
        return r"[0-9]*[1-9][0-9]*" if exclusive else r"[0-9]+"
    d, rest = int(digits[0]), digits[1:]
    parts = []
    if d < 9:
        parts.append(f"[{d + 1}-9][0-9]*")
    if rest:
        tail = _fraction_at_least(rest, exclusive)
        parts.append(f"{d}(?:{tail})")
    else:
        parts.append(f"{d}[0-9]*[1-9][0-9]*" if exclusive else f"{d}[0-9]*")
    return "(?:" + "|".join(parts) + ")"


def _fraction_at_most(digits: str, exclusive: bool) -> str | None:
    """Nonempty digit strings F with 0.F <= 0.digits (< when exclusive); None if there are none."""
    if not digits:
        return None if exclusive else r"0+"
    d, rest = int(digits[0]), digits[1:]
    parts = []
    if d > 0:
        parts.append(f"[0-{d - 1}][0-9]*")
    if rest:
        tail = _fraction_at_most(rest, exclusive)
        parts.append(f"{d}(?:{tail})?" if tail else f"{d}")
    elif not exclusive:
        parts.append(f"{d}0*")
    return "(?:" + "|".join(parts) + ")" if parts else None


def _suffix_at_least(digits: str, exclusive: bool) -> str | None:
    """The optional `.F` after an integer part equal to the bound's, for a value >= the bound."""
    if not digits and not exclusive:
        return ANY_FRACTION
    return rf"\.{_fraction_at_least(digits, exclusive)}"


def _suffix_at_most(digits: str, exclusive: bool) -> str | None:
    """The optional `.F` after an integer part equal to the bound's, for a value <= the bound; None if
    no spelling fits."""
    frac = _fraction_at_most(digits, exclusive)
    if not digits:
        return None if exclusive else rf"(?:\.{frac})?"
    return rf"(?:\.{frac})?" if frac else ""


def _unsigned_at_least(whole: int, digits: str, exclusive: bool) -> str:
    """Unsigned plain decimals u with u >= whole.digits (>)."""
    parts = [_digits_at_least(whole + 1) + ANY_FRACTION, str(whole) + _suffix_at_least(digits, exclusive)]
    return "(?:" + "|".join(parts) + ")"


def _unsigned_at_most(whole: int, digits: str, exclusive: bool) -> str | None:
    """Unsigned plain decimals u with u <= whole.digits (<); None if there are none."""
    parts = []
    if whole > 0:
        parts.append(_digits_between(0, whole - 1) + ANY_FRACTION)
    suffix = _suffix_at_most(digits, exclusive)
    if suffix is not None:
        parts.append(str(whole) + suffix)
    return "(?:" + "|".join(parts) + ")" if parts else None


def _signed(pos: str | None, neg: str | None) -> str | None:
    parts = ([pos] if pos else []) + ([f"-{neg}"] if neg else [])
    return "(?:" + "|".join(parts) + ")" if parts else None


ZERO = r"0(?:\.0+)?"
UNSIGNED = DIGITS_RE + ANY_FRACTION


def _at_least(bound: Decimal, exclusive: bool) -> tuple[str | None, str | None]:
    """(unsigned spellings U with +U >= bound, unsigned spellings U with -U >= bound)."""
    whole, digits = _split(bound)
    if bound > 0:
        return _unsigned_at_least(whole, digits, exclusive), None
    if bound == 0:
        # +U >= 0 always; -U >= 0 only for U = 0 (and > 0 never for either zero).
        return (_unsigned_at_least(0, "", True) if exclusive else UNSIGNED), (None if exclusive else ZERO)
    # bound < 0: every +U; -U >= -|bound| <=> U <= |bound|.
    return UNSIGNED, _unsigned_at_most(whole, digits, exclusive)


def decimal_at_least(bound, exclusive: bool = False) -> str | None:
    """Plain decimal spellings (sign, no exponent) of values >= bound (> when exclusive)."""
    return _signed(*_at_least(exact_decimal(bound), exclusive))


def decimal_at_most(bound, exclusive: bool = False) -> str | None:
    """Plain decimal spellings of values <= bound (<): v <= b <=> -v >= -b, so the signs swap."""
    pos, neg = _at_least(-exact_decimal(bound), exclusive)
    return _signed(neg, pos)


def decimal_multiple_regex(multiple) -> str | None:
    """Plain decimals that are multiples of 10**-k (multipleOf 0.1, 0.01, ...): at most k significant
    fraction digits. None when the multiple is not of that form (e.g. 0.25, 2.5): not expressible here."""
    d = exact_decimal(multiple).normalize()
    sign, digits, exponent = d.as_tuple()
    if sign or exponent >= 0 or digits != (1,):
        return None
    k = -exponent
    return rf"-?{DIGITS_RE}(?:\.[0-9]{{1,{k}}}0*)?"
