"""The checker's stack: frames, their kinds and phases, and where each whitespace policy lets whitespace go.

A stack is a tuple of :class:`Frame` (innermost last), immutable and hashable, so a strategy can memoise
masks by it. Kinds and phases are string enums: they hash and compare as the words they stand for, so a
stack is the same key (and the tabled states are numbered the same) however its frames were built.
"""

from __future__ import annotations

from enum import StrEnum
from typing import NamedTuple


class Kind(StrEnum):
    """What an open value on the stack is."""

    ROOT = "root"        # the whole answer
    ALT = "alt"          # the root of one branch of a union
    OBJECT = "object"
    ARRAY = "array"
    STRING = "string"
    NUMBER = "number"
    LITERAL = "literal"  # true, false or null
    UNION = "union"      # alternatives followed side by side (anyOf, oneOf, enums of containers)
    CONTEXT = "context"  # the stand-in for unknown frames below a stack's top (see masking.ContextSplit)


class Phase(StrEnum):
    """What a frame expects next."""

    NONE = ""                   # strings, numbers, literals and unions: their other fields say where they are
    VALUE = "value"             # a value (root, alt; an object after its colon; a context's top value)
    DONE = "done"               # root, alt: the value is finished
    OPEN = "open"               # object, array: just after { or [
    KEY = "key"                 # object: inside a key's quotes
    COLON = "colon"             # object: after a key
    AFTER_VALUE = "after_value"  # object, array: after a member
    AFTER_COMMA = "after_comma"  # object, array: after a comma
    REFEED = "refeed"           # context: the top has closed; what follows belongs to the frames below


class Frame(NamedTuple):
    """One open value on the stack.

    kind, phase: see :class:`Kind` and :class:`Phase`. text: a tracked key's decoded characters so far, or
    a literal's target word. at: the string's or number's DFA state, how many letters of a literal are
    read, or (schema key order) the index after the last property. seen: an object's keys so far (where
    they matter). esc: inside a string, the escape being read (see strings.py). count: keys or items so
    far (where counted). ws: whitespace characters in a row. child: the node of the value after a key.
    alts: a union's live branches, each a stack. ks: a key's pattern / propertyNames DFA states.
    """

    kind: Kind
    node: int
    phase: Phase = Phase.NONE
    text: str = ""
    at: int = 0
    seen: frozenset = frozenset()
    esc: str = ""
    count: int = 0
    ws: int = 0
    child: int = -1
    alts: tuple = ()
    ks: tuple = ()


_FIELD_AT = {name: k for k, name in enumerate(Frame._fields)}


def _replaced(frame: Frame, **changes) -> Frame:
    """Frame._replace, a third faster than namedtuple's (which pops every field name from the changes): the
    checker makes a frame this way at nearly every step."""
    values = list(frame)
    for name, value in changes.items():
        at = _FIELD_AT.get(name)
        if at is None:
            raise ValueError(f"Got unexpected field names: {[n for n in changes if n not in _FIELD_AT]!r}")
        values[at] = value
    return tuple.__new__(Frame, values)


Frame._replace = _replaced  # (NamedTuple's class body may not define it)
_TEXT, _AT = _FIELD_AT["text"], _FIELD_AT["at"]


def with_text(frame: Frame, text: str) -> Frame:
    """frame._replace(text=text), at two thirds of its cost: a key's frame at a state of its DFA (an advance's)."""
    values = list(frame)
    values[_TEXT] = text
    return tuple.__new__(Frame, values)


def with_text_ks(frame: Frame, text: str, ks: tuple) -> Frame:
    """frame._replace(text=text, ks=ks), as with_text: a key's frame at a state of its names' and key DFAs' product
    (an advance's, in a key that a pattern or propertyNames reads)."""
    kind, node, phase, _, at, seen, esc, count, ws, child, alts, _ = frame
    return tuple.__new__(Frame, (kind, node, phase, text, at, seen, esc, count, ws, child, alts, ks))


def with_at(frame: Frame, at: int) -> Frame:
    """frame._replace(at=at), as with_text: a string's, number's or literal's frame at a state of its DFA."""
    values = list(frame)
    values[_AT] = at
    return tuple.__new__(Frame, values)


# A container's frame changes by its whitespace count or its phase at nearly every character between values: these
# make it directly, at a third of _replace's cost with keywords.

def with_ws(frame: Frame, ws: int) -> Frame:
    """frame._replace(ws=ws)."""
    kind, node, phase, text, at, seen, esc, count, _, child, alts, ks = frame
    return tuple.__new__(Frame, (kind, node, phase, text, at, seen, esc, count, ws, child, alts, ks))


def with_phase(frame: Frame, phase: Phase) -> Frame:
    """frame._replace(phase=phase, ws=0): a container's next phase, its whitespace count reset."""
    kind, node, _, text, at, seen, esc, count, _, child, alts, ks = frame
    return tuple.__new__(Frame, (kind, node, phase, text, at, seen, esc, count, 0, child, alts, ks))


def value_done(frame: Frame) -> Frame:
    """frame._replace(phase=AFTER_VALUE, ws=0, child=-1): an object whose value has just closed."""
    kind, node, _, text, at, seen, esc, count, _, _, alts, ks = frame
    return tuple.__new__(Frame, (kind, node, Phase.AFTER_VALUE, text, at, seen, esc, count, 0, -1, alts, ks))


def value_opened(frame: Frame) -> Frame:
    """frame._replace(ws=0, child=-1): an object below the value it has just opened. The value's node is read only
    before its first character (may_read), and closing the value sets both so (value_done): kept, it tells apart
    stacks no step does. A mask key reads an object below a value by what a token finds out of it, not by its node
    (SchemaChecker.mask_key), so the value's node is what keeps the nested task's levels apart below each one's
    child. Used with keys in schema order only: in any order, the frame made anew as a value opens is one more for
    the mask key to read at the value's first steps, and over the whole corpus that cost TBM's median 1.5% for a
    fresh answer per schema 0.992 (0.984-1.002) of the code without it (A/B, 2026-12-07)."""
    kind, node, phase, text, at, seen, esc, count, _, _, alts, ks = frame
    return tuple.__new__(Frame, (kind, node, phase, text, at, seen, esc, count, 0, -1, alts, ks))


# An object's frame as a key opens, closes, or has its value written, and as a mask key reads it: asked at a key's
# every state, so made directly too.

def key_opened(frame: Frame, ks: tuple) -> Frame:
    """frame._replace(phase=KEY, text="", ks=ks, ws=0): after a key's opening quote."""
    kind, node, _, _, at, seen, esc, count, _, child, alts, _ = frame
    return tuple.__new__(Frame, (kind, node, Phase.KEY, "", at, seen, esc, count, 0, child, alts, ks))


def key_closed(frame: Frame, child: int, seen: frozenset, count: int) -> Frame:
    """frame._replace(phase=COLON, child=child, text="", esc="", ks=(), seen=seen, ws=0, count=count): after a
    key's closing quote, its value's node chosen."""
    kind, node, _, _, at, _, _, _, _, _, alts, _ = frame
    return tuple.__new__(Frame, (kind, node, Phase.COLON, "", at, seen, "", count, 0, child, alts, ()))


def value_written(frame: Frame, seen: frozenset) -> Frame:
    """frame._replace(phase=AFTER_VALUE, child=-1, ws=0, text="", esc="", ks=(), seen=seen): the object once the
    value of its key is written, with these keys used."""
    kind, node, _, _, at, _, _, count, _, _, alts, _ = frame
    return tuple.__new__(Frame, (kind, node, Phase.AFTER_VALUE, "", at, seen, "", count, 0, -1, alts, ()))


def with_seen(frame: Frame, seen) -> Frame:
    """frame._replace(seen=seen, node=-1): an object's frame below a value, or after one, as a mask key reads it
    (ObjectKeys._seen_as_read: what a token can find out of the object there is `seen`, its node nothing more)."""
    kind, _, phase, text, at, _, esc, count, ws, child, alts, ks = frame
    return tuple.__new__(Frame, (kind, -1, phase, text, at, seen, esc, count, ws, child, alts, ks))


def read_as(frame: Frame, reads, text: str, count: int | None = None) -> Frame:
    """frame._replace(seen=reads, text=text, node=-1, at=0), and count where given: a key's frame as a mask key
    reads it."""
    kind, _, phase, _, _, _, esc, kept, ws, child, alts, ks = frame
    return tuple.__new__(Frame, (kind, -1, phase, text, 0, reads, esc, kept if count is None else count, ws, child,
                                 alts, ks))


def without_count(frame: Frame) -> Frame:
    """frame._replace(count=0): an object's frame in schema order, where no count rule reads its count, as a mask
    key reads it."""
    kind, node, phase, text, at, seen, esc, _, ws, child, alts, ks = frame
    return tuple.__new__(Frame, (kind, node, phase, text, at, seen, esc, 0, ws, child, alts, ks))


def read_at_place(frame: Frame, reads) -> Frame:
    """frame._replace(seen=reads, node=-1, at=0, count=0): an object's frame in schema order below a value, or after
    one, as a mask key reads it (ObjectKeys._place_as_read)."""
    kind, _, phase, text, _, _, esc, _, ws, child, alts, ks = frame
    return tuple.__new__(Frame, (kind, -1, phase, text, 0, reads, esc, 0, ws, child, alts, ks))


Stack = tuple  # of Frame, innermost last

WHITESPACE_POLICIES = ("lesson", "compact", "flexible")
JSON_WHITESPACE = " \t\n\r"
# Where whitespace may go: (frame kind, phase) pairs, per policy ("compact": nowhere).
_FLEXIBLE_PLACES = frozenset({
    (Kind.ROOT, Phase.VALUE), (Kind.ROOT, Phase.DONE), (Kind.OBJECT, Phase.OPEN), (Kind.OBJECT, Phase.COLON),
    (Kind.OBJECT, Phase.VALUE), (Kind.OBJECT, Phase.AFTER_VALUE), (Kind.OBJECT, Phase.AFTER_COMMA),
    (Kind.ARRAY, Phase.OPEN), (Kind.ARRAY, Phase.AFTER_VALUE), (Kind.ARRAY, Phase.AFTER_COMMA),
})
_LESSON_PLACES = frozenset({(Kind.OBJECT, Phase.VALUE), (Kind.OBJECT, Phase.AFTER_COMMA), (Kind.ARRAY, Phase.AFTER_COMMA)})
WHITESPACE_PLACES = {"flexible": _FLEXIBLE_PLACES, "lesson": _LESSON_PLACES, "compact": frozenset()}

# The members as plain module constants as well: the checker's step reads them on its hot path, and looking a
# member up on its enum class costs about ten times a module global.
ROOT, ALT, OBJECT, ARRAY, STRING = Kind.ROOT, Kind.ALT, Kind.OBJECT, Kind.ARRAY, Kind.STRING
NUMBER, LITERAL, UNION, CONTEXT = Kind.NUMBER, Kind.LITERAL, Kind.UNION, Kind.CONTEXT
VALUE, DONE, OPEN, KEY, COLON = Phase.VALUE, Phase.DONE, Phase.OPEN, Phase.KEY, Phase.COLON
AFTER_VALUE, AFTER_COMMA, REFEED = Phase.AFTER_VALUE, Phase.AFTER_COMMA, Phase.REFEED
