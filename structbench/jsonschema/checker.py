"""JSON Schema as a pushdown automaton: a small state machine per open value, and a stack.

The schema is compiled to nodes (`structbench/jsonschema/compiler.py`): Draft 2020-12 as real schemas use
it: `type`, `properties` / `required` / `additionalProperties` (a boolean or a schema) /
`patternProperties` / `propertyNames` / `minProperties` / `maxProperties`, `items` / `prefixItems` /
`minItems` / `maxItems`, full JSON strings (escapes, `\\uXXXX` and surrogate pairs, no raw control
characters) with `minLength` / `maxLength` / `pattern` / `format` / `enum` / `const` as one DFA over
the decoded characters, numbers with exponents, integer `minimum` / `maximum` / `multipleOf` and whole
number bounds on numbers, `enum` / `const` of any JSON value, `anyOf` / `oneOf` (where the branches are
provably exclusive) / `allOf` (merged), local `$ref` with `$defs` / `definitions` (recursion included),
boolean schemas and the empty schema `{}` ("JSON mode"). Annotation keywords and keywords outside the
2020-12 vocabulary are accepted, as by the referee. Every other keyword or form raises
:class:`UnsupportedSchema` naming the keyword and where it is: never a looser grammar than the schema
asks for.

Whitespace, a policy (`whitespace=`): "lesson" (the default: none anywhere except at most one space
after ":" and after ","), "compact" (none), "flexible" (any JSON whitespace wherever JSON allows it, at
most Limits.max_flexible_whitespace characters in a row).

A stack is a tuple of :class:`Frame` (innermost last), immutable and hashable, so a strategy can
memoise masks by it. Every step either refuses the character or returns a stack from which the value
can still be finished, so "not dead" always means "completable". Alternatives (anyOf, oneOf, enums of
objects) are followed side by side in one "union" frame holding one sub-stack per live branch; when
one branch is left its frames take the union frame's place.
"""

from __future__ import annotations

from typing import NamedTuple

from structbench.jsonschema.compiler import (  # noqa: F401  (re-exported)
    ALL_TYPES,
    ANNOTATION_KEYWORDS,
    CHECKED_FORMATS,
    ENFORCED_KEYWORDS,
    LEGACY_ASSERTIONS,
    REFEREE_FORMATS,
    UNSUPPORTED_KEYWORDS,
    VOCABULARY_2020_12,
    InvalidSchema,
    Node,
    NotExclusive,
    UnsupportedSchema,
    _Compiler,
)
from structbench.limits import current as limits
from structbench.regular.patterns import compile_pattern

# The lesson's number machines (kept for callers; the nodes carry their own).
NUMBER_DFA = compile_pattern(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?")
INTEGER_DFA = compile_pattern(r"-?(0|[1-9][0-9]*)")
_LITERALS = {"t": "true", "f": "false", "n": "null"}
_SIMPLE_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_HEX = "0123456789abcdefABCDEF"
_JSON_WS = " \t\n\r"
WHITESPACE_POLICIES = ("lesson", "compact", "flexible")
_OTHER = "\x00\x01other"  # a key that is no prefix of any property name (its text no longer matters)
# What one escape can stand for where the content is checked: no lone surrogates, and no printable ASCII
# (which JSON never needs to escape: "\\u0061" for "a" is refused there, a sound restriction that keeps
# the states few).
_ANY_CHAR = ((0, 0x1F), (0x7F, 0xD7FF), (0xE000, 0x10FFFF))

# Where whitespace may go: (frame kind, phase) pairs, per policy.
_FLEX_WS = {("root", "value"), ("root", "done"), ("object", "open"), ("object", "colon"), ("object", "value"),
            ("object", "after_value"), ("object", "after_comma"), ("array", "open"), ("array", "after_value"),
            ("array", "after_comma")}
_LESSON_WS = {("object", "value"), ("object", "after_comma"), ("array", "after_comma")}


class Frame(NamedTuple):
    """One open value on the stack.

    kind: "root", "alt" (a union branch's root), "object", "array", "string", "number", "literal",
    "union" or "context" (the stand-in for unknown frames below, see constraints.ContextSplit).
    phase: what the frame expects next. text: a tracked key's decoded characters so far, or a
    literal's target word. at: the string's or number's DFA state, how many letters of a literal are
    read, or (schema key order) the index after the last property. seen: an object's keys so far
    (where they matter). esc: inside a string, the escape being read. count: keys or items so far
    (where counted). ws: whitespace characters in a row. child: the node of the value after a key.
    alts: a union's live branches, each a stack. ks: a key's pattern / propertyNames DFA states.
    """

    kind: str
    node: int
    phase: str = ""
    text: str = ""
    at: int = 0
    seen: frozenset = frozenset()
    esc: str = ""
    count: int = 0
    ws: int = 0
    child: int = -1
    alts: tuple = ()
    ks: tuple = ()


Stack = tuple  # of Frame, innermost last


def _escape_candidates(esc: str):
    """The code points a partly read escape can still stand for (no lone surrogates), as intervals."""
    if esc == "\\":  # a simple escape (\\" \\\\ \\/ and controls) or the start of \\u
        return tuple(sorted(_ANY_CHAR + ((0x22, 0x22), (0x2F, 0x2F), (0x5C, 0x5C))))
    if esc == "u":
        return _ANY_CHAR
    if esc.startswith("u"):
        digits = esc[1:]
        width = 16 ** (4 - len(digits))
        lo = int(digits, 16) * width
        hi = lo + width - 1
        return _bmp_candidates(lo, hi)
    if esc.startswith("p"):  # pending high surrogate ("pHHHH"), then "\\", "u" and part of the low one
        high = int(esc[1:5], 16)
        low = esc[7:]
        if low:
            width = 16 ** (4 - len(low))
            lo = max(int(low, 16) * width, 0xDC00)
            hi = min(int(low, 16) * width + width - 1, 0xDFFF)
        else:
            lo, hi = 0xDC00, 0xDFFF
        if lo > hi:
            return ()
        base = 0x10000 + (high - 0xD800) * 0x400
        return ((base + lo - 0xDC00, base + hi - 0xDC00),)
    return _ANY_CHAR


def _bmp_candidates(lo: int, hi: int):
    out = []
    for a, b in ((0, 0x1F), (0x7F, 0xD7FF)):
        if lo <= b and hi >= a:
            out.append((max(lo, a), min(hi, b)))
    if hi >= 0xE000:
        out.append((max(lo, 0xE000), hi))
    a, b = max(lo, 0xD800), min(hi, 0xDBFF)
    if a <= b:  # a high surrogate: the pair stands for a character beyond the BMP
        out.append((0x10000 + (a - 0xD800) * 0x400, 0x10000 + (b - 0xD800) * 0x400 + 0x3FF))
    return tuple(sorted(out))


def _read(esc: str, ch: str, strict: bool):
    """One character of a JSON string's text. Returns None (not JSON), ("end",), ("char", esc, c) when
    a character c is decoded, or ("wait", esc) inside an escape. strict: surrogates must pair up (the
    content is checked character by character); otherwise any escape is read (its content is free)."""
    if esc == "":
        if ch == '"':
            return ("end",)
        if ch == "\\":
            return ("wait", "\\")
        if ord(ch) < 32:
            return None
        return ("char", "", ch)
    if esc == "\\":
        if ch in _SIMPLE_ESCAPES:
            return ("char", "", _SIMPLE_ESCAPES[ch])
        return ("wait", "u") if ch == "u" else None
    if ch not in _HEX:
        if esc.startswith("p") and len(esc) == 5 and ch == "\\":
            return ("wait", esc + "\\")
        if esc.startswith("p") and len(esc) == 6 and ch == "u":
            return ("wait", esc + "u")
        return None
    if esc.startswith("u"):
        digits = esc[1:] + ch.lower()
        if len(digits) < 4:
            return ("wait", "u" + digits)
        code = int(digits, 16)
        if not strict:
            return ("char", "", chr(code))
        if 0xD800 <= code <= 0xDBFF:
            return ("wait", "p" + digits)
        if 0xDC00 <= code <= 0xDFFF or 0x20 <= code <= 0x7E:
            return None  # a lone low surrogate, or printable ASCII (see _ANY_CHAR)
        return ("char", "", chr(code))
    if esc.startswith("p") and len(esc) >= 7:
        digits = esc[7:] + ch.lower()
        if not _escape_candidates(esc[:7] + digits):
            return None
        if len(digits) < 4:
            return ("wait", esc[:7] + digits)
        high, low = int(esc[1:5], 16), int(digits, 16)
        return ("char", "", chr(0x10000 + (high - 0xD800) * 0x400 + (low - 0xDC00)))
    return None


def _remaining(esc: str) -> str:
    """The syntax still to read after a partly read \\u escape: h any hex digit, D [dD], C [c-fC-F]."""
    if esc.startswith("u"):
        return "h" * (5 - len(esc))
    low = esc[7:]  # a pending pair "pHHHH", "\\", "u", then low digits
    tail = "\\u"[len(esc) - 5:] if len(esc) < 7 else ""
    return tail + "DChh"[len(low):]


def _prog_ok(c: str, ch: str) -> bool:
    if c == "h":
        return ch in _HEX
    if c == "D":
        return ch in "dD"
    if c == "C":
        return ch in "cdefCDEF"
    return ch == c


def _uniform_target(dfa, state: int, intervals):
    """The one DFA state every code point in `intervals` leads to, or None if they differ or some is refused."""
    target = None
    for a, b in intervals:
        covered = a
        for lo, hi, t in dfa.moves[state]:
            if hi < a or lo > b:
                continue
            if lo > covered or (target is not None and t != target):
                return None
            target = t
            covered = hi + 1
            if covered > b:
                break
        if covered <= b:
            return None
    return target


def _string_step(esc: str, at: int, ch: str, dfa):
    """One character of a string value's text, its content checked by `dfa` (None: any content).
    Returns "end", None (refused) or (esc, at). An escape whose every completion reaches the same DFA
    state is remembered by what is left to read ("=" + syntax + ">" + state), not by its digits, so
    equal futures share one state."""
    if esc.startswith("="):
        prog, target = esc[1:].split(">")
        if not _prog_ok(prog[0], ch):
            return None
        if len(prog) == 1:
            return "", (int(target) if dfa is not None else at)
        return "=" + prog[1:] + ">" + target, at
    got = _read(esc, ch, dfa is not None)
    if got is None:
        return None
    if got[0] == "end":
        return None if esc or (dfa is not None and at not in dfa.accepting) else "end"
    if got[0] == "char":
        if dfa is None:
            return "", at
        nxt = dfa.step(at, got[2])
        return None if nxt is None else ("", nxt)
    new = got[1]
    if dfa is None:
        return (("=" + _remaining(new) + ">-1") if new.startswith("u") and len(new) > 1 else new), at
    cands = _escape_candidates(new)
    if not _dfa_live_on(dfa, at, cands):
        return None
    prog = _collapsible(new)
    if prog is not None:
        target = _uniform_target(dfa, at, cands)
        if target is not None:
            return "=" + prog + ">" + str(target), at
    return new, at


def _collapsible(esc: str) -> str | None:
    """What is left to read after this partial escape, if its digits no longer decide between a
    character of the BMP and a surrogate pair; None if they still do."""
    if esc.startswith("p"):
        return _remaining(esc)
    if not esc.startswith("u") or len(esc) == 1:
        return None
    (lo, hi), = _bmp_range(esc)
    if hi < 0xD800 or lo > 0xDFFF:
        return _remaining(esc)
    if 0xD800 <= lo and hi <= 0xDBFF:
        return _remaining(esc) + "\\uDChh"
    return None


def _bmp_range(esc: str):
    digits = esc[1:]
    width = 16 ** (4 - len(digits))
    lo = int(digits, 16) * width
    return ((lo, lo + width - 1),)


def _dfa_live_on(dfa, state: int, intervals) -> bool:
    """Does the (trimmed) DFA have a move from `state` on some code point in `intervals`?"""
    for lo, hi, _ in dfa.moves[state]:
        for a, b in intervals:
            if lo <= b and a <= hi:
                return True
    return False


def _in(intervals, code: int) -> bool:
    return any(a <= code <= b for a, b in intervals)


class SchemaChecker:
    """Reads JSON one character at a time against a schema. `step` returns the new
    stack or None when no valid value starts this way."""

    KEY_ORDERS = ("any", "schema")
    WHITESPACE = WHITESPACE_POLICIES

    def __init__(self, schema, key_order: str = "any", whitespace: str = "lesson", numbers: str = "json"):
        """key_order "any" (the lesson's): an object's keys in any order, each once. "schema": the
        properties in the order the schema lists them, optional ones skippable (the convention of
        xgrammar, llguidance and outlines-core); objects with properties must then be strict.
        whitespace: "lesson", "compact" or "flexible" (see the module). numbers: "json" (exponents
        allowed) or "lesson" (the lesson's subset: -?(0|[1-9][0-9]*)(\\.[0-9]+)?, no exponent)."""
        if key_order not in self.KEY_ORDERS:
            raise ValueError(f"key_order must be one of {self.KEY_ORDERS}, got {key_order!r}")
        if whitespace not in WHITESPACE_POLICIES:
            raise ValueError(f"whitespace must be one of {WHITESPACE_POLICIES}, got {whitespace!r}")
        if numbers not in ("json", "lesson"):
            raise ValueError(f"numbers must be 'json' or 'lesson', got {numbers!r}")
        self.schema, self.key_order, self.whitespace, self.numbers = schema, key_order, whitespace, numbers
        by_absence: dict = {}
        while True:  # oneOf branches not provably exclusive: told apart by absent keys, one path at a time
            compiler = _Compiler(schema, numbers, by_absence)
            self.root = compiler.compile(schema, "#")
            try:
                compiler.finish(self.root)
                break
            except InvalidSchema as e:
                if by_absence:  # the rewrite left nothing: not a proof that the schema itself is empty
                    raise UnsupportedSchema("oneOf", next(iter(by_absence)), "nothing left once its branches "
                                            "are told apart by absent keys") from e
                raise
            except NotExclusive as e:
                if e.path in by_absence:
                    raise
                by_absence = {**by_absence, e.path: e.pairs}
        self.nodes = compiler.nodes
        self._ordered = key_order == "schema"
        if self._ordered:
            for node in self.nodes:
                if node.properties and "object" in node.kinds and not node.alts and (not node.strict or node.patterns):
                    raise UnsupportedSchema("additionalProperties", "#", "key_order=schema needs objects with "
                                            "properties to set additionalProperties: false")
                if self._ordered and node.min_props > len(node.required) and node.properties:
                    raise UnsupportedSchema("minProperties", "#", "with key_order=schema")
        self._ws_places = _FLEX_WS if whitespace == "flexible" else _LESSON_WS if whitespace == "lesson" else set()
        self._ws_chars = _JSON_WS if whitespace == "flexible" else " "
        self._ws_max = limits().max_flexible_whitespace if whitespace == "flexible" else 1
        self._caps = [max(len(n.prefix), n.min_items, n.max_items or 0) for n in self.nodes]

    def start(self) -> Stack:
        return (Frame("root", self.root, "value"),)

    def context_frame(self, phase: str) -> Frame:
        """The stand-in for the frames below a stack's top (see the "context" kind in `step`)."""
        return Frame("context", -1, phase)

    def close_top(self, stack: Stack) -> Stack:
        """The stack once its top value is finished: what the frames below see."""
        return self._close(stack)

    def special_chars(self) -> set[str]:
        """The non-ASCII characters the checker treats individually: those in property names, and the
        ends of every non-ASCII range its string, key and number DFAs tell apart."""
        chars = set()
        for node in self.nodes:
            for name, _ in node.properties:
                chars.update(ch for ch in name if ord(ch) >= 128)
            dfas = [node.string_dfa, node.key_dfa, node.number_dfa] + [d for d, _ in node.patterns]
            for dfa in dfas:
                if dfa is None:
                    continue
                for row in dfa.moves:
                    for lo, hi, _ in row:
                        for code in (lo, hi):
                            if code >= 128:
                                chars.add(chr(code))
        return chars

    def is_finite(self) -> bool:
        """Finitely many stacks: no schema reachable from the root refers back to itself (JSON mode does:
        `{}` nests without end) and no object remembers its keys whole."""
        colour: dict[int, int] = {}

        def cyclic(i: int) -> bool:
            colour[i] = 1
            node = self.nodes[i]
            if node.distinct_keys and "object" in node.kinds:
                return True
            children = list(node.alts)
            if "object" in node.kinds:
                children += [c for _, c in node.properties] + [c for _, c in node.patterns]
                children += list(node.combos.values())
                children += [node.additional] if node.additional is not None else []
            if "array" in node.kinds:
                children += list(node.prefix) + ([node.items] if node.items is not None else [])
            for c in children:
                if colour.get(c) == 1 or (c not in colour and cyclic(c)):
                    return True
            colour[i] = 2
            return False

        return not cyclic(self.root)

    # --- helpers --------------------------------------------------------------------

    def _number_dfa(self, node: int):
        return self.nodes[node].number_dfa

    def _ws(self, top: Frame, ch: str) -> bool:
        return ch in self._ws_chars and (top.kind, top.phase) in self._ws_places and top.ws < self._ws_max

    def _available(self, frame: Frame) -> list[str]:
        """The property names that may come next (whose value can be finished, with room left)."""
        node = self.nodes[frame.node]
        props = node.properties
        if self._ordered:
            # In schema order: any later property, up to and including the first required one.
            out = []
            for name, c in props[frame.at:]:
                if self.nodes[c].kinds:
                    out.append(name)
                if name in node.required:
                    break
            names = out
        else:
            names = [name for name, c in props if name not in frame.seen and self.nodes[c].kinds]
        if node.max_props is not None:
            missing = len(node.required - frame.seen) if not self._ordered else 0
            if frame.count + 1 + missing > node.max_props:  # room for required keys only
                names = [n for n in names if n in node.required]
        if node.key_dfa is not None:
            names = [n for n in names if node.key_dfa.accepts(n)]
        return names

    def _others_allowed(self, frame: Frame) -> bool:
        """May a key that is not a property name come next (additionalProperties or patternProperties)?"""
        node = self.nodes[frame.node]
        if node.additional is None and not node.patterns:
            return False
        if node.max_props is not None:
            missing = len(node.required - frame.seen)
            if frame.count + 1 + missing > node.max_props:
                return False
        return True

    def _may_add_key(self, frame: Frame) -> bool:
        node = self.nodes[frame.node]
        if node.max_props is not None and frame.count >= node.max_props:
            return False
        return bool(self._available(frame)) or self._others_allowed(frame)

    def _may_close(self, frame: Frame) -> bool:
        node = self.nodes[frame.node]
        if frame.count < node.min_props:
            return False
        if self._ordered:
            return not any(name in node.required for name, _ in node.properties[frame.at:])
        return node.required <= frame.seen

    def _key_live(self, frame: Frame, text: str, ks: tuple, cands) -> bool:
        """After a key's decoded `text` (and its DFA states `ks`), can the key still be completed?
        cands: the code points the next character may be (None: the key may also end here)."""
        node = self.nodes[frame.node]
        if text != _OTHER:
            for name in self._available(frame):
                if name.startswith(text) and (cands is None and name == text or
                                              len(name) > len(text) and (cands is None or _in(cands, ord(name[len(text)])))):
                    return True
        if not self._others_allowed(frame):
            return False
        if node.key_dfa is not None:
            s = ks[0]
            return s is not None and (cands is None or _dfa_live_on(node.key_dfa, s, cands))
        if node.additional is not None:
            return True
        # Strict, with patterns: some pattern can still match.
        return any(s is not None and (cands is None or _dfa_live_on(node.patterns[i][0], s, cands))
                   for i, s in enumerate(ks))

    def _key_dfas(self, node):
        return [node.key_dfa] if node.key_dfa is not None else [d for d, _ in node.patterns]

    def _key_char(self, top: Frame, c: str):
        """A decoded key character: the key frame after it, or None."""
        node = self.nodes[top.node]
        if top.text == _OTHER or not node.tracks_keys and not node.distinct_keys:
            text = top.text
        else:
            text = top.text + c
            if not node.distinct_keys and not any(name.startswith(text) for name, _ in node.properties):
                text = _OTHER
        ks = tuple(None if s is None else d.step(s, c) for d, s in zip(self._key_dfas(node), top.ks))
        if not node.tracks_keys and not node.distinct_keys and not ks and self._others_allowed(top):
            return top._replace(text=text)  # free keys: nothing to remember
        if not self._key_live(top, text, ks, _ANY_CHAR) and not self._key_live(top, text, ks, None):
            return None
        return top._replace(text=text, ks=ks)

    def _key_end(self, rest: Stack, top: Frame):
        """The key's closing quote: pick the value's node, or refuse."""
        node = self.nodes[top.node]
        text = top.text
        names = self._available(top)
        child = None
        if text in names:
            child = node.child_for_key(text, frozenset())
            if self._ordered:
                at = next(i for i, (name, _) in enumerate(node.properties) if name == text) + 1
                return rest + (top._replace(phase="colon", at=at, child=child, text="", esc="", ks=(),
                                            count=top.count + 1),)
        elif self._others_allowed(top) and not (text != _OTHER and any(name == text for name, _ in node.properties)):
            if node.key_dfa is not None:
                if top.ks[0] is None or top.ks[0] not in node.key_dfa.accepting:
                    return None
                child = node.additional
            else:
                matched = frozenset(i for i, s in enumerate(top.ks)
                                    if s is not None and s in node.patterns[i][0].accepting) if node.patterns else frozenset()
                child = node.combos.get(matched) if matched else node.additional
        if child is None or not self.nodes[child].kinds:
            return None
        seen = top.seen
        if node.distinct_keys:
            if text in seen:
                return None
            seen = seen | {text}
        elif node.required and text in node.required:
            seen = seen | {text}
        elif not self._ordered and text != _OTHER and node.properties and any(n == text for n, _ in node.properties):
            seen = seen | {text}
        count = min(top.count + 1, max(node.min_props, node.max_props or 0)) if node.counts_keys else top.count
        return rest + (top._replace(phase="colon", child=child, text="", esc="", ks=(), seen=seen, ws=0, count=count),)

    def _item_node(self, frame: Frame) -> int | None:
        node = self.nodes[frame.node]
        if node.max_items is not None and frame.count >= node.max_items:
            return None
        i = frame.count
        child = node.prefix[i] if i < len(node.prefix) else node.items
        return child if child is not None and self.nodes[child].kinds else None

    def _open_value(self, stack: Stack, node_id: int, ch: str) -> Stack | None:
        """The first character of a value decides which kind of frame to push."""
        node = self.nodes[node_id]
        if node.alts:
            subs = []
            for alt in node.alts:
                if self.nodes[alt].kinds:
                    sub = self._open_value((Frame("alt", alt, "value"),), alt, ch)
                    if sub is not None and sub not in subs:
                        subs.append(sub)
            return self._settle(stack, Frame("union", node_id), subs)
        kinds = node.kinds
        if ch == "{" and "object" in kinds:
            return stack + (Frame("object", node_id, "open"),)
        if ch == "[" and "array" in kinds:
            return stack + (Frame("array", node_id, "open"),)
        if ch == '"' and "string" in kinds:
            return stack + (Frame("string", node_id, at=node.string_dfa.start if node.string_dfa is not None else 0),)
        if (ch == "-" or "0" <= ch <= "9") and "number" in kinds:
            at = node.number_dfa.step(node.number_dfa.start, ch)
            return None if at is None else stack + (Frame("number", node_id, at=at),)
        if ch in _LITERALS and _LITERALS[ch] in kinds:
            return stack + (Frame("literal", node_id, text=_LITERALS[ch], at=1),)
        return None

    def _settle(self, rest: Stack, union: Frame, subs: list) -> Stack | None:
        """A union's live branches: none (refused), one (its frames replace the union frame), or several."""
        if not subs:
            return None
        if all(len(s) == 1 for s in subs):  # every branch has read a whole value
            return self._close(rest + (union,))
        if len(subs) == 1:
            return rest + subs[0][1:]
        return rest + (union._replace(alts=tuple(subs)),)

    def _finished(self, stack: Stack) -> bool:
        """A (sub-)stack whose value may end here."""
        if len(stack) == 1:
            return stack[0].phase == "done"
        if len(stack) != 2:
            return False
        top = stack[1]
        if top.kind == "number":
            return top.at in self.nodes[top.node].number_dfa.accepting
        if top.kind == "union":
            return any(self._finished(a) for a in top.alts)
        return False

    def _close(self, stack: Stack) -> Stack:
        """The innermost value is finished: pop it and tell its parent."""
        stack = stack[:-1]
        parent = stack[-1]
        if parent.kind == "array":
            count = min(parent.count + 1, self._caps[parent.node])
            return stack[:-1] + (parent._replace(phase="after_value", count=count, ws=0),)
        if parent.kind in ("root", "alt"):
            return stack[:-1] + (parent._replace(phase="done", ws=0),)
        return stack[:-1] + (parent._replace(phase="after_value", ws=0, child=-1),)

    # --- one character ----------------------------------------------------------------

    def step(self, stack: Stack | None, ch: str) -> Stack | None:
        if stack is None:
            return None
        top = stack[-1]
        rest = stack[:-1]
        kind, phase = top.kind, top.phase

        if kind == "context":
            # Stands for the unknown frames below a stack's top (context-split tabling, structbench/masking/dense.py).
            # Reached in phase "after_value" when the top has closed; any further character belongs to
            # those frames: "refeed", where the walk stops and the real stack takes over.
            return stack if phase == "refeed" else (top._replace(phase="refeed"),)

        if kind in ("root", "alt"):
            if kind == "root" and self._ws(top, ch):
                return rest + (top._replace(ws=top.ws + 1),)
            return self._open_value(rest + (top._replace(ws=0),), top.node, ch) if phase == "value" else None

        if kind == "string":
            got = _string_step(top.esc, top.at, ch, self.nodes[top.node].string_dfa)
            if got is None:
                return None
            if got == "end":
                return self._close(stack)
            if got[0] == top.esc and got[1] == top.at:
                return stack
            return rest + (top._replace(esc=got[0], at=got[1]),)

        if kind == "number":
            dfa = self.nodes[top.node].number_dfa
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

        if kind == "union":
            subs = []
            for alt in top.alts:
                nxt = self.step(alt, ch)
                if nxt is not None and nxt not in subs:
                    subs.append(nxt)
            if subs:
                return self._settle(rest, top, subs)
            if any(self._finished(a) for a in top.alts):  # a number ended: the character is the parent's
                return self.step(self._close(stack), ch)
            return None

        if kind == "object":
            if phase == "key":
                return self._key_step(rest, top, ch)
            if self._ws(top, ch):
                return rest + (top._replace(ws=top.ws + 1),)
            if phase in ("open", "after_comma") and ch == '"' and self._may_add_key(top):
                node = self.nodes[top.node]
                ks = tuple(d.start for d in self._key_dfas(node))
                return rest + (top._replace(phase="key", text="", ks=ks, ws=0),)
            if phase in ("open", "after_value") and ch == "}" and self._may_close(top):
                return self._close(stack)
            if phase == "after_value" and ch == "," and self._may_add_key(top):
                return rest + (top._replace(phase="after_comma", ws=0),)
            if phase == "colon":
                return rest + (top._replace(phase="value", ws=0),) if ch == ":" else None
            if phase == "value":
                return self._open_value(rest + (top._replace(ws=0),), top.child, ch)
            return None

        if kind == "array":
            if self._ws(top, ch):
                return rest + (top._replace(ws=top.ws + 1),)
            if phase in ("open", "after_value") and ch == "]" and top.count >= self.nodes[top.node].min_items:
                return self._close(stack)
            if phase == "after_value":
                return rest + (top._replace(phase="after_comma", ws=0),) if ch == "," and self._item_node(top) is not None else None
            if phase in ("open", "after_comma"):
                child = self._item_node(top)
                if child is None:
                    return None
                return self._open_value(rest + (top._replace(phase="value", ws=0),), child, ch)
            return None

        raise AssertionError(f"unknown frame kind {kind!r}")

    def _key_step(self, rest: Stack, top: Frame, ch: str) -> Stack | None:
        node = self.nodes[top.node]
        tracked = (node.tracks_keys and top.text != _OTHER) or node.distinct_keys or bool(top.ks) \
            or not self._others_allowed(top)
        if not tracked or top.esc.startswith("="):
            got = _string_step(top.esc, 0, ch, None)
            if got is None:
                return None
            if got == "end":
                return self._key_end(rest, top)
            return rest + (top,) if top.esc == got[0] else rest + (top._replace(esc=got[0]),)
        got = _read(top.esc, ch, tracked)
        if got is None:
            return None
        if got[0] == "end":
            if top.esc:
                return None
            return self._key_end(rest, top)
        if not tracked:
            return rest + (top,) if top.esc == got[1] else rest + (top._replace(esc=got[1]),)
        if got[0] == "wait":
            cands = _escape_candidates(got[1])
            if not self._key_live(top, top.text, top.ks, cands):
                return None
            if not top.ks and not node.distinct_keys and self._others_allowed(top) and top.text != _OTHER and not any(
                    n.startswith(top.text) and len(n) > len(top.text) and _in(cands, ord(n[len(top.text)]))
                    for n, _ in node.properties):
                # No property name continues this way (a forbidden or used one included, which must still be
                # told apart): the key is some other key, its text no longer matters.
                prog = _collapsible(got[1])
                esc = "=" + prog + ">-1" if prog is not None else got[1]
                return rest + (top._replace(text=_OTHER, esc=esc),)
            return rest + (top._replace(esc=got[1]),)
        nxt = self._key_char(top._replace(esc=""), got[2])
        return None if nxt is None else rest + (nxt,)

    # --- whole texts --------------------------------------------------------------------

    def feed(self, stack: Stack | None, text: str) -> Stack | None:
        for ch in text:
            stack = self.step(stack, ch)
            if stack is None:
                return None
        return stack

    def can_end(self, stack: Stack | None) -> bool:
        """May the output stop here? Once the top-level value is finished (a top-level number, which
        has no closing character, as soon as it is a whole number)."""
        if stack is None or stack[0].kind != "root":
            return False
        return self._finished(stack)

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
