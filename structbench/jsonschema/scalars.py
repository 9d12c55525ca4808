"""Strings and numbers: a schema's string keywords as one DFA over the decoded characters, its number
keywords as one DFA over the number's text.

String: enum / const values, minLength / maxLength, pattern (and the patterns allOf merged), format.
Number: integer or number type, minimum / maximum (exclusive or not), multipleOf, enum / const values.
A language the construction cannot build within the caps is refused (UnsupportedSchema), never widened.
"""

from __future__ import annotations

import math
from fractions import Fraction

from structbench.errors import (
    InvalidSchema,
    PatternError,
    TooComplex,
    UnsupportedSchema,
)
from structbench.jsonschema.keywords import CHECKED_FORMATS, REFEREE_FORMATS
from structbench.jsonschema.lexemes import unbounded_number_dfa
from structbench.jsonschema.nodes import lone_surrogate, number_spellings
from structbench.limits import current as limits
from structbench.limits import limit_note
from structbench.regular import (
    any_string,
    as_int,
    ceil_int,
    compile_pattern,
    decimal_at_least,
    decimal_at_most,
    decimal_multiple_regex,
    exact_decimal,
    floor_int,
    format_dfa,
    integer_regex,
    intersect_all,
    literal_dfa,
    multiple_of_dfa,
    search_dfa,
    trim,
)

MULTIPLES = "only whole numbers up to limits.max_multiple_of and powers of ten below one (0.1, 0.01, ...)"

# Numbers as JSON writes them; "lesson" numbers have no exponent.
PLAIN_NUMBER = r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?"
JSON_NUMBER = r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"
INTEGER = r"-?(?:0|[1-9][0-9]*)"
UNBOUNDED_NUMBERS = (INTEGER, JSON_NUMBER, PLAIN_NUMBER)  # one DFA each for every schema (lexemes.unbounded_number_dfa)


def string_language(s: dict, path: str, literals):
    """(dfa, exact): the DFA of the strings the schema allows (None: any string; False: none), and the exact
    set of them when it is finite and known (`literals`: the enum's strings, or None without an enum)."""
    dfas, exact = [], literals
    if literals is not None and any(lone_surrogate(t) for t in literals):
        # Left in, the trie would let the checker start a literal it can never finish (a restriction: the
        # checker never writes a lone surrogate).
        literals = exact = [t for t in literals if not lone_surrogate(t)]
        if not literals:
            values = s["enum"] if isinstance(s.get("enum"), list) else [s.get("const")]
            if all(isinstance(v, str) for v in values):
                raise UnsupportedSchema("enum" if "enum" in s else "const", path, "every string it allows holds a "
                                        "lone surrogate, which the checker never writes")
            return False, []  # its other values remain
    if literals is not None:
        dfas.append(literal_dfa(sorted(set(literals))))
    lo, hi = s.get("minLength", 0), s.get("maxLength")
    for word, v in (("minLength", lo), ("maxLength", hi)):
        if v is not None and (as_int(v) is None or v < 0):
            raise InvalidSchema(f"{word} must be a non-negative integer at {path}/{word}")
    if hi is not None and hi > limits().max_string_length >= lo:
        # Longer than any answer a model writes: held at the cap, a stricter language (declared in
        # docs/design.md), never a looser one.
        hi = limits().max_string_length
    if lo or hi is not None:
        try:
            dfas.append(any_string(int(lo), None if hi is None else int(hi)))
        except TooComplex as e:
            raise UnsupportedSchema("maxLength" if hi is not None else "minLength", path, str(e)) from None
    patterns = ([s["pattern"]] if "pattern" in s else []) + list(s.get("__patterns__", []))
    for p in patterns:
        if not isinstance(p, str):
            raise InvalidSchema(f"pattern must be a string at {path}/pattern")
        try:
            dfas.append(search_dfa(p))
        except (PatternError, TooComplex) as e:
            raise UnsupportedSchema("pattern", path, str(e)) from None
    fmt = s.get("format")
    if fmt is not None:
        if fmt in CHECKED_FORMATS:
            dfas.append(format_dfa(fmt))
        elif fmt in REFEREE_FORMATS:
            raise UnsupportedSchema("format", path, f"format {fmt!r} (asserted by the referee) has no pattern here")
    if not dfas:
        return None, None
    try:
        dfa = intersect_all(dfas)
    except TooComplex as e:
        raise UnsupportedSchema("pattern", path, str(e)) from None
    if dfa is None:
        return False, None
    if exact is not None:
        kept = frozenset(t for t in exact if dfa.accepts(t))
        # A literal a pattern or format refused may still be valid (the DFA can be narrower than the
        # keyword): then the set is not the exact one, and no exclusivity proof may rest on it.
        exact = kept if len(kept) == len(set(exact)) or not (patterns or fmt) else None
    return dfa, exact


def _check_number_keywords(s: dict, path: str) -> list:
    """The bounds given, as (keyword, value); InvalidSchema for a bound or multipleOf that is no number."""
    bounds = [(w, s[w]) for w in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum") if w in s]
    for w, v in bounds:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise InvalidSchema(f"{w} must be a number at {path}/{w}")
        _check_finite(w, v, path)
    multiple = s.get("multipleOf")
    if multiple is not None and (isinstance(multiple, bool) or not isinstance(multiple, (int, float))
                                 or not multiple > 0):
        raise InvalidSchema(f"multipleOf must be a number > 0 at {path}/multipleOf")
    if multiple is not None:
        _check_finite("multipleOf", multiple, path)
    return bounds


_NON_FINITE_NAMES = {"inf": "Infinity", "-inf": "-Infinity", "nan": "NaN"}  # as Python's json writes them


def _check_finite(keyword: str, value, path: str) -> None:
    """Python's json reads Infinity and NaN, JSON has neither; and an integer longer than any bound we can
    write as a language is refused before it is turned into text (Python caps int -> str at 4,300 digits)."""
    if isinstance(value, float) and not math.isfinite(value):
        raise InvalidSchema(f"{keyword} must be a finite number (JSON has no {_NON_FINITE_NAMES[str(value)]}) at {path}/{keyword}")
    cap = limits().max_bound_digits
    if isinstance(value, int) and abs(value) >= 10**cap:  # more digits than the cap
        raise UnsupportedSchema(keyword, path, f"{keyword}: a number with more than {cap} digits "
                                f"{limit_note('max_bound_digits')}")


def _integer_bounds(bounds: list) -> tuple:
    """The integer range (lo, hi; None: no bound) the bounds leave."""
    lo = hi = None
    for w, v in bounds:
        if w == "minimum":
            b = ceil_int(v)
        elif w == "exclusiveMinimum":
            b = floor_int(v) + 1
        elif w == "maximum":
            b = floor_int(v)
        else:
            b = ceil_int(v) - 1
        if w in ("minimum", "exclusiveMinimum"):
            lo = b if lo is None else max(lo, b)
        else:
            hi = b if hi is None else min(hi, b)
    return lo, hi


def number_language(types: frozenset, s: dict, path: str, numbers: str, literals=None):
    """The DFA of the number texts the schema allows, or None when no number is allowed. `numbers`: "json"
    (exponents allowed where nothing bounds the number) or "lesson" (never an exponent)."""
    integer_only = "number" not in types
    bounds = _check_number_keywords(s, path)
    multiple = s.get("multipleOf")
    if integer_only or (multiple is not None and as_int(multiple) is not None):
        # Integers (a whole multipleOf makes a number one: 4.0 is written 4, a restriction).
        integer_only = True
        lo, hi = _integer_bounds(bounds)
        try:
            regexes = [integer_regex(lo, hi) if bounds else INTEGER]
        except TooComplex as e:
            raise UnsupportedSchema(bounds[0][0], path, str(e)) from None
    elif bounds or multiple is not None:
        # Bounded or decimal-multiple numbers are written in plain decimal (no exponent): see
        # structbench.regular.numbers. Each bound is one language; the intersection below takes them all.
        regexes = [PLAIN_NUMBER]
        try:
            for w, v in bounds:
                side = decimal_at_least if w.endswith("inimum") else decimal_at_most
                regexes.append(side(v, exclusive=w.startswith("exclusive")))
        except TooComplex as e:
            raise UnsupportedSchema(bounds[0][0], path, str(e)) from None
        if multiple is not None:
            regex = decimal_multiple_regex(multiple)
            if regex is None:
                raise UnsupportedSchema("multipleOf", path, f"multipleOf {multiple!r}: {MULTIPLES}")
            regexes.append(regex)
    elif numbers == "lesson":
        regexes = [PLAIN_NUMBER]
    else:
        regexes = [JSON_NUMBER]
    if any(r is None for r in regexes):
        return None
    if len(regexes) == 1 and regexes[0] in UNBOUNDED_NUMBERS and multiple is None and literals is None:
        return unbounded_number_dfa(regexes[0])  # JSON's number syntax alone: built once per process, trimmed
    dfas = [compile_pattern(r) for r in regexes]
    if integer_only and multiple is not None:
        k = as_int(multiple)
        if k is None:  # an integer and a fractional multipleOf: every integer when 1/m is whole (0.5)
            if Fraction(exact_decimal(multiple)).numerator != 1:  # exact: 1e-300 passes Decimal's precision
                raise UnsupportedSchema("multipleOf", path, f"multipleOf {multiple!r} on an integer")
            k = 1
        if k > limits().max_multiple_of:
            raise UnsupportedSchema("multipleOf", path, f"multipleOf {multiple!r}: {MULTIPLES}")
        if k > 1:
            dfas.append(multiple_of_dfa(k))
    if literals is not None:
        dfas.append(literal_dfa(sorted({t for v in literals for t in number_spellings(v)})))
    return intersect_all(dfas) if len(dfas) > 1 else trim(dfas[0])
