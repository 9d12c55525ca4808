"""Pure schema -> schema rewrites: forms the compiler does not read directly, rewritten into forms it does.

Each rewrite is exact (the same instances) unless its docstring says how it restricts, and raises
:class:`UnsupportedSchema` where no rule applies: never a looser schema.

- `dependencies` (drafts 4-7) as dependentRequired / dependentSchemas, and those as allOf of two-way anyOfs;
- `not` of two common forms as a schema without `not`;
- `allOf`: two schemas merged into one (:func:`merge`, one small rule per keyword family);
- `oneOf` whose branches are not provably exclusive, as anyOf branches told apart by absent keys.
"""

from __future__ import annotations

import itertools
import math
import re

from structbench.errors import InvalidSchema, UnsupportedSchema
from structbench.jsonschema.keywords import (
    ALL_TYPES,
    ANNOTATION_KEYWORDS,
    DEFINITIONS,
    LEGACY_DEPENDENCIES,
    OBJECT_KEYWORDS,
)
from structbench.jsonschema.nodes import json_equal
from structbench.limits import current as limits
from structbench.regular import as_int


def declared_types(s: dict, path: str) -> frozenset:
    """The type names `type` allows (all seven when absent); InvalidSchema for an unknown name."""
    t = s.get("type")
    if t is None:
        return ALL_TYPES
    names = t if isinstance(t, list) else [t]
    for name in names:
        if name not in ALL_TYPES:
            raise InvalidSchema(f"unknown type {name!r} at {path}/type")
    return frozenset(names)


# --- dependencies ----------------------------------------------------------------------------------------


def split_dependencies(schema: dict, path: str) -> dict:
    """Drafts 4-7's `dependencies` as 2020-12's dependentRequired (lists) and dependentSchemas (schemas)."""
    if LEGACY_DEPENDENCIES not in schema:
        return schema
    deps = schema[LEGACY_DEPENDENCIES]
    if not isinstance(deps, dict):
        raise InvalidSchema(f"dependencies must be an object at {path}/dependencies")
    out = {k: v for k, v in schema.items() if k != LEGACY_DEPENDENCIES}
    for key, dep in deps.items():
        word = "dependentRequired" if isinstance(dep, list) else "dependentSchemas"
        if key in out.get(word, {}):
            raise UnsupportedSchema("dependencies", path, f"{key!r} also in {word}")
        out[word] = {**out.get(word, {}), key: dep}
    return out


def dependencies_as_all_of(schema: dict, path: str) -> dict:
    """dependentRequired {A: [B, C]} is anyOf [A absent, A and B and C present]; dependentSchemas {A: S} is
    anyOf [A absent, A present and S]: exact rewrites, one allOf entry per key (each a two-way anyOf)."""
    out = {k: v for k, v in schema.items() if k not in ("dependentRequired", "dependentSchemas")}
    extra = []
    for word in ("dependentRequired", "dependentSchemas"):
        deps = schema.get(word, {})
        if not isinstance(deps, dict):
            raise InvalidSchema(f"{word} must be an object at {path}/{word}")
        for key, dep in deps.items():
            if word == "dependentRequired":
                if not isinstance(dep, list) or not all(isinstance(d, str) for d in dep):
                    raise InvalidSchema(f"{word}/{key} must be an array of strings at {path}/{word}")
                present = {"required": [key, *dep]}
            else:
                present = {"required": [key], "allOf": [dep]}
            extra.append({"anyOf": [{"properties": {key: False}}, present]})
    if extra:
        out["allOf"] = list(out.get("allOf", [])) + extra
    return out


# --- not -------------------------------------------------------------------------------------------------


def positive_of_not(sub: dict) -> dict | None:
    """`not` of two common forms as a schema without `not` (None for any other form, which the compiler
    refuses): not {type: T} is the other types (T holding "integer" without "number" is not expressible:
    None); not {required: [k1, k2..]} is an object without k1, or without k2, ..."""
    live = {k: v for k, v in sub.items() if k not in ANNOTATION_KEYWORDS}
    if set(live) == {"type"}:
        t = live["type"]
        named = {t} if isinstance(t, str) else set(t) if isinstance(t, list) else None
        if not named or not named <= ALL_TYPES or ("integer" in named and "number" not in named):
            return None
        return {"type": sorted(ALL_TYPES - named - ({"integer"} if "number" in named else set()))}
    if set(live) == {"required"} and isinstance(live["required"], list) and live["required"] \
            and all(isinstance(k, str) for k in live["required"]):
        return {"anyOf": [{"type": "object", "properties": {k: False}} for k in dict.fromkeys(live["required"])]}
    return None


# --- allOf: merging two schemas into one -----------------------------------------------------------------

_LOWER_BOUNDS = ("minimum", "minLength", "minItems", "minProperties", "exclusiveMinimum")
_UPPER_BOUNDS = ("maximum", "maxLength", "maxItems", "maxProperties", "exclusiveMaximum")
# Keywords merged after the others, together (a position's or a key's schema depends on several of them).
_ARRAY_WORDS = ("items", "prefixItems")
_OBJECT_WORDS = ("properties", "patternProperties", "additionalProperties")


def merge(a, b, path: str):
    """One schema equivalent to allOf [a, b], or UnsupportedSchema where no merge rule applies."""
    if a is True or a == {}:
        return b
    if b is True or b == {}:
        return a
    if a is False or b is False:
        return False
    if not isinstance(a, dict) or not isinstance(b, dict):
        raise InvalidSchema(f"a schema must be an object or a boolean at {path}")
    a, b = _without_annotations(a), _without_annotations(b)
    out = dict(a)
    for k, vb in b.items():
        if k not in out:
            out[k] = vb
        elif not json_equal(out[k], vb) and k not in _ARRAY_WORDS + _OBJECT_WORDS:
            rule = _KEYWORD_RULES.get(k, _differs)
            rule(out, k, out[k], vb, path)
    if any(k in a or k in b for k in _ARRAY_WORDS):
        _merge_items(out, a, b)
    if "enum" in out and "const" in out:
        const = out.pop("const")  # enum and const together: the enum's values equal to the const
        out["enum"] = [v for v in out["enum"] if json_equal(v, const)]
    if any(k in a or k in b for k in _OBJECT_WORDS):
        _merge_properties(out, a, b, path)
    return out


def _without_annotations(schema: dict) -> dict:
    return {k: v for k, v in schema.items() if k not in ANNOTATION_KEYWORDS and k not in DEFINITIONS}


# Each rule sets out[k] (or what replaces it) for a keyword both schemas give with different values.

def _merge_types(out, k, va, vb, path):
    ta = set(va if isinstance(va, list) else [va])
    tb = set(vb if isinstance(vb, list) else [vb])
    # integer is a number: integer on one side and number on the other leaves integer
    both = (ta & tb) | ({"integer"} if ("integer" in ta and "number" in tb) or ("number" in ta and "integer" in tb)
                        else set())
    out[k] = sorted(both)


def _merge_required(out, k, va, vb, path):
    out[k] = list(dict.fromkeys(list(va) + list(vb)))


def _merge_lower_bound(out, k, va, vb, path):
    out[k] = max(va, vb)


def _merge_upper_bound(out, k, va, vb, path):
    out[k] = min(va, vb)


def _merge_enum(out, k, va, vb, path):
    out[k] = [v for v in va if any(json_equal(v, w) for w in vb)]


def _merge_const(out, k, va, vb, path):
    out["enum"] = [va] if json_equal(va, vb) else []
    out.pop("const")


def _merge_pattern(out, k, va, vb, path):
    out["__patterns__"] = list(out.get("__patterns__", [])) + [vb]  # every pattern must match: read by the compiler


def _merge_all_of(out, k, va, vb, path):
    out[k] = list(va) + list(vb)


def _merge_branches(out, k, va, vb, path):
    # allOf [anyOf A, anyOf B] = anyOf of the pairs (not so for oneOf: refused)
    if len(va) * len(vb) > limits().max_branches or k == "oneOf":
        raise UnsupportedSchema(k, path, f"two {k} to combine in allOf")
    out[k] = [{"allOf": [x, y]} for x in va for y in vb]


def _merge_multiple_of(out, k, va, vb, path):
    if not (as_int(va) and as_int(vb)):
        _differs(out, k, va, vb, path)
    out[k] = as_int(va) * as_int(vb) // math.gcd(as_int(va), as_int(vb))


def _differs(out, k, va, vb, path):
    raise UnsupportedSchema("allOf", path, f"{k!r} differs between the schemas it combines")


_KEYWORD_RULES = {
    "type": _merge_types, "required": _merge_required, "enum": _merge_enum, "const": _merge_const,
    "pattern": _merge_pattern, "allOf": _merge_all_of, "anyOf": _merge_branches, "oneOf": _merge_branches,
    "multipleOf": _merge_multiple_of,
    **{k: _merge_lower_bound for k in _LOWER_BOUNDS}, **{k: _merge_upper_bound for k in _UPPER_BOUNDS},
}


def _both(x, y):
    """allOf of two subschemas, without the trivial side."""
    return y if x is True else x if y is True else {"allOf": [x, y]}


def _merge_items(out: dict, a: dict, b: dict) -> None:
    """Each side sees index i through its own prefixItems, else its own items."""
    pa, pb = a.get("prefixItems", []), b.get("prefixItems", [])
    ia, ib = a.get("items", True), b.get("items", True)
    n = max(len(pa), len(pb))
    if n:
        out["prefixItems"] = [_both(pa[i] if i < len(pa) else ia, pb[i] if i < len(pb) else ib) for i in range(n)]
    items = _both(ia, ib)
    if items is True:
        out.pop("items", None)
    else:
        out["items"] = items


def _merge_properties(out: dict, a: dict, b: dict, path: str) -> None:
    """A key's schema is its own schema (or the other keys' one) on both sides."""
    if a.get("patternProperties") and b.get("patternProperties") and a["patternProperties"] != b["patternProperties"]:
        raise UnsupportedSchema("allOf", path, "patternProperties on both sides")
    if (a.get("patternProperties") and (b.get("additionalProperties", True) is not True)) or \
       (b.get("patternProperties") and (a.get("additionalProperties", True) is not True)):
        raise UnsupportedSchema("allOf", path, "patternProperties with additionalProperties on the other side")
    pa, pb = a.get("properties", {}), b.get("properties", {})
    xa, xb = a.get("additionalProperties", True), b.get("additionalProperties", True)
    props = {}
    for name in list(pa) + [n for n in pb if n not in pa]:
        sa = pa.get(name, xa if not _pattern_match(a, name) else True)
        sb = pb.get(name, xb if not _pattern_match(b, name) else True)
        props[name] = _both(sa, sb)
    if props:
        out["properties"] = props
    extra = xa if xb is True else xb if xa is True else False if (xa is False or xb is False) else {"allOf": [xa, xb]}
    if extra is not True:
        out["additionalProperties"] = extra
    else:
        out.pop("additionalProperties", None)
    if a.get("patternProperties") or b.get("patternProperties"):
        out["patternProperties"] = a.get("patternProperties") or b.get("patternProperties")


def _pattern_match(schema: dict, name: str) -> bool:
    return any(re.search(p, name) for p in schema.get("patternProperties", {}))


# --- oneOf: branches told apart by absent keys -----------------------------------------------------------

_MISSING = object()
_TYPES_OF_KIND = {"object": {"object"}, "array": {"array"}, "string": {"string"}, "number": {"number", "integer"},
                  "true": {"boolean"}, "false": {"boolean"}, "null": {"null"}}


def exclusive_by_absence(branches: list, rest: dict, path: str, pairs: dict) -> list:
    """oneOf [B1..Bn] as anyOf branches that each hold exactly one Bi. `pairs` maps the branch pairs not
    proved exclusive to the kinds of value left unproved. Branch i keeps Bi, minus those kinds (other
    than objects, and unless Bi names them in its own `type`: then the schema is unsupported) for each
    such Bj; objects are told apart from Bj by one key Bj requires, left out
    (so Bj fails), one anyOf branch per choice of those keys; with no such key, objects go too.
    Sound for any branches; exact when the branches differ only by their required keys (the corpus's
    `oneOf: [{required: [radius]}, {required: [length, width]}]`, where non-objects satisfy both)."""

    def required(schema) -> set:
        req = schema.get("required") if isinstance(schema, dict) else None
        return set(req) if isinstance(req, list) else set()

    def others(schema) -> dict:  # everything but `required` and annotations
        return {k: v for k, v in schema.items() if k != "required" and k not in ANNOTATION_KEYWORDS} \
            if isinstance(schema, dict) else {"": schema}

    # Exact only when the unproved branches differ by their required keys alone: then Bi and not Bj is
    # Bi with a key of Bj's left out, and a non-object satisfies both or neither. Otherwise: declared.
    # Other kinds are dropped: exact only when the branches differ by object keywords alone (which a
    # non-object satisfies vacuously, so it satisfies both branches or neither).
    for (i, j), kinds in pairs.items():
        a, b = others(branches[i]), others(branches[j])
        differ = {k for k in set(a) | set(b) if a.get(k, _MISSING) != b.get(k, _MISSING)}
        if differ if "object" in kinds else differ - OBJECT_KEYWORDS:
            raise UnsupportedSchema("oneOf", path, f"branches {i} and {j} are not provably exclusive")
    always, reqs, out = required(rest), [required(b) for b in branches], []
    for i, branch in enumerate(branches):
        dropped, choices = set(), []
        for j in range(len(branches)):
            kinds = pairs.get((min(i, j), max(i, j)), frozenset())
            dropped |= kinds - {"object"}
            if "object" in kinds:
                keys = sorted(reqs[j] - reqs[i] - always)
                if keys:
                    choices.append(keys)
                else:
                    dropped.add("object")
        gone = {t for k in dropped for t in _TYPES_OF_KIND[k]}
        own = branch.get("type") if isinstance(branch, dict) else None
        own = {own} if isinstance(own, str) else set(own) if isinstance(own, list) else set()
        if own & gone:  # a type the branch names overlaps another branch: not ours to drop
            raise UnsupportedSchema("oneOf", path, f"branch {i} overlaps another as {min(own & gone)}")
        allowed = sorted(ALL_TYPES - gone)
        if not allowed:
            continue  # never the only branch
        if "object" not in allowed:
            choices = []
        for left_out in itertools.product(*choices):
            apart = {"type": allowed} if len(allowed) < len(ALL_TYPES) else {}
            if left_out:
                apart["properties"] = {k: False for k in set(left_out)}
            out.append({"allOf": [branch, apart]} if apart else branch)
            if len(out) > limits().max_branches:
                raise UnsupportedSchema("oneOf", path, f"more than {limits().max_branches} branches once told apart "
                                        "by absent keys")
    if not out:
        raise UnsupportedSchema("oneOf", path, "branches not provably exclusive, and no required key tells "
                                "them apart")
    return out
