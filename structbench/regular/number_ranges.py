"""Numeric JSON Schema keywords as regular languages over number spellings.

A number with a bound (`minimum`, `exclusiveMinimum`, `maximum`, `exclusiveMaximum`) or a decimal
`multipleOf` is written in plain decimal, `-?(0|[1-9][0-9]*)(\\.[0-9]+)?`, without an exponent: the
bound is then a comparison of digit strings, which a finite automaton can make. This is a restriction
of the output language (a value such as 1e3 must be written 1000), never a loosening.

Bounds are exact decimals (`Decimal(repr(x))`, so 0.1 means one tenth, not the binary float nearest
to it); each side is its own regex and the caller intersects them.
"""

from __future__ import annotations

from decimal import Decimal

from structbench.limits import current as limits
from structbench.regular.automata import DIGITS_RE, TooComplex, _digits_at_least, _digits_between

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
