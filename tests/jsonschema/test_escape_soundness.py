"""A \\u escape read by its syntax alone (collapsed, or in a key become some other key) may spell any character its
digits can: found on 2026-12-07 by comparing the checker with a regular schema's DFA (test_regular_schema.py), the
checker accepted "\\u0070" where only DEL could come, and "\\u006eame" as some other key where a property "name" is.
Both are refused now; what the checker accepts, the referee accepts."""

from __future__ import annotations

import pytest

from structbench.bench.referees import SchemaReferee
from structbench.jsonschema.checker import SchemaChecker

NAMED = {"type": "object", "properties": {"name": {"type": "string"}}}  # other keys allowed
CASES = [
    # (schema, text, the checker accepts it, the key orders to read it in)
    ({"enum": ["del\x7f"]}, '"del\\u007f"', True, ("any", "schema")),
    ({"enum": ["del\x7f"]}, '"del\\u007F"', True, ("any", "schema")),
    ({"enum": ["del\x7f"]}, '"del\\u0070"', False, ("any", "schema")),  # "delp": the collapsed escape took any digit
    ({"enum": ["del\x7f"]}, '"del\\u0079"', False, ("any", "schema")),
    ({"type": "string", "maxLength": 3}, '"a\\u0070"', True, ("any", "schema")),  # every character counts alike
    # Keys: schema order takes no other key (additionalProperties: false), so these are read in any order
    (NAMED, '{"\\u006eame": 5}', False, ("any",)),  # the property name spelled by escapes: its value must be a string
    (NAMED, '{"\\u006eame": "x"}', False, ("any",)),  # (refused, as a printable character spelled by \u is)
    (NAMED, '{"na\\u006de": 5}', False, ("any",)),
    (NAMED, '{"\\u00e9": 5}', True, ("any",)),
    (NAMED, '{"x\\u0070": 2}', True, ("any",)),  # "xp": some other key
    (NAMED, '{"\\n": 1}', True, ("any",)),
]


@pytest.mark.parametrize("schema, text, accepted, orders", CASES)
def test_an_escape_spells_only_what_may_come(schema, text, accepted, orders):
    for key_order in orders:
        checker = SchemaChecker(schema, key_order, "lesson")
        stack = checker.feed(checker.start(), text)
        assert (stack is not None and checker.can_end(stack)) == accepted, key_order
    if accepted:
        assert SchemaReferee(schema)(text)
