"""The compiled form of a (sub)schema, and the JSON value helpers the compiler reads enums and consts with.

A :class:`Node` says what its value may be as an object, an array, a string (a trimmed DFA over the
decoded characters), a number (a trimmed DFA over the number's text), or one of the words true / false /
null; or it is a *union* of alternative nodes (anyOf, oneOf, enum of containers), which the checker runs
side by side. Nodes refer to one another by index into the compiler's list, so recursive schemas make a
cyclic graph.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from structbench.jsonschema.keywords import ALL_TYPES
from structbench.regular import DFA, exact_decimal


@dataclass(eq=False)
class Node:
    """One compiled (sub)schema."""

    types: frozenset = ALL_TYPES
    # objects
    properties: tuple = ()  # (name, node id) in schema order: the child for that exact key
    required: frozenset = frozenset()
    additional: int | None = None  # node id for other keys; None: no other key allowed
    patterns: tuple = ()  # (DFA, node id) of patternProperties
    combos: dict = field(default_factory=dict)  # frozenset of matched pattern indices -> node id (keys matching several)
    key_dfa: DFA | None = None  # propertyNames, as a DFA over the key's characters
    min_props: int = 0
    max_props: int | None = None
    # arrays
    prefix: tuple = ()  # node ids of prefixItems
    items: int | None = None  # node id for items after the prefix; None: no more items
    min_items: int = 0
    max_items: int | None = None
    # strings: None is any string
    string_dfa: DFA | None = None
    string_literals: frozenset | None = None  # the exact set of strings, when finite and known
    # numbers
    number_dfa: DFA | None = None
    # literals: which of the words true / false / null
    words: frozenset = frozenset({"true", "false", "null"})
    # What exclusivity proofs may read (see exclusivity.declared): the types the schema states, before any
    # narrowing; a node the compiler narrowed as a whole (oneOf told apart by absent keys) proves nothing.
    stated_types: frozenset | None = None
    narrowed: bool = False
    additional_dropped: bool = False  # additionalProperties no compiled value satisfies, set to None
    # a union: the value satisfies one of these nodes (the other fields are unused)
    alts: tuple = ()
    # filled in after compiling: the kinds of value this node admits that can be finished
    kinds: frozenset = frozenset()

    @property
    def strict(self) -> bool:
        return self.additional is None

    def child_for_key(self, key: str, matched: frozenset) -> int | None:
        """The node of the value after `key` (`matched`: the patternProperties it matches)."""
        for name, node in self.properties:
            if name == key:
                return node
        if matched:
            return self.combos.get(matched)
        return self.additional

    def child_of_required(self, key: str) -> int | None:
        """The node a required key's value must satisfy (patterns aside), or None if the key may not appear."""
        return self.child_for_key(key, frozenset())

    @property
    def tracks_keys(self) -> bool:
        return bool(self.properties) or bool(self.required)

    @property
    def counts_keys(self) -> bool:
        return self.min_props > 0 or self.max_props is not None

    @property
    def distinct_keys(self) -> bool:
        """Keys must be remembered whole: a repeated key counts once for the referee (named properties
        are remembered anyway; other keys come from additionalProperties or patternProperties)."""
        return self.min_props > 0 and (not self.strict or bool(self.patterns))


# --- JSON values -----------------------------------------------------------------------------------------


def is_type(value, t: str) -> bool:
    """Is the JSON value of JSON Schema type `t` (a whole float is an integer; a boolean is no number)?"""
    if t == "null":
        return value is None
    if t == "boolean":
        return isinstance(value, bool)
    if t == "string":
        return isinstance(value, str)
    if t == "object":
        return isinstance(value, dict)
    if t == "array":
        return isinstance(value, list)
    if isinstance(value, bool):
        return False
    if t == "number":
        return isinstance(value, (int, float))
    if t == "integer":
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    return False


def json_equal(a, b) -> bool:
    """JSON equality: 1 == 1.0, but true is neither 1 nor 1.0."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def json_key(value):
    """A hashable key equal for JSON-equal values (as json_equal: 1 and 1.0 alike, true apart from 1)."""
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, (int, float)):
        return ("number", value)  # 1 == 1.0 and hash(1) == hash(1.0)
    if isinstance(value, dict):
        return ("object", frozenset((k, json_key(v)) for k, v in value.items()))
    if isinstance(value, list):
        return ("array", tuple(json_key(v) for v in value))
    return (type(value).__name__, value)


def lone_surrogate(text: str) -> bool:
    """Does `text` hold a surrogate code point on its own? JSON text can spell one (\\ud83d), the checker never
    writes one (a surrogate escape must pair), so a name or literal holding one cannot be written."""
    return any(0xD800 <= ord(c) <= 0xDFFF for c in text)


def unique_values(values) -> list:
    """The values without repeats (by JSON equality), first occurrence kept; by hashing, not pairwise (an enum
    of thousands of objects)."""
    out, seen = [], set()
    for v in values:
        key = json_key(v)
        if key not in seen:
            seen.add(key)
            out.append(v)
    return out


def number_spellings(value) -> list[str]:
    """Texts of a number that equal it (as the referee compares: 1 == 1.0)."""
    out = [json.dumps(value)]
    if isinstance(value, float):
        # The plain decimal too (1e-07 is 0.0000001): every number language holds the plain spelling,
        # which exclusivity proofs rely on; a whole float also as an integer.
        out.append(str(int(value)) if value.is_integer() else format(exact_decimal(value), "f"))
    if isinstance(value, int) and abs(value) <= 2**53:  # above, "N.0" reads back as another float
        out.append(f"{value}.0")
    return list(dict.fromkeys(out))


def const_schema(value):
    """A schema whose only instance is `value` (JSON equality), built from the keywords compiled here."""
    if isinstance(value, dict):
        return {"type": "object", "properties": {k: const_schema(v) for k, v in value.items()},
                "required": list(value), "additionalProperties": False}
    if isinstance(value, list):
        return {"type": "array", "prefixItems": [const_schema(v) for v in value], "items": False,
                "minItems": len(value)}
    return {"enum": [value]}
