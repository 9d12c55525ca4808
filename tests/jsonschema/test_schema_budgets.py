"""Schemas cannot make the compiler hang, overflow or recurse past Python's limit: named errors, quickly."""

from __future__ import annotations

import math

import pytest

from structbench.errors import InvalidSchema, LimitExceeded, UnsupportedSchema
from structbench.jsonschema import SchemaChecker, compile_schema
from structbench.limits import Limits, using


def _nested_objects(depth: int) -> dict:
    schema = {"type": "string"}
    for _ in range(depth):
        schema = {"type": "object", "properties": {"a": schema}, "required": ["a"]}
    return schema


def _walk(checker: SchemaChecker, text: str) -> bool:
    stack = checker.start()
    for ch in text:
        stack = checker.step(stack, ch)
        if stack is None:
            return False
    return checker.can_end(stack)


def test_nesting_is_capped_by_max_nesting_not_by_a_recursion_error():
    # 63 objects nest 127 JSON levels (an object and its properties each count): the deepest the default allows.
    checker = SchemaChecker(_nested_objects(63))
    assert _walk(checker, '{"a": ' * 63 + '"x"' + "}" * 63)
    for depth in (64, 5000):
        with pytest.raises(LimitExceeded, match=r"the schema nests objects and arrays more than 128 deep "
                                                r"\(limits.max_nesting = 128; raise it with \+limits.max_nesting=N\)"):
            compile_schema(_nested_objects(depth))


@pytest.mark.parametrize("keyword, value, shown", [("maximum", math.inf, "Infinity"), ("minimum", -math.inf, "-Infinity"),
                                                   ("exclusiveMaximum", math.nan, "NaN"), ("multipleOf", math.inf, "Infinity")])
def test_non_finite_numbers_are_invalid_schemas_named_as_json_would_spell_them(keyword, value, shown):
    for kind in ("integer", "number"):
        with pytest.raises(InvalidSchema, match=rf"{keyword} must be .*{shown}|{keyword} must be a number > 0"):
            compile_schema({"type": kind, keyword: value})


def test_a_nan_multiple_of_is_not_a_positive_number():
    with pytest.raises(InvalidSchema, match="multipleOf must be a number > 0"):
        compile_schema({"type": "number", "multipleOf": math.nan})


def test_an_integer_multiple_of_a_tiny_fraction_is_exact():
    # 1/1e-300 is whole, so every integer is a multiple (Decimal's 28 digits used to raise DivisionImpossible).
    checker = SchemaChecker({"type": "integer", "multipleOf": 1e-300})
    assert _walk(checker, "5") and _walk(checker, "-123")
    with pytest.raises(UnsupportedSchema, match="multipleOf 3e-300 on an integer"):
        compile_schema({"type": "integer", "multipleOf": 3e-300})


def test_a_bound_with_more_digits_than_any_language_is_declared_before_it_is_printed():
    with pytest.raises(UnsupportedSchema, match=r"more than 40 digits \(limits.max_bound_digits"):
        compile_schema({"type": "integer", "maximum": 10**100})
    # Python refuses int -> str past 4,300 digits: such a number is declared where it is, before anything prints it.
    with pytest.raises(UnsupportedSchema, match=r"maximum at #/properties/x/maximum \(a number with more than 4,300 digits"):
        compile_schema({"properties": {"x": {"type": "integer", "maximum": 10**5000}}})
    with using(Limits(max_bound_digits=60)):
        assert _walk(SchemaChecker({"type": "integer", "maximum": 10**50}), "7")


def test_hundreds_of_properties_are_looked_up_not_scanned():
    names = [f"field_{i}" for i in range(1000)]
    checker = SchemaChecker({"type": "object", "properties": {n: {"type": "string"} for n in names},
                             "required": ["field_999"], "additionalProperties": False})
    assert _walk(checker, '{"field_7": "x", "field_999": "y"}')
    assert not _walk(checker, '{"field_7": "x"}')  # the required key is missing
    assert not _walk(checker, '{"field_7": "x", "field_7": "y", "field_999": "z"}')  # a repeated key
    assert not _walk(checker, '{"field_1000": "x", "field_999": "y"}')  # not a property, and strict


def test_reference_chains_and_nesting_through_refs_stop_at_max_ref_depth():
    chain = {"$defs": {f"d{i}": {"$ref": f"#/$defs/d{i + 1}"} for i in range(5000)} | {"d5000": {"type": "integer"}},
             "$ref": "#/$defs/d0"}
    with pytest.raises(UnsupportedSchema, match=r"a chain of more than 100 references.*limits.max_ref_depth"):
        compile_schema(chain)
    nested = {"$defs": {f"d{i}": {"type": "object", "properties": {"x": {"$ref": f"#/$defs/d{i + 1}"}}}
                        for i in range(5000)} | {"d5000": {"type": "integer"}}, "$ref": "#/$defs/d0"}
    with pytest.raises(UnsupportedSchema, match=r"subschemas nested more than 100 deep \(by items, properties, \$ref.*limits.max_ref_depth"):
        compile_schema(nested)
    short = {"$defs": {f"d{i}": {"$ref": f"#/$defs/d{i + 1}"} for i in range(50)} | {"d50": {"type": "integer"}},
             "$ref": "#/$defs/d0"}
    assert _walk(SchemaChecker(short), "42")


def test_arrays_nested_past_max_ref_depth_are_not_blamed_on_a_ref():
    schema = {"type": "string"}
    for _ in range(110):
        schema = {"type": "array", "items": schema}
    with pytest.raises(UnsupportedSchema, match=r"unsupported: \(nesting\) at #/items/items.*more than 100 deep"):
        compile_schema(schema)


def test_an_enum_of_thousands_of_objects_is_declared_at_once():
    # Repeats are found by hashing (they were compared pairwise: 5,000 objects took 20 s before the error).
    with pytest.raises(UnsupportedSchema, match="more than 64 object or array values"):
        compile_schema({"enum": [{"k": i, "v": [i, i + 1]} for i in range(5000)]})
    checker = SchemaChecker({"enum": [{"k": 1}, {"k": 1.0}, ["a"]]})  # {"k": 1} twice: 1 == 1.0
    assert _walk(checker, '{"k": 1}') and _walk(checker, '["a"]') and not _walk(checker, '{"k": 2}')


def test_names_the_checker_keeps_for_its_own_keys_are_declared():
    """The checker reads a key no property name continues as one stand-in text (and a mask twin's fresh key as
    another): a property or required name spelt so would be read as that (found in review, 2026-12-07: a property
    `"\\u0000\\u0001other": false` accepted `{"\\u0000\\u0001other": 1}`). Declared, not read wrongly."""
    for schema, keyword in (({"type": "object", "properties": {"\x00\x01other": False}}, "properties"),
                            ({"type": "object", "required": ["\x00\x02fresh"]}, "required"),
                            ({"dependentRequired": {"a": ["\x00\x01other"]}}, "required")):
        with pytest.raises(UnsupportedSchema, match=rf"unsupported: {keyword} at #.* keeps for keys of its own"):
            compile_schema(schema)
    near = SchemaChecker({"type": "object", "additionalProperties": False,
                          "properties": {"\x00\x01othe": {"type": "integer"}}})  # (a name beside them: as any other)
    assert _walk(near, '{"\\u0000\\u0001othe": 1}') and not _walk(near, '{"\\u0000\\u0001other": 1}')


def test_names_and_literals_the_checker_could_start_but_never_finish_are_declared():
    # A lone surrogate: JSON text can spell it (\ud83d), the checker never writes one; left in, a key or literal
    # would be started and never finished (a dead end, "the mask allows no token at all").
    for schema, keyword in (({"type": "object", "required": ["\ud83d"]}, "required"),
                            ({"type": "object", "properties": {"a\udc00": {}}}, "properties"),
                            ({"const": "\ud83d"}, "const"), ({"enum": ["\ud83dx"]}, "enum")):
        with pytest.raises(UnsupportedSchema, match=rf"unsupported: {keyword} at # .*lone surrogate"):
            compile_schema(schema)
    mixed = SchemaChecker({"enum": ["\ud83dx", "ok", 1]})  # the others remain: a restriction
    assert _walk(mixed, '"ok"') and _walk(mixed, "1") and not _walk(mixed, '"\\ud83dx"')
