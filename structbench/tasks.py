"""Tasks: what the model is asked to write, the shape it must fit, and the referee that judges it."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from .patterns import compile_pattern
from .referees import PatternReferee, SchemaReferee

AGE_PATTERN = r'\{"age": [0-9]+\}'
AGE_REFERENCE = '{"age": 42}'

PERSON_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "age": {"type": "integer"},
        "pets": {"type": "array", "items": {"type": "string", "enum": ["cat", "dog"]}},
    },
    "required": ["name", "age"],
    # Strict: constrained decoding must know every key it may spell.
    "additionalProperties": False,
}
PERSON_REFERENCE = '{"name": "Ada", "age": 36, "pets": ["cat"]}'
NO_AGE_REFERENCE = '{"name": "Ada"}'  # a model that "forgot" the required age

NULLABLE_AGE_SCHEMA = {
    "type": "object",
    "properties": {"age": {"type": ["integer", "null"]}},  # "we don't know" is a valid answer
    "required": ["age"],
    "additionalProperties": False,
}

ENUM_PATTERN = "cat|car|dog"


@dataclass
class Task:
    """kind is "pattern" (spec is a pattern string) or "schema" (spec is a JSON Schema).
    An answer that does not begin with `opening` is counted as chatter."""

    name: str
    kind: str
    spec: object
    reference: str
    opening: str = "{"
    schema_depth: int = 0
    extra: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.kind not in ("pattern", "schema"):
            raise ValueError(f"task {self.name!r}: kind must be 'pattern' or 'schema', got {self.kind!r}")

    def referee(self):
        return PatternReferee(self.spec) if self.kind == "pattern" else SchemaReferee(self.spec)

    def machine(self):
        """The automaton the naive and tabled strategies run: a DFA or a pushdown checker."""
        from .constraints import PatternMachine
        from .schema import SchemaChecker

        return PatternMachine(compile_pattern(self.spec)) if self.kind == "pattern" else SchemaChecker(self.spec)


def age_task() -> Task:
    return Task("age", "pattern", AGE_PATTERN, AGE_REFERENCE)


def person_task() -> Task:
    return Task("person", "schema", copy.deepcopy(PERSON_SCHEMA), PERSON_REFERENCE, schema_depth=1)


def json_mode_task() -> Task:
    """Schema {} (any JSON value) with the model that leaves out the age: the lesson's section 6."""
    return Task("json_mode", "schema", {}, NO_AGE_REFERENCE)


def strict_no_age_task() -> Task:
    """The strict person schema with the model that leaves out the age: it must invent one."""
    return Task("strict_no_age", "schema", copy.deepcopy(PERSON_SCHEMA), NO_AGE_REFERENCE, schema_depth=1)
