"""Regular languages: pattern syntax -> NFA -> DFA, automaton operations, numeric and format languages.

Code outside this package imports from here (``from structbench.regular import compile_pattern``), so the
modules inside can be reorganised without touching their users. The exceptions these raise
(PatternError, TooComplex, InvalidAutomaton) live in :mod:`structbench.errors`, like every other.

Lowest first: charsets (code-point interval sets) -> syntax (parser, syntax tree) -> nfa (Thompson) ->
dfa (the DFA, the crawl every construction uses, compile_pattern) -> automata (trim, intersect, counting,
literal and length languages) -> search (JSON Schema's `pattern`), numbers, formats.
"""

from structbench.regular.automata import (
    accepts_at_least,
    any_string,
    intersect_all,
    is_empty,
    literal_dfa,
    trim,
)
from structbench.regular.charsets import MAX_CODE_POINT
from structbench.regular.dfa import DFA, EMPTY, compile_pattern
from structbench.regular.formats import FORMAT_PATTERNS, format_dfa
from structbench.regular.numbers import (
    as_int,
    ceil_int,
    decimal_at_least,
    decimal_at_most,
    decimal_multiple_regex,
    exact_decimal,
    floor_int,
    integer_regex,
    multiple_of_dfa,
)
from structbench.regular.search import search_dfa
from structbench.regular.syntax import parse_pattern

__all__ = [
    "DFA", "EMPTY", "MAX_CODE_POINT", "compile_pattern", "parse_pattern",
    "trim", "intersect_all", "is_empty", "accepts_at_least", "literal_dfa", "any_string", "search_dfa",
    "integer_regex", "multiple_of_dfa", "as_int", "ceil_int", "floor_int",
    "decimal_at_least", "decimal_at_most", "decimal_multiple_regex", "exact_decimal",
    "FORMAT_PATTERNS", "format_dfa",
]
