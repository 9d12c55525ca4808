"""JSON Schema (Draft 2020-12) -> the checker's nodes.

Each (sub)schema becomes a :class:`Node`: what its value may be as an object, an array, a string (a
trimmed DFA over the decoded characters), a number (a trimmed DFA over the number's text), or one of
the words true / false / null; or a *union* of alternative nodes (anyOf, oneOf, enum of containers),
which the checker runs side by side. `$ref` (local: `#`, `#/$defs/...`, `#/definitions/...`, any JSON
pointer into the document) makes the node graph cyclic where the schema is recursive. `allOf` is
merged into one schema; keywords beside `anyOf` / `oneOf` are distributed into each branch.

A keyword is either enforced or the schema is refused with :class:`UnsupportedSchema` naming it and
its path; keywords outside the 2020-12 vocabulary are annotations (as for the referee, jsonschema),
except the older drafts' assertions, which are refused: their meaning depends on the draft.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from structbench.regular.automata import (
    FORMAT_PATTERNS,
    TooComplex,
    accepts_at_least,
    any_string,
    as_int,
    ceil_int,
    floor_int,
    format_dfa,
    integer_regex,
    intersect_all,
    is_empty,
    literal_dfa,
    multiple_of_dfa,
    search_dfa,
    trim,
)
from structbench.regular.number_ranges import decimal_at_least, decimal_at_most, decimal_multiple_regex, exact_decimal
from structbench.regular.patterns import DFA, PatternError, compile_pattern

MULTIPLES = "only whole numbers up to limits.max_multiple_of and powers of ten below one (0.1, 0.01, ...)"

ALL_TYPES = frozenset({"object", "array", "string", "number", "integer", "boolean", "null"})
KINDS = ("object", "array", "string", "number", "true", "false", "null")

# The JSON Schema 2020-12 vocabulary, every keyword.
ANNOTATION_KEYWORDS = frozenset({
    "title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly", "$comment",
    "$schema", "$id", "$vocabulary", "contentEncoding", "contentMediaType", "contentSchema",
})
ENFORCED_KEYWORDS = frozenset({
    "type", "enum", "const", "properties", "required", "additionalProperties", "patternProperties",
    "propertyNames", "minProperties", "maxProperties", "items", "prefixItems", "minItems", "maxItems",
    "minLength", "maxLength", "pattern", "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
    "multipleOf", "allOf", "anyOf", "oneOf", "not", "$ref", "$defs", "uniqueItems", "$anchor", "$dynamicAnchor",
    "dependentRequired", "dependentSchemas",
})
# Refused wherever they appear (some only in some forms: see _Compiler).
UNSUPPORTED_KEYWORDS = frozenset({
    "if", "then", "else", "contains", "minContains", "maxContains", "unevaluatedItems", "unevaluatedProperties", "$dynamicRef",
})
VOCABULARY_2020_12 = ANNOTATION_KEYWORDS | ENFORCED_KEYWORDS | UNSUPPORTED_KEYWORDS
# Assertions of earlier drafts that 2020-12 (and so the referee) does not know: refused, not guessed.
LEGACY_ASSERTIONS = frozenset({"divisibleBy", "extends", "disallow"})
# Drafts 4-7's `dependencies`, which 2020-12 split into dependentRequired (a list) and dependentSchemas (a
# schema): read as those two, by the checker and by the referee (see referees.py).
LEGACY_DEPENDENCIES = "dependencies"

# The formats the referee asserts (jsonschema's FormatChecker for exactly these; see referees.py), and
# those of them the checker enforces, as patterns. Any other format is an annotation for both.
from structbench.bench.referees import REFEREE_FORMATS  # noqa: E402
from structbench.errors import InvalidSchema, NotExclusive, UnsupportedSchema
from structbench.limits import current as limits

CHECKED_FORMATS = tuple(FORMAT_PATTERNS)



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
    # What exclusivity proofs may read (see _Compiler.declared): the types the schema states, before any
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

    def property_node(self, key: str) -> int | None:
        for name, node in self.properties:
            if name == key:
                return node
        return self.additional

    def child_for_key(self, key: str, matched: frozenset) -> int | None:
        for name, node in self.properties:
            if name == key:
                return node
        if matched:
            return self.combos.get(matched)
        return self.additional

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


def _is_type(value, t: str) -> bool:
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


class _Compiler:
    def __init__(self, root, numbers: str = "json", oneof_by_absence: dict | None = None):
        self.root_schema = root
        self.numbers = numbers
        # oneOf path -> the branch pairs not proved exclusive, told apart by exclusive_by_absence
        self.oneof_by_absence = oneof_by_absence or {}
        self.nodes: list[Node] = []
        self.memo: dict[str, int] = {}
        self.any_id: int | None = None
        self.never_id: int | None = None
        self.ref_chain: list[str] = []
        self.depth = 0
        self.pending_exclusive: list = []  # (alternatives, path) that must be mutually exclusive (oneOf)

    # --- nodes -----------------------------------------------------------------------------------

    def add(self, node: Node) -> int:
        if len(self.nodes) >= limits().max_schema_nodes:
            raise UnsupportedSchema("size", "#", f"more than {limits().max_schema_nodes} subschemas after expansion "
                                    "(limits.max_schema_nodes)")
        self.nodes.append(node)
        return len(self.nodes) - 1

    def any_value(self) -> int:
        if self.any_id is None:
            self.any_id = self.add(Node())
            node = self.nodes[self.any_id]
            node.additional = node.items = self.any_id
            node.number_dfa = self._number_dfa(ALL_TYPES, {}, "#")
        return self.any_id

    def never(self) -> int:
        if self.never_id is None:
            self.never_id = self.add(Node(types=frozenset(), words=frozenset()))
        return self.never_id

    # --- references -----------------------------------------------------------------------------

    def resolve(self, ref, path: str):
        if not isinstance(ref, str):
            raise InvalidSchema(f"$ref must be a string at {path}")
        if not ref.startswith("#"):
            raise UnsupportedSchema("$ref", path, f"only references within the document (#...) are supported, not {ref!r}")
        pointer = ref[1:]
        if pointer and not pointer.startswith("/"):
            raise UnsupportedSchema("$ref", path, f"anchor references ({ref!r}) are not supported")
        target = self.root_schema
        from urllib.parse import unquote

        for part in pointer.split("/")[1:] if pointer else []:
            part = unquote(part).replace("~1", "/").replace("~0", "~")
            if isinstance(target, dict) and part in target:
                target = target[part]
            elif isinstance(target, list) and part.isdigit() and int(part) < len(target):
                target = target[int(part)]
            else:
                raise InvalidSchema(f"$ref {ref!r} at {path} points at nothing")
        return target

    # --- schemas ---------------------------------------------------------------------------------

    def compile(self, schema, path: str) -> int:
        if schema is True:
            return self.any_value()
        if schema is False:
            return self.never()
        if not isinstance(schema, dict):
            raise InvalidSchema(f"a schema must be an object or a boolean, got {type(schema).__name__} at {path}")
        self._check_keywords(schema, path)
        schema = _split_dependencies(schema, path)
        live = {k: v for k, v in schema.items() if k not in ANNOTATION_KEYWORDS and k not in ("$defs", "definitions")
                and (k in VOCABULARY_2020_12 or k.startswith("__"))}
        live.pop("$anchor", None)
        live.pop("$dynamicAnchor", None)
        if not live:
            return self.any_value()
        if set(live) == {"$ref"}:
            ref = live["$ref"]
            if ref in self.ref_chain:
                raise InvalidSchema(f"$ref {ref!r} at {path} refers to itself without any keyword in between")
            key = "ref:" + ref
            if key in self.memo:
                return self.memo[key]
            self.ref_chain.append(ref)
            try:
                target = self.resolve(ref, path)
                node = self.compile(target, ref)
            finally:
                self.ref_chain.pop()
            self.memo[key] = node
            return node
        key = json.dumps(live, sort_keys=True, default=str)
        if key in self.memo:
            return self.memo[key]
        self.depth += 1
        if self.depth > limits().max_ref_depth:
            raise UnsupportedSchema("$ref", path, "recursion through allOf / anyOf without an end")
        try:
            if "dependentRequired" in live or "dependentSchemas" in live:
                live = _dependencies_as_all_of(live, path)
            if isinstance(live.get("not"), dict) and _positive_of_not(live["not"]) is not None:
                live = {**{k: v for k, v in live.items() if k != "not"},
                        "allOf": list(live.get("allOf", [])) + [_positive_of_not(live["not"])]}
            if "$ref" in live or "allOf" in live:
                merged = self._flatten(live, path)
                node = self.compile(merged, path)
                self.memo[key] = node
                return node
            node_id = self.add(Node())
            self.ref_chain, saved = [], self.ref_chain
            self.memo[key] = node_id
            try:
                self._fill(node_id, live, path)
            finally:
                self.ref_chain = saved
            return node_id
        finally:
            self.depth -= 1

    def _check_keywords(self, schema: dict, path: str):
        for k in schema:
            if k in UNSUPPORTED_KEYWORDS:
                raise UnsupportedSchema(k, path)
            if k in LEGACY_ASSERTIONS:
                raise UnsupportedSchema(k, path, "an assertion of an earlier draft, unknown to Draft 2020-12")
            if (k == "$id" and path != "#" and isinstance(schema[k], str) and not schema[k].startswith("#")
                    and _mentions_ref(schema)):  # a new base matters only to the references under it
                raise UnsupportedSchema("$id", path, "a nested $id changes where references resolve")

    def _flatten(self, schema: dict, path: str) -> dict:
        """allOf and $ref beside other keywords: one merged schema."""
        parts = []
        rest = dict(schema)
        if "$ref" in rest:
            ref = rest.pop("$ref")
            parts.append(self._deref(ref, path))
        for i, sub in enumerate(rest.pop("allOf", []) if isinstance(schema.get("allOf", []), list) else _bad(path, "allOf")):
            if isinstance(sub, dict) and "$ref" in sub:
                sub = dict(sub)
                ref = sub.pop("$ref")
                parts.append(self._deref(ref, f"{path}/allOf/{i}"))
            parts.append(sub)
        out = rest
        for part in parts:
            out = merge(out, part, f"{path}/allOf")
        return out

    def _deref(self, ref, path: str):
        seen = set()
        target = {"$ref": ref}
        while isinstance(target, dict) and set(target) - ANNOTATION_KEYWORDS - {"$defs", "definitions"} == {"$ref"}:
            ref = target["$ref"]
            if ref in seen:
                raise InvalidSchema(f"$ref {ref!r} at {path} refers to itself")
            seen.add(ref)
            target = self.resolve(ref, path)
        if isinstance(target, dict) and "$ref" in target:
            # Its keywords are read here, not by compile(): declare what compile() would, and keep the
            # older drafts' dependencies (as dependentRequired / dependentSchemas).
            self._check_keywords(target, path)
            target = _split_dependencies(target, path)
            target = self._flatten({k: v for k, v in target.items() if k in VOCABULARY_2020_12}, path)
        return target

    @staticmethod
    def exclusive_by_absence(branches: list, rest: dict, path: str, pairs: dict) -> list:
        """oneOf [B1..Bn] as anyOf branches that each hold exactly one Bi. `pairs` maps the branch pairs not
        proved exclusive to the kinds of value left unproved. Branch i keeps Bi, minus those kinds (other
        than objects, and unless Bi names them in its own `type`: then the schema is unsupported) for each
        such Bj; objects are told apart from Bj by one key Bj requires, left out
        (so Bj fails), one anyOf branch per choice of those keys; with no such key, objects go too.
        Sound for any branches; exact when the branches differ only by their required keys (the corpus's
        `oneOf: [{required: [radius]}, {required: [length, width]}]`, where non-objects satisfy both)."""
        import itertools

        def required(schema) -> set:
            req = schema.get("required") if isinstance(schema, dict) else None
            return set(req) if isinstance(req, list) else set()

        types_of = {"object": {"object"}, "array": {"array"}, "string": {"string"}, "number": {"number", "integer"},
                    "true": {"boolean"}, "false": {"boolean"}, "null": {"null"}}
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
            gone = {t for k in dropped for t in types_of[k]}
            own = branch.get("type") if isinstance(branch, dict) else None
            own = {own} if isinstance(own, str) else set(own) if isinstance(own, list) else set()
            if own & gone:  # a type the branch names overlaps another branch: not ours to drop
                raise UnsupportedSchema("oneOf", path, f"branch {i} overlaps another as {sorted(own & gone)[0]}")
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

    def _fill(self, node_id: int, s: dict, path: str):
        node = self.nodes[node_id]
        # Distribute over the branching keywords: the other keywords go into each branch.
        for word in ("anyOf", "oneOf"):
            if word in s:
                branches = s[word]
                if not isinstance(branches, list) or not branches:
                    raise InvalidSchema(f"{word} must be a non-empty array at {path}/{word}")
                if len(branches) > limits().max_branches:
                    raise UnsupportedSchema(word, path, f"more than {limits().max_branches} branches (limits.max_branches)")
                rest = {k: v for k, v in s.items() if k != word}
                if word == "oneOf" and path in self.oneof_by_absence:
                    branches = self.exclusive_by_absence(branches, rest, path, self.oneof_by_absence[path])
                    word, node.narrowed = "anyOf", True
                alts = tuple(self.compile(merge(rest, b, f"{path}/{word}/{i}") if rest else b, f"{path}/{word}/{i}")
                             for i, b in enumerate(branches))
                node.alts = alts
                node.types = frozenset().union(*(self.nodes[a].types for a in alts))
                if word == "oneOf":
                    self.pending_exclusive.append((alts, path))
                return
        if "not" in s:
            sub = s["not"]
            if sub is True or sub == {}:
                node.types, node.words = frozenset(), frozenset()
                return
            if sub is False:
                s = {k: v for k, v in s.items() if k != "not"}
            else:
                raise UnsupportedSchema("not", path, "only not: {}, not: false, not: {type: ...} and "
                                        "not: {required: [...]}")
        if "enum" in s or "const" in s:
            values = []
            if "enum" in s:
                if not isinstance(s["enum"], list):
                    raise InvalidSchema(f"enum must be an array at {path}/enum")
                values = list(s["enum"])
            if "const" in s:
                values = [v for v in (values if "enum" in s else [s["const"]]) if _json_equal(v, s["const"])]
            types = _types(s, path)
            values = [v for v in values if any(_is_type(v, t) for t in types)]
            containers = [v for v in values if isinstance(v, (dict, list))]
            if containers:
                rest = {k: v for k, v in s.items() if k not in ("enum", "const")}
                scalars = [v for v in values if not isinstance(v, (dict, list))]
                branches = [const_schema(v) for v in _unique(containers)] + ([{"enum": scalars}] if scalars else [])
                if len(branches) > limits().max_branches:
                    raise UnsupportedSchema("enum", path, f"more than {limits().max_branches} object or array values")
                node.alts = tuple(self.compile(merge(rest, b, path), f"{path}/enum") for b in branches)
                node.types = frozenset().union(*(self.nodes[a].types for a in node.alts))
                self.pending_exclusive.append((node.alts, path))  # distinct values: exclusive
                return
            self._fill_plain(node, s, path, enum=values)
            return
        self._fill_plain(node, s, path, enum=None)

    def _fill_plain(self, node: Node, s: dict, path: str, enum):
        types = _types(s, path)
        if enum is not None:
            present = set()
            for v in enum:
                for t in types:
                    if _is_type(v, t):
                        present.add(t)
            types = frozenset(present)
        node.stated_types = types
        words = set()
        if "boolean" in types:
            words |= {"true", "false"} if enum is None else {json.dumps(v) for v in enum if isinstance(v, bool)}
        if "null" in types:
            words.add("null")
        node.words = frozenset(words)
        # strings
        if "string" in types:
            node.string_dfa, node.string_literals = self._string(s, path, [v for v in enum if isinstance(v, str)]
                                                                 if enum is not None else None)
            if node.string_dfa is False:
                types = types - {"string"}
                node.string_dfa = None
        # numbers
        if types & {"number", "integer"}:
            nums = [v for v in enum if isinstance(v, (int, float)) and not isinstance(v, bool)] if enum is not None else None
            dfa = self._number_dfa(types, s, path, nums)
            if dfa is None:
                types = types - {"number", "integer"}
            node.number_dfa = dfa
        # objects
        if "object" in types:
            self._object(node, s, path)
        else:
            node.additional = None
        # arrays
        if "array" in types:
            self._array(node, s, path)
        node.types = types

    # --- strings ---------------------------------------------------------------------------------

    def _string(self, s: dict, path: str, literals):
        dfas, exact = [], literals
        if literals is not None:
            dfas.append(literal_dfa(sorted(set(literals))))
        lo, hi = s.get("minLength", 0), s.get("maxLength")
        for word, v in (("minLength", lo), ("maxLength", hi)):
            if v is not None and (as_int(v) is None or v < 0):
                raise InvalidSchema(f"{word} must be a non-negative integer at {path}/{word}")
        if hi is not None and hi > limits().max_string_length >= lo:
            # Longer than any answer a model writes: held at the cap, a stricter language (declared in
            # the README), never a looser one.
            hi = limits().max_string_length
        if lo or hi is not None:
            try:
                dfas.append(any_string(int(lo), None if hi is None else int(hi)))
            except TooComplex as e:
                raise UnsupportedSchema("maxLength" if hi is not None else "minLength", path, str(e)) from None
        patterns = ([s["pattern"]] if "pattern" in s else []) + list(s.get("__patterns__", []))
        for p in patterns:
            if not isinstance(p, str):
                raise InvalidSchema(f"pattern must be a string at {path}/pattern")
            try:
                dfas.append(search_dfa(p))
            except PatternError as e:
                raise UnsupportedSchema("pattern", path, str(e)) from None
            except TooComplex as e:
                raise UnsupportedSchema("pattern", path, str(e)) from None
        fmt = s.get("format")
        if fmt is not None:
            if fmt in CHECKED_FORMATS:
                dfas.append(format_dfa(fmt))
            elif fmt in REFEREE_FORMATS:
                raise UnsupportedSchema("format", path, f"format {fmt!r} (asserted by the referee) has no pattern here")
        if not dfas:
            return None, None
        try:
            dfa = intersect_all(dfas)
        except TooComplex as e:
            raise UnsupportedSchema("pattern", path, str(e)) from None
        if dfa is None:
            return False, None
        if exact is not None:
            kept = frozenset(t for t in exact if dfa.accepts(t))
            # A literal a pattern or format refused may still be valid (the DFA can be narrower than the
            # keyword): then the set is not the exact one, and no exclusivity proof may rest on it.
            exact = kept if len(kept) == len(set(exact)) or not (patterns or fmt) else None
        return dfa, exact

    # --- numbers ---------------------------------------------------------------------------------

    def _number_dfa(self, types: frozenset, s: dict, path: str, literals=None):
        integer_only = "number" not in types
        bounds = [(w, s[w]) for w in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum") if w in s]
        for w, v in bounds:
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise InvalidSchema(f"{w} must be a number at {path}/{w}")
        multiple = s.get("multipleOf")
        if multiple is not None and (isinstance(multiple, bool) or not isinstance(multiple, (int, float))
                                     or multiple <= 0):
            raise InvalidSchema(f"multipleOf must be a number > 0 at {path}/multipleOf")
        if integer_only or (multiple is not None and as_int(multiple) is not None):
            # Integers (a whole multipleOf makes a number one: 4.0 is written 4, a restriction).
            integer_only = True
            lo = hi = None
            for w, v in bounds:
                if w == "minimum":
                    b = ceil_int(v)
                elif w == "exclusiveMinimum":
                    b = floor_int(v) + 1
                elif w == "maximum":
                    b = floor_int(v)
                else:
                    b = ceil_int(v) - 1
                if w in ("minimum", "exclusiveMinimum"):
                    lo = b if lo is None else max(lo, b)
                else:
                    hi = b if hi is None else min(hi, b)
            try:
                regexes = [integer_regex(lo, hi) if bounds else r"-?(?:0|[1-9][0-9]*)"]
            except TooComplex as e:
                raise UnsupportedSchema(bounds[0][0], path, str(e)) from None
        elif bounds or multiple is not None:
            # Bounded or decimal-multiple numbers are written in plain decimal (no exponent): see
            # number_ranges. Each bound is one language; the intersection below takes them all.
            regexes = [r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?"]
            try:
                for w, v in bounds:
                    side = decimal_at_least if w.endswith("inimum") else decimal_at_most
                    regexes.append(side(v, exclusive=w.startswith("exclusive")))
            except TooComplex as e:
                raise UnsupportedSchema(bounds[0][0], path, str(e)) from None
            if multiple is not None:
                regex = decimal_multiple_regex(multiple)
                if regex is None:
                    raise UnsupportedSchema("multipleOf", path, f"multipleOf {multiple!r}: {MULTIPLES}")
                regexes.append(regex)
        elif self.numbers == "lesson":
            regexes = [r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?"]
        else:
            regexes = [r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"]
        if any(r is None for r in regexes):
            return None
        dfas = [compile_pattern(r) for r in regexes]
        if integer_only and multiple is not None:
            k = as_int(multiple)
            if k is None:  # an integer and a fractional multipleOf: every integer when 1/m is whole (0.5)
                if (1 / exact_decimal(multiple)) % 1 != 0:
                    raise UnsupportedSchema("multipleOf", path, f"multipleOf {multiple!r} on an integer")
                k = 1
            if k > limits().max_multiple_of:
                raise UnsupportedSchema("multipleOf", path, f"multipleOf {multiple!r}: {MULTIPLES}")
            if k > 1:
                dfas.append(multiple_of_dfa(k))
        if literals is not None:
            dfas.append(literal_dfa(sorted({t for v in literals for t in number_spellings(v)})))
        return intersect_all(dfas) if len(dfas) > 1 else trim(dfas[0])

    # --- objects ---------------------------------------------------------------------------------

    def _object(self, node: Node, s: dict, path: str):
        props = s.get("properties", {})
        if not isinstance(props, dict):
            raise InvalidSchema(f"properties must be an object at {path}/properties")
        required = s.get("required", [])
        if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
            raise InvalidSchema(f"required must be an array of strings at {path}/required")
        pattern_props = s.get("patternProperties", {})
        if not isinstance(pattern_props, dict):
            raise InvalidSchema(f"patternProperties must be an object at {path}/patternProperties")
        if len(pattern_props) > limits().max_pattern_properties:
            raise UnsupportedSchema("patternProperties", path, f"more than {limits().max_pattern_properties} patterns")
        pats = []
        for p in pattern_props:
            try:
                pats.append(search_dfa(p))
            except (PatternError, TooComplex) as e:
                raise UnsupportedSchema("patternProperties", path, str(e)) from None
        extra = s.get("additionalProperties", True)
        names = list(props) + [r for r in required if r not in props]
        # \d \w \s are read safely (ASCII-only matches), narrower than Python's Unicode classes: a key
        # such a pattern is said not to match would wrongly fall through to additionalProperties (or a
        # non-ASCII property name miss the pattern's schema). Sound only when neither can happen.
        if any(_CLASS_ESCAPE.search(p) for p in pattern_props) and (
                extra is not False or any(not name.isascii() for name in names)):
            raise UnsupportedSchema("patternProperties", path, "\\d, \\w or \\s in a pattern, beside "
                                    "additionalProperties or non-ASCII property names")
        named = []
        for name in names:
            parts = [props[name]] if name in props else []
            parts += [sub for dfa, sub in zip(pats, pattern_props.values()) if dfa.accepts(name)]
            if not parts:
                parts = [extra]
            sub = parts[0] if len(parts) == 1 else {"allOf": parts}
            named.append((name, self.compile(sub, f"{path}/properties/{name}")))
        node.properties = tuple(named)
        node.required = frozenset(required)
        node.additional = None if extra is False else self.compile(extra, f"{path}/additionalProperties")
        subs = list(pattern_props.values())
        node.patterns = tuple((dfa, self.compile(sub, f"{path}/patternProperties/{p}"))
                              for dfa, sub, p in zip(pats, subs, pattern_props))
        for mask in range(1, 1 << len(pats)):
            chosen = frozenset(i for i in range(len(pats)) if mask >> i & 1)
            parts = [subs[i] for i in sorted(chosen)]
            node.combos[chosen] = node.patterns[min(chosen)][1] if len(parts) == 1 else \
                self.compile({"allOf": parts}, f"{path}/patternProperties")
        if "propertyNames" in s:
            pn = self.compile(s["propertyNames"], f"{path}/propertyNames")
            pnode = self.nodes[pn]
            if pnode.alts:
                raise UnsupportedSchema("propertyNames", path, "only string keywords (pattern, length, enum, format)")
            if "string" not in pnode.types:
                node.key_dfa = DFA([[]], set())
            else:
                node.key_dfa = pnode.string_dfa
            if node.key_dfa is not None and pats:
                raise UnsupportedSchema("propertyNames", path, "together with patternProperties")
        for w in ("minProperties", "maxProperties"):
            if w in s and (as_int(s[w]) is None or s[w] < 0):
                raise InvalidSchema(f"{w} must be a non-negative integer at {path}/{w}")
        node.min_props = int(s.get("minProperties", 0))
        node.max_props = None if "maxProperties" not in s else int(s["maxProperties"])

    # --- arrays ----------------------------------------------------------------------------------

    def _array(self, node: Node, s: dict, path: str):
        prefix = s.get("prefixItems", [])
        if not isinstance(prefix, list):
            raise InvalidSchema(f"prefixItems must be an array at {path}/prefixItems")
        node.prefix = tuple(self.compile(sub, f"{path}/prefixItems/{i}") for i, sub in enumerate(prefix))
        items = s.get("items", True)
        if isinstance(items, list):
            raise InvalidSchema(f"items must be a schema at {path}/items (Draft 2020-12; the array form is prefixItems)")
        node.items = None if items is False else self.compile(items, f"{path}/items")
        for w in ("minItems", "maxItems"):
            if w in s and (as_int(s[w]) is None or s[w] < 0):
                raise InvalidSchema(f"{w} must be a non-negative integer at {path}/{w}")
        node.min_items = int(s.get("minItems", 0))
        node.max_items = None if "maxItems" not in s else int(s["maxItems"])
        cap = limits().max_items
        if node.max_items is not None and node.max_items > cap or node.min_items > cap:
            raise UnsupportedSchema("maxItems" if node.max_items else "minItems", path, f"item counts above {cap}")
        if s.get("uniqueItems") is True and not (node.max_items is not None and node.max_items <= 1):
            raise UnsupportedSchema("uniqueItems", path)


    # --- after compiling: what can be finished, and oneOf's exclusivity ------------------------------

    def finish(self, root: int) -> None:
        nodes = self.nodes
        kinds = [frozenset() for _ in nodes]
        changed = True
        while changed:
            changed = False
            for i, n in enumerate(nodes):
                k = self._kinds(n, kinds)
                if k != kinds[i]:
                    kinds[i] = k
                    changed = True
        for i, n in enumerate(nodes):
            n.kinds = kinds[i]
        for n in nodes:
            if "object" in n.kinds and not n.alts:
                self._check_object(n)
        for alts, path in self.pending_exclusive:
            pairs = {(x, y): self.overlap(alts[x], alts[y]) for x in range(len(alts)) for y in range(x + 1, len(alts))}
            pairs = {pair: kinds for pair, kinds in pairs.items() if kinds}
            if pairs:
                x, y = min(pairs)
                raise NotExclusive("oneOf", path, f"branches {x} and {y} are not provably exclusive", pairs)
        if not nodes[root].kinds:
            raise InvalidSchema("no JSON value satisfies the schema")

    def _child_of_required(self, n: Node, key: str) -> int | None:
        for name, c in n.properties:
            if name == key:
                return c
        return n.additional

    def _kinds(self, n: Node, kinds) -> frozenset:
        if n.alts:
            return frozenset().union(*(kinds[a] for a in n.alts))
        out = set(n.words)
        if "string" in n.types:
            out.add("string")
        if n.types & {"number", "integer"} and n.number_dfa is not None:
            out.add("number")
        if "object" in n.types and self._object_ok(n, kinds):
            out.add("object")
        if "array" in n.types and self._array_ok(n, kinds):
            out.add("array")
        return frozenset(out)

    def _object_ok(self, n: Node, kinds) -> bool:
        if n.max_props is not None and (len(n.required) > n.max_props or n.min_props > n.max_props):
            return False
        for r in n.required:
            c = self._child_of_required(n, r)
            if c is None or not kinds[c] or (n.key_dfa is not None and not n.key_dfa.accepts(r)):
                return False
        if n.min_props and not self._enough_keys(n, lambda i: kinds[i]):
            return False
        return True

    @staticmethod
    def _enough_keys(n: Node, kinds) -> bool:
        """Can an object of this node reach minProperties distinct keys? Named properties count one each;
        additionalProperties (without patterns) adds without end, a pattern as many keys as it matches."""
        names = sum(1 for name, c in n.properties if kinds(c) and (n.key_dfa is None or n.key_dfa.accepts(name)))
        if names >= n.min_props:
            return True
        enough = n.min_props + len(n.properties)  # other keys beside the named ones (each may be a name)
        others = n.additional is not None and kinds(n.additional)
        if n.key_dfa is not None:  # propertyNames (never with patterns): other keys are what it accepts
            return bool(others) and accepts_at_least(n.key_dfa, enough)
        if any(kinds(c) and accepts_at_least(dfa, enough) for dfa, c in n.patterns):
            return True
        # additionalProperties: keys no pattern matches. Enough short ones exist unless the patterns cover
        # nearly everything; look for them.
        return bool(others) and sum(1 for k in _probe_keys(enough) if not any(d.accepts(k) for d, _ in n.patterns)) >= enough

    def _array_ok(self, n: Node, kinds) -> bool:
        if n.max_items is not None and n.min_items > n.max_items:
            return False
        for i in range(n.min_items):
            c = n.prefix[i] if i < len(n.prefix) else n.items
            if c is None or not kinds[c]:
                return False
        return True

    def _check_object(self, n: Node) -> None:
        """Forms whose completability the checker cannot promise are refused (rare in real schemas)."""
        kinds = lambda i: self.nodes[i].kinds  # noqa: E731
        if n.min_props and not self._enough_keys(n, kinds):
            raise UnsupportedSchema("minProperties", "#", "more keys than the named properties, with "
                                        "patternProperties or propertyNames")
        if n.key_dfa is not None and any(not kinds(c) for _, c in n.properties):
            raise UnsupportedSchema("propertyNames", "#", "with a property no value satisfies")
        for chosen, c in n.combos.items():
            if not kinds(c):
                dfas = [n.patterns[i][0] for i in sorted(chosen)]
                if intersect_all(dfas) is not None:
                    raise UnsupportedSchema("patternProperties", "#", "a pattern whose schema no value satisfies")
        if n.additional is not None and not kinds(n.additional):
            n.additional, n.additional_dropped = None, True

    def declared(self, i: int) -> frozenset:
        """The kinds of value the node's schema may allow, as stated (a superset of what the checker
        accepts, which narrowing may have cut): what exclusivity proofs start from."""
        n = self.nodes[i]
        if n.narrowed:
            return frozenset(KINDS)
        if n.alts:
            return frozenset().union(*(self.declared(a) for a in n.alts))
        types = n.stated_types if n.stated_types is not None else n.types
        out = set(n.words)
        out |= {"string"} if "string" in types else set()
        out |= {"number"} if types & {"number", "integer"} else set()
        out |= {k for k in ("object", "array") if k in types}
        return frozenset(out)

    def exclusive(self, a: int, b: int, depth: int = 0) -> bool:
        """No value satisfies both nodes (a sufficient test)."""
        return not self.overlap(a, b, depth)

    def overlap(self, a: int, b: int, depth: int = 0) -> frozenset:
        """The kinds of value for which no proof says the two nodes are exclusive: by string values,
        number languages, item counts and object keys; empty when no value satisfies both."""
        if depth > limits().max_proof_depth or self.nodes[a].narrowed or self.nodes[b].narrowed:
            return self.declared(a) & self.declared(b)
        na, nb = self.nodes[a], self.nodes[b]
        if na.alts:
            return frozenset().union(*(self.overlap(x, b, depth + 1) for x in na.alts))
        if nb.alts:
            return frozenset().union(*(self.overlap(a, y, depth + 1) for y in nb.alts))
        out = set()
        for kind in self.declared(a) & self.declared(b):
            if kind == "string":
                # Exact string sets only: a string DFA may be narrower than its keywords (\w read safely,
                # formats as stricter patterns), so DFAs apart would not prove the values apart.
                la, lb = na.string_literals, nb.string_literals
                proved = la is not None and lb is not None and not la & lb
            elif kind == "number":
                # Every number DFA holds each allowed value's plain spelling (integer form when whole):
                # spellings apart are values apart.
                proved = _disjoint(na.number_dfa, nb.number_dfa)
            elif kind == "array":  # item counts that cannot agree
                proved = max(na.min_items, nb.min_items) > min(
                    x for x in (na.max_items, nb.max_items, 10**9) if x is not None)
            elif kind == "object":
                proved = self._objects_exclusive(na, nb, depth)
            else:
                proved = False
            if not proved:
                out.add(kind)
        return frozenset(out)

    def _objects_exclusive(self, na: Node, nb: Node, depth: int) -> bool:
        if na.patterns or nb.patterns:
            return False
        for r in na.required & nb.required:
            ca, cb = self._child_of_required(na, r), self._child_of_required(nb, r)
            if ca is not None and cb is not None and self.exclusive(ca, cb, depth + 1):
                return True
        for x, y in ((na, nb), (nb, na)):
            if x.strict and not x.additional_dropped and any(self._child_of_required(x, r) is None for r in y.required):
                return True
        return False


_MISSING = object()
OBJECT_KEYWORDS = frozenset({"properties", "required", "additionalProperties", "patternProperties", "propertyNames",
                             "minProperties", "maxProperties", "dependentRequired", "dependentSchemas",
                             "dependencies"})
_CLASS_ESCAPE = re.compile(r"(?<!\\)(?:\\\\)*\\[dDwWsS]")  # an unescaped \d \D \w \W \s \S


def _probe_keys(n: int):
    """Some distinct short keys (letters, then letter pairs), enough to find n outside a few patterns."""
    letters = [chr(c) for c in range(ord("a"), ord("z") + 1)] + [chr(c) for c in range(ord("A"), ord("Z") + 1)]
    yield from letters
    yield from (a + b for a in letters for b in letters)
    yield from (f"k{i}" for i in range(n + 1))


def _disjoint(a: DFA | None, b: DFA | None) -> bool:
    """No text both DFAs accept (None is every text): a proof, so any doubt answers False."""
    if a is None or b is None:
        return False
    try:
        return is_empty(a, b)
    except TooComplex:
        return False


def _split_dependencies(schema: dict, path: str) -> dict:
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


def _dependencies_as_all_of(schema: dict, path: str) -> dict:
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


def _positive_of_not(sub: dict) -> dict | None:
    """`not` of two common forms as a schema without `not` (None for any other form, which _fill refuses):
    not {type: T} is the other types (T holding "integer" without "number" is not expressible: None);
    not {required: [k1, k2..]} is an object without k1, or without k2, ..."""
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


def _mentions_ref(schema) -> bool:
    """Is there a $ref anywhere inside this schema?"""
    if isinstance(schema, dict):
        return "$ref" in schema or any(_mentions_ref(v) for v in schema.values())
    if isinstance(schema, list):
        return any(_mentions_ref(v) for v in schema)
    return False


def _bad(path, word):
    raise InvalidSchema(f"{word} must be an array at {path}/{word}")


def _types(s: dict, path: str) -> frozenset:
    t = s.get("type")
    if t is None:
        return ALL_TYPES
    names = t if isinstance(t, list) else [t]
    for name in names:
        if name not in ALL_TYPES:
            raise InvalidSchema(f"unknown type {name!r} at {path}/type")
    return frozenset(names)


def _json_equal(a, b) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def _unique(values):
    out = []
    for v in values:
        if not any(_json_equal(v, u) for u in out):
            out.append(v)
    return out


# --- allOf: merging two schemas into one ---------------------------------------------------------


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
    a = {k: v for k, v in a.items() if k not in ANNOTATION_KEYWORDS and k not in ("$defs", "definitions")}
    b = {k: v for k, v in b.items() if k not in ANNOTATION_KEYWORDS and k not in ("$defs", "definitions")}
    out = dict(a)
    for k, vb in b.items():
        if k not in out:
            out[k] = vb
            continue
        va = out[k]
        if _json_equal(va, vb):
            continue
        if k == "type":
            ta = set(va if isinstance(va, list) else [va])
            tb = set(vb if isinstance(vb, list) else [vb])
            both = (ta & tb) | ({"integer"} if ("integer" in ta and "number" in tb) or ("number" in ta and "integer" in tb) else set())
            out[k] = sorted(both)
        elif k == "required":
            out[k] = list(dict.fromkeys(list(va) + list(vb)))
        elif k in ("minimum", "minLength", "minItems", "minProperties", "exclusiveMinimum"):
            out[k] = max(va, vb)
        elif k in ("maximum", "maxLength", "maxItems", "maxProperties", "exclusiveMaximum"):
            out[k] = min(va, vb)
        elif k == "enum":
            out[k] = [v for v in va if any(_json_equal(v, w) for w in vb)]
        elif k == "const":
            out["enum"] = [va] if _json_equal(va, vb) else []
            out.pop("const")
        elif k == "pattern":
            out["__patterns__"] = list(out.get("__patterns__", [])) + [vb]
        elif k in ("allOf",):
            out[k] = list(va) + list(vb)
        elif k in ("anyOf", "oneOf"):
            # allOf [anyOf A, anyOf B] = anyOf of the pairs
            if len(va) * len(vb) > limits().max_branches or k == "oneOf":
                raise UnsupportedSchema(k, path, f"two {k} to combine in allOf")
            out[k] = [{"allOf": [x, y]} for x in va for y in vb]
        elif k in ("items", "prefixItems"):
            continue  # below: position by position
        elif k in ("properties", "patternProperties"):
            continue  # below, with additionalProperties
        elif k == "additionalProperties":
            continue
        elif k == "multipleOf" and as_int(va) and as_int(vb):
            import math

            out[k] = as_int(va) * as_int(vb) // math.gcd(as_int(va), as_int(vb))
        else:
            raise UnsupportedSchema("allOf", path, f"{k!r} differs between the schemas it combines")
    if any(k in a or k in b for k in ("items", "prefixItems")):
        # Each side sees index i through its own prefixItems, else its own items.
        pa, pb = a.get("prefixItems", []), b.get("prefixItems", [])
        ia, ib = a.get("items", True), b.get("items", True)
        both = lambda x, y: y if x is True else x if y is True else {"allOf": [x, y]}  # noqa: E731
        n = max(len(pa), len(pb))
        if n:
            out["prefixItems"] = [both(pa[i] if i < len(pa) else ia, pb[i] if i < len(pb) else ib) for i in range(n)]
        items = both(ia, ib)
        if items is True:
            out.pop("items", None)
        else:
            out["items"] = items
    if "enum" in out and "const" in out:
        const = out.pop("const")  # enum and const together: the enum's values equal to the const
        out["enum"] = [v for v in out["enum"] if _json_equal(v, const)]
    # Objects: a key's schema is its own schema (or the other keys' one) on both sides.
    if any(k in a or k in b for k in ("properties", "additionalProperties", "patternProperties")):
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
            props[name] = sa if sb is True else sb if sa is True else {"allOf": [sa, sb]}
        if props:
            out["properties"] = props
        extra = xa if xb is True else xb if xa is True else False if (xa is False or xb is False) else {"allOf": [xa, xb]}
        if extra is not True:
            out["additionalProperties"] = extra
        else:
            out.pop("additionalProperties", None)
        if a.get("patternProperties") or b.get("patternProperties"):
            out["patternProperties"] = a.get("patternProperties") or b.get("patternProperties")
    return out


def _pattern_match(schema: dict, name: str) -> bool:
    import re

    return any(re.search(p, name) for p in schema.get("patternProperties", {}))
