"""The referee checks formats as Draft 2020-12 does: RFC 3339 times (an offset required), not draft 3's %H:%M:%S."""

import jsonschema
import pytest

from structbench.bench.referees import SchemaReferee
from structbench.jsonschema.keywords import REFEREE_FORMATS


@pytest.mark.parametrize("text, valid", [('"08:30:06Z"', True), ('"08:30:06.283185Z"', True), ('"12:00:00-17:12"', True),
                                         ('"08:30:06"', False), ('"25:00:00Z"', False)])
def test_time_is_rfc_3339(text, valid):
    assert SchemaReferee({"type": "string", "format": "time"})(text) is valid


def test_every_format_is_judged_by_the_2020_12_validators_own_checker():
    own = jsonschema.Draft202012Validator.FORMAT_CHECKER.checkers
    checkers = SchemaReferee({"format": "time"}).validator.format_checker.checkers
    assert set(checkers) == set(REFEREE_FORMATS)
    assert all(checkers[name] == own[name] for name in REFEREE_FORMATS)


def test_a_schema_is_checked_against_the_meta_schema_once_per_process(monkeypatch):
    calls = []
    original = jsonschema.Draft202012Validator.check_schema
    monkeypatch.setattr(jsonschema.Draft202012Validator, "check_schema",
                        classmethod(lambda cls, schema: (calls.append(1), original(schema))[1]))
    schema = {"type": "object", "properties": {"once": {"type": "integer"}}, "title": "checked once per process"}
    SchemaReferee(schema)
    SchemaReferee(dict(schema))  # equal, not the same object: the cache is by content
    assert len(calls) == 1
    with pytest.raises(Exception, match="not a valid Draft 2020-12 schema"):
        SchemaReferee({"type": "no such type", "title": "refused twice"})
    with pytest.raises(Exception, match="not a valid Draft 2020-12 schema"):
        SchemaReferee({"type": "no such type", "title": "refused twice"})  # the refusal is remembered too
    assert len(calls) == 2
