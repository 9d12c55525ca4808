"""JSON Schema (Draft 2020-12) -> the checker's nodes.

Each (sub)schema becomes a :class:`~structbench.jsonschema.nodes.Node`. `$ref` (local: `#`, `#/$defs/...`,
`#/definitions/...`, any JSON pointer into the document; see refs.py) makes the node graph cyclic where
the schema is recursive. `allOf` is merged into one schema (rewrites.merge); keywords beside `anyOf` /
`oneOf` are distributed into each branch.

A keyword is either enforced or the schema is refused with :class:`UnsupportedSchema` naming it and its
path; keywords outside the 2020-12 vocabulary are annotations (as for the referee, jsonschema), except
the older drafts' assertions, which are refused: their meaning depends on the draft (see keywords.py).

The compiler is split by concept: this module walks schemas and dispatches; scalars.py builds string
and number languages; containers.py compiles objects and arrays; completion.py decides what can be
finished; exclusivity.py proves oneOf's branches apart.
"""

from __future__ import annotations

import json
import sys

from structbench.errors import InvalidSchema, NotExclusive, UnsupportedSchema
from structbench.jsonschema.completion import Completion
from structbench.jsonschema.containers import ContainerRules
from structbench.jsonschema.exclusivity import Exclusivity
from structbench.jsonschema.keywords import (
    ALL_TYPES,
    ANNOTATION_KEYWORDS,
    DEFINITIONS,
    LEGACY_ASSERTIONS,
    UNSUPPORTED_KEYWORDS,
    VOCABULARY_2020_12,
)
from structbench.jsonschema.nodes import (
    Node,
    const_schema,
    is_type,
    json_equal,
    unique_values,
)
from structbench.jsonschema.refs import mentions_ref, resolve_ref
from structbench.jsonschema.rewrites import (
    declared_types,
    dependencies_as_all_of,
    exclusive_by_absence,
    merge,
    positive_of_not,
    split_dependencies,
)
from structbench.jsonschema.scalars import number_language, string_language
from structbench.limits import current as limits
from structbench.limits import exceeded, limit_note


def compile_schema(schema, numbers: str = "json") -> tuple[int, list[Node]]:
    """The root node id and the nodes of a schema, finished (kinds known, oneOf proved exclusive).

    A oneOf whose branches are not provably exclusive is compiled again with those branches told apart
    by absent keys (rewrites.exclusive_by_absence), one oneOf at a time, until every proof holds."""
    check_nesting(schema, "the schema")
    by_absence: dict = {}
    while True:
        compiler = SchemaCompiler(schema, numbers, by_absence)
        root = compiler.compile(schema, "#")
        try:
            compiler.finish(root)
            return root, compiler.nodes
        except InvalidSchema as e:
            if by_absence:  # the rewrite left nothing: not a proof that the schema itself is empty
                raise UnsupportedSchema("oneOf", next(iter(by_absence)), "nothing left once its branches "
                                        "are told apart by absent keys") from e
            raise
        except NotExclusive as e:
            if e.path in by_absence:
                raise
            by_absence = {**by_absence, e.path: e.pairs}


def check_nesting(value, what: str) -> None:
    """LimitExceeded when a JSON value nests objects and arrays deeper than `limits.max_nesting`: the compiler
    recurses per level, and a limit named here beats Python's recursion limit hit somewhere inside. Also an
    integer too long for Python to print (json.dumps, which the compiler uses, stops at 4,300 digits) is
    declared here, with where it is. Iterative."""
    cap = limits().max_nesting
    digits = sys.get_int_max_str_digits()
    too_long = 10**digits if digits else None
    stack = [(value, 1, "#")]
    while stack:
        item, depth, path = stack.pop()
        if isinstance(item, (dict, list)):
            if depth > cap:
                raise exceeded("max_nesting", f"{what} nests objects and arrays more than {cap} deep")
            pairs = item.items() if isinstance(item, dict) else enumerate(item)
            stack.extend((child, depth + 1, f"{path}/{key}") for key, child in pairs)
        elif too_long and isinstance(item, int) and not isinstance(item, bool) and abs(item) >= too_long:
            raise UnsupportedSchema(path.rpartition("/")[2], path, f"a number with more than {digits:,} digits")


class SchemaCompiler(ContainerRules, Completion, Exclusivity):
    """Compiles one document's schemas to nodes, memoised by their (live) keywords and by `$ref`."""

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
            node.number_dfa = number_language(ALL_TYPES, {}, "#", self.numbers)
        return self.any_id

    def never(self) -> int:
        if self.never_id is None:
            self.never_id = self.add(Node(types=frozenset(), words=frozenset()))
        return self.never_id

    # --- schemas ---------------------------------------------------------------------------------

    def compile(self, schema, path: str) -> int:
        if schema is True:
            return self.any_value()
        if schema is False:
            return self.never()
        if not isinstance(schema, dict):
            raise InvalidSchema(f"a schema must be an object or a boolean, got {type(schema).__name__} at {path}")
        self._check_keywords(schema, path)
        schema = split_dependencies(schema, path)
        live = {k: v for k, v in schema.items() if k not in ANNOTATION_KEYWORDS and k not in DEFINITIONS
                and (k in VOCABULARY_2020_12 or k.startswith("__"))}
        live.pop("$anchor", None)
        live.pop("$dynamicAnchor", None)
        if not live:
            return self.any_value()
        if set(live) == {"$ref"}:
            return self._compile_ref(live["$ref"], path)
        key = json.dumps(live, sort_keys=True, default=str)
        if key in self.memo:
            return self.memo[key]
        self.depth += 1
        if self.depth > limits().max_ref_depth:
            raise UnsupportedSchema("(nesting)", path, f"subschemas nested more than {limits().max_ref_depth} deep (by "
                                    f"items, properties, $ref, allOf, ...) {limit_note('max_ref_depth')}")
        try:
            if "dependentRequired" in live or "dependentSchemas" in live:
                live = dependencies_as_all_of(live, path)
            if isinstance(live.get("not"), dict) and positive_of_not(live["not"]) is not None:
                live = {**{k: v for k, v in live.items() if k != "not"},
                        "allOf": list(live.get("allOf", [])) + [positive_of_not(live["not"])]}
            if "$ref" in live or "allOf" in live:
                merged = self._flatten(live, path)
                node = self.compile(merged, path)
                self.memo[key] = node
                return node
            node_id = self.add(Node())
            self.ref_chain, saved = [], self.ref_chain
            self.memo[key] = node_id  # before filling: a recursive reference finds this node
            try:
                self._fill(node_id, live, path)
            finally:
                self.ref_chain = saved
            return node_id
        finally:
            self.depth -= 1

    def _compile_ref(self, ref, path: str) -> int:
        """A schema that is only a `$ref`: the node of its target (one node per reference)."""
        if ref in self.ref_chain:
            raise InvalidSchema(f"$ref {ref!r} at {path} refers to itself without any keyword in between")
        key = "ref:" + ref
        if key in self.memo:
            return self.memo[key]
        if len(self.ref_chain) >= limits().max_ref_depth:
            raise UnsupportedSchema("$ref", path, f"a chain of more than {limits().max_ref_depth} references, each "
                                    f"only a $ref {limit_note('max_ref_depth')}")
        self.ref_chain.append(ref)
        try:
            target = resolve_ref(self.root_schema, ref, path)
            node = self.compile(target, ref)
        finally:
            self.ref_chain.pop()
        self.memo[key] = node
        return node

    def _check_keywords(self, schema: dict, path: str):
        for k, v in schema.items():
            if k in UNSUPPORTED_KEYWORDS:
                raise UnsupportedSchema(k, path)
            if k in LEGACY_ASSERTIONS:
                raise UnsupportedSchema(k, path, "an assertion of an earlier draft, unknown to Draft 2020-12")
            if (k == "$id" and path != "#" and isinstance(v, str) and not v.startswith("#")
                    and mentions_ref(schema)):  # a new base matters only to the references under it
                raise UnsupportedSchema("$id", path, "a nested $id changes where references resolve")

    def _flatten(self, schema: dict, path: str) -> dict:
        """allOf and $ref beside other keywords: one merged schema."""
        parts = []
        rest = dict(schema)
        if "$ref" in rest:
            ref = rest.pop("$ref")
            parts.append(self._deref(ref, path))
        if not isinstance(schema.get("allOf", []), list):
            raise InvalidSchema(f"allOf must be an array at {path}/allOf")
        for i, sub in enumerate(rest.pop("allOf", [])):
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
        """The schema a `$ref` inside allOf stands for, as keywords to merge (its own $ref and allOf merged)."""
        seen = set()
        target = {"$ref": ref}
        while isinstance(target, dict) and set(target) - ANNOTATION_KEYWORDS - set(DEFINITIONS) == {"$ref"}:
            ref = target["$ref"]
            if ref in seen:
                raise InvalidSchema(f"$ref {ref!r} at {path} refers to itself")
            seen.add(ref)
            target = resolve_ref(self.root_schema, ref, path)
        if isinstance(target, dict) and "$ref" in target:
            # Its keywords are read here, not by compile(): declare what compile() would, and keep the
            # older drafts' dependencies (as dependentRequired / dependentSchemas).
            self._check_keywords(target, path)
            target = split_dependencies(target, path)
            target = self._flatten({k: v for k, v in target.items() if k in VOCABULARY_2020_12}, path)
        return target

    # --- one schema without $ref or allOf: a node --------------------------------------------------

    def _fill(self, node_id: int, s: dict, path: str):
        node = self.nodes[node_id]
        for word in ("anyOf", "oneOf"):
            if word in s:
                self._fill_branches(node, s, word, path)
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
            self._fill_enum(node, s, path)
            return
        self._fill_plain(node, s, path, enum=None)

    def _fill_branches(self, node: Node, s: dict, word: str, path: str):
        """anyOf / oneOf: a union, the other keywords distributed into each branch."""
        branches = s[word]
        if not isinstance(branches, list) or not branches:
            raise InvalidSchema(f"{word} must be a non-empty array at {path}/{word}")
        if len(branches) > limits().max_branches:
            raise UnsupportedSchema(word, path, f"more than {limits().max_branches} branches (limits.max_branches)")
        rest = {k: v for k, v in s.items() if k != word}
        if word == "oneOf" and path in self.oneof_by_absence:
            branches = exclusive_by_absence(branches, rest, path, self.oneof_by_absence[path])
            word, node.narrowed = "anyOf", True
        alts = tuple(self.compile(merge(rest, b, f"{path}/{word}/{i}") if rest else b, f"{path}/{word}/{i}")
                     for i, b in enumerate(branches))
        node.alts = alts
        node.types = frozenset().union(*(self.nodes[a].types for a in alts))
        if word == "oneOf":
            self.pending_exclusive.append((alts, path))

    def _fill_enum(self, node: Node, s: dict, path: str):
        """enum / const: scalars read by the kinds' languages; objects and arrays as a union of exact schemas."""
        values = []
        if "enum" in s:
            if not isinstance(s["enum"], list):
                raise InvalidSchema(f"enum must be an array at {path}/enum")
            values = list(s["enum"])
        if "const" in s:
            values = [v for v in (values if "enum" in s else [s["const"]]) if json_equal(v, s["const"])]
        types = declared_types(s, path)
        values = [v for v in values if any(is_type(v, t) for t in types)]
        containers = [v for v in values if isinstance(v, (dict, list))]
        if not containers:
            self._fill_plain(node, s, path, enum=values)
            return
        rest = {k: v for k, v in s.items() if k not in ("enum", "const")}
        scalars = [v for v in values if not isinstance(v, (dict, list))]
        branches = [const_schema(v) for v in unique_values(containers)] + ([{"enum": scalars}] if scalars else [])
        if len(branches) > limits().max_branches:
            raise UnsupportedSchema("enum", path, f"more than {limits().max_branches} object or array values")
        node.alts = tuple(self.compile(merge(rest, b, path), f"{path}/enum") for b in branches)
        node.types = frozenset().union(*(self.nodes[a].types for a in node.alts))
        self.pending_exclusive.append((node.alts, path))  # distinct values: exclusive

    def _fill_plain(self, node: Node, s: dict, path: str, enum):
        """A node of its own (no union): each type's keywords (`enum`: the enum's values, or None)."""
        types = declared_types(s, path)
        if enum is not None:
            types = frozenset(t for t in types if any(is_type(v, t) for v in enum))
        node.stated_types = types
        words = set()
        if "boolean" in types:
            words |= {"true", "false"} if enum is None else {json.dumps(v) for v in enum if isinstance(v, bool)}
        if "null" in types:
            words.add("null")
        node.words = frozenset(words)
        if "string" in types:
            node.string_dfa, node.string_literals = string_language(
                s, path, [v for v in enum if isinstance(v, str)] if enum is not None else None)
            if node.string_dfa is False:
                types = types - {"string"}
                node.string_dfa = None
        if types & {"number", "integer"}:
            nums = [v for v in enum if isinstance(v, (int, float)) and not isinstance(v, bool)] if enum is not None else None
            dfa = number_language(types, s, path, self.numbers, nums)
            if dfa is None:
                types = types - {"number", "integer"}
            node.number_dfa = dfa
        if "object" in types:
            self._object(node, s, path)
        else:
            node.additional = None
        if "array" in types:
            self._array(node, s, path)
        node.types = types
