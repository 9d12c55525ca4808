"""JSON Schema as a pushdown automaton: a small state machine per open value, and a stack.

The supported subset (the lesson's): objects with `properties`, `required` and
`additionalProperties` (a boolean or a schema), arrays with `items`, strings
(optionally with an `enum` of strings), `integer`, `number` (no exponent),
`boolean`, `null`, type lists, boolean schemas, and the empty schema `{}`
(any JSON value: "JSON mode"). Annotation keywords (`title`, `description`,
...) do not change validity and are accepted. Every other keyword raises
:class:`UnsupportedSchema` naming the keyword and where it is: never a looser
grammar than the schema asks for.

Whitespace, the lesson's rule: none anywhere except at most one space after
":" and after ",". Strings have no escapes in this subset.

A stack is a tuple of :class:`Frame` (innermost last), immutable and hashable,
so a strategy can memoise masks by it. Every step either refuses the character
or returns a stack from which the value can still be finished, so "not dead"
always means "completable".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from .patterns import compile_pattern

ALL_TYPES = frozenset({"object", "array", "string", "number", "integer", "boolean", "null"})
SUPPORTED_KEYWORDS = frozenset({"type", "properties", "required", "additionalProperties", "items", "enum"})
ANNOTATION_KEYWORDS = frozenset(
    {"title", "description", "$schema", "$id", "$comment", "default", "examples", "deprecated", "readOnly", "writeOnly"}
)

# The leaves of JSON are regular, so the pattern machines read them.
NUMBER_DFA = compile_pattern(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?")
INTEGER_DFA = compile_pattern(r"-?(0|[1-9][0-9]*)")
_LITERALS = {"t": "true", "f": "false", "n": "null"}
_LITERAL_TYPE = {"t": "boolean", "f": "boolean", "n": "null"}


def _needs_escape(text: str) -> bool:
    return any(ch in '"\\' or ord(ch) < 32 for ch in text)


class UnsupportedSchema(ValueError):
    """The schema uses a keyword or form outside the supported subset; `keyword` and `path` say where."""

    def __init__(self, keyword: str, path: str, detail: str = ""):
        self.keyword, self.path = keyword, path
        super().__init__(f"unsupported: {keyword} at {path}" + (f" ({detail})" if detail else ""))


class InvalidSchema(ValueError):
    """The schema is not a valid schema, or no JSON value satisfies it."""


@dataclass(frozen=True)
class Node:
    """One compiled (sub)schema."""

    types: frozenset
    properties: tuple = ()  # (name, node id) pairs, in schema order
    required: frozenset = frozenset()
    additional: int | None = None  # node id of additionalProperties' schema; None: no extra keys allowed
    items: int | None = None  # node id of the items schema
    enum: tuple | None = None  # allowed string values

    @property
    def strict(self) -> bool:
        return self.additional is None

    @property
    def tracks_keys(self) -> bool:
        # Key text only matters where it picks a property schema or fills a required key.
        return bool(self.properties) or bool(self.required)

    def property_node(self, key: str) -> int | None:
        for name, node in self.properties:
            if name == key:
                return node
        return self.additional


class _Compiler:
    def __init__(self):
        self.nodes: list[Node] = []
        self.any_id: int | None = None

    def any_value(self) -> int:
        # The empty schema: one shared node whose items and extra keys are itself (JSON mode nests without end).
        if self.any_id is None:
            self.any_id = len(self.nodes)
            self.nodes.append(Node(ALL_TYPES, additional=self.any_id, items=self.any_id))
        return self.any_id

    def add(self, node: Node) -> int:
        self.nodes.append(node)
        return len(self.nodes) - 1

    def compile(self, schema, path: str) -> int:
        if schema is True or (isinstance(schema, dict) and set(schema) <= ANNOTATION_KEYWORDS):
            return self.any_value()
        if schema is False:
            return self.add(Node(frozenset()))
        if not isinstance(schema, dict):
            raise InvalidSchema(f"a schema must be an object or a boolean, got {type(schema).__name__} at {path}")
        for key in schema:
            if key not in SUPPORTED_KEYWORDS and key not in ANNOTATION_KEYWORDS:
                raise UnsupportedSchema(key, path)
        types = self._types(schema, path)
        enum = None
        if "enum" in schema:
            enum = schema["enum"]
            if not isinstance(enum, list):
                raise InvalidSchema(f"enum must be an array at {path}/enum")
            if not all(isinstance(v, str) for v in enum):
                raise UnsupportedSchema("enum", path, "only enums of strings are supported")
            if "type" not in schema:
                types = frozenset({"string"})
            elif "string" not in types:
                raise InvalidSchema(f"enum of strings with type {sorted(types)} admits no value at {path}")
            types = frozenset({"string"})
            enum = tuple(dict.fromkeys(enum))
            for value in enum:
                if _needs_escape(value):
                    raise UnsupportedSchema("enum", path, f"value {value!r} needs escapes, which strings here cannot hold")
        properties = schema.get("properties", {})
        if not isinstance(properties, dict):
            raise InvalidSchema(f"properties must be an object at {path}/properties")
        required = schema.get("required", [])
        if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
            raise InvalidSchema(f"required must be an array of strings at {path}/required")
        for name in properties:
            if _needs_escape(name):
                raise UnsupportedSchema("properties", path, f"key {name!r} needs escapes, which strings here cannot hold")
        props = tuple((name, self.compile(sub, f"{path}/properties/{name}")) for name, sub in properties.items())
        for name, child in props:
            if not self.nodes[child].types:
                raise UnsupportedSchema("properties", path, f"property {name!r} has the schema false")
        extra = schema.get("additionalProperties", True)
        additional = None if extra is False else self.compile(extra, f"{path}/additionalProperties")
        items = self.compile(schema.get("items", True), f"{path}/items")
        node = Node(types, props, frozenset(required), additional, items, enum)
        self._check_satisfiable(node, path)
        return self.add(node)

    @staticmethod
    def _types(schema: dict, path: str) -> frozenset:
        t = schema.get("type")
        if t is None:
            return ALL_TYPES
        names = t if isinstance(t, list) else [t]
        for name in names:
            if name not in ALL_TYPES:
                raise InvalidSchema(f"unknown type {name!r} at {path}/type")
        if not names:
            raise InvalidSchema(f"empty type list at {path}/type admits no value")
        return frozenset(names)

    def _check_satisfiable(self, node: Node, path: str):
        # The checker promises that every live prefix can be finished; a schema no value satisfies breaks that.
        if not node.types:
            return  # a `false` schema: refused at its first character, which is sound
        if node.enum is not None and not node.enum:
            raise InvalidSchema(f"empty enum at {path} admits no value")
        if node.types == {"object"}:
            for key in node.required:
                child = node.property_node(key)
                if child is None:
                    raise InvalidSchema(f"required key {key!r} is not allowed by additionalProperties: false at {path}")
                if not self.nodes[child].types:
                    raise InvalidSchema(f"required key {key!r} has a schema no value satisfies at {path}")


class Frame(NamedTuple):
    """One open value on the stack.

    kind: "root", "object", "array", "string", "number" or "literal".
    phase: what the frame expects next. text: an enum string's or a tracked
    key's characters so far, or a literal's target word. at: the number
    machine's state, or how many letters of a literal are read. seen: an
    object's keys so far (only where keys are tracked).
    """

    kind: str
    node: int
    phase: str = ""
    text: str = ""
    at: int = 0
    seen: frozenset = frozenset()


Stack = tuple  # of Frame, innermost last


class SchemaChecker:
    """Reads JSON one character at a time against a schema. `step` returns the new
    stack or None when no valid value starts this way."""

    KEY_ORDERS = ("any", "schema")

    def __init__(self, schema, key_order: str = "any"):
        """key_order "any" (the lesson's): an object's keys in any order, each once. "schema": the
        properties in the order the schema lists them, optional ones skippable (the convention of
        xgrammar, llguidance and outlines-core); objects with properties must then be strict."""
        if key_order not in self.KEY_ORDERS:
            raise ValueError(f"key_order must be one of {self.KEY_ORDERS}, got {key_order!r}")
        self.schema, self.key_order = schema, key_order
        compiler = _Compiler()
        self.root = compiler.compile(schema, "#")
        self.nodes = compiler.nodes
        if key_order == "schema":
            for node in self.nodes:
                if node.properties and not node.strict:
                    raise UnsupportedSchema("additionalProperties", "#", "key_order=schema needs objects with "
                                            "properties to set additionalProperties: false")
        self._ordered = key_order == "schema"

    def start(self) -> Stack:
        return (Frame("root", self.root, "value"),)

    def context_frame(self, phase: str) -> Frame:
        """The stand-in for the frames below a stack's top (see the "context" kind in `step`)."""
        return Frame("context", -1, phase)

    def close_top(self, stack: Stack) -> Stack:
        """The stack once its top value is finished: what the frames below see."""
        return self._close(stack)

    def special_chars(self) -> set[str]:
        """The non-ASCII characters the checker treats individually: those in keys and enum values."""
        chars = set()
        for node in self.nodes:
            for text in [name for name, _ in node.properties] + list(node.enum or ()):
                chars.update(ch for ch in text if ord(ch) >= 128)
        return chars

    def is_finite(self) -> bool:
        """No schema reachable from the root refers back to itself (JSON mode does: `{}` nests without end)."""
        colour: dict[int, int] = {}

        def cyclic(i: int) -> bool:
            colour[i] = 1
            node = self.nodes[i]
            # A child is only entered if the node can be an object (properties, extra keys) or an array (items).
            children = []
            if "object" in node.types:
                children += [c for _, c in node.properties] + ([node.additional] if node.additional is not None else [])
            if "array" in node.types and node.items is not None:
                children.append(node.items)
            for c in children:
                if colour.get(c) == 1 or (c not in colour and cyclic(c)):
                    return True
            colour[i] = 2
            return False

        return not cyclic(self.root)

    # --- helpers --------------------------------------------------------------------

    def _number_dfa(self, node: int):
        types = self.nodes[node].types
        return NUMBER_DFA if "number" in types else INTEGER_DFA

    def _unseen(self, frame: Frame) -> list[str]:
        """The property names that may come next."""
        props = self.nodes[frame.node].properties
        if not self._ordered:
            return [name for name, _ in props if name not in frame.seen]
        # In schema order: any later property, up to and including the first required one.
        required, out = self.nodes[frame.node].required, []
        for name, _ in props[frame.at:]:
            out.append(name)
            if name in required:
                break
        return out

    def _may_add_key(self, frame: Frame) -> bool:
        return not self.nodes[frame.node].strict or bool(self._unseen(frame))

    def _may_close(self, frame: Frame) -> bool:
        node = self.nodes[frame.node]
        if self._ordered:
            return not any(name in node.required for name, _ in node.properties[frame.at:])
        return node.required <= frame.seen

    def _open_value(self, stack: Stack, node_id: int, ch: str) -> Stack | None:
        """The first character of a value decides which kind of frame to push."""
        types = self.nodes[node_id].types
        if ch == "{" and "object" in types:
            return stack + (Frame("object", node_id, "open"),)
        if ch == "[" and "array" in types:
            return stack + (Frame("array", node_id, "open"),)
        if ch == '"' and "string" in types:
            return stack + (Frame("string", node_id),)
        if (ch == "-" or "0" <= ch <= "9") and ("number" in types or "integer" in types):
            dfa = self._number_dfa(node_id)
            return stack + (Frame("number", node_id, at=dfa.step(dfa.start, ch)),)
        if ch in _LITERALS and _LITERAL_TYPE[ch] in types:
            return stack + (Frame("literal", node_id, text=_LITERALS[ch], at=1),)
        return None

    def _close(self, stack: Stack) -> Stack:
        """The innermost value is finished: pop it and tell its parent."""
        stack = stack[:-1]
        parent = stack[-1]
        if parent.kind == "object":
            seen = parent.seen | {parent.text} if self.nodes[parent.node].tracks_keys and not self._ordered else parent.seen
            return stack[:-1] + (parent._replace(phase="after_value", seen=seen),)
        return stack[:-1] + (parent._replace(phase="done" if parent.kind == "root" else "after_value"),)

    def _child(self, frame: Frame) -> int:
        node = self.nodes[frame.node]
        if frame.kind == "array":
            return node.items
        child = node.property_node(frame.text) if node.tracks_keys else node.additional
        assert child is not None, "a strict object only accepts keys it knows"
        return child

    # --- one character ----------------------------------------------------------------

    def step(self, stack: Stack | None, ch: str) -> Stack | None:
        if stack is None:
            return None
        top = stack[-1]
        rest = stack[:-1]
        kind, phase = top.kind, top.phase

        if kind == "context":
            # Stands for the unknown frames below a stack's top (context-split tabling, structbench/dense.py).
            # Reached in phase "after_value" when the top has closed; any further character belongs to
            # those frames: "refeed", where the walk stops and the real stack takes over.
            return stack if phase == "refeed" else (top._replace(phase="refeed"),)

        if kind == "root":
            return self._open_value(stack, top.node, ch) if phase == "value" else None

        if kind == "string":
            enum = self.nodes[top.node].enum
            if ch == '"':
                return self._close(stack) if enum is None or top.text in enum else None
            if ch == "\\" or ord(ch) < 32:  # no escapes in this subset; raw control characters are never JSON
                return None
            if enum is None:
                return stack  # free text: its content never matters again
            text = top.text + ch
            if not any(e.startswith(text) for e in enum):
                return None
            return rest + (top._replace(text=text),)

        if kind == "number":
            dfa = self._number_dfa(top.node)
            nxt = dfa.step(top.at, ch)
            if nxt is not None:
                return rest + (top._replace(at=nxt),)
            # The number can't grow: if it is finished, the character belongs to whatever follows it.
            if top.at in dfa.accepting:
                return self.step(self._close(stack), ch)
            return None

        if kind == "literal":
            if top.text[top.at] != ch:
                return None
            at = top.at + 1
            return self._close(stack) if at == len(top.text) else rest + (top._replace(at=at),)

        if kind == "object":
            node = self.nodes[top.node]
            if phase in ("open", "after_comma", "need_key") and ch == '"' and self._may_add_key(top):
                return rest + (top._replace(phase="key", text=""),)
            if phase == "after_comma" and ch == " ":
                return rest + (top._replace(phase="need_key"),)
            if phase in ("open", "after_value") and ch == "}" and self._may_close(top):
                return self._close(stack)
            if phase == "after_value" and ch == "," and self._may_add_key(top):
                return rest + (top._replace(phase="after_comma"),)
            if phase == "key":
                if ch == '"':
                    ok = not node.strict or top.text in self._unseen(top)
                    if ok and self._ordered and node.properties:
                        at = next(i for i, (name, _) in enumerate(node.properties) if name == top.text) + 1
                        return rest + (top._replace(phase="colon", at=at),)
                    return rest + (top._replace(phase="colon"),) if ok else None
                if ch == "\\" or ord(ch) < 32:
                    return None
                if not node.tracks_keys:
                    return stack
                text = top.text + ch
                if node.strict and not any(k.startswith(text) for k in self._unseen(top)):
                    return None
                return rest + (top._replace(text=text),)
            if phase == "colon":
                return rest + (top._replace(phase="space_or_value"),) if ch == ":" else None
            if phase == "space_or_value" and ch == " ":
                return rest + (top._replace(phase="value"),)
            if phase in ("space_or_value", "value"):
                return self._open_value(rest + (top._replace(phase="value"),), self._child(top), ch)
            return None

        if kind == "array":
            if phase in ("open", "after_value") and ch == "]":
                return self._close(stack)
            if phase == "after_value":
                return rest + (top._replace(phase="after_comma"),) if ch == "," else None
            if phase == "after_comma" and ch == " ":
                return rest + (top._replace(phase="need_value"),)
            if phase in ("open", "after_comma", "need_value"):
                return self._open_value(rest + (top._replace(phase="value"),), self._child(top), ch)
            return None

        raise AssertionError(f"unknown frame kind {kind!r}")

    # --- whole texts --------------------------------------------------------------------

    def feed(self, stack: Stack | None, text: str) -> Stack | None:
        for ch in text:
            stack = self.step(stack, ch)
            if stack is None:
                return None
        return stack

    def can_end(self, stack: Stack | None) -> bool:
        """May the output stop here? Once the top-level value is finished."""
        if stack is None:
            return False
        top = stack[-1]
        if top.kind == "root":
            return top.phase == "done"
        # A top-level number has no closing character: "42" is finished when the output stops.
        return len(stack) == 2 and top.kind == "number" and top.at in self._number_dfa(top.node).accepting

    def status(self, prefix: str) -> str:
        """"dead" (nothing can fix it), "complete" (may stop here) or "open" (valid so far)."""
        stack = self.feed(self.start(), prefix)
        return "dead" if stack is None else "complete" if self.can_end(stack) else "open"

    def open_containers(self, prefix: str) -> list[str]:
        """The objects and arrays opened but not yet closed, outermost first."""
        stack = self.feed(self.start(), prefix)
        if stack is None:
            raise ValueError(f"{prefix!r} can't be completed")
        return [f.kind for f in stack if f.kind in ("object", "array")]
