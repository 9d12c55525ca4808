"""Referees: the judges of validity. Never the project's own checker.

Schema tasks are judged by `jsonschema` (Draft 2020-12) on the parsed answer;
pattern tasks by Python's `re.fullmatch` with ASCII semantics (the semantics
the pattern compiler implements, and JSON Schema's ECMA-262 `\\d` and `\\w`).
"""

from __future__ import annotations

import json
import re

import jsonschema


def _reject_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def parse_json(text: str):
    """Strict JSON: Python's json module, minus NaN / Infinity; raises ValueError."""
    return json.loads(text, parse_constant=_reject_constant)


class SchemaReferee:
    def __init__(self, schema):
        try:
            jsonschema.Draft202012Validator.check_schema(schema)
        except jsonschema.SchemaError as e:
            raise ValueError(f"not a valid Draft 2020-12 schema: {e.message}") from None
        self.validator = jsonschema.Draft202012Validator(schema)

    def __call__(self, text: str) -> bool:
        try:
            value = parse_json(text)
        except ValueError:
            return False
        return self.validator.is_valid(value)


class PatternReferee:
    def __init__(self, pattern: str):
        self.regex = re.compile(pattern, re.ASCII)

    def __call__(self, text: str) -> bool:
        return self.regex.fullmatch(text) is not None


CATEGORIES = ("valid", "chatter", "broken", "cut_off")


def categorize(text: str, finished: bool, valid: bool, opening: str) -> str:
    """The lesson's sorting of answers, checked in its order: valid (finished and accepted by
    the referee), chatter (does not start where an answer starts, e.g. "Sure"), cut_off (ran
    out of token budget), broken (finished, with a wrong character somewhere inside)."""
    if valid and finished:
        return "valid"
    if not text.startswith(opening):
        return "chatter"
    if not finished:
        return "cut_off"
    return "broken"
