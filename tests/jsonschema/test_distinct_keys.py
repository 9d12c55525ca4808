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


@pytest.mark.parametrize("schema", [{"type": "object", "minProperties": 1},
                                    {"type": "object", "minProperties": 1, "additionalProperties": False,
                                     "patternProperties": {"^[a-z0-9_]+$": {}}}])
def test_the_only_key_still_counted_is_not_remembered_when_nothing_can_repeat_it(schema):
    """minProperties 1: the first key can repeat no earlier one, and no later key is counted: its text makes no
    state of its own (a real corpus schema made one per vocabulary prefix, seconds per mask), and a repeat after
    it is accepted as by the referee."""
    checker = SchemaChecker(schema, "any", "lesson")
    first = checker.feed(checker.start(), '{"')
    assert len({checker.feed(first, name) for name in ("x", "yy", "zebra", "q" * 40)}) == 1
    for text, accepted in [('{"a": 1, "a": 2}', True), ('{"a_1": 1, "b": 2}', True), ("{}", False)]:
        state = checker.feed(checker.start(), text)
        assert (state is not None and checker.can_end(state)) == accepted == SchemaReferee(schema)(text)


def test_a_key_is_remembered_while_a_later_one_is_counted_or_an_earlier_one_may_equal_it():
    """minProperties 3: the first two keys are remembered (the next ones are compared with them), the third too
    (it is compared with them), and a repeat among them is refused, as the referee counts it once."""
    checker = SchemaChecker({"type": "object", "minProperties": 3}, "any", "lesson")
    for prefix in ('{"', '{"a": 1, "', '{"a": 1, "b": 2, "'):
        base = checker.feed(checker.start(), prefix)
        assert len({checker.feed(base, name) for name in ("x", "yy", "zebra")}) == 3, prefix
    for text, accepted in [('{"a": 1, "b": 2, "c": 3}', True), ('{"a": 1, "b": 2, "a": 3}', False),
                           ('{"a": 1, "b": 2, "c": 3, "a": 4}', True)]:
        state = checker.feed(checker.start(), text)
        assert (state is not None and checker.can_end(state)) == accepted == SchemaReferee(
            {"type": "object", "minProperties": 3})(text)


def test_the_last_key_counted_after_property_names_alone_is_not_remembered():
    """minProperties 2 after a named property: the next key can repeat no free key, and no later key is counted;
    a free key repeated while counting is still refused."""
    schema = {"type": "object", "minProperties": 2, "properties": {"msg": {"type": "string"}}}
    checker = SchemaChecker(schema, "any", "lesson")
    after_msg = checker.feed(checker.start(), '{"msg": "x", "')
    assert len({checker.feed(after_msg, name) for name in ("y", "zz", "zebra")}) == 1
    for text, accepted in [('{"msg": "x", "a": 1}', True), ('{"a": 1, "a": 2}', False), ('{"a": 1, "msg": "x"}', True),
                           ('{"msg": "x", "msg": "y"}', False)]:
        state = checker.feed(checker.start(), text)
        assert (state is not None and checker.can_end(state)) == accepted == SchemaReferee(schema)(text), text


@pytest.mark.parametrize("min_props", [1, 2])
def test_a_minimum_the_required_keys_imply_counts_no_key(min_props):
    """minProperties at most the required keys' number is implied by them (the object closes only once they are
    in): no key is counted or remembered, so a free key's text makes no state of its own from the first key on (a
    corpus schema, a oneOf of 12 open objects under minProperties 2 and two required keys, spent its whole walk
    limit stepping one state per token prefix), and answers are judged as by the referee."""
    schema = {"type": "object", "minProperties": min_props, "required": ["msg", "argument"],
              "properties": {"msg": {"type": "string"}}}
    checker = SchemaChecker(schema, "any", "lesson")
    assert checker.nodes[checker.root].min_props == 0
    first = checker.feed(checker.start(), '{"')
    assert len({checker.feed(first, name) for name in ("x", "yy", "zebra", "q" * 40)}) == 1
    for text in ('{"msg": "x", "argument": 1}', '{"x": 1, "x": 2, "msg": "", "argument": 0}', '{"msg": "x"}',
                 '{"x": 1, "msg": "x"}', '{"x": 1, "y": 2, "argument": 0}', "{}"):
        state = checker.feed(checker.start(), text)
        assert (state is not None and checker.can_end(state)) == SchemaReferee(schema)(text), text
    # One more than the required keys is counted still: a free key is remembered whole while the count is short
    checker = SchemaChecker({**schema, "minProperties": 3}, "any", "lesson")
    first = checker.feed(checker.start(), '{"')
    assert len({checker.feed(first, name) for name in ("x", "yy", "zebra")}) == 3
