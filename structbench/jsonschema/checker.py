"""JSON Schema as a pushdown automaton: a small state machine per open value, and a stack.

The schema is compiled to nodes (compiler.py): Draft 2020-12 as real schemas use it: `type`,
`properties` / `required` / `additionalProperties` (a boolean or a schema) / `patternProperties` /
`propertyNames` / `minProperties` / `maxProperties`, `items` / `prefixItems` / `minItems` / `maxItems`,
full JSON strings (escapes, `\\uXXXX` and surrogate pairs, no raw control characters) with `minLength` /
`maxLength` / `pattern` / `format` / `enum` / `const` as one DFA over the decoded characters, numbers with
exponents, integer `minimum` / `maximum` / `multipleOf` and whole number bounds on numbers, `enum` /
`const` of any JSON value, `anyOf` / `oneOf` (where the branches are provably exclusive) / `allOf`
(merged), local `$ref` with `$defs` / `definitions` (recursion included), boolean schemas and the empty
schema `{}` ("JSON mode"). Annotation keywords and keywords outside the 2020-12 vocabulary are accepted,
as by the referee. Every other keyword or form raises :class:`UnsupportedSchema` naming the keyword and
where it is: never a looser grammar than the schema asks for.

Whitespace, a policy (`whitespace=`): "lesson" (the default: none anywhere except at most one space
after ":" and after ","), "compact" (none), "flexible" (any JSON whitespace wherever JSON allows it, at
most Limits.max_flexible_whitespace characters in a row).

A stack is a tuple of frames (frames.py), innermost last. Every step either refuses the character or
returns a stack from which the value can still be finished, so "not dead" always means "completable".
Alternatives (anyOf, oneOf, enums of objects) are followed side by side in one union frame holding one
sub-stack per live branch; when one branch is left its frames take the union frame's place. Strings are
read by strings.py, object keys by keys.py.
"""

from __future__ import annotations

import weakref
from itertools import islice

from structbench.errors import UnsupportedSchema
from structbench.jsonschema import node_store
from structbench.jsonschema.compiler import compile_schema
from structbench.jsonschema.container_reach import (
    closes_and_reads_on,
    container_config,
    never_cut,
)
from structbench.jsonschema.frames import (
    AFTER_COMMA,
    AFTER_VALUE,
    ALT,
    ARRAY,
    COLON,
    CONTEXT,
    DONE,
    JSON_WHITESPACE,
    KEY,
    LITERAL,
    NUMBER,
    OBJECT,
    OPEN,
    REFEED,
    ROOT,
    STRING,
    UNION,
    VALUE,
    WHITESPACE_PLACES,
    WHITESPACE_POLICIES,
    Frame,
    Phase,
    Stack,
    read_as,
    read_at_place,
    value_done,
    value_opened,
    with_at,
    with_phase,
    with_seen,
    with_text,
    with_ws,
    without_count,
)
from structbench.jsonschema.free_text import FREE_STRING
from structbench.jsonschema.key_trie import KeyTrie
from structbench.jsonschema.keys import OTHER, ObjectKeys
from structbench.jsonschema.lexemes import literal_lexeme, number_lexeme
from structbench.jsonschema.string_unions import OrFreeDFA, or_free
from structbench.jsonschema.strings import END, escape_reads, string_step
from structbench.limits import current as limits
from structbench.regular import MAX_CODE_POINT
from structbench.regular.dfa import DFA, move_shape, non_ascii_ends

KEY_ORDERS = ("any", "schema")
NUMBER_SYNTAXES = ("json", "lesson")
_LITERALS = {"t": "true", "f": "false", "n": "null"}
# Phases, by what they let come next.
_BEFORE_MEMBER = frozenset({OPEN, AFTER_COMMA})  # a key, or an item
_MAY_CLOSE = frozenset({OPEN, AFTER_VALUE})  # } or ]
_SEEN_UNREAD = frozenset({COLON, VALUE, AFTER_VALUE})  # an object's phases whose used keys only a comma reaches
_MEMBER_NEXT = frozenset({KEY, AFTER_COMMA})  # an object's phases that no token leaves below it (mask_key)
_TOP_ALONE = "top alone"  # mask_key's mark of a key that is the top frame's alone
_BELOW_UNREAD = "below unread"  # mask_key's mark of a key that leaves out the frames below the innermost container
_VALUE_ALONE = "value alone"  # mask_key's mark of a key that is an object's value to come, alone (_value_reads_past)
_UNION_ALONE = "union alone"  # mask_key's mark of a union's key: its branches' keys, where each reads its top alone
_READS_ABOVE = (_TOP_ALONE, _BELOW_UNREAD, _VALUE_ALONE, _UNION_ALONE)  # keys that leave a stack's bottom frame unread
_UNION_KEYED = 16  # the most branches a union's key is made of (each branch's key is asked for)
_JSON_WS = frozenset(JSON_WHITESPACE)
_FEW_WRITTEN, _ROOM_LEFT = -2, -3  # _length_as_read's counts: below minLength, out of reach; room left, out of reach
_KEY_AS_READ = "key as read"  # mask_key's text of a key, or of an object after its comma, read by `_names_as_read`
# A value kind's first characters (kinds as nodes list them: the literals by word).
_KIND_STARTS = {"object": "{", "array": "[", "string": '"', "number": "-0123456789", "true": "t", "false": "f",
                "null": "n"}
_NUMBER_STARTS = _KIND_STARTS["number"]  # what may open a number (_open_value)
_PLAIN_REPS = ("\x7f", "\U0010ffff")  # plain characters to stand for the others (not in any property name, surely)
_ASCII_PLAIN = tuple(chr(c) for c in range(0x20, 0x80) if chr(c) not in '"\\')  # what a string reads raw, ASCII
_MAY_READ = {  # (kind, phase) -> a superset of what _step_object / _step_array / _step_root read there besides
    # whitespace (values: may_read asks the node)
    (OBJECT, OPEN): '"}', (OBJECT, AFTER_COMMA): '"', (OBJECT, AFTER_VALUE): ",}", (OBJECT, COLON): ":",
    (ARRAY, AFTER_VALUE): ",]", (ROOT, DONE): "",
}


def _longest_uncut(reach) -> int:
    """The longest stack _depth_cut never cuts (it keeps the root and one container more than a token closes and
    reads on past, and a leaf above them): those are not asked. Every stack where the reach does not know."""
    if reach.pops_read_on is None or reach.string_pops_read_on is None:
        return 1 << 62
    return min(reach.pops_read_on + 1, reach.string_pops_read_on + 2)


def _depth_cut(stack, reach) -> int:
    """The index of the container below which no token reads, else 0. A token reads a frame below the top only
    once it has closed every frame above it; it closes a container only by that container's own `}` or `]` (a
    string by its quote, a number or a literal by the character after it, read by the container below), and one
    that closes a container with its last character tells the frame below only that a value ended, which refuses
    nothing (_close). So a token with at most n closing brackets followed by a character (`reach.pops_read_on`
    from outside a string, `string_pops_read_on` from inside one or a key) reads no frame below the (n + 1)-th
    container from the top: a mask key leaves those out (the nested task's levels share their pets' masks, each
    level's stack one object deeper than the next one in). Asked only where every frame down to that container
    is an object or an array, with a string, number or literal leaf at the top or none (a union at the top holds
    its branches inside its frame: not asked), and only where the reach knows both counts (_longest_uncut)."""
    top = stack[-1]
    kind = top.kind
    if kind == STRING:
        reads, j = reach.string_pops_read_on, len(stack) - 2
    elif kind == NUMBER or kind == LITERAL:
        reads, j = reach.pops_read_on, len(stack) - 2
    elif kind == OBJECT or kind == ARRAY:
        # (an object's key is read as a string: the larger of the two)
        reads = max(reach.pops_read_on, reach.string_pops_read_on) if top.phase == KEY else reach.pops_read_on
        j = len(stack) - 1
    else:
        return 0
    if j - reads < 1:
        return 0
    for j in range(j, j - reads - 1, -1):  # the innermost container and the `reads` below it
        kind = stack[j].kind
        if kind != OBJECT and kind != ARRAY:
            return 0
    return j


def _plain_promise(dfa, at: int) -> tuple[str, str] | None:
    """plain_default for a checked string's DFA at state `at`: where every character past ASCII goes to one next
    state (or none goes on), the ASCII plain characters that go elsewhere are `special` and every other plain
    character steps as the representative does; None where characters past ASCII go different ways (a class there
    is not one character, so it could not be named as special)."""
    beyond = [(max(lo, 0x80), hi, t) for lo, hi, t in dfa.moves[at] if hi >= 0x80]
    targets = {t for _, _, t in beyond}
    if not beyond:
        default = None
    elif len(targets) == 1 and sum(hi - lo + 1 for lo, hi, _ in beyond) == MAX_CODE_POINT - 0x7F:
        default = targets.pop()
    else:
        return None
    special = "".join(ch for ch in _ASCII_PLAIN if dfa.step(at, ch) != default)
    rep = next((c for c in _PLAIN_REPS if c not in special), None)
    return None if rep is None else (rep, special)


class SchemaChecker(ObjectKeys):
    """Reads JSON one character at a time against a schema. `step` returns the new
    stack or None when no valid value starts this way."""

    def __init__(self, schema, key_order: str = "any", whitespace: str = "lesson", numbers: str = "json"):
        """key_order "any" (the lesson's): an object's keys in any order, each once. "schema": the
        properties in the order the schema lists them, optional ones skippable (the convention of
        xgrammar, llguidance and outlines-core); objects with properties must then be strict.
        whitespace: "lesson", "compact" or "flexible" (see the module). numbers: "json" (exponents
        allowed) or "lesson" (the lesson's subset: -?(0|[1-9][0-9]*)(\\.[0-9]+)?, no exponent)."""
        if key_order not in KEY_ORDERS:
            raise ValueError(f"key_order must be one of {KEY_ORDERS}, got {key_order!r}")
        if whitespace not in WHITESPACE_POLICIES:
            raise ValueError(f"whitespace must be one of {WHITESPACE_POLICIES}, got {whitespace!r}")
        if numbers not in NUMBER_SYNTAXES:
            raise ValueError(f"numbers must be 'json' or 'lesson', got {numbers!r}")
        self.schema, self.key_order, self.whitespace, self.numbers = schema, key_order, whitespace, numbers
        root, nodes = compile_schema(schema, numbers)
        # Numbered by structure in the process's generation (node_store): equal subschemas of any schema, one number,
        # so mask keys mean the same in every checker of these settings, and masks are kept across schemas.
        generation = node_store.current()
        self.root, self.nodes = generation.number(root, nodes)  # {number: node}, indexed as a list was
        # Weakly: a checker kept for the process (container_reach's twins) must not keep a generation's stored masks
        # alive past a cold start; a constraint holds its store itself (TabledConstraint)
        self._generation = weakref.ref(generation)
        self._ordered = key_order == "schema"
        self.steps_taken = 0  # every step, the alternatives of a union included: what work budgets draw on
        self._key_indexes: dict = {}  # node id -> its property names sorted, and their children (ObjectKeys)
        self._writable: dict = {}  # node id -> its property names whose value can be written (ObjectKeys)
        self._key_tries: dict = {}  # key context (its frame, text "") -> the DFA of its plain characters (ObjectKeys)
        self._trie_of_top: dict = {}  # a key's frame but its text and DFA states -> key_trie's answer for it
        self._key_states: dict = {}  # object node id -> its keys' product of names and key DFAs (ObjectKeys)
        self._key_states_alike: dict = {}  # what that product reads of a node -> the product (ObjectKeys._key_alike)
        self._key_contexts: dict = {}  # id(a product) -> {its live states' bytes: that context's DFA} (ObjectKeys)
        self._key_by_names: dict = {}  # (id(a product), others allowed, the names that may come) -> its DFA
        self._name_trees: dict = {}  # object node id -> its keys' name tree where other keys may come (ObjectKeys)
        self._name_trees_alike: dict = {}  # its names (sorted) -> that tree, one for objects with the same names
        self._union_tries: dict = {}  # the name trees of a union's branches (ids) -> the tree of all their names
        self._starts: dict = {}  # node id -> the first characters of its values (may_read)
        self._number_reads: dict = {}  # (node id, number DFA state) -> the characters the DFA moves on (may_read)
        self._string_reads: dict = {}  # (node id, string DFA state) -> the same for a checked string's DFA
        self._string_plains: dict = {}  # (node id, string DFA state) -> its plain_default
        self._number_groups: dict = {}  # (id of the number DFA, its state, characters) -> the alike ones (alike)
        self._escape_groups: dict = {}  # (id of the string DFA, escape, its moves there) -> the alike ones (alike)
        self._key_groups: dict = {}  # (node id, key text or OTHER, its DFA states) -> the alike ones (alike)
        # id of a TokenReach -> (it, {an object frame's fields (and a name closed) -> what tokens read of its used
        # keys below a value, or after the name's value}) (mask_key: ObjectKeys._seen_as_read, _tails_as_read)
        self._reads_by_reach: dict = {}
        self._tail_reads: dict = {}  # (object node, may a key come, comma tails) -> how far the tails are read
        self._name_entries_kept: dict = {}  # (node id, key text, closable, parts) -> _name_entries
        # id of a TokenReach -> (it, {frame: the number of its part of mask_key}, {part: its number}, {a container's
        # config: whether a token closes it and reads on (_first_read)}, the tops where none is cut (never_cut))
        self._mask_frames: dict = {}
        self._counter_bounds: dict[int, tuple | None] = {}  # per string node: its DFA's length bounds, or None
        self._closed_names: dict = {}  # (node id, closings) -> {key text: the names a token can finish} (mask_key)
        self._names_beyond_bmp: dict = {}  # node id -> has a property name past U+FFFF (mask_key)
        self._names_readable: dict = {}  # node id -> _names_may_be_read (mask_key)
        self._seen_readable: dict = {}  # node id -> _seen_may_be_read (mask_key; told by the node alone)
        self._places: dict = {}  # object node id -> its places' numbers, in schema order (ObjectKeys._place)
        self._place_numbers: dict = {}  # (a property, the number of the place after it) -> the place's number
        self._last_required: dict = {}  # object node id -> the index of its last required property (schema order)
        self._place_counts: dict | None = None  # a place's names to come (numbered) -> its object nodes (_place_shared)
        self._shared_places: dict = {}  # object node id -> its places' numbers by the names that may come there
        self._available_at: dict = {}  # (node id, place) -> the names that may come there, in schema order (mask_key)
        self._free_string = FREE_STRING  # a free string's content as a DFA (string_content), one for every
        # checker: string mode keeps its tables on it per class partition (a few: string_mode._whole_tables), and
        # they depend on the partition and the vocabulary alone, so a fresh schema does not build them again
        if self._ordered:
            for node in self.nodes.values():
                if node.properties and "object" in node.kinds and not node.alts and (not node.strict or node.patterns):
                    raise UnsupportedSchema("additionalProperties", "#", "key_order=schema needs objects with "
                                            "properties to set additionalProperties: false")
                if node.min_props > len(node.required) and node.properties:
                    raise UnsupportedSchema("minProperties", "#", "with key_order=schema")
        self._ws_places = WHITESPACE_PLACES[whitespace]
        self._ws_chars = JSON_WHITESPACE if whitespace == "flexible" else " "
        self._ws_max = limits().max_flexible_whitespace if whitespace == "flexible" else 1
        self._caps = {k: max(len(n.prefix), n.min_items, n.max_items or 0) for k, n in self.nodes.items()}
        # Whether some object remembers its free keys whole: a constraint then steps their characters past ASCII by
        # their own, not by their class (remembered_chars), and mask_twin has twins to give (else none is asked)
        self.remembers_keys = any(n.distinct_keys for n in self.nodes.values())
        self.has_mask_twins = not self._ordered and self.remembers_keys
        # The step per frame kind, as plain functions (bound methods kept on the checker would be a reference
        # cycle: a checker then outlives its constraint until the garbage collector's next full pass)
        cls = type(self)
        self._step_of_kind = {
            CONTEXT: cls._step_context, ROOT: cls._step_root, ALT: cls._step_root,
            STRING: cls._step_string, NUMBER: cls._step_number, LITERAL: cls._step_literal,
            UNION: cls._step_union, OBJECT: cls._step_object, ARRAY: cls._step_array,
        }

    def start(self) -> Stack:
        return (Frame(ROOT, self.root, VALUE),)

    def settings(self) -> tuple:
        """What, beside its nodes, says how this checker reads a stack: equal settings and node numbers, the same
        steps (the mask key's parts and the stored masks are kept per settings)."""
        return (self.key_order, self.whitespace, self.numbers, self._ws_max)

    def stored_key(self, key: tuple, reach) -> tuple:
        """A mask key (`mask_key`'s, over `reach`) with its parts for their numbers: the key of its mask in the
        masks kept across schemas (node_store.MaskStore), where node numbers are the process's and part numbers
        this checker's own."""
        kept = self._mask_frames[id(reach)]
        parts, in_order = kept[2], kept[7]
        if len(in_order) < len(parts):  # (a part's number is its place in the dict: numbered as it was put there)
            in_order.extend(islice(parts, len(in_order), None))
        # (a union's key holds its branches' keys: _union_as_read)
        return tuple(in_order[x] if type(x) is int else self.stored_key(x, reach) if type(x) is tuple else x
                     for x in key)

    def mask_store(self, vocab):
        """The masks kept across schemas by their mask keys, for this checker's settings and `vocab`
        (node_store.MaskStore)."""
        generation = self._generation()
        if generation is None:  # (begun anew since this checker was made: its node numbers are read nowhere else)
            return node_store.MaskStore(vocab)
        return generation.mask_store(self.settings(), vocab)

    def context_frame(self, phase: str) -> Frame:
        """The stand-in for the frames below a stack's top (see `_step_context`)."""
        return Frame(CONTEXT, -1, Phase(phase))

    def close_top(self, stack: Stack) -> Stack:
        """The stack once its top value is finished: what the frames below see."""
        return self._close(stack)

    def may_read(self, stack: Stack) -> str | None:
        """The characters the stack's top could read next, as a superset (None: any character may), told by its
        kind and phase alone: a mask's row is computed only for these (the rest are refused unread)."""
        top = stack[-1]
        kind = top.kind
        if top.esc and (kind == STRING or kind == OBJECT and top.phase == KEY):
            return escape_reads(top.esc)  # inside an escape: its syntax alone
        if kind == OBJECT and top.phase == KEY:
            # Only property names may come: the characters that continue one, the closing quote, an escape.
            if top.ks or top.text == OTHER or self._others_allowed(top):
                return None
            return '"\\' + self._next_name_chars(top.node, top.text)
        if top.phase == VALUE and kind in (OBJECT, ROOT, ALT):  # a value of a known node: only its kinds' starts
            node = top.child if kind == OBJECT else top.node
            return self._ws_reads(top) + self._value_starts(node)
        if kind == ARRAY and top.phase in _BEFORE_MEMBER:
            child = self._item_node(top)
            return self._ws_reads(top) + ("]" if top.phase == OPEN else "") + \
                ("" if child is None else self._value_starts(child))
        if kind == OBJECT or kind == ARRAY or kind == ROOT:
            reads = _MAY_READ.get((kind, top.phase))
            return None if reads is None else self._ws_reads(top) + reads
        if kind == NUMBER:  # its DFA's next characters, and (once whole) what its parent reads after a value
            reads = self._number_moves(top.node, top.at)
            if reads is None or top.at not in self.nodes[top.node].number_dfa.accepting:
                return reads
            after = self.may_read(self._close(stack))
            return None if after is None else reads + after
        if kind == LITERAL:
            return top.text[top.at]
        if kind == STRING:  # a checked string (no escape open): the closing quote, a backslash, what its DFA moves on
            dfa = self.nodes[top.node].string_dfa
            if dfa is None:
                return None  # free text: any character but a control one (plain_default says so)
            reads = self._dfa_reads(self._string_reads, dfa, top.node, top.at)
            return None if reads is None else '"\\' + reads
        if kind == UNION:  # what any branch could read, and what follows the union where a branch may end here
            reads = set()
            ends = [self.close_top(stack)] if any(self._finished(a) for a in top.alts) else []
            for sub in list(top.alts) + ends:
                got = self.may_read(sub)
                if got is None:
                    return None
                reads.update(got)
            return "".join(sorted(reads))
        return None

    def _value_starts(self, node_id: int) -> str:
        """The first characters a value of this node may have (what _open_value reads), from its kinds."""
        found = self._starts.get(node_id)
        if found is None:
            node = self.nodes[node_id]
            if node.alts:
                found = "".join(sorted({ch for alt in node.alts if self.nodes[alt].kinds
                                        for ch in self._value_starts(alt)}))
            else:
                found = "".join(_KIND_STARTS[k] for k in sorted(node.kinds) if k in _KIND_STARTS)
            self._starts[node_id] = found
        return found

    def _number_moves(self, node_id: int, at: int) -> str | None:
        """The characters a number's DFA moves on from state `at` (None: too many to list)."""
        return self._dfa_reads(self._number_reads, self.nodes[node_id].number_dfa, node_id, at)

    @staticmethod
    def _dfa_reads(memo: dict, dfa, node_id: int, at: int) -> str | None:
        """The characters `dfa` (a node's number or string DFA) moves on from state `at`, memoised in `memo` (None:
        more than 64, too many to list)."""
        key = (node_id, at)
        found = memo.get(key, False)
        if found is False:
            moves = dfa.moves[at]
            found = None if sum(hi - lo + 1 for lo, hi, _ in moves) > 64 else \
                "".join(chr(c) for lo, hi, _ in moves for c in range(lo, hi + 1))
            memo[key] = found
        return found

    def alike(self, stack: Stack) -> dict[str, str] | None:
        """Characters that step the stack exactly as another does: {character: the one it steps like}, for those
        in groups of two or more (None: no such promise). A number's next character moves its DFA alone, so the
        characters the DFA sends to one state step alike, in a number and where one may open; inside a string's
        escape, the characters whose escapes read on alike (a free string's simple escapes, most hex digits); in a
        key its patterns check, those that continue no property name and that its DFAs send alike; a mask's row then
        takes one step for each group."""
        top = stack[-1]
        if top.kind == STRING and top.esc:
            return self._escape_alike(self.nodes[top.node].string_dfa, top.esc, top.at)
        if top.esc:  # a key's escape: alike where the key's text no longer matters (_key_step's string syntax), or
            # where the escape makes it some other key
            if top.phase != KEY:
                return None
            return self._escape_alike(None, top.esc, 0) if self._key_text_free(top) else self._tracked_escape_alike(top)
        if top.kind == NUMBER:
            return self._number_alike(top.node, top.at)
        if top.kind == OBJECT and top.phase == KEY and top.ks and not self._distinct(top):
            return self._checked_key_alike(top)
        node_id = None
        if top.phase == VALUE and top.kind in (OBJECT, ROOT, ALT):
            node_id = top.child if top.kind == OBJECT else top.node
        elif top.kind == ARRAY and top.phase in _BEFORE_MEMBER:
            node_id = self._item_node(top)
        if node_id is None or self.nodes[node_id].alts or "number" not in self.nodes[node_id].kinds:
            return None
        return self._number_alike(node_id, self.nodes[node_id].number_dfa.start, _NUMBER_STARTS)

    def _escape_alike(self, dfa, esc: str, at: int) -> dict[str, str] | None:
        """alike inside an escape: the characters string_step reads to one result (a string's frame after them is a
        function of that result alone, see _step_string, as is a key's whose text no longer matters); `dfa` the
        string's content DFA at state `at` (None: none, as for such a key)."""
        # Kept per the DFA's moves at `at`, their targets numbered in order of appearance: string_step reads the
        # DFA only by its moves there, so states that move alike (a maxLength counter's, all but its last) group
        # the escape's characters alike. (The DFA is the node's, kept alive by it.)
        key = (id(dfa), esc, move_shape(dfa, at)[0] if dfa is not None else at)
        found = self._escape_groups.get(key, False)
        if found is False:
            groups: dict = {}
            for ch in escape_reads(esc) or "":
                got = string_step(esc, at, ch, dfa)
                if got is not None and got is not END:
                    groups.setdefault(got, []).append(ch)
            found = {ch: chars[0] for chars in groups.values() if len(chars) > 1 for ch in chars} or None
            self._escape_groups[key] = found
        return found

    def _checked_key_alike(self, top: Frame) -> dict[str, str] | None:
        """alike in a key its patterns or propertyNames check (no escape open, no repeat rule): the ASCII plain
        characters that continue no property name (each makes the key some other key, or leaves an untracked text
        as it is: _key_char) and that every key DFA sends to the same states step alike."""
        node = self.nodes[top.node]
        tracked = node.tracks_keys and top.text != OTHER
        key = (top.node, top.text if tracked else OTHER, top.ks)
        found = self._key_groups.get(key, False)
        if found is False:
            special = self._next_name_chars(top.node, top.text) if tracked else ""
            dfas = self._key_dfas(node)
            groups: dict[tuple, list[str]] = {}
            for ch in _ASCII_PLAIN:
                if ch not in special:
                    targets = tuple(None if at is None else d.step(at, ch) for d, at in zip(dfas, top.ks))
                    groups.setdefault(targets, []).append(ch)
            found = {ch: chars[0] for chars in groups.values() if len(chars) > 1 for ch in chars} or None
            self._key_groups[key] = found
        return found

    def _number_alike(self, node_id: int, at: int, among: str | None = None) -> dict[str, str] | None:
        """alike for a number's DFA at state `at`: the characters (of `among`, if given) it sends to one state.
        Kept per DFA, not per node: nodes of one type and bounds share their DFA (compile_pattern keeps it), and
        the groups are its moves' alone. (The nodes keep their DFAs alive, so an id stays its DFA's.)"""
        dfa = self.nodes[node_id].number_dfa
        key = (id(dfa), at, among)
        found = self._number_groups.get(key, False)
        if found is False:
            groups: dict[int, list[str]] = {}
            for lo, hi, target in dfa.moves[at]:
                for c in range(lo, min(hi, lo + 64) + 1):
                    if among is None or chr(c) in among:
                        groups.setdefault(target, []).append(chr(c))
            found = {ch: chars[0] for chars in groups.values() if len(chars) > 1 for ch in chars} or None
            self._number_groups[key] = found
        return found

    def plain_default(self, stack: Stack) -> tuple[str, str] | None:
        """(rep, special): every character from U+0020 up but the quote, the backslash and those in `special` steps
        this stack exactly as `rep` does: a string with no content check, a checked one whose DFA sends every
        character past ASCII one way (`special`, the ASCII ones it sends another: `_plain_promise`), or a key whose
        text no longer matters past the property names it may still become, or that must be one of them (`special`,
        the characters that continue one);
        and characters below U+0020 are refused (JSON strings hold none raw). A mask's row then takes one
        step for all of them. None: no such promise."""
        top = stack[-1]
        if top.esc:
            return None
        if top.kind == STRING:
            dfa = self.nodes[top.node].string_dfa
            if dfa is None:
                return _PLAIN_REPS[0], ""
            key = (top.node, top.at)
            found = self._string_plains.get(key, False)
            if found is False:
                found = self._string_plains[key] = _plain_promise(dfa, top.at)
            return found
        if top.kind == UNION:  # every branch makes the promise: the union keeps it, their specials together
            special = set()
            for alt in top.alts:  # (a branch that may end here makes none: no branch hands a character on)
                got = self.plain_default(alt)
                if got is None:
                    return None
                special.update(got[1])
            rep = next((c for c in _PLAIN_REPS if c not in special), None)
            return None if rep is None else (rep, "".join(sorted(special)))
        if top.kind != OBJECT or top.phase != KEY:
            return None
        node = self.nodes[top.node]
        if not self._told_by_text_alone(top) and (top.ks or self._distinct(top) or self._others_allowed(top)):
            return None  # (where no other key may come, a character no property name continues is refused: the
            # representative is, so the promise holds with those names' next characters special)
        special = ""
        if node.tracks_keys and top.text != OTHER:
            special = self._next_name_chars(top.node, top.text)
        rep = next((c for c in _PLAIN_REPS if c not in special), None)
        return None if rep is None else (rep, special)

    def ws_twin(self, stack: Stack) -> tuple[Stack, str, str] | None:
        """(twin, whitespace, reads) where the stack's top has read whitespace (a container's or the root's `ws`
        count): every character but the policy's `whitespace` steps it exactly as it steps `twin`, the same stack
        before that whitespace (each step by another character starts from ws=0: _step_object, _step_array,
        _step_root), and of the whitespace it may read `reads` (one more; the rest it refuses). A mask's row is
        then the twin's, not stepped again: after `": ` as after `":`. None where the top has read none."""
        top = stack[-1]
        if not top.ws or top.kind not in (OBJECT, ARRAY, ROOT):
            return None
        return stack[:-1] + (with_ws(top, 0),), self._ws_chars, self._ws_reads(top)

    def string_content(self, stack: Stack):
        """(dfa, state) when the stack's top is a string (its content's DFA; a free string's is FreeString, one
        state) or a key whose text is all its state (`key_trie`; a key whose text is not kept, FreeString's, as
        `_key_step` steps it as a free string), and no escape is open: then a plain character
        (neither the quote, the backslash nor a control character) moves that DFA alone and nothing else; the lazy
        strategy walks such characters compiled. Or a number (its DFA's NumberLexeme, which `ends_open`: the
        characters its DFA moves on move it alone; where it accepts, any other ends it, and `close_top` is the
        stack that reads that character), or a literal (LiteralLexeme: its letters, the last one `closing` it, as
        a quote closes a string). None otherwise."""
        top = stack[-1]
        if top.esc:
            return None
        if top.kind == STRING:
            dfa = self.nodes[top.node].string_dfa
            if dfa is None:
                return (self._free_string, 0) if top.at == 0 else None  # (a free string's frame stays at 0)
            return dfa, top.at
        if top.kind == OBJECT and top.phase == KEY:
            trie = self.key_trie(top)
            if trie is None and self._key_text_free(top):
                return self._free_string, 0  # a key whose text is not kept (JSON mode's): _key_step's free string
            return self._key_content(top, trie)
        if top.kind == NUMBER:  # its DFA, which ends open: a character it does not move on is the parent's
            lexeme = number_lexeme(self.nodes[top.node].number_dfa)
            return None if lexeme is None else (lexeme, top.at)
        if top.kind == LITERAL:  # its word's letters; the last closes it
            return literal_lexeme(top.text), top.at
        if top.kind == UNION:
            return self._union_content(top)
        return None

    def _key_content(self, top: Frame, trie):
        """string_content of a key by `trie`, its key_trie; None where it has none."""
        at = None if trie is None else trie.at(top)
        return None if at is None else (trie, at)

    def _union_content(self, top: Frame):
        """string_content of a union whose every branch is in a string or a key at the same state of the same DFA
        (branches of one object's shape writing one property's value, or one key of objects with the same names), or
        in a key of an object whose name tree (KeyTrie) tells its state, of different names: then the tree of all
        their names, whose text tells each branch's (the text where it continues one of the branch's names, else
        OTHER, as `_key_step` steps it), beside which a key of an object that tracks no names goes along unchanged. A
        plain character moves every branch as that DFA says and ends none, so the DFA's state is the union's. None
        otherwise (a number's or a literal's end is left to the union's own step)."""
        contents, free = [], 0
        for alt in top.alts:
            frame = alt[-1]
            kind = frame.kind
            if kind != STRING and not (kind == OBJECT and frame.phase == KEY):
                return None
            if kind == STRING:
                got = self.string_content(alt)
                if got is None:
                    return None
            else:  # (a key by its tree alone: string_content's free string is not one the union's DFA can read)
                got = None if frame.esc else self._key_content(frame, self.key_trie(frame))
                if got is None:
                    # A key of an object that tracks no names (any key, its text not kept): plain characters leave
                    # its frame as it is (_key_char), so it goes along with whatever the other branches read
                    if frame.esc or not self._key_text_free(frame):  # (ks: not free)
                        return None
                    free += 1
                    continue
            contents.append(got)
        if not contents:
            return None
        first = contents[0]
        if all(got[0] is first[0] and got[1] == first[1] for got in contents):
            return first if not free or type(first[0]) is KeyTrie else None
        if not free and all(alt[-1].kind == STRING for alt in top.alts):
            return self._checked_or_free(contents)
        tries = [got[0] for got in contents]
        if not all(type(t) is KeyTrie for t in tries):
            return None
        key = frozenset(map(id, tries))  # (name trees are kept by the checker: their ids stay theirs)
        union = self._union_tries.get(key)
        if union is None:
            union = self._union_tries[key] = KeyTrie(sorted(set().union(*(t.texts[1:t.other] for t in tries))),
                                                     OTHER)
        text = next((alt[-1].text for alt in top.alts if alt[-1].text != OTHER and self.key_trie(alt[-1]) is not None),
                    OTHER)
        return union, union.state_of[text]

    def _checked_or_free(self, contents: list):
        """A union's strings' content where each branch's is one DFA X at one state d or a free string's:
        (or_free(X), d) (structbench.jsonschema.string_unions), else None."""
        checked = None
        for got in contents:
            if got[0] is self._free_string:
                continue
            if checked is None:
                checked = got
            elif got[0] is not checked[0] or got[1] != checked[1]:
                return None
        if checked is None or not isinstance(checked[0], DFA):
            return None
        union = or_free(checked[0])
        return None if union is None else (union, checked[1])

    def _or_free_at(self, stack: Stack, top: Frame, at: int, dfa) -> Stack:
        """with_string_state of a union read by or_free(X): its branches checked by X at state `at` (gone where `at`
        is the sink), its free strings as they are; what is left settled as _step_union settles it."""
        checked, sink, alts = dfa.or_free_of, dfa.free_sink, []
        for alt in top.alts:
            frame = alt[-1]
            if self.nodes[frame.node].string_dfa is checked:
                if at != sink:
                    alts.append(alt if frame.at == at else alt[:-1] + (with_at(frame, at),))
            else:
                alts.append(alt)
        if len(alts) == len(top.alts) and all(a is b for a, b in zip(alts, top.alts)):
            return stack
        return self._settle(stack[:-1], top, alts)

    def with_string_state(self, stack: Stack, at: int, dfa=None) -> Stack:
        """The stack `string_content` describes, its DFA moved to `at` by plain characters: what `step` returns.
        dfa: the DFA `string_content` gave for this stack, where the caller has it (a key's is found again else)."""
        top = stack[-1]
        if type(dfa) is OrFreeDFA and top.kind != UNION:
            return stack  # (a union of or_free's settled at its sink: the free string alone, whose frame stays)
        if top.kind == STRING or top.kind == NUMBER or top.kind == LITERAL:
            return stack if top.at == at else stack[:-1] + (with_at(top, at),)
        if top.kind == UNION:  # (_union_content: every branch moved as _step_union steps them)
            if dfa is None:
                dfa = self._union_content(top)[0]
            if type(dfa) is OrFreeDFA:  # a checked string's branches and free ones
                return self._or_free_at(stack, top, at, dfa)
            if type(dfa) is KeyTrie:  # each branch's text: the union's where it is one of its own tree's
                text = dfa.texts[at]
                alts = []
                for alt in top.alts:
                    frame = alt[-1]
                    trie = self.key_trie(frame)
                    if trie is None:  # (a key whose text is not kept: as it is)
                        alts.append(alt)
                        continue
                    own = text if text in trie.state_of else OTHER
                    alts.append(alt if frame.text == own else alt[:-1] + (with_text(frame, own),))
                alts = tuple(alts)
            else:
                alts = tuple(self.with_string_state(alt, at, dfa) for alt in top.alts)
            return stack if alts == top.alts else stack[:-1] + (top._replace(alts=alts),)
        if dfa is None:
            dfa = self.key_trie(top)
            if dfa is None:  # (a key whose text is not kept: string_content's free string)
                dfa = self._free_string
        frame = dfa.frame_at(top, at)
        return stack if frame is top else stack[:-1] + (frame,)

    def mask_key(self, stack: Stack, reach) -> tuple:
        """A key for the stack's mask (structbench.masking.shared_masks): stacks with equal keys allow the same
        tokens. It is the stack with each object's used keys replaced by what a token can find out about them,
        given `reach` (a TokenReach: what the vocabulary's tokens hold around a key):
        * below a value of the object or just after one (`_seen_as_read`): a token reaches them only through a
          comma and a key's opening quote, and `reach.openings` are all the texts tokens hold from there (what
          it finds out there is all a token reads of the object: its node is left out too);
        * in a key that other keys may be (`_key_as_read`): only at the key's closing quote, where a used
          property name is refused, and `reach.closings` are all the keys' ends a token can write;
        and in a key or after an object's comma, the frames below the object are left out where no token can
        close it from there (`reach.member_pops`); elsewhere, the frames below the innermost object or array where
        no token can close it and read on (`_first_read`), and those below an object that may not close
        (`_unclosable_below`). In schema order a strict object is read by its place, not its node (`_place_as_read`).
        At an object's value still to open that no token finishes and reads on past (`_value_reads_past`), the key is
        the value's node and the whitespace read before it alone.
        Each frame's part is numbered (equal parts, one number): the key is a tuple of small numbers, which the
        masks' table hashes at once, not the parts' nested tuples again at every state."""
        # Kept per reach: (it, frame -> part number, part -> number, _first_read's answers, never_cut, _longest_uncut,
        # (value node, whitespace) -> the key of a value read alone, or False, the parts in their numbers' order)
        kept = self._mask_frames.get(id(reach))
        if kept is None or kept[0] is not reach:
            kept = self._mask_frames[id(reach)] = (reach, {}, {}, {},
                                                   never_cut(self.whitespace, reach.closes_read_on),
                                                   _longest_uncut(reach), {}, [])
        frames, parts = kept[1], kept[2]  # frame -> its part's number (stacks share most of their frames)
        top = stack[-1]
        if top.kind == UNION and len(top.alts) <= _UNION_KEYED:
            found = self._union_as_read(top, reach)
            if found is not None:
                return found
        # An object's value still to open, that no token finishes and reads on past (_value_reads_past): a token
        # reads only the whitespace before it and the value, by its node; nothing of the object nor below it.
        if top.kind == OBJECT and top.phase == VALUE and top.child >= 0 and reach.string_values is not None:
            alone = kept[6].get((top.child, top.ws))
            if alone is None:
                alone = kept[6][(top.child, top.ws)] = (
                    False if self._value_reads_past(top.child, reach)  # (in this phase alts and ks are empty)
                    else (_VALUE_ALONE, parts.setdefault(Frame(OBJECT, -1, VALUE, ws=top.ws, child=top.child),
                                                         len(parts))))
            if alone:
                return alone
        # In a key, or after a comma before one, no token reaches below the object (it would have to close it,
        # after the key, a colon and a value; TokenReach.member_pops): the top alone is the key, marked as such.
        if top.kind == OBJECT and top.phase in _MEMBER_NEXT and not reach.member_pops:
            if top.phase == KEY:  # (a key's every character is a new frame: not looked up by it, nor kept per frame)
                return _TOP_ALONE, parts.setdefault(self._mask_frame(top, reach), len(parts))
            got = frames.get(top)
            if got is None:
                got = frames[top] = parts.setdefault(self._mask_frame(top, reach), len(parts))
            return _TOP_ALONE, got
        # Below the innermost object or array, where no token closes it and reads on (container_reach): left out
        first = 0 if top.kind in kept[4] or (top.kind, top.phase) in kept[4] else self._first_read(stack, reach,
                                                                                                  kept[3])
        if len(stack) > kept[5]:  # nor below the containers a token may close (_depth_cut)
            first = max(first, _depth_cut(stack, reach))
        if not reach.member_pops:  # nor below an object no token can close, above those (_unclosable_below)
            first = self._unclosable_below(stack, first)
        out = [_BELOW_UNREAD] if first else []
        for frame in stack[first:] if first else stack:
            got = frames.get(frame)
            if got is None:
                got = frames[frame] = parts.setdefault(self._mask_frame(frame, reach), len(parts))
            out.append(got)
        return tuple(out)

    def _union_as_read(self, top: Frame, reach) -> tuple | None:
        """A union's mask key where every branch's key leaves the branch's bottom frame (its ALT) unread: no token
        finishes a branch, so a token is allowed where some branch allows it, and the union's mask is its
        branches' masks together, told by their keys (a set: branches that read alike count once; one key: the
        mask of that branch alone, shared with any stack of that key). Unions of objects at a key, or at a value
        still to open, share masks so whatever their branches' names or used keys. None where a branch's key
        reads its bottom frame (a token may finish that branch, and the union's own rules then read on)."""
        branches = self._branch_keys(top, reach)
        if branches is None:
            return None
        keys = set()
        for key in branches:
            if key[0] == _UNION_ALONE:
                keys.update(key[1:])
            else:
                keys.add(key)
        if len(keys) == 1:
            return keys.pop()
        return (_UNION_ALONE,) + tuple(sorted(keys))

    def mask_branches(self, stack: Stack, reach) -> list | None:
        """Where the stack's top is a union keyed by its branches (`_union_as_read`), one branch stack per distinct
        branch key: the union's mask is their masks together, each a state of its own whose mask is built once, or
        read back by its key (a branch read alike at the union's next key, or alone after it collapses); None
        elsewhere."""
        top = stack[-1]
        if top.kind != UNION or len(top.alts) > _UNION_KEYED:
            return None
        branches = self._branch_keys(top, reach)
        return None if branches is None else list(branches.values())

    def _branch_keys(self, top: Frame, reach) -> dict | None:
        """A union's branches by their mask keys (each key's first branch), where every key leaves its branch's
        bottom frame unread; None where one does not."""
        found = {}
        for alt in top.alts:
            key = self.mask_key(alt, reach)
            if not key or key[0] not in _READS_ABOVE:
                return None
            found.setdefault(key, alt)
        return found

    def _length_as_read(self, frame: Frame, reach) -> Frame:
        """A string whose content is a length counter alone (minLength, maxLength: `_counted`'s DFA, whose state is
        the characters written): a token writes at most `reach.longest` characters into it (the count is asked
        before each character and at the closing quote; one more is kept as a margin), so where the count is so far
        below minLength that no token reaches it (no closing quote is taken), or at least minLength and so far below
        maxLength that no token reaches that (any is), every count reads alike: the frame's count is that mark
        (_FEW_WRITTEN, _ROOM_LEFT). Else (and where minLength is above maxLength) the frame as it is."""
        if reach.longest is None:
            return frame
        bounds = self._counter_bounds.get(frame.node, False)
        if bounds is False:
            dfa = self.nodes[frame.node].string_dfa
            bounds = self._counter_bounds[frame.node] = None if dfa is None else dfa.__dict__.get("_length_counter")
        if bounds is None:
            return frame
        low, high = bounds
        if high is not None and low > high:  # (contradictory bounds: no count may close, and each moves differently)
            return frame
        n, span = frame.at, reach.longest + 1
        if n + span < low:
            return with_at(frame, _FEW_WRITTEN)
        if low <= n and (high is None or n + span <= high):
            return with_at(frame, _ROOM_LEFT)
        return frame

    def _value_reads_past(self, node_id: int, reach, seen: frozenset = frozenset()) -> bool:
        """Whether some token may finish a value of this node, read from its start, and then read whitespace, a
        comma or a closing brace: only then does a token reach the object the value is a member of (which reads its
        used keys and count at the comma or the brace, and nothing of them before). A string: where its DFA takes
        one of `reach.string_values`. Other values: stepped along `reach.value_tree` from a root whose value is the
        node (so the answer is the node's alone), where whitespace after a finished value counts as reaching the
        object, whatever follows it. A union: where one of its branches' values does."""
        node = self.nodes[node_id]
        if node.alts:  # (a branch met again inside itself: counted as read past, never looked at twice)
            return any(alt in seen or self._value_reads_past(alt, reach, seen | {node_id}) for alt in node.alts)
        if "string" in node.kinds and reach.string_values:
            dfa = node.string_dfa
            if dfa is None or any(dfa.accepts(value) for value in reach.string_values):
                return True
        root = (Frame(ROOT, node_id, VALUE),)
        todo = [(self.step(root, ch), rest) for ch, rest in reach.value_tree.items()]
        while todo:
            stack, tree = todo.pop()
            if stack is None:
                continue
            finished = self._finished(stack)
            for ch, rest in tree.items():
                if finished and (ch == "," or ch == "}" or ch in _JSON_WS):
                    return True
                nxt = self.step(stack, ch)
                if nxt is not None and rest:
                    todo.append((nxt, rest))
        return False

    def _unclosable_below(self, stack: Stack, lowest: int) -> int:
        """The index of the innermost object above `lowest`, below a value of it or after one, that may not close
        once that value is written (a required key still to come), else `lowest` (the lowest frame the key reads so
        far). No token closes it: it would have to write the missing key, its colon and a value before the bracket,
        and no token holds a quote, a colon and then a closing bracket (asked where `reach.member_pops` is false).
        A token reads a frame below only once every frame above it is closed, so none reads below this one: the mask
        key leaves those out, as it leaves out those below a container no token closes and reads on (_first_read).
        An object's frame there is read by what a token can find out of it, not by its node (_seen_as_read,
        in schema order _place_as_read): the nested task's levels share their values' masks so."""
        for j in range(len(stack) - 1, lowest, -1):
            frame = stack[j]
            if frame.kind == OBJECT and frame.phase in _SEEN_UNREAD and not self._may_close(frame):
                return j
        return lowest

    def _first_read(self, stack: Stack, reach, kept: dict) -> int:
        """The index of the lowest frame a token may read: the innermost container's where no token of the
        vocabulary closes it and reads on (structbench.jsonschema.container_reach), else 0 (every frame). kept:
        the answers per container's config, for this reach."""
        if reach.close_texts is None:  # (not known: a reach made by hand)
            return 0
        found = container_config(stack)
        if found is None:
            return 0
        c, config = found
        read_on = kept.get(config)
        if read_on is None:
            read_on = kept[config] = closes_and_reads_on(self.whitespace, config, reach.close_texts,
                                                         reach.closes_read_on)
        return 0 if read_on else c

    def _mask_frame(self, frame: Frame, reach) -> Frame:
        if frame.kind == STRING:
            return self._length_as_read(frame, reach)
        if frame.kind == OBJECT:
            reads = None
            if frame.phase in _SEEN_UNREAD:
                reads = self._seen_as_read(frame, reach)
                if reads is not None and self._ordered:  # (its node and place read as `reads`: _place_as_read)
                    return read_at_place(frame, reads)
            elif frame.phase == KEY or frame.phase == AFTER_COMMA:
                reads = (self._key_as_read if frame.phase == KEY else self._after_comma_as_read)(frame, reach)
                if reads is not None:  # its text and node are read in `reads` as far as a token reads them
                    # (in schema order, its place too, and its count tells nothing: _names_may_be_read)
                    return read_as(frame, reads, _KEY_AS_READ, 0 if self._ordered else None)
            if reads is not None:
                return with_seen(frame, reads)
            if self._ordered and frame.count and not self.nodes[frame.node].counts_keys:
                return without_count(frame)  # (in schema order only a count rule reads it)
        return frame

    def string_dfas(self) -> list:
        """The DFAs string mode reads this schema's strings and keys by (string_content), each once: every checked
        string's content DFA, and every object's key DFA at its first key (KeyTrie, a key product's shared table:
        later keys' contexts share its table and have rows of their own only where they differ)."""
        found, seen = [], set()
        for node_id, node in self.nodes.items():
            dfas = [node.string_dfa]
            if "object" in node.kinds and (node.properties or node.patterns or node.key_dfa is not None):
                dfas.append(self.key_trie(self._key_open(Frame(OBJECT, node_id, OPEN))))
            for dfa in dfas:
                if dfa is not None and id(dfa) not in seen:
                    seen.add(id(dfa))
                    found.append(dfa)
        return found

    def remembered_chars(self, stack: Stack) -> frozenset[str]:
        """The characters past ASCII of the keys the stack's objects (and its unions' branches') have used. A key
        remembered whole is compared with these alone: a constraint, which steps a class of characters by one of
        them (special_chars), steps a token holding one of them by its own characters (masking.tabled)."""
        chars: set[str] = set()
        for frame in stack:
            for key in frame.seen if frame.kind == OBJECT else ():
                if not key.isascii():
                    chars.update(ch for ch in key if ch >= "\x80")
            for alt in frame.alts:
                chars |= self.remembered_chars(alt)
        return frozenset(chars)

    def special_chars(self) -> set[str]:
        """The non-ASCII characters the checker treats individually: those in property names, and the
        ends of every non-ASCII range its string, key and number DFAs tell apart."""
        chars, seen = set(), set()
        for node in self.nodes.values():
            for name, _ in node.properties:
                chars.update(ch for ch in name if ord(ch) >= 128)
            dfas = [node.string_dfa, node.key_dfa, node.number_dfa] + [d for d, _ in node.patterns]
            for dfa in dfas:
                if dfa is not None and id(dfa) not in seen:  # nodes share DFAs (a format's, a bound's): once each
                    seen.add(id(dfa))
                    chars |= non_ascii_ends(dfa)
        return chars

    def is_finite(self) -> bool:
        """Finitely many stacks: no schema reachable from the root refers back to itself (JSON mode does:
        `{}` nests without end) and no object remembers its keys whole."""
        colour: dict[int, int] = {}

        # `again` is `cyclic` itself: a closure that named itself would be a reference cycle, which keeps the
        # checker alive until the garbage collector's next pass
        def cyclic(i: int, again) -> bool:
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
                if colour.get(c) == 1 or (c not in colour and again(c, again)):
                    return True
            colour[i] = 2
            return False

        return not cyclic(self.root, cyclic)

    # --- one character ----------------------------------------------------------------

    def step(self, stack: Stack | None, ch: str) -> Stack | None:
        if stack is None:
            return None
        self.steps_taken += 1  # a union steps each alternative: budgets count these, not characters (masking)
        kind = stack[-1].kind
        step = self._step_of_kind.get(kind)
        if step is None:
            raise AssertionError(f"unknown frame kind {kind!r}")
        return step(self, stack, ch)

    def _step_context(self, stack: Stack, ch: str) -> Stack | None:
        # Stands for the unknown frames below a stack's top (context-split tabling, structbench/masking).
        # Reached in phase "after_value" when the top has closed; any further character belongs to
        # those frames: "refeed", where the walk stops and the real stack takes over.
        top = stack[-1]
        return stack if top.phase == REFEED else (top._replace(phase=REFEED),)

    def _step_root(self, stack: Stack, ch: str) -> Stack | None:
        top, rest = stack[-1], stack[:-1]
        if top.kind == ROOT and self._ws(top, ch):
            return rest + (with_ws(top, top.ws + 1),)
        return self._open_value(rest + (with_ws(top, 0),), top.node, ch) if top.phase == VALUE else None

    def _step_string(self, stack: Stack, ch: str) -> Stack | None:
        top, rest = stack[-1], stack[:-1]
        got = string_step(top.esc, top.at, ch, self.nodes[top.node].string_dfa)
        if got is None:
            return None
        if got is END:
            return self._close(stack)
        if got.esc == top.esc and got.at == top.at:
            return stack
        return rest + (top._replace(esc=got.esc, at=got.at),)

    def _step_number(self, stack: Stack, ch: str) -> Stack | None:
        top, rest = stack[-1], stack[:-1]
        dfa = self.nodes[top.node].number_dfa
        nxt = dfa.step(top.at, ch)
        if nxt is not None:
            return rest + (with_at(top, nxt),)
        # The number can't grow: if it is finished, the character belongs to whatever follows it.
        if top.at in dfa.accepting:
            return self.step(self._close(stack), ch)
        return None

    def _step_literal(self, stack: Stack, ch: str) -> Stack | None:
        top, rest = stack[-1], stack[:-1]
        if top.text[top.at] != ch:
            return None
        at = top.at + 1
        return self._close(stack) if at == len(top.text) else rest + (with_at(top, at),)

    def _step_union(self, stack: Stack, ch: str) -> Stack | None:
        top, rest = stack[-1], stack[:-1]
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

    def _step_object(self, stack: Stack, ch: str) -> Stack | None:
        top, rest = stack[-1], stack[:-1]
        phase = top.phase
        if phase == KEY:
            return self._key_step(rest, top, ch)
        if self._ws(top, ch):
            return rest + (with_ws(top, top.ws + 1),)
        if phase in _BEFORE_MEMBER and ch == '"' and self._may_add_key(top):
            return rest + (self._key_open(top),)
        if phase in _MAY_CLOSE and ch == "}" and self._may_close(top):
            return self._close(stack)
        if phase == AFTER_VALUE and ch == "," and self._may_add_key(top):
            return rest + (with_phase(top, AFTER_COMMA),)
        if phase == COLON:
            return rest + (with_phase(top, VALUE),) if ch == ":" else None
        if phase == VALUE:  # (in schema order, the value's node forgotten below it: value_opened)
            return self._open_value(rest + (value_opened(top) if self._ordered else with_ws(top, 0),), top.child, ch)
        return None

    def _step_array(self, stack: Stack, ch: str) -> Stack | None:
        top, rest = stack[-1], stack[:-1]
        phase = top.phase
        if self._ws(top, ch):
            return rest + (with_ws(top, top.ws + 1),)
        if phase in _MAY_CLOSE and ch == "]" and top.count >= self.nodes[top.node].min_items:
            return self._close(stack)
        if phase == AFTER_VALUE:
            if ch == "," and self._item_node(top) is not None:
                return rest + (with_phase(top, AFTER_COMMA),)
            return None
        if phase in _BEFORE_MEMBER:
            child = self._item_node(top)
            if child is None:
                return None
            return self._open_value(rest + (with_phase(top, VALUE),), child, ch)
        return None

    # --- opening and closing values -----------------------------------------------------

    def _ws(self, top: Frame, ch: str) -> bool:
        return ch in self._ws_chars and (top.kind, top.phase) in self._ws_places and top.ws < self._ws_max

    def _ws_reads(self, top: Frame) -> str:
        """The whitespace characters `_ws` lets this frame read next (the policy's, where it allows them)."""
        return self._ws_chars if (top.kind, top.phase) in self._ws_places and top.ws < self._ws_max else ""

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
                    sub = self._open_value((Frame(ALT, alt, VALUE),), alt, ch)
                    if sub is not None and sub not in subs:
                        subs.append(sub)
            return self._settle(stack, Frame(UNION, node_id), subs)
        kinds = node.kinds
        if ch == "{" and "object" in kinds:
            return stack + (Frame(OBJECT, node_id, OPEN),)
        if ch == "[" and "array" in kinds:
            return stack + (Frame(ARRAY, node_id, OPEN),)
        if ch == '"' and "string" in kinds:
            return stack + (Frame(STRING, node_id, at=node.string_dfa.start if node.string_dfa is not None else 0),)
        if (ch == "-" or "0" <= ch <= "9") and "number" in kinds:
            at = node.number_dfa.step(node.number_dfa.start, ch)
            return None if at is None else stack + (Frame(NUMBER, node_id, at=at),)
        if ch in _LITERALS and _LITERALS[ch] in kinds:
            return stack + (Frame(LITERAL, node_id, text=_LITERALS[ch], at=1),)
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
            return stack[0].phase == DONE
        if len(stack) != 2:
            return False
        top = stack[1]
        if top.kind == NUMBER:
            return top.at in self.nodes[top.node].number_dfa.accepting
        if top.kind == UNION:
            return any(self._finished(a) for a in top.alts)
        return False

    def _close(self, stack: Stack) -> Stack:
        """The innermost value is finished: pop it and tell its parent."""
        stack = stack[:-1]
        parent = stack[-1]
        if parent.kind == ARRAY:
            count = min(parent.count + 1, self._caps[parent.node])
            return stack[:-1] + (parent._replace(phase=AFTER_VALUE, count=count, ws=0),)
        if parent.kind in (ROOT, ALT):
            return stack[:-1] + (with_phase(parent, DONE),)
        return stack[:-1] + (value_done(parent),)

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
        if stack is None or stack[0].kind != ROOT:
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
        return [str(f.kind) for f in stack if f.kind in (OBJECT, ARRAY)]
