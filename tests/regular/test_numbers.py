"""Numbers as regular languages: every plain-decimal spelling is accepted exactly when its exact decimal
value satisfies the keyword (hypothesis), integer ranges and multiples agree with arithmetic, and the
integer ranges stay small for 64-bit bounds (the Snowplow schemas' 0 .. 9223372036854776000)."""

import re
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from structbench.errors import TooComplex
from structbench.jsonschema.checker import SchemaChecker
from structbench.limits import DEFAULT
from structbench.regular import (
    as_int,
    ceil_int,
    compile_pattern,
    decimal_at_least,
    decimal_at_most,
    decimal_multiple_regex,
    exact_decimal,
    floor_int,
    integer_regex,
    multiple_of_dfa,
)

BOUNDS = [0, 0.0, -459.67, 0.1, 1e-09, 10.5, 99999999999.99, -0.5, 7, -3, 0.67, 99999999999999.98]

whole = st.one_of(st.sampled_from(["0", "1", "7", "10", "99", "459", "460", "99999999999", "99999999999999"]),
                  st.integers(0, 10**15).map(str))
fraction = st.one_of(st.just(""), st.text("0123456789", min_size=1, max_size=8).map(lambda f: "." + f),
                     st.sampled_from([".67", ".670", ".66999", ".671", ".5", ".49", ".98", ".99", ".000000001"]))
spelling = st.tuples(st.sampled_from(["", "-"]), whole, fraction).map("".join)


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(BOUNDS), st.booleans(), spelling)
def test_decimal_bounds_match_exact_comparison(bound, exclusive, text):
    value, b = Decimal(text), exact_decimal(bound)
    at_least = re.fullmatch(decimal_at_least(bound, exclusive), text) is not None
    at_most = re.fullmatch(decimal_at_most(bound, exclusive), text) is not None
    assert at_least == (value > b if exclusive else value >= b)
    assert at_most == (value < b if exclusive else value <= b)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from([0.1, 0.01, 0.001, 1e-09]), spelling)
def test_decimal_multiples(multiple, text):
    accepted = re.fullmatch(decimal_multiple_regex(multiple), text) is not None
    assert accepted == (Decimal(text) % exact_decimal(multiple) == 0)


def test_multiples_not_a_power_of_ten_are_not_expressed():
    assert decimal_multiple_regex(0.25) is None and decimal_multiple_regex(2.5) is None


@settings(max_examples=300, deadline=None)
@given(st.sampled_from([(0, 9223372036854776000), (-37, 12345), (5, 5), (-100, -3), (1000, 99999)]),
       st.integers(-10**20, 10**20))
def test_integer_ranges(bounds, value):
    lo, hi = bounds
    assert (re.fullmatch(integer_regex(lo, hi), str(value)) is not None) == (lo <= value <= hi)


def test_sixty_four_bit_range_is_small():
    # The digit-range recursion once split full blocks (000..999) again and again: 2^19 branches.
    dfa = compile_pattern(integer_regex(0, 9223372036854776000))
    assert dfa.n_states < 400


@settings(max_examples=300, deadline=None)
@given(st.sampled_from([1, 2, 3, 7, 10, 13, 1000]), st.integers(-10**12, 10**12))
def test_multiples_of_a_whole_number(k, value):
    dfa = multiple_of_dfa(k)
    assert dfa.accepts(str(value)) == (value % k == 0)
    assert not dfa.accepts("0" + str(abs(value))) and dfa.accepts("-0") and not dfa.accepts("-")


def test_an_empty_integer_range_is_none():
    assert integer_regex(5, 4) is None and integer_regex(-3, -4) is None


def test_a_bound_past_the_digit_limit_is_too_complex():
    digits = DEFAULT.max_bound_digits
    compile_pattern(integer_regex(0, 10 ** digits - 1))
    with pytest.raises(TooComplex, match="limits.max_bound_digits"):
        integer_regex(0, 10 ** digits)
    with pytest.raises(TooComplex, match="limits.max_bound_digits"):
        decimal_at_least(float("1e-%d" % (digits + 1)))


def test_integral_helpers():
    assert [as_int(x) for x in (3, 3.0, 3.5, True, "3")] == [3, 3, None, None, None]
    assert (ceil_int(2.1), floor_int(2.1), ceil_int(-2.1), floor_int(-2.1), ceil_int(4), floor_int(4.0)) == (3, 2, -2, -3, 4, 4)


def test_checker_enforces_decimal_bounds_and_multiples():
    checker = SchemaChecker({"type": "object", "properties": {"t": {"type": "number", "minimum": -459.67,
                                                                   "exclusiveMaximum": 100, "multipleOf": 0.01}},
                             "required": ["t"], "additionalProperties": False}, "any", "compact")
    for text, ok in [('{"t":-459.67}', True), ('{"t":-459.68}', False), ('{"t":99.99}', True),
                     ('{"t":100}', False), ('{"t":12.345}', False), ('{"t":12.340}', True), ('{"t":1e2}', False)]:
        state = checker.feed(checker.start(), text)
        assert (state is not None and checker.can_end(state)) == ok, text
