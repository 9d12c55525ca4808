"""Objects and arrays: the compiler's rules for the keywords of containers, which compile their children.

A mixin of :class:`structbench.jsonschema.compiler.SchemaCompiler` (it calls ``self.compile`` for each
child schema and ``self.nodes`` for compiled ones).
"""

from __future__ import annotations

import re

from structbench.errors import (
    InvalidSchema,
    PatternError,
    TooComplex,
    UnsupportedSchema,
)
from structbench.jsonschema.keys import KEY_MARKERS
from structbench.jsonschema.nodes import Node, lone_surrogate
from structbench.limits import current as limits
from structbench.regular import EMPTY, as_int, search_dfa

_CLASS_ESCAPE = re.compile(r"(?<!\\)(?:\\\\)*\\[dDwWsS]")  # an unescaped \d \D \w \W \s \S


class ContainerRules:
    """properties / required / additionalProperties / patternProperties / propertyNames / min-maxProperties,
    and prefixItems / items / min-maxItems / uniqueItems."""

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
        reserved = next((n for n in names if n in KEY_MARKERS), None)
        if reserved is not None:  # the checker's own stand-ins for key texts: such a name would be read as one
            raise UnsupportedSchema("properties" if reserved in props else "required", path,
                                    f"the key {reserved!r} is a text the checker keeps for keys of its own "
                                    f"(any other key, a mask twin's fresh key)")
        unwritable = next((n for n in names if lone_surrogate(n)), None)
        if unwritable is not None:  # a key the checker would start and could never finish: a dead end
            raise UnsupportedSchema("properties" if unwritable in props else "required", path,
                                    f"the key {unwritable!r} holds a lone surrogate, which the checker never writes")
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
        # A key several patterns match must satisfy each of their schemas: one node per set of patterns.
        for mask in range(1, 1 << len(pats)):
            chosen = frozenset(i for i in range(len(pats)) if mask >> i & 1)
            parts = [subs[i] for i in sorted(chosen)]
            node.combos[chosen] = node.patterns[min(chosen)][1] if len(parts) == 1 else \
                self.compile({"allOf": parts}, f"{path}/patternProperties")
        if "propertyNames" in s:
            self._property_names(node, s["propertyNames"], path, has_patterns=bool(pats))
        for w in ("minProperties", "maxProperties"):
            if w in s and (as_int(s[w]) is None or s[w] < 0):
                raise InvalidSchema(f"{w} must be a non-negative integer at {path}/{w}")
        node.min_props = int(s.get("minProperties", 0))
        if node.min_props <= len(node.required):
            # Implied: the object closes only once every required key is in, and those are that many distinct
            # keys. Counting keys for it would make the first keys' texts states of their own (a repeated key
            # counts once, so each key must be remembered whole: Node.distinct_keys), which a cold mask at a key
            # then walks one per token prefix (a oneOf of 12 open objects under minProperties 2: 2 million
            # checker steps).
            node.min_props = 0
        node.max_props = None if "maxProperties" not in s else int(s["maxProperties"])

    def _property_names(self, node: Node, schema, path: str, has_patterns: bool):
        """propertyNames: the keys as strings of a string schema, read by one DFA."""
        pn = self.compile(schema, f"{path}/propertyNames")
        pnode = self.nodes[pn]
        if pnode.alts:
            raise UnsupportedSchema("propertyNames", path, "only string keywords (pattern, length, enum, format)")
        if "string" not in pnode.types:
            node.key_dfa = EMPTY  # no key at all
        else:
            node.key_dfa = pnode.string_dfa
        if node.key_dfa is not None and has_patterns:
            raise UnsupportedSchema("propertyNames", path, "together with patternProperties")

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
