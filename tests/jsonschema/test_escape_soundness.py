"""A \\u escape read by its syntax alone (collapsed, or in a key become some other key) may spell any character its
digits can: found on 2026-12-07 by comparing the checker with a regular schema's DFA (test_regular_schema.py), the
checker accepted "\\u0070" where only DEL could come, and "\\u006eame" as some other key where a property "name" is.
Both are refused now; what the checker accepts, the referee accepts."""

from __future__ import annotations

import pytest

from structbench.bench.referees import SchemaReferee
from structbench.jsonschema.checker import SchemaChecker

CASES = [
    # (schema, text, the checker accepts it)
    ({"enum": ["del\x7f"]}, '"del\\u007f"', True),
    ({"enum": ["del\x7f"]}, '"del\\u007F"', True),
    ({"enum": ["del\x7f"]}, '"del\\u0070"', False),  # "delp": the collapsed escape took any last digit
    ({"enum": ["del\x7f"]}, '"del\\u0079"', False),
    ({"type": "string", "maxLength": 3}, '"a\\u0070"', True),  # every character counts alike: read collapsed
    ({"type": "object", "properties": {"name": {"type": "string"}}}, '{"\\u006eame": 5}', False),  # name must be a string
    ({"type": "object", "properties": {"name": {"type": "string"}}}, '{"\\u006eame": "x"}', False),  # (a sound restriction)
    ({"type": "object", "properties": {"name": {"type": "string"}}}, '{"na\\u006de": 5}', False),
    ({"type": "object", "properties": {"name": {"type": "string"}}}, '{"\\u00e9": 5}', True),
    ({"type": "object", "properties": {"name": {"type": "string"}}}, '{"x\\u0070": 2}', True),  # "xp": another key
    ({"type": "object", "properties": {"name": {"type": "string"}}}, '{"\\n": 1}', True),
]


@pytest.mark.parametrize("key_order", ["any", "schema"])
@pytest.mark.parametrize("schema, text, accepted", CASES)
def test_an_escape_spells_only_what_may_come(schema, text, accepted, key_order):
    if key_order == "schema" and "properties" in schema:
        pytest.skip("schema order needs additionalProperties: false, where no other key may come")
    checker = SchemaChecker(schema, key_order, "lesson")
    stack = checker.feed(checker.start(), text)
    assert (stack is not None and checker.can_end(stack)) == accepted
    if accepted:
        assert SchemaReferee(schema)(text)
