"""A schema whose answers a finite automaton reads, compiled to one DFA over characters (outlines' idea), built
from its nodes' own pieces, not by stepping the checker.

With keys in schema order and no recursion, a schema's language is regular: an object is its places in
order, each key a word from the few names that may come there; an array is its items; a string, a number and a
literal are their nodes' DFAs. The DFA built here reads exactly what the checker (`SchemaChecker`, same settings)
reads: each state stands for one checker stack, and each move mirrors one rule of the checker's step (the comments
name them). The lazy strategy then masks it as it masks a pattern (structbench.masking.lazy): every row of the
table computed at compile time in one vectorised lookup, and each mask one compiled walk of the vocabulary's prefix
tree, with no Python state made per step. A fresh answer of a small strict schema then costs its compile and a walk
per mask, not a checker step, a numbered state and a mask key per new stack (docs/design.md, "Regular schemas as one
DFA"). The tests check every schema of the shared corpus it takes against the checker, state by state.

Built only where every piece is one this module mirrors; else :func:`schema_dfa` gives None and the checker is
walked as before. What it takes:

* keys in schema order (``key_order="schema"``); whitespace ``lesson`` or ``compact`` (``flexible`` runs of up to
  64 characters would be a chain of states at every place);
* objects strict (no additionalProperties, patternProperties or propertyNames; no min/maxProperties), whose
  property names are ASCII;
* arrays of one item schema (no prefixItems, minItems or maxItems);
* strings free, or checked by a DFA that moves on ASCII alone (an enum's or a const's words, patterns and formats
  over ASCII; a ``$`` reads a final newline), their escapes spelled as strings.read_char reads them; numbers by their
  node's DFA; the literals;
* unions (anyOf, oneOf, enums of containers) only where their branches open with different characters
  (a string or null; an object or an array); no recursion;
* at most ``limits.max_schema_dfa_states`` states (0: never built).
"""

from __future__ import annotations

from structbench.jsonschema.frames import OBJECT, OPEN, Frame
from structbench.jsonschema.strings import SIMPLE_ESCAPES
from structbench.limits import current as limits
from structbench.regular import DFA

_ASCII_TOP = 0x7F  # a checked string's or a key's DFA moves on ASCII alone here
_QUOTE, _BACKSLASH, _SLASH = 0x22, 0x5C, 0x2F
# strings.SIMPLE_ESCAPES turned round: a character, and the letter that spells it after a backslash
_ESCAPE_LETTERS = {ord(char): ord(letter) for letter, char in SIMPLE_ESCAPES.items()}
_HEX = ((0x30, 0x39), (0x41, 0x46), (0x61, 0x66))
_FREE_RAW = ((0x20, 0x21), (0x23, 0x5B), (0x5D, 0x10FFFF))  # a free string's raw characters: no control, " or \
_NUMBER_STARTS = ((0x2D, 0x2D), (0x30, 0x39))  # what may open a number (the checker's _open_value)
_LITERALS = ("true", "false", "null")


class _NotRegular(Exception):
    """The schema holds a piece this module does not mirror, or its DFA would be too big."""


def schema_dfa(checker) -> DFA | None:
    """The DFA reading exactly what `checker` reads, or None where the schema is outside what this module takes
    (see the module) or its DFA passes `limits.max_schema_dfa_states`."""
    cap = limits().max_schema_dfa_states
    if not cap or checker.key_order != "schema" or checker.whitespace not in ("lesson", "compact"):
        return None
    try:
        return _Builder(checker, cap).build()
    except _NotRegular:
        return None


class _Builder:
    def __init__(self, checker, cap: int):
        self.checker = checker  # (its rules for an object's places: _available_here, _place_after)
        self.nodes = checker.nodes
        self.root = checker.root
        self.cap = cap
        self.ws = checker.whitespace == "lesson"  # one space at an object's value and after a comma (frames.py)
        self.moves: list[list[tuple[int, int, int]]] = []
        self.accepting: set[int] = set()
        self.inherits: list[tuple[int, int]] = []  # (a finished number's state, the state after it): _step_number
        self.open_nodes: set[int] = set()  # the containers being built: one met again inside itself is recursion

    def build(self) -> DFA:
        start = self._new()  # the root before its value (its whitespace: flexible only)
        done = self._new()  # the root once its value is written: the answer may end
        self.accepting.add(done)
        self.moves[start] += self._value(self.root, done)
        for state, after in self.inherits:
            # A finished number's character that it cannot read belongs to what follows it (_step_number): the
            # number's own moves first, then the parent's where the number has none.
            own = self.moves[state]
            self.moves[state] = own + _minus(self.moves[after], own)
            if after in self.accepting:  # a number at the root may end the answer (_finished)
                self.accepting.add(state)
        self._check_size()
        # Sorted; disjoint by construction (each rule reads characters no other rule of its state reads), which
        # structbench.masking.lazy._dfa_rows checks as it writes the table, and the tests with DFA's own check.
        rows = tuple([tuple(sorted(row)) for row in self.moves])
        return DFA.of_checked_moves(rows, frozenset(self.accepting))

    def _new(self) -> int:
        """A new state (the cap is checked per value and per key, whose states are a bounded few, and at the end)."""
        self.moves.append([])
        return len(self.moves) - 1

    def _check_size(self, more: int = 0) -> None:
        """Give up where the states made, and `more` about to be, pass the cap."""
        if len(self.moves) + more > self.cap:
            raise _NotRegular("states")

    def _ws_then(self, state: int) -> int:
        """Under the lesson's whitespace, the state after the one space `state` may read (the same moves but
        whitespace: with_ws, then _ws's ws < 1); the caller gives it the moves it gives `state`."""
        spaced = self._new()
        self.moves[state].append((0x20, 0x20, spaced))
        return spaced

    # --- a value's first character (the checker's _open_value) ---

    def _value(self, node_id: int, after: int) -> list[tuple[int, int, int]]:
        """The moves that open a value of this node, each to the state after its first character; `after` is the
        state once the value is written (its parent's: _close)."""
        node = self.nodes[node_id]
        self._check_size()
        if node.alts:
            # A union whose branches open with different characters: the first character leaves one branch live,
            # whose frames then stand for the union's (_settle), as one node's kinds do. Else a product: not here.
            out = sorted(move for alt in node.alts if self.nodes[alt].kinds for move in self._value(alt, after))
            if any(b[0] <= a[1] for a, b in zip(out, out[1:])):
                raise _NotRegular("a union whose branches open alike")
            return out
        kinds = node.kinds
        out = []
        if "object" in kinds:
            out.append((ord("{"), ord("{"), self._object(node_id, after)))
        if "array" in kinds:
            out.append((ord("["), ord("["), self._array(node_id, after)))
        if "string" in kinds:
            out.append((_QUOTE, _QUOTE, self._string(node.string_dfa, after)))
        if "number" in kinds:
            out += self._number(node.number_dfa, after)
        for word in _LITERALS:
            if word in kinds:
                out.append((ord(word[0]), ord(word[0]), self._literal(word, after)))
        return out

    def _literal(self, word: str, after: int) -> int:
        """The state after a literal's first letter; its last leads to `after` (_step_literal)."""
        first = state = self._new()
        for k, ch in enumerate(word[1:]):
            nxt = after if k == len(word) - 2 else self._new()
            self.moves[state].append((ord(ch), ord(ch), nxt))
            state = nxt
        return first

    def _number(self, dfa, after: int) -> list[tuple[int, int, int]]:
        """The moves into the number's DFA from its start, on a minus or a digit alone (_open_value); its states
        copied, each finished one reading on as the state after the number (inherits, resolved in build)."""
        self._check_size(dfa.n_states)
        base = len(self.moves)
        for s in range(dfa.n_states):
            self.moves.append([(lo, hi, base + t) for lo, hi, t in dfa.moves[s]])
            if s in dfa.accepting:
                self.inherits.append((base + s, after))
        return [(max(lo, a), min(hi, b), base + t) for lo, hi, t in dfa.moves[dfa.start]
                for a, b in _NUMBER_STARTS if lo <= b and a <= hi]

    def _string(self, dfa, after: int) -> int:
        """The state after a string's opening quote (_step_string, strings.string_step)."""
        if dfa is None:  # free: any character but a control one, the quote or the backslash; any escape
            inside, escape = self._new(), self._new()
            self.moves[inside] += [*((lo, hi, inside) for lo, hi in _FREE_RAW), (_QUOTE, _QUOTE, after),
                                   (_BACKSLASH, _BACKSLASH, escape)]
            self.moves[escape] += [(ord(ch), ord(ch), inside) for ch in SIMPLE_ESCAPES]
            digits = [self._new() for _ in range(4)]  # \\u, then four hex digits, whatever they spell (not strict)
            self.moves[escape].append((ord("u"), ord("u"), digits[0]))
            for k, state in enumerate(digits):
                nxt = digits[k + 1] if k < 3 else inside
                self.moves[state] += [(lo, hi, nxt) for lo, hi in _HEX]
            return inside
        self._check_size(dfa.n_states)  # (before its rows are looked at: some have thousands)
        for row in dfa.moves:
            if row and row[-1][1] > _ASCII_TOP:
                raise _NotRegular("a checked string's characters past ASCII")
        return self._checked_text(dfa.moves, dfa.start, dfa.accepting, after)

    def _checked_text(self, moves, start: int, accepting, after: int) -> int:
        """A text checked by a DFA over ASCII (a checked string's content, or a key's names: strings.read_char, strict):
        each character written plain where it may be (not a control character, the quote or the backslash), or
        escaped: \\" \\\\ \\/ \\b \\f \\n \\r \\t for those it stands for, \\u and four hex digits of either case for a
        control character or DEL (for no printable one: strings.ANY_CHAR); its closing quote to `after` where the DFA
        accepts. A backslash is read where some escape may come (escape_candidates), each digit of a \\u escape where
        some character it may still spell is read. The state after the opening quote."""
        self._check_size(len(moves))
        base = len(self.moves)
        rows = [[] for _ in range(len(moves))]
        self.moves.extend(rows)
        for s, row in enumerate(moves):
            out, escaped, spelled = rows[s], [], []  # plain moves; simple escapes; \u escapes' (code, target)
            for lo, hi, t in row:
                target = base + t
                if lo == hi:  # (most: a name's or a word's next letter)
                    if lo >= 0x20 and lo != _QUOTE and lo != _BACKSLASH:
                        out.append((lo, lo, target))
                    letter = _ESCAPE_LETTERS.get(lo)
                    if letter is not None:
                        escaped.append((letter, letter, target))
                    if lo < 0x20 or lo == 0x7F:
                        spelled.append((lo, target))
                    continue
                if hi >= 0x20:
                    out += [(a, b, target) for a, b in _minus_codes(max(lo, 0x20), hi, (_QUOTE, _BACKSLASH))]
                escaped += [(letter, letter, target) for code, letter in _ESCAPE_LETTERS.items() if lo <= code <= hi]
                spelled += [(code, target) for code in (*range(lo, min(hi, 0x1F) + 1), 0x7F) if lo <= code <= hi]
            if escaped or spelled:
                escape = self._new()
                out.append((_BACKSLASH, _BACKSLASH, escape))
                self.moves[escape] = escaped
                if spelled:
                    self.moves[escape].append((ord("u"), ord("u"), self._hex_spellings(spelled)))
            if s in accepting:
                out.append((_QUOTE, _QUOTE, after))
        return base + start

    def _hex_spellings(self, spelled: list[tuple[int, int]]) -> int:
        """The state after `\\u` where these code points (each with its target) may be spelled: the trie of their four
        hex digits, a letter digit in either case (strings.read_char lowers them)."""
        first = self._new()
        states = {"": first}
        for code, target in sorted(spelled):
            digits = f"{code:04x}"
            for k in range(4):
                prefix, digit = digits[:k], digits[k]
                last = k == 3
                nxt = target if last else states.get(digits[:k + 1])
                if nxt is None:
                    nxt = states[digits[:k + 1]] = self._new()
                elif not last:
                    continue  # (its moves into the prefix are made)
                for ch in {digit, digit.upper()}:
                    self.moves[states[prefix]].append((ord(ch), ord(ch), nxt))
        return first

    # --- containers ---

    def _enter(self, node_id: int) -> None:
        if node_id in self.open_nodes:
            raise _NotRegular("recursion")
        self.open_nodes.add(node_id)

    def _array(self, node_id: int, after: int) -> int:
        """The state after `[` (_step_array)."""
        node = self.nodes[node_id]
        if node.prefix or node.min_items or node.max_items is not None:
            raise _NotRegular("a counted array")
        self._enter(node_id)
        item = node.items if node.items is not None and self.nodes[node.items].kinds else None  # (_item_node)
        opened, done = self._new(), self._new()  # after [, after an item
        close = (ord("]"), ord("]"), after)
        self.moves[opened].append(close)
        self.moves[done].append(close)
        if item is not None:
            comma = self._new()
            self.moves[done].append((ord(","), ord(","), comma))
            spaced = self._ws_then(comma) if self.ws else None  # (ARRAY, AFTER_COMMA): a whitespace place
            first = self._value(item, done)
            self.moves[opened] += first
            self.moves[comma] += first
            if spaced is not None:
                self.moves[spaced] += first
        self.open_nodes.discard(node_id)
        return opened

    def _object(self, node_id: int, after: int) -> int:
        """The state after `{` (_step_object, keys in schema order: ObjectKeys._available, _may_close, _key_step).
        Its states are this occurrence's own: they lead to `after`."""
        node = self.nodes[node_id]
        if (node.additional is not None or node.patterns or node.key_dfa is not None or node.min_props
                or node.max_props is not None):
            raise _NotRegular("an object past its named properties")
        props = node.properties
        for name, _ in props:
            if not name.isascii():
                raise _NotRegular("a property name past ASCII")
        self._enter(node_id)
        self._keys_fit(node_id, len(props))
        colons: dict[int, int] = {}  # place -> the state after a key that leads there (COLON)
        keys: dict[tuple, int] = {}  # the names that may come -> the state after the key's opening quote (KEY)

        def before_member(place: int, state: int) -> None:
            """A state before a key at `place` (OPEN, AFTER_COMMA): the key's opening quote where a name may come
            (_may_add_key)."""
            names = self._names_at(node_id, place)
            if names:
                found = keys.get(names)
                if found is None:
                    found = keys[names] = self._key(names, {name: colon(self.checker._place_after(node_id, name))
                                                            for name in names})
                self.moves[state].append((_QUOTE, _QUOTE, found))

        def colon(place: int) -> int:
            """The state after a key that leaves the object at `place` (its name's index + 1): COLON, then its
            value (VALUE, whose whitespace is a place), then AFTER_VALUE."""
            found = colons.get(place)
            if found is not None:
                return found
            found = colons[place] = self._new()
            value = self._new()
            self.moves[found].append((ord(":"), ord(":"), value))
            spaced = self._ws_then(value) if self.ws else None
            first = self._value(props[place - 1][1], after_value(place))
            self.moves[value] += first
            if spaced is not None:
                self.moves[spaced] += first
            return found

        def after_value(place: int) -> int:
            """AFTER_VALUE at `place`: the closing brace where no required property is left (_may_close), the comma
            where a name may come (_may_add_key), then AFTER_COMMA (a whitespace place)."""
            done = self._new()
            if self._may_close_at(node_id, place):
                self.moves[done].append((ord("}"), ord("}"), after))
            if self._names_at(node_id, place):
                comma = self._new()
                self.moves[done].append((ord(","), ord(","), comma))
                spaced = self._ws_then(comma) if self.ws else None
                before_member(place, comma)
                if spaced is not None:
                    before_member(place, spaced)
            return done

        # Built from the last place back, so each place's keys find the places after them built (a recursion of
        # three calls a property would pass Python's limit on wide objects).
        for place in range(len(props), 0, -1):
            if self.nodes[props[place - 1][1]].kinds:
                colon(place)
        opened = self._new()
        if self._may_close_at(node_id, 0):
            self.moves[opened].append((ord("}"), ord("}"), after))
        before_member(0, opened)
        self.open_nodes.discard(node_id)
        return opened

    def _names_at(self, node_id: int, place: int) -> tuple[str, ...]:
        """The property names that may come at an object's place, sorted (the checker's ObjectKeys._available_here,
        kept per node and place)."""
        return tuple(sorted(self.checker._available_here(Frame(OBJECT, node_id, OPEN, at=place))))

    def _may_close_at(self, node_id: int, place: int) -> bool:
        """Whether an object may close at its place (the checker's ObjectKeys._may_close: no required property
        left)."""
        return self.checker._may_close(Frame(OBJECT, node_id, OPEN, at=place))

    def _keys_fit(self, node_id: int, n_props: int) -> None:
        """Give up at once where the object's key tries alone would pass the cap: each place's names that may come
        make a trie of up to their characters' count, so optional properties make them grow as the square of their
        number (counted until the cap is passed, not for every place of a wide object)."""
        room = self.cap - len(self.moves)
        for place in range(n_props + 1):
            room -= sum(len(name) + 1 for name in self._names_at(node_id, place))
            if room < 0:
                raise _NotRegular("states")

    def _key(self, names: tuple[str, ...], closes: dict[str, int]) -> int:
        """The state after a key's opening quote where `names` may come: the trie of their characters (_key_char: a
        text no name that may come starts with is refused), each whole name's closing quote to its own state in
        `closes` (_key_end). Escapes as in a checked string (_checked_text)."""
        self._check_size()
        texts = {"": 0}  # each prefix of a name: its trie state
        moves: list[list[tuple[int, int, int]]] = [[]]
        ends: dict[int, str] = {}
        for name in names:
            state = 0
            for k, ch in enumerate(name):
                nxt = texts.get(name[:k + 1])
                if nxt is None:
                    nxt = texts[name[:k + 1]] = len(moves)
                    moves.append([])
                    moves[state].append((ord(ch), ord(ch), nxt))
                state = nxt
            ends[state] = name
        base = len(self.moves)
        start = self._checked_text(moves, 0, frozenset(), -1)  # (no quote from it: each name's own, below)
        for state, name in ends.items():
            self.moves[base + state].append((_QUOTE, _QUOTE, closes[name]))
        return start


def _minus_codes(lo: int, hi: int, codes) -> list[tuple[int, int]]:
    """lo..hi without the given code points."""
    out, a = [], lo
    for code in sorted(codes):
        if a <= code <= hi:
            if a < code:
                out.append((a, code - 1))
            a = code + 1
    if a <= hi:
        out.append((a, hi))
    return out


def _minus(moves, own) -> list[tuple[int, int, int]]:
    """The moves of `moves` on the characters `own` has no move on."""
    out = []
    for lo, hi, t in moves:
        parts = [(lo, hi)]
        for a, b, _ in own:
            parts = [piece for x, y in parts for piece in ((x, min(y, a - 1)), (max(x, b + 1), y)) if piece[0] <= piece[1]]
        out += [(x, y, t) for x, y in parts]
    return out
