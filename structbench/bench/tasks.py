"""Tasks: what the model is asked to write, the shape it must fit, and the referee that judges it."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from structbench.bench.files import parse_json_text, read_text_file
from structbench.bench.referees import PatternReferee, SchemaReferee
from structbench.limits import current as limits
from structbench.regular import compile_pattern

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
    walk_answer: str | None = None  # the valid answer the speed experiment walks; the reference if None
    checker_options: dict = field(default_factory=dict)  # e.g. the lesson's numbers for the lesson's JSON mode

    def __post_init__(self):
        if self.kind not in ("pattern", "schema"):
            raise ValueError(f"task {self.name!r}: kind must be 'pattern' or 'schema', got {self.kind!r}")

    def referee(self):
        return PatternReferee(self.spec) if self.kind == "pattern" else SchemaReferee(self.spec)

    def machine(self, key_order: str = "any", whitespace: str = "lesson"):
        """The automaton the naive and tabled strategies run: a DFA or a pushdown checker."""
        from structbench.jsonschema.checker import SchemaChecker
        from structbench.masking import PatternMachine

        if self.kind == "pattern":
            return PatternMachine(compile_pattern(self.spec))
        return SchemaChecker(self.spec, key_order, whitespace, **self.checker_options)


def age_task() -> Task:
    return Task("age", "pattern", AGE_PATTERN, AGE_REFERENCE)


def person_task() -> Task:
    return Task("person", "schema", copy.deepcopy(PERSON_SCHEMA), PERSON_REFERENCE, schema_depth=1)


JSON_MODE_WALK = ('{"name": "Ada", "age": 36, "pets": ["cat", "dog"], "address": {"city": "Paris", "zip": null}, '
                  '"scores": [1, 2.5, -3], "verified": true}')


def json_mode_task() -> Task:
    """Schema {} (any JSON value) with the model that leaves out the age: the lesson's section 6."""
    # The lesson's JSON mode reads numbers as the lesson's checker did (no exponent), so its masks are the lesson's.
    return Task("json_mode", "schema", {}, NO_AGE_REFERENCE, walk_answer=JSON_MODE_WALK,
                checker_options={"numbers": "lesson"})


def strict_no_age_task() -> Task:
    """The strict person schema with the model that leaves out the age: it must invent one."""
    return Task("strict_no_age", "schema", copy.deepcopy(PERSON_SCHEMA), NO_AGE_REFERENCE, schema_depth=1)


NULLABLE_AGE_REFERENCE = '{"age": null}'  # the toy model that says it does not know


def nullable_age_task() -> Task:
    """The lesson's fix for the forced invention: an age that may be null, asked of a text that never states it."""
    return Task("nullable_age", "schema", copy.deepcopy(NULLABLE_AGE_SCHEMA), NULLABLE_AGE_REFERENCE, schema_depth=1)


# Tasks whose facts never state the age: an integer age in an answer is an invented one.
NO_AGE_TASKS = ("strict_no_age", "nullable_age", "json_mode")


def invented_age(text: str) -> bool:
    """Whether an answer is a JSON object with an integer "age" (true or false are not integers)."""
    from structbench.bench.referees import parse_json

    try:
        value = parse_json(text)
    except ValueError:
        return False
    age = value.get("age") if isinstance(value, dict) else None
    return isinstance(age, int) and not isinstance(age, bool)


# The nested family: level 1 is the person schema; each deeper level adds a required "child".
# Names the toy vocabulary can spell (its capitals are A B D E G P S U), so the toy model can copy every depth.
_NESTED_PEOPLE = [("Ada", 36, "cat"), ("Bo", 7, "dog"), ("Dee", 3, "cat"), ("Eve", 20, "dog"), ("Gus", 17, "cat"),
                  ("Pam", 42, "dog"), ("Sue", 5, "cat"), ("Ugo", 9, "dog")]


def nested_schema(depth: int) -> dict:
    """Objects nested `depth` levels deep, each with typed fields and required keys."""
    cap = limits().max_nested_depth
    if isinstance(depth, bool) or not isinstance(depth, int) or not 1 <= depth <= cap:
        raise ValueError(f"schema_depth must be an integer from 1 to {cap} (limits.max_nested_depth), got {depth!r}")
    schema = copy.deepcopy(PERSON_SCHEMA)
    for _ in range(depth - 1):
        outer = copy.deepcopy(PERSON_SCHEMA)
        # "child" before the optional "pets": outlines-core's regex builder allows no space after a comma
        # that precedes an optional property followed by a required one, so this order keeps all engines comparable.
        pets = outer["properties"].pop("pets")
        outer["properties"]["child"] = schema
        outer["properties"]["pets"] = pets
        outer["required"] = ["name", "age", "child"]
        schema = outer
    return schema


def nested_reference(depth: int) -> str:
    """The answer the toy model copies at this depth; depth 1 is the lesson's person answer."""
    nested_schema(depth)  # validates depth
    text = ""
    for level in reversed(range(depth)):
        name, age, pet = _NESTED_PEOPLE[level % len(_NESTED_PEOPLE)]
        child = f'"child": {text}, ' if text else ""
        text = f'{{"name": "{name}", "age": {age}, {child}"pets": ["{pet}"]}}'
    return text


def nested_task(depth: int) -> Task:
    return Task("nested", "schema", nested_schema(depth), nested_reference(depth), schema_depth=depth)


def file_task(path: str, reference: str, kind: str = "schema", opening: str | None = None) -> Task:
    """A schema (JSON file) or pattern (text file) read from disk, with the answer the toy model copies, which must
    be valid under the task's own referee (else every answer the toy model writes is judged against a
    reference nothing accepts: a trial of 100% cut-off or broken answers, with no word of why)."""
    from pathlib import Path

    from structbench.jsonschema.checker import SchemaChecker

    # "???" is how Hydra writes a required value nobody gave (conf/task/file.yaml): missing, not a name.
    if path in ("", "???", None):
        raise ValueError("task=file needs task.path, the schema (JSON) or pattern (text) file to read")
    if reference == "???":
        raise ValueError("task=file needs task.reference, a valid answer the toy model copies; on the command "
                         "line quote it: \"task.reference='{\\\"a\\\": 1}'\"")
    p = Path(path)
    if kind not in ("schema", "pattern"):
        raise ValueError(f"task file kind must be 'schema' or 'pattern', got {kind!r}")
    text = read_text_file(p, "task file")
    try:
        if kind == "schema":
            spec = parse_json_text(text, f"schema file {str(p)!r}")
            SchemaChecker(spec)  # unsupported keywords are declared now, not at the first token
        else:  # a pattern
            spec = text.rstrip("\n")
            compile_pattern(spec)
    except ValueError as e:  # our PatternError, UnsupportedSchema, ... are ValueErrors too
        hint = _kind_hint(p, text, kind)  # read again only on the way out: the file parsed once when all is well
        if not hint:
            raise
        raise ValueError(f"{e}{hint}") from None
    if not isinstance(reference, str):
        raise ValueError("task.reference must be a string; on the command line quote it: task.reference='{\"x\": 1}'")
    if not reference:
        raise ValueError("a file task needs a reference answer for the toy model to copy (task.reference)")
    task = Task(p.stem, kind, spec, reference, opening=opening or reference[0])
    problem = reference_problem(task)
    if problem:
        raise ValueError(f"task.reference {_short(reference)} is not valid under its own {kind} {str(p)!r}: "
                         f"{problem}{_kind_hint(p, text, kind)}")
    return task


# File endings that say "a pattern" or "a schema" (what a user who forgot task.kind most likely meant).
_PATTERN_SUFFIXES = (".txt", ".re", ".regex", ".pattern")


def _kind_hint(path, text: str, kind: str) -> str:
    """A hint to append to an error when the file's name or content says the other kind, else ''."""
    import json

    if kind == "schema":
        try:
            json.loads(text)
            says_pattern = path.suffix.lower() in _PATTERN_SUFFIXES
        except (ValueError, RecursionError):  # not JSON: a pattern, unless it is called a schema and looks like a broken one
            says_pattern = path.suffix.lower() != ".json" or not text.lstrip().startswith(("{", "["))
        return " (did you mean task.kind=pattern?)" if says_pattern else ""
    try:
        says_schema = path.suffix.lower() == ".json" or isinstance(json.loads(text), (dict, bool))
    except (ValueError, RecursionError):
        says_schema = False
    return " (did you mean task.kind=schema?)" if says_schema else ""


def reference_problem(task: Task) -> str | None:
    """Why the task's reference is not valid under its own referee, or None when it is."""
    referee = task.referee()  # a schema the referee cannot read is an error now
    if referee(task.reference):
        return None
    if task.kind == "pattern":
        return "it does not match the pattern (the referee: re.fullmatch, ASCII)"
    from jsonschema.exceptions import best_match

    from structbench.bench.referees import parse_json

    try:
        value = parse_json(task.reference)
    except ValueError as e:
        return f"it is not JSON ({str(e).splitlines()[0]})"
    # The first error only: as much work as the verdict just took (is_valid stops there too), so a pattern
    # that backtracks elsewhere in the schema cannot hang this; best_match picks within its anyOf/oneOf branches.
    first = next(referee.validator.iter_errors(value), None)
    if first is None:  # the referee said no, jsonschema finds nothing: say what the referee said
        return "the referee rejects it"
    error = best_match([first])
    where = "".join(f"[{p!r}]" for p in error.absolute_path)
    return f"{error.message} (at ${where})"


def _short(text: str, keep: int = 60) -> str:
    """A reference as it goes in a one-line message: quoted, and cut if long."""
    return repr(text if len(text) <= keep else text[:keep] + "...")
