"""minProperties counts distinct keys (the referee reads a repeated key once), so the checker remembers free keys
whole while the count is short, and forgets them once it is reached (else every key text is a state of its own:
a cold mask would make one per prefix of the vocabulary)."""

import pytest

from structbench.bench.referees import SchemaReferee
from structbench.jsonschema.checker import SchemaChecker

SCHEMA = {"type": "object", "minProperties": 2}


@pytest.mark.parametrize("text,accepted", [
    ('{"a": 1, "b": 2}', True),
    ('{"a": 1, "a": 2}', False),            # one distinct key: short of minProperties
    ('{"a": 1, "b": 2, "b": 3}', True),     # the count is reached: a repeat changes nothing the referee sees
    ('{"a": 1}', False),
])
def test_repeats_while_counting(text, accepted):
    checker = SchemaChecker(SCHEMA, "any", "lesson")
    state = checker.feed(checker.start(), text)
    assert (state is not None and checker.can_end(state)) == accepted
    if accepted:
        assert SchemaReferee(SCHEMA)(text)  # never more than the referee accepts


def test_keys_are_forgotten_once_counted():
    """After two keys, a third key's text makes no state of its own: every key spelled ends in one stack."""
    checker = SchemaChecker(SCHEMA, "any", "lesson")
    base = checker.feed(checker.start(), '{"a": 1, "b": 2, "')
    stacks = {checker.feed(base, name) for name in ("x", "yy", "zebra", "q" * 40)}
    assert len(stacks) == 1
    counting = checker.feed(checker.start(), '{"')
    assert len({checker.feed(counting, name) for name in ("x", "yy", "zebra")}) == 3  # still counting: remembered
