"""The lazy strategy: a schema never seen before, masked at once. Nothing is tabled ahead; each state's mask is
built when first met (by a compiled walk of the vocabulary's prefix tree, structbench.masking.trie_walk) and
kept, so a state met again is a table read as in `tabled`.

What a fresh schema pays is the machine's rows for the states its answer meets, and the walks: everything that
depends on the vocabulary alone (the prefix tree, the classes below each node, the compiled walk) is built once
per vocabulary by :func:`structbench.masking.tabled.index_vocabulary` and shared by every schema. Inside a
string (a free one's DFA has one state; a checked one's is its content's: maxLength, pattern, format, enum) or a
key, plain characters are read by that DFA's own table (structbench.masking.string_mode), not by the machine: no
machine state is made per character, nor per escape where the text is free (structbench.jsonschema.free_text), nor
per digit of a number or letter of a literal (structbench.jsonschema.lexemes).
"""

from __future__ import annotations

import weakref
from bisect import bisect_right
from functools import cache, partial
from itertools import chain

import numpy as np

from structbench.jsonschema.checker import SchemaChecker
from structbench.jsonschema.regular_schema import schema_dfa
from structbench.limits import current as limits
from structbench.limits import exceeded
from structbench.lm.vocab import Vocabulary
from structbench.masking import trie_walk
from structbench.masking.bitmask import pack_bits, unpack_bits
from structbench.masking.protocol import Machine, PatternMachine
from structbench.masking.shared_masks import token_reach
from structbench.masking.string_mode import StringRows
from structbench.masking.tabled import (
    LazyDense,
    TabledConstraint,
    machine_boundaries,
    pattern_boundaries,
    steps_taken,
    vocab_codes,
)
from structbench.masking.token_index import unicode_escape_prefixes

_BUSY = 64  # pending nodes on one state in one round that make its whole row worth computing
_WHOLE_ROWS = 1 << 18  # a pattern's DFA with up to this many (state, class) cells is tabled whole at compile time
_FEW_VALUE = 16  # a value after a key's colon that may start with at most this many characters: its row at once
_FEW = 3  # a state after a string's closing quote that may read at most this many characters: its row at once
# (a key's colon; a value's comma and closing bracket. 2 to 8 read alike by A/B, 16 much slower: docs/design.md)
_UNASKED = object()  # _content_at's mark of a state not asked about yet (None is an answer)
_FEW_PENDING = 32  # a round with at most this many pending nodes finds its distinct cells in Python (TrieDense._fill)


class TrieDense(LazyDense):
    """A :class:`LazyDense` whose masks walk the vocabulary's prefix tree (structbench.masking.trie_walk), which
    keeps, per state whose row it computes whole, the classes it loops on (so the walk takes whole subtrees of string
    content at once), and which reads the plain characters of strings and keys by their DFAs
    (structbench.masking.string_mode): every machine state inside one is numbered with its string-mode row
    (`_enter`), where a walk that reaches it goes on in string mode.
    Without numba its masks are LazyDense's vectorised token walk: the same masks."""

    EXPAND_HINTED = False  # only the cells a walk meets: tokens deep into a state read few of its characters

    def __init__(self, machine: Machine, boundaries: np.ndarray, vocab: Vocabulary):
        self._n_words = (len(boundaries) + 63) // 64
        self._loops = np.zeros((self.FIRST_STATES, self._n_words), dtype=np.uint64)
        self._loops_known = np.zeros(self.FIRST_STATES, dtype=bool)
        self._enter = np.full(self.FIRST_STATES, -1, dtype=np.int64)  # per state: its string-mode row, -1 for none
        # Per state whose loops are known: it reads any run of plain characters (`total`), and it refuses every
        # control character; per lex row, the latter for string mode. What a mask's walk starts from.
        self._total = np.zeros(self.FIRST_STATES, dtype=bool)
        self._quiet = np.zeros(self.FIRST_STATES, dtype=bool)
        self._lex_quiet: dict[int, bool] = {}
        self._string_content_of = getattr(machine, "string_content", None)
        self._content: dict[int, tuple | None] = {}  # per state: (its string's DFA, DFA state), or None
        self._content_states: dict[int, int] = {}  # id of a string's DFA (kept alive by _content) -> its content states
        self._hinted: set[int] = set()  # states whose hints are applied to their rows (_apply_hints)
        self._strings = StringRows(boundaries, *map(_weakly, (self._trie_depth, self._escaped_at, self._closed_at,
                                                              self._ended_at)), unicode_escape_prefixes(vocab))
        self.compiled = trie_walk.compiled()
        self._walk_setup: tuple | None = None  # what every mask's walk starts from (_set_up_walks)
        self._closing_cols: tuple | None = None  # the classes of the quote and the comma (_closes_here)
        self._ws_twin_of = getattr(machine, "ws_twin", None)
        self._awaiting: dict[int, list[tuple[int, str, str]]] = {}  # per twin not expanded yet: (state, ws, reads)
        super().__init__(machine, boundaries, vocab)

    def tables_ahead(self, dfas) -> None:
        """String mode's tables of these DFAs (the machine's strings and keys) made now (StringRows.tables_ahead)."""
        self._strings.tables_ahead(dfas)

    def id_of(self, state, content=_UNASKED) -> int:
        """content: the machine's `string_content` of the state, where the caller has asked for it already."""
        n = len(self.states)
        i = self._ids.setdefault(state, n)  # (one hash of the state, not a lookup and then an insert)
        if i != n:  # most calls: a state met before
            return i
        self._number(state, self.machine.can_end(state))  # (LazyDense.id_of's numbering)
        if self.compiled:  # new: inside a string or key, the walk reads on in string mode
            if content is _UNASKED:  # (_content_at's question, asked here of the state in hand)
                content = self._string_content_of(state) if self._string_content_of is not None else None
            self._content[i] = content
            if content is not None:
                self._enter[i] = self._strings.row(content[0], self.machine.with_string_state(state, 0), content[1])
            elif self._ws_twin_of is not None:
                self._from_twin(i)
        elif content is not _UNASKED:
            self._content[i] = content
        return i

    def adopt(self, rows: np.ndarray, accepting) -> None:
        """A whole DFA's table at once (a regular schema's: structbench.jsonschema.regular_schema): its states
        numbered as themselves (the start, 0, is numbered already), `rows` their transitions over these classes,
        and their loops known, with no state numbered or row computed one at a time."""
        n = len(rows)
        if n * self._trans.shape[1] > limits().max_table_cells:
            raise exceeded("max_table_cells", f"a table of {n:,} states x {self._trans.shape[1]} character classes "
                           f"is past the limit")
        if n > len(self._expanded):  # the per-state arrays at their length at once, not doubled step by step
            self._grow(n - len(self._expanded))
        known = len(self.states)
        self.states.extend(range(known, n))
        self._ids.update(zip(range(known, n), range(known, n)))
        self._accepting[sorted(accepting)] = True
        self._trans[:n] = rows
        self._expanded[:n] = True
        self._note_loops(np.arange(n))

    def _from_twin(self, i: int) -> None:
        """State i's row from its whitespace twin's (the machine's `ws_twin`: after `": ` as after `":`), copied, not
        stepped: the twin's row where it is expanded, else as soon as it is (a twin's own row numbers its state
        after a space while it is being computed). The whitespace it may still read is left to be stepped; where
        it may read none, the row is whole, and a walk that meets it (after `": ` most values' first characters)
        does not stop there for a round."""
        found = self._ws_twin_of(self.states[i])
        if found is None:
            return
        twin, whitespace, reads = found
        j = self._ids.get(twin)
        if j is None:
            return
        if not self._expanded[j]:
            self._awaiting.setdefault(j, []).append((i, whitespace, reads))
            return
        self._copy_twin(i, j, whitespace, reads)

    def _copy_twin(self, i: int, j: int, whitespace: str, reads: str) -> None:
        if self._expanded[i]:
            return
        row = self._trans[j].copy()
        row[self._classes_of(whitespace)] = -1  # refused, but those it may read: stepped when met
        if reads:
            row[self._classes_of(reads)] = self.UNEXPANDED
        self._trans[i] = row
        if not reads:
            self._expanded[i] = True
            # No loop: the whitespace that leads back to i is refused in it, and every other step from its twin
            # leaves the whitespace count behind (ws_twin), so no cell is i.
            self._no_loop(i)

    def _string_state(self, i: int, d: int) -> int:
        """The id of the machine state where state i's string (i is inside one) has its DFA at d: what a plain
        character leads to. A new one is numbered with i's string and DFA (their string-mode row is i's string's at
        d), not asked of the machine again (string_content, and the string's stack at d=0 hashed to find its rows)."""
        dfa, at = self._content[i]
        state = self.machine.with_string_state(self.states[i], d, dfa)  # (a key's DFA known: not looked up again)
        n = len(self.states)
        j = self._ids.setdefault(state, n)
        if j != n:
            return j
        # Numbered as LazyDense numbers (TrieDense.id_of would ask the machine for what follows). Inside a string, a
        # key or a literal a value is open, so the output may not end; inside a number it may (its DFA ends open).
        self._number(state, getattr(dfa, "ends_open", False) and self.machine.can_end(state))
        self._content[j] = (dfa, d)
        if self.compiled:
            self._enter[j] = self._enter.item(i) - at + d
        return j

    def step_text(self, i: int, text: str) -> int | None:
        """LazyDense.step_text, where inside a string or a key a run of plain characters moves its DFA alone (string
        mode's table, as a walk reads it), and only the state where the run ends is numbered, not one per character
        (a key's name read in one token: one state, not eight)."""
        if self._wide is not None and not text.isascii():  # (keys remembered whole: each character by its own)
            return LazyDense.step_text(self, i, text)
        k, n = 0, len(text)
        ascii, bounds = self._ascii, self._bounds  # a character's class: a list index where ASCII, else a bisect
        while k < n:
            if self.compiled and self._enter.item(i) >= 0:
                dfa, at = self._content_at(i)
                strings, d = self._strings, at
                base = self._enter.item(i) - at  # the string's first row: its DFA state d is row base + d
                lex, lex_row = strings.lex, strings.lex_row
                content_states = self._content_states.get(id(dfa))
                if content_states is None:  # (per DFA, kept: asked at every advance inside a string or key)
                    content_states = self._content_states[id(dfa)] = strings.content(dfa).content_states
                at_row = lex_row.item(base + d)  # (lex_row holds a DFA's own rows where it overrides a shared table)
                row = None if at_row > 0 else strings.lex_of(dfa, d)  # (0: a row not made yet, built by rows)
                while k < n:
                    o = ord(text[k])
                    c = ascii[o] if o < 128 else bisect_right(bounds, o) - 1
                    nxt = lex.item(at_row, c) if row is None else row.item(c)  # (a cell, not a row view a character)
                    if not 0 <= nxt < content_states:  # refused, or the quote or the backslash: the machine's
                        break
                    if nxt != d:  # (a free string's content stays in one state: its row stays)
                        d, at_row = nxt, lex_row.item(base + nxt)
                        row = None if at_row > 0 else strings.lex_of(dfa, d)
                    k += 1
                if k < n and nxt == trie_walk.CLOSE:  # the closing quote where a walk has found what follows it
                    closed = strings.closes.item(base + d)
                    if closed != trie_walk.UNKNOWN:
                        if closed < 0:
                            return None
                        i, k = closed, k + 1
                        continue
                if k < n and nxt == trie_walk.END:  # a number's end: the state after it reads this character
                    ended = strings.closes.item(base + d)
                    if ended != trie_walk.UNKNOWN:
                        if ended < 0:
                            return None
                        i = ended
                        continue
                if d != at:
                    i = self._string_state(i, d)
                if k == n:
                    break
            o = ord(text[k])  # (LazyDense.step, inline: most advances' characters)
            c = ascii[o] if o < 128 else bisect_right(bounds, o) - 1
            nxt = self._trans.item(i, c)
            if nxt == self.UNEXPANDED:
                if k + 1 < n and self._rows_of is None:  # characters follow: stepped on, not numbered (_step_on)
                    found = self._step_on(i, c, text, k + 1)
                    if found is None:
                        return None
                    i, k = found
                    continue
                self._fill_one(i, c)
                nxt = self._trans.item(i, c)
            if nxt < 0:
                return None
            i, k = nxt, k + 1
        return i

    def _step_on(self, i: int, c: int, text: str, k: int) -> tuple[int, int] | None:
        """A token's advance from state i by class c, whose cell is not known, with text[k:] still to read: the
        machine steps on without numbering the states it passes (after `": ` or `, "`: a space, a quote), until
        one is numbered already, or inside a string or key (numbered: string mode reads on), or the text ends
        (numbered: the advance's state). (state, k) where the caller goes on; None where refused. The cell is not
        kept: most such states had their masks shared, and no walk may ever read their rows (one that does steps
        it then), while numbering each state a token passes costs more than its step."""
        before = steps_taken(self.machine)
        stack = self._step_cell(i, c)
        n = len(text)
        while stack is not None:
            j = self._ids.get(stack)
            if j is None:
                content = self._string_content_of(stack) if self._string_content_of is not None else None
                if k == n or content is not None:
                    j = self.id_of(stack, content)  # (its string content asked once)
            if j is not None:
                break
            stack = self.machine.step(stack, text[k])
            k += 1
        if self.fuel is not None:
            self.fuel.spend(steps_taken(self.machine) - before or 1)
        return None if stack is None else (j, k)

    def _grow(self, by: int | None = None) -> None:
        """LazyDense's arrays and this one's, twice as long (or `by` states longer)."""
        super()._grow(by)
        grow = len(self._expanded) - len(self._loops_known)
        if grow > 0:
            self._loops = np.concatenate([self._loops, np.zeros((grow, self._n_words), dtype=np.uint64)])
            self._loops_known = np.concatenate([self._loops_known, np.zeros(grow, dtype=bool)])
            self._enter = np.concatenate([self._enter, np.full(grow, -1, dtype=np.int64)])
            self._total = np.concatenate([self._total, np.zeros(grow, dtype=bool)])
            self._quiet = np.concatenate([self._quiet, np.zeros(grow, dtype=bool)])

    def mask(self, i: int) -> tuple[np.ndarray, int]:
        """The allowed tokens at state i, and the trie nodes looked at."""
        if not self.compiled:
            return super().mask(i)
        bits, steps = self.mask_packed(i)
        return unpack_bits(bits, vocab_codes(self.vocab).size), steps

    def end_only(self, i: int) -> np.ndarray | None:
        """The end token's bits alone where state i is a value done that reads no character (no whitespace after it):
        the last mask of every answer, one read-only array for all (VocabCodes.end_only_bits); None elsewhere.
        TabledConstraint._build asks it after the mask key's lookup, in place of the stored masks' lookup and a
        walk: no kept or stored mask is cheaper to read than this one."""
        if self.compiled and self._accepting[i] and self._reads_nothing(i):
            return (self._walk_setup or self._set_up_walks())[0].end_only_bits
        return None

    def _reads_nothing(self, i: int) -> bool:
        """Whether state i reads no character (no string's or key's, no row yet, and its may_read hint empty)."""
        return self._enter[i] < 0 and not self._expanded[i] and self._hints_of(i)[0] == ""

    def mask_packed(self, i: int) -> tuple[np.ndarray, int]:
        """The allowed tokens at state i as int32 words (structbench.masking.bitmask's layout), and the trie nodes
        looked at: the compiled walk sets the bits itself, so no boolean row over the vocabulary is made."""
        if not self.compiled:
            allowed, steps = super().mask(i)
            return pack_bits(allowed), steps
        vc, index, n_bytes = self._walk_setup or self._set_up_walks()
        reads_nothing = self._reads_nothing(i)
        if reads_nothing and self._accepting[i]:  # the value done, no whitespace after it: the end token alone
            return vc.end_only_bits, 0
        if index is None or reads_nothing:  # a vocabulary of no token but the end; a state that reads no character
            bits = np.zeros(n_bytes, dtype=np.uint8)
            if self._accepting[i]:
                bits[vc.eos_id >> 3] |= np.uint8(1 << (vc.eos_id & 7))
            return bits.view("<i4"), 0
        strings = self._strings
        counted = 0
        if self._enter[i] >= 0:
            start, mode = int(self._enter[i]), trie_walk.STRING
            lex_row = int(strings.lex_row[start])
            if lex_row == 0 or strings.run[lex_row] < 0:  # a DFA built by rows, this row or its run not made yet
                strings.rows([start])  # (StringRows): made first, for its `total`
                lex_row = int(strings.lex_row[start])
            closing = self._closing_rows(i, start, lex_row)
            if closing:  # (each would stop the walk's first round for a round of its own)
                strings.closes_for(closing)
            total = bool(strings.total[lex_row])
            if total:
                refuses_controls = self._lex_refuses_controls(lex_row)
            else:  # a maxLength counter: its plain-only tokens are those short enough
                counted = strings.counted(start)
        else:
            start, mode = i, trie_walk.MACHINE
            if not self._expanded[i]:  # the whole row: the first level needs nearly every class, and its loops
                self._expand([i])
            total, refuses_controls = bool(self._total[i]), bool(self._quiet[i])  # (_note_loops)
        if total:  # any run of plain characters is read from here: every plain token at once, their subtrees skipped
            bits = index.trie.plain_bits.copy()  # (a copy, not zeros and then an `or`: the mask starts as them)
        elif counted:  # up to `counted` plain characters: those plain tokens at once, the same skips (string mode
            bits = index.trie.plain_bits_upto(counted).copy()  # refuses control characters)
            refuses_controls = True
        else:
            bits = np.zeros(n_bytes, dtype=np.uint8)
            refuses_controls = False
        if self._accepting[i]:
            bits[vc.eos_id >> 3] |= np.uint8(1 << (vc.eos_id & 7))
        steps = trie_walk.walk(index, start, mode, lambda: (self._trans, self._loops, self._loops_known, self._enter),
                               self._fill, strings, bits, skip_plain=total or bool(counted),
                               refuses_controls=refuses_controls)
        return bits.view("<i4"), steps

    def mask_of_whole(self, i: int) -> tuple[np.ndarray, int]:
        """mask_packed where every row is known (adopt): state i is no string's and its loops are known, so the
        walk is one round, and none of mask_packed's questions about strings and rows is asked."""
        vc, index, n_bytes = self._walk_setup or self._set_up_walks()
        if index is None:  # (a vocabulary of no token but the end: mask_packed's own answer)
            return self.mask_packed(i)
        total = self._total.item(i)
        if total:
            bits = index.trie.plain_bits.copy()
        else:
            bits = np.zeros(n_bytes, dtype=np.uint8)
        if self._accepting.item(i):
            bits[vc.eos_id >> 3] |= np.uint8(1 << (vc.eos_id & 7))
        steps = trie_walk.walk(index, i, trie_walk.MACHINE, lambda: (self._trans, self._loops, self._loops_known,
                                                                     self._enter),
                               self._fill, self._strings, bits, skip_plain=total,
                               refuses_controls=total and self._quiet.item(i))
        return bits.view("<i4"), steps

    def _closing_rows(self, i: int, start: int, lex_row: int) -> list[int]:
        """The string-mode rows whose closing quote a mask's walk from state i (at row `start`) meets at once, where
        the machine state after the quote is not known yet: the start's own (Llama 3's `"`, `",`, `":`, ...), and
        in a key any other key may be, the other keys' state (punctuation then a quote: `)"`, `."`, 188 nodes of
        Llama 3's tree). Computed before the walk, not in a round of their own."""
        strings = self._strings
        rows = [start] if strings.closes.item(start) == trie_walk.UNKNOWN and self._closes_here(lex_row) else []
        dfa, at = self._content[i]
        other = getattr(dfa, "other", None)  # (a KeyTrie's: the state of any key no property name continues)
        if other is not None and other != at:
            r = start - at + other
            if strings.closes.item(r) == trie_walk.UNKNOWN and self._closes_here(strings.lex_row.item(r)):
                rows.append(r)
        return rows

    def _closes_here(self, lex_row: int) -> bool:
        """Whether string mode's lex row closes its string at a quote (or ends its number at a comma): then a walk
        from it meets the machine state after the string at its first round's tokens that start so (Llama 3's `"`,
        `",`, `":`, ...), which would stop that round for it (the walk's NEED_CLOSE) and walk them again."""
        found = self._closing_cols
        if found is None:
            found = self._closing_cols = tuple(self._class_indexes(ch)[0] for ch in '",')
        quote, comma = found
        row = self._strings.lex
        return row.item(lex_row, quote) == trie_walk.CLOSE or row.item(lex_row, comma) == trie_walk.END

    def _set_up_walks(self) -> tuple:
        """(the vocabulary's codes, its index over these classes or None where it has no token to walk, the bytes of
        a mask's bits in whole int32 words), found at the first mask and kept: each mask starts from them."""
        vc = vocab_codes(self.vocab)
        index = self._token_index(vc) if len(vc.token_ids) else None
        self._walk_setup = (vc, index, -(-vc.size // 32) * 4)
        return self._walk_setup

    def _lex_refuses_controls(self, lex_row: int) -> bool:
        """Whether string mode's lex row refuses every control character (asked once per row; where they are classes
        0-31, those cells counted as Python ints: a NumPy reduction, at the start of a mask, cost tens of µs)."""
        found = self._lex_quiet.get(lex_row)
        if found is None:
            controls = self._control_classes()
            row = self._strings.lex[lex_row]
            if isinstance(controls, slice):
                found = row[controls].tolist().count(-1) == controls.stop - controls.start
            else:
                found = bool(self._refuses_controls(row))
            self._lex_quiet[lex_row] = found
        return found

    def _refuses_controls(self, rows: np.ndarray):
        """Per row (of the machine's or string mode's classes): is every control character refused? A class's
        first character is its representative (the checker's partitions: classes 0-31, read as a slice)."""
        return (rows[..., self._control_classes()] == -1).all(axis=-1)

    def _reads_plain_runs(self, loops: np.ndarray):
        """Per row of loop bits: does the state loop on every plain character (so it reads any run of them)?"""
        return ~((self._strings.plain & ~loops) != 0).any(axis=-1)

    def _trie_depth(self) -> int:
        return self._token_index(vocab_codes(self.vocab)).trie.depth

    def _content_at(self, i: int) -> tuple | None:
        """(the string's DFA, its state) where state i is inside a string or key with no escape open (the
        machine's `string_content`), else None; asked once per state."""
        found = self._content.get(i, _UNASKED)
        if found is not _UNASKED:
            return found
        found = self._content[i] = self._string_content_of(self.states[i]) if self._string_content_of else None
        return found

    def _escaped_at(self, stack, d: int, then: str = "") -> int:
        """The machine state after a backslash in the string `stack` is in, its DFA at d, then after `then` where
        given (the `u` a checked string's escape row leaves to the machine: string_mode._escape_rows); -1 where
        refused. Its row (the characters the escape may hold next) is computed now, not in another round of the
        walk. As after a closing quote, the string's own state at d is not numbered: the walk never stands on it."""
        i = self._after(stack, d, "\\")
        if then and i >= 0:
            i = self.step_text(i, then)
            i = -1 if i is None else i
        if i >= 0 and not self._expanded[i] and self._content_at(i) is None:
            self._expand([i])
        return i

    def _closed_at(self, stack, d: int, closing: str = '"') -> int:
        """The machine state after the string's closing quote (a literal's last letter) at DFA state d (-1:
        refused), with its row computed now where it may read only a few characters (a colon, a comma or a closing
        bracket, a space)."""
        i = self._after(stack, d, closing)
        self._few_now(i)
        return i

    def _ended_at(self, stack, d: int) -> int:
        """The machine state after the number `stack` is in, ended at its DFA state d (one its DFA accepts:
        StringRows.closes_for asks for no other): the state that reads the character ending it. One per number,
        whichever state it ends at (a string's closing quote is read per DFA state); its row computed now where it
        may read only a few characters."""
        i = self.id_of(self.machine.close_top(self.machine.with_string_state(stack, d)))
        if self.fuel is not None:
            self.fuel.spend(1)
        self._few_now(i)
        return i

    def _few_now(self, i: int) -> None:
        """State i's row now, where it may read only a few characters (after a string or a number: a colon, a comma
        or a closing bracket, a space); and so the rows a token read past them next needs (each a round of the walk
        else): after a key's colon the value's, where it may start with few, and after that an object's or an
        array's opening bracket's; after a value's comma what may come next."""
        if self._few(i, _FEW) is not None:
            value = self._few_after(i, ":", _FEW_VALUE)
            if value is not None:
                self._few_after(value, "{", _FEW)
                self._few_after(value, "[", _FEW_VALUE)
            self._few_after(i, ",", _FEW)

    def _few(self, i: int, most: int) -> str | None:
        """State i's row computed now where it is not yet, i is no string's or key's, and it may read at most `most`
        characters (its may_read hint): those characters, else None."""
        if i < 0 or self._expanded[i] or self._content_at(i) is not None:
            return None
        may = self._hints_of(i)[0]
        if may is None or len(may) > most:
            return None
        self._expand([i])
        return may

    def _few_after(self, i: int, ch: str, most: int) -> int | None:
        """_few of the state after `ch` from state i (whose row is computed), where i may read it: that state."""
        if ch not in self._hints_of(i)[0]:
            return None
        j = int(self._trans[i, self._class_indexes(ch)[0]])
        return j if self._few(j, most) is not None else None

    def _after(self, stack, d: int, ch: str) -> int:
        """The machine state after `ch` (the closing quote, a backslash) in the string `stack` is in, its DFA at d
        (-1: refused)."""
        before = steps_taken(self.machine)
        nxt = self.machine.step(self.machine.with_string_state(stack, d), ch)
        if self.fuel is not None:
            self.fuel.spend(steps_taken(self.machine) - before or 1)
        return -1 if nxt is None else self.id_of(nxt)

    def _fill(self, cur: np.ndarray, cls: np.ndarray) -> None:
        if self._rows_of is not None:  # a pattern's DFA: whole rows, vectorised (LazyDense._fill, _expand_rows)
            return super()._fill(cur, cls)
        # A state many nodes wait on is worth its whole row: once its loops are known, the walk takes the subtrees
        # it loops on whole (a free string's content). Its row first: its cells are then all known, and are not
        # gathered, hinted and looked up one by one (after a value's colon and a space, ~90 classes of one state).
        if len(cur) >= _BUSY:
            counts = np.bincount(cur)
            busy = np.flatnonzero(counts >= _BUSY)
            busy = busy[~self._expanded[busy]]
            if len(busy):
                self._expand(busy)
                rest = ~self._expanded[cur]
                cur, cls = cur[rest], cls[rest]
        if len(cur) <= _FEW_PENDING:  # most rounds: on a handful of nodes NumPy's cost per call is most of the work
            cells = sorted(set(zip(cur.tolist(), cls.tolist())))
        else:
            states, classes = self._cells(cur, cls)
            cells = list(zip(states.tolist(), classes.tolist()))
        self._fill_distinct(cells)

    def _fill_one(self, i: int, c: int) -> None:
        """A token's advance asks for one cell: stepped alone, the state's hints neither applied to its row nor
        asked for (most such states had their mask shared, not walked, and no walk may ever read their rows; one
        that does asks for them then)."""
        if self._rows_of is not None:
            return super()._fill_one(i, c)
        if (self._enter[i] >= 0) if self.compiled else (self._content_at(i) is not None):
            self._string_cells([i], [c])
            return
        before = steps_taken(self.machine)
        nxt = self._step_cell(i, c)
        self._trans[i, c] = -1 if nxt is None else self.id_of(nxt)
        if self.fuel is not None:
            self.fuel.spend(steps_taken(self.machine) - before or 1)

    def _step_cell(self, i: int, c: int):
        """The machine's step from state i on class c where one cell is asked for: by its hints where a walk asked
        for them (they may spare the step), else the class's representative stepped (what the hints would give,
        without asking for them)."""
        return self._step_class(i, c) if i in self._hints else self.machine.step(self.states[i], self.reps[c])

    def _fill_distinct(self, cells: list[tuple[int, int]]) -> None:
        """The distinct cells (state, class), ordered by state: a state inside a string or key has its cells from
        the DFA's (a walk asks only for a backslash's or a quote's, which the machine steps; a token's advance asks
        for plain characters too); any other has its hints applied once, then its cells stepped."""
        if self.compiled:  # id_of has numbered the string-mode row of every state inside one
            enter = self._enter
            inside = [enter[i] >= 0 for i, _ in cells]
        else:
            inside = [self._content_at(i) is not None for i, _ in cells]
        if any(inside):
            strings = [cell for cell, x in zip(cells, inside) if x]
            self._string_cells([i for i, _ in strings], [c for _, c in strings])
            cells = [cell for cell, x in zip(cells, inside) if not x]
        last = -1
        for i, _ in cells:  # the states, in order, once each
            if i != last:
                last = i
                if not self._expanded[i] and i not in self._hinted and self._content_at(i) is None:
                    self._apply_hints(i)
        self._fill_cells(cells)

    def _string_cells(self, cur: list, cls: list) -> None:
        """The distinct cells (cur[k], cls[k]) of states inside a string or key: a plain character's is the
        machine state of the DFA's next state, a control character's or a refused quote's -1, and the machine
        steps the backslash and a quote the DFA accepts."""
        before = steps_taken(self.machine)
        for i, c in zip(cur, cls):
            if self._trans[i, c] != self.UNEXPANDED:
                continue
            dfa, at = self._content_at(i)
            d = int(self._strings.lex_of(dfa, at)[c])
            if 0 <= d < self._strings.content(dfa).content_states:
                nxt = self._string_state(i, d)
            elif d == -1:
                nxt = -1
            else:  # the backslash, the quote (also into free text's escape rows: the machine's own step, here)
                got = self._step_cell(i, c)
                nxt = -1 if got is None else self.id_of(got)
            self._trans[i, c] = nxt  # id_of may grow the table: index it anew
        if self.fuel is not None:
            self.fuel.spend(steps_taken(self.machine) - before or len(cur))

    def _apply_hints(self, i: int) -> None:
        """What the machine's hints settle in state i's row (`_settle_by_hints`), in bulk, at its first cell: the
        walk meets a state's cells one round at a time, and a cell each would be a Python step each (after a
        key's quote, the tokens below read every class there)."""
        self._hinted.add(i)
        hints = self._hints_of(i)
        if hints[0] is None and hints[1] is None:
            return
        before = steps_taken(self.machine)
        row = self._trans[i].copy()
        self._settle_by_hints(i, row)
        self._trans[i] = row  # id_of may have grown the table: index it anew
        if self.fuel is not None:
            self.fuel.spend(steps_taken(self.machine) - before or 1)

    def _expand(self, ids) -> None:
        others = []
        for i in ids:
            i = int(i)
            content = None if self._expanded[i] else self._content_at(i)
            if content is None:
                others.append(i)
            else:
                self._expand_string(i, *content)
        super()._expand(others)
        self._note_loops(ids if len(ids) == 1 else np.asarray(ids, dtype=np.int64))  # (one: most calls, no array)
        if self._awaiting:  # states whose whitespace twin's row this was (_from_twin)
            for i in others:
                for waiting in self._awaiting.pop(i, ()):
                    self._copy_twin(waiting[0], i, *waiting[1:])

    def _expand_string(self, i: int, dfa, at: int) -> None:
        """State i's row where it is inside a string or key at DFA state `at`: a plain character moves the
        DFA alone (the machine's `with_string_state` of the DFA's next state, one machine state a DFA state, not a
        step a class); control characters are refused, and the quote where the DFA does not accept; the quote
        and the backslash otherwise are the machine's steps."""
        before = steps_taken(self.machine)
        lex = self._strings.lex_of(dfa, at)
        content_states = self._strings.content(dfa).content_states
        plain = (lex >= 0) & (lex < content_states)
        targets = np.unique(lex[plain])
        ids = np.array([self._string_state(i, d) for d in targets.tolist()], dtype=np.int32)
        row = self._refused.copy()
        row[plain] = ids[np.searchsorted(targets, lex[plain])]
        # The quote, the backslash (also where string mode reads the escape itself: free text's escape rows)
        stepped = (lex == trie_walk.EXIT) | (lex == trie_walk.CLOSE) | (lex >= content_states)
        for c in np.flatnonzero(stepped).tolist():
            nxt = self._step_class(i, c)
            row[c] = -1 if nxt is None else self.id_of(nxt)
        ends = np.flatnonzero(lex == trie_walk.END)
        if len(ends):  # a number's end: what the state after it reads (its row whole, each character stepped once)
            after = self.id_of(self.machine.close_top(self.states[i]))
            if not self._expanded[after]:
                self._expand([after])
            row[ends] = self._trans[after, ends]
        if self.fuel is not None:  # as LazyDense._expand: after the row, which is all or nothing
            self.fuel.spend(steps_taken(self.machine) - before + len(targets) or 1)
        self._trans[i] = row  # id_of may have grown the table: index it anew
        self._expanded[i] = True

    def _no_loop(self, i: int) -> None:
        """A row known to lead back to i on no class (a row of few characters, whose every cell LazyDense._expand
        wrote; a twin's copied whole): its loop bits are the zeros they are, known without the kernel's pass."""
        self._loops_known[i] = True

    def _note_loops(self, ids: np.ndarray) -> None:
        """The loop bits of `ids`, whose rows _expand has just computed whole (a row completed cell by cell is a
        state tokens pass through, whose subtrees are walked, not taken whole)."""
        if len(ids) == 1:  # most calls: one state, without the fancy indexing
            i = int(ids[0])
            if self._loops_known[i]:
                return
            # (compiled: NumPy's `in` on one row costs ten times the call; most rows do not loop)
            loops = trie_walk.loops_back(self._trans, i) if self.compiled else i in self._trans[i]
            if loops:
                row = self._trans[i]
                self._loops[i] = trie_walk.bool_bits(row == i, self._n_words)
                self._total[i] = total = self._reads_plain_runs(self._loops[i])
                if total:  # asked only where the state reads any plain run
                    self._quiet[i] = self._refuses_controls(row)
            self._loops_known[i] = True
            return
        ids = ids[~self._loops_known[ids]]
        if not len(ids):
            return
        rows = self._trans[ids]
        looping = rows == ids[:, None]  # all at once: most of these states loop on nothing
        if looping.any():
            self._loops[ids] = trie_walk.bool_bits_rows(looping, self._n_words)
            self._total[ids] = total = self._reads_plain_runs(self._loops[ids])
            if total.any():
                self._quiet[ids[total]] = self._refuses_controls(rows[total])
        self._loops_known[ids] = True


def _weakly(method):
    """A bound method as a callable that does not keep its object alive: StringRows calls back the TrieDense that
    holds it, and a strong reference each way would be a cycle, left to the garbage collector's passes (which then
    walk every state of every schema met since the last one) instead of freed with its constraint. (A weak reference
    to the object and its class's function: a WeakMethod makes a bound method at every call, and a close calls.)"""
    ref, func = weakref.ref(method.__self__), method.__func__
    return lambda *args: func(ref(), *args)


def lazy_constraint(machine: Machine, vocab: Vocabulary) -> TabledConstraint:
    """The lazy strategy's constraint over a pattern's DFA or a schema's checker; a schema whose language is regular
    and small (keys in schema order, no recursion: structbench.jsonschema.regular_schema) as the one DFA
    that reads what its checker reads, masked as a pattern is."""
    if isinstance(machine, SchemaChecker):
        dfa = schema_dfa(machine)
        if dfa is not None:
            return _regular_schema_constraint(dfa, vocab)
    if not isinstance(machine, PatternMachine):
        boundaries = machine_boundaries(machine.special_chars())
        mask_key = getattr(machine, "mask_key", None)
        if mask_key is not None:  # states no token tells apart share one mask (shared_masks)
            mask_key = partial(mask_key, reach=token_reach(vocab))
        constraint = TabledConstraint(machine, vocab, boundaries, eager=False, split=False, dense=TrieDense,
                                      mask_key=mask_key)
        string_dfas = getattr(machine, "string_dfas", None)
        if string_dfas is not None and constraint.dense.compiled:
            # The tables of the checked strings' and each object's first key's DFAs now, at compile time, at once:
            # built inside the masks that first meet them, each meets cold caches and a walk's round (a checked
            # string's 270 µs, a key's names 100 µs), and together they make most of TBM's slowest steps (docs/design.md)
            constraint.dense.tables_ahead(string_dfas())
        return constraint
    boundaries = _pattern_classes(machine.dfa)
    constraint = TabledConstraint(machine, vocab, boundaries, eager=False, split=False, dense=TrieDense)
    if machine.dfa.n_states * len(boundaries) <= _WHOLE_ROWS:
        # A small DFA's every row now, in one vectorised lookup: its masks' walks then never stop for a row. (The
        # masks stay lazy: each is walked when first asked for.)
        dense = constraint.dense
        for state in range(machine.dfa.n_states):
            dense.id_of(state)
        dense._expand(range(len(dense.states)))
    return constraint


class WholeTableConstraint(TabledConstraint):
    """A lazy constraint whose machine's whole table is known at compile time (TrieDense.adopt: a regular schema's
    DFA). A mask is one compiled walk that no round stops (every cell is known), built when first asked for; it
    needs none of the checker's shortcuts (mask keys, twins, branches, the end token's mask), nor a budget for
    steps: it takes none."""

    def _build(self, state: int) -> None:
        bits, steps = self.dense.mask_of_whole(state)
        bits.flags.writeable = False
        self._bits[state] = bits
        self.work.chars += steps
        self.work.masks_built += 1


def _regular_schema_constraint(dfa, vocab: Vocabulary) -> TabledConstraint:
    """A regular schema's DFA (structbench.jsonschema.regular_schema) as a lazy constraint: its whole table now,
    over the checker's classes (its moves are cut at ASCII characters alone, so those classes refine them and the
    vocabulary's shared index serves it). Each mask is then one compiled walk, built when first asked for."""
    boundaries = _shared_classes()[0]
    constraint = WholeTableConstraint(PatternMachine(dfa), vocab, boundaries, eager=False, split=False,
                                      dense=TrieDense)
    constraint.dense.adopt(_dfa_rows(dfa, boundaries), dfa.accepting)
    return constraint


def _dfa_rows(dfa, boundaries: np.ndarray) -> np.ndarray:
    """The DFA's table over the classes (-1: refused), every move written over the classes it spans at once. Each
    move must start and end at class boundaries (a partition that refines the DFA's): checked, an error if not."""
    n = dfa.n_states
    rows = np.full((n, len(boundaries)), -1, dtype=np.int32)
    per_state = np.fromiter(map(len, dfa.moves), dtype=np.int64, count=n)
    m = np.fromiter(chain.from_iterable(chain.from_iterable(dfa.moves)), dtype=np.int64,
                    count=3 * int(per_state.sum())).reshape(-1, 3)  # (lo, hi, target) per move, state by state
    if not len(m):
        return rows
    state = np.repeat(np.arange(n), per_state)
    first = np.searchsorted(boundaries, m[:, 0], side="right") - 1
    last = np.searchsorted(boundaries, m[:, 1], side="right") - 1
    ends = np.append(boundaries, 0x110000)
    if (boundaries[first] != m[:, 0]).any() or (ends[last + 1] != m[:, 1] + 1).any():
        raise ValueError("_dfa_rows: the classes do not refine the DFA's moves")
    # Two moves of one state on one character (a state's moves are sorted): not a DFA
    if ((state[1:] == state[:-1]) & (m[1:, 0] <= m[:-1, 1])).any():
        raise ValueError("_dfa_rows: the DFA's moves overlap")
    counts = last - first + 1
    offsets = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
    rows.reshape(-1)[np.repeat(state * len(boundaries) + first, counts) + offsets] = np.repeat(m[:, 2], counts)
    return rows


def _pattern_classes(dfa) -> np.ndarray:
    """The classes a pattern's masks walk: the checker's (every ASCII character its own class), whose index over
    the vocabulary `index_vocabulary` built once, wherever they refine the pattern's own; else the pattern's own,
    indexed now. A finer partition gives the same masks (each class lies inside one of the pattern's), and an
    index costs a pass over every token's characters: per schema, that would be most of a fresh answer."""
    own = pattern_boundaries(dfa)
    shared, cuts = _shared_classes()
    return shared if cuts.issuperset(own.tolist()) else own


@cache
def _shared_classes() -> tuple[np.ndarray, frozenset]:
    """machine_boundaries() (read-only: every pattern that shares it gets this one array) and its cuts as a set."""
    shared = machine_boundaries()
    shared.flags.writeable = False
    return shared, frozenset(shared.tolist())
