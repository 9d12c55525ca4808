"""Referees: the judges of validity. Never the project's own checker.

Schema tasks are judged by `jsonschema` (Draft 2020-12) on the parsed answer (with `multipleOf` in
exact decimal arithmetic, not jsonschema's float division, and drafts 4-7's `dependencies` asserted as
2020-12's dependentRequired / dependentSchemas, which it became), with `format` asserted
for a fixed list of formats (REFEREE_FORMATS: jsonschema only asserts `format` given a FormatChecker,
and which formats that checks depends on the packages installed, so the list is pinned; the packages
for date-time, time and uri are dependencies). Any other format is an annotation;
pattern tasks by Python's `re.fullmatch` with ASCII semantics (the semantics
the pattern compiler implements, and JSON Schema's ECMA-262 `\\d` and `\\w`).

Judging one answer runs under ``Limits.referee_seconds`` (structbench.bench.time_limit): Python's `re`
backtracks, and `^(a+)+$` against n a's and a '!' doubles in time per a (0.56 s at 24: about 20 hours at
41). Past the limit the referee raises :class:`RefereeTimeout`; :func:`judge` reads that as None, an
unjudged answer, which :func:`categorize` files as its own category (UNJUDGED), never as invalid.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal
from fractions import Fraction

import jsonschema

from structbench.bench.time_limit import time_limit
from structbench.errors import InvalidSchema, RefereeTimeout
from structbench.jsonschema.keywords import REFEREE_FORMATS
from structbench.limits import current as limits


def _reject_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def parse_json(text: str):
    """Strict JSON: Python's json module, minus NaN / Infinity; raises ValueError."""
    return json.loads(text, parse_constant=_reject_constant)


def format_checker() -> jsonschema.FormatChecker:
    known = jsonschema.Draft202012Validator.FORMAT_CHECKER.checkers
    missing = [f for f in REFEREE_FORMATS if f not in known]
    if missing:
        raise RuntimeError(f"the referee cannot check format(s) {missing}: install rfc3339-validator, "
                           f"rfc3986-validator and idna (dependencies of structbench)")
    # The 2020-12 validator's own checkers: FormatChecker's class-wide registry holds the last draft to register
    # a name, and for "time" that is draft 3's %H:%M:%S (which calls RFC 3339's "08:30:06Z" invalid).
    checker = jsonschema.FormatChecker(formats=())
    checker.checkers = {name: known[name] for name in REFEREE_FORMATS}
    return checker


def _exact_multiple_of(validator, divisor, instance, schema):
    """multipleOf in exact decimal arithmetic. jsonschema divides floats (0.07 / 0.01 = 7.000000000000001,
    "not a multiple"); JSON Schema means the numbers as written, so both are read back as the decimals
    their shortest repr spells."""
    if not validator.is_type(instance, "number"):
        return
    value = Fraction(instance) if isinstance(instance, int) else Fraction(Decimal(repr(instance)))
    step = Fraction(divisor) if isinstance(divisor, int) else Fraction(Decimal(repr(divisor)))
    if (value / step).denominator != 1:
        yield jsonschema.ValidationError(f"{instance!r} is not a multiple of {divisor}")


def _legacy_dependencies(validator, dependencies, instance, schema):
    """Drafts 4-7's `dependencies` (2020-12 split it into dependentRequired and dependentSchemas, and
    jsonschema's 2020-12 validator ignores it): a listed key's required keys, or its schema."""
    if not validator.is_type(instance, "object"):
        return
    for key, dependency in dependencies.items():
        if key not in instance:
            continue
        if validator.is_type(dependency, "array"):
            for each in dependency:
                if each not in instance:
                    yield jsonschema.ValidationError(f"{each!r} is a dependency of {key!r}")
        else:
            yield from validator.descend(instance, dependency, schema_path=key)


Draft202012Referee = jsonschema.validators.extend(jsonschema.Draft202012Validator,
                                                  {"multipleOf": _exact_multiple_of,
                                                   "dependencies": _legacy_dependencies})


_CHECKED: dict[str, str | None] = {}  # a schema's canonical JSON -> the meta-schema's complaint, or None


def _check_schema(schema) -> None:
    """The schema against the 2020-12 meta-schema, once per process per schema: a file task's reference check
    and its trial each build a referee, and a 55,000-property schema takes seconds to check."""
    try:
        key = json.dumps(schema, sort_keys=True)
    except (TypeError, ValueError):  # not plain JSON (or past Python's int -> str limit): checked every time
        key = None
    if key is None or key not in _CHECKED:
        try:
            jsonschema.Draft202012Validator.check_schema(schema)
            problem = None
        except jsonschema.SchemaError as e:
            problem = e.message
        if key is not None:
            if len(_CHECKED) >= 16:
                _CHECKED.clear()
            _CHECKED[key] = problem
    else:
        problem = _CHECKED[key]
    if problem is not None:
        raise InvalidSchema(f"not a valid Draft 2020-12 schema: {problem}")


class SchemaReferee:
    def __init__(self, schema):
        _check_schema(schema)
        self.validator = Draft202012Referee(schema, format_checker=format_checker())

    def __call__(self, text: str) -> bool:
        """Whether `text` is a JSON document the schema accepts; RefereeTimeout past limits.referee_seconds."""
        with _judging(text):
            try:
                value = parse_json(text)
            except ValueError:
                return False
            return self.validator.is_valid(value)


class PatternReferee:
    def __init__(self, pattern: str):
        self.regex = re.compile(pattern, re.ASCII)

    def __call__(self, text: str) -> bool:
        """Whether the pattern matches all of `text`; RefereeTimeout past limits.referee_seconds."""
        with _judging(text):
            return self.regex.fullmatch(text) is not None


def _judging(text: str):
    seconds = limits().referee_seconds
    return time_limit(seconds, lambda: RefereeTimeout(
        f"the referee took more than {seconds} s to judge a {len(text)}-character answer "
        f"(limits.referee_seconds; a backtracking pattern?)"))


def judge(referee, text: str) -> bool | None:
    """The referee's verdict on `text`, or None when it ran out of time (an unjudged answer)."""
    try:
        return referee(text)
    except RefereeTimeout:
        return None


CATEGORIES = ("valid", "chatter", "broken", "cut_off")
UNJUDGED = "referee_timeout"  # a finished answer the referee could not judge within limits.referee_seconds


def categorize(text: str, finished: bool, valid: bool | None, opening: str) -> str:
    """The lesson's sorting of answers, checked in its order: valid (finished and accepted by
    the referee), chatter (does not start where an answer starts, e.g. "Sure"), cut_off (ran
    out of token budget), broken (finished, with a wrong character somewhere inside). `valid` None
    (the referee timed out): a finished answer is UNJUDGED; an unfinished one is never valid, so it
    is sorted as before."""
    if valid and finished:
        return "valid"
    if valid is None and finished:
        return UNJUDGED
    if not text.startswith(opening):
        return "chatter"
    if not finished:
        return "cut_off"
    return "broken"
