"""String mode's tables: every string a lazy mask's walk reads by a DFA, in the arrays the compiled walk indexes.

Inside a string or a key whose text is all its state, plain characters (neither the quote, the backslash nor a
control character) move a DFA alone: a checked string's content DFA (maxLength, pattern, format, enum), a free
string's one state (structbench.jsonschema.free_text.FreeString), or the key's prefix tree of property names
(structbench.jsonschema.key_trie). The walk reads them by the DFA's table (:class:`StringContent`, one per DFA),
so no machine state is made per character. Free text's escapes are rows of that table too (after the DFA's own
states: `content_states` of them), so none is made per escape either; so are a checked string's simple escapes
(`\\n` moves its DFA by a newline), whose `\\u` escapes alone are the machine's. A number is read so too
(structbench.jsonschema.lexemes): no quote closes it; a character its DFA does not move on ends it (`END`), and
is read again in the machine from the state after the number (`closes`). A literal's letters too: its last one
closes it, as the quote closes a string.

A *string* is one such DFA at one place in the machine: the machine stack around its content, which says where
its backslash and closing quote lead. Each string gets one *row* per DFA state (:class:`StringRows`), and a
walk's state in string mode is a row: every string met is registered as its first machine state is numbered,
so a walk enters string mode wherever it meets one, not only where it starts.
"""

from __future__ import annotations

import bisect
import functools

import numpy as np

from structbench.jsonschema.free_text import (
    ANY_CHAR_BOUNDS,
    ESCAPABLE_BOUNDS,
    checked_escape_rows,
)
from structbench.jsonschema.string_unions import OrFreeDFA
from structbench.jsonschema.strings import dfa_live_on, escape_candidates
from structbench.masking import trie_walk
from structbench.regular.charsets import (
    MAX_CODE_POINT,
    ascii_own,
    bounds_of,
    json_classes,
    json_plain,
    meets,
)
from structbench.regular.dfa import move_shape, moves_array, next_states

_QUOTE, _BACKSLASH = 0x22, 0x5C
_FIRST_LEX_ROWS, _FIRST_ROWS = 128, 512  # StringRows' tables' first lengths
_ESCAPABLE = escape_candidates("\\")  # what an escape may stand for in checked content (strings.py)


class StringContent:
    """One string DFA over one class partition, as string mode reads it: `row(d)[c]` the DFA state after a plain
    character of class c (-1 dead, and for control characters; CLOSE for the quote where d accepts, else -1;
    EXIT for the backslash); `run[d]` how many plain characters in a row the DFA surely takes from d (-1 not
    known yet).

    The table is built whole at once where it is small (every DFA state's row in one vectorised pass, kept on the
    DFA for every schema that shares it: the walk then never stops for a row), else a row on first need, stored
    as it is made (`whole` False: a maxLength counter of 32,767 has as many states, of which a walk meets a few;
    a table for all would be tens of megabytes); a length counter's product with another DFA (an email under a
    maxLength of 254), a level of counts at a time (`_level_rows`). A key's DFA
    (structbench.jsonschema.key_trie.KeyTrie) builds its own table."""

    def __init__(self, dfa, boundaries: np.ndarray, cap: int, unicode_escapes: tuple[str, ...] | None = None):
        """unicode_escapes: the hex digits the vocabulary's tokens hold after a `\\u` (unicode_escape_prefixes), read
        in the table where its escapes are rows (None: the `u` is left to the checker)."""
        self.cap = cap  # run lengths are followed up to the deepest token: no walk needs more
        # The DFA states that are the string's content (a machine state each); free text's DFA (a key's, a free
        # string's) may have more after them, which read an escape (structbench.jsonschema.free_text): no machine
        # state is one of those.
        self.content_states = getattr(dfa, "content_states", dfa.n_states)
        # A number's DFA ends open (structbench.jsonschema.lexemes): no quote closes it, and `closes` is the
        # machine state after it, which reads the character that ends it.
        self.ends_open = getattr(dfa, "ends_open", False)
        self.accepting = dfa.accepting if self.ends_open else None  # (where such a number may end)
        self.closing = getattr(dfa, "closing", '"')  # what CLOSE reads: the quote, or a literal's last letter
        self._counted: dict[int, int] = {}
        codes = np.asarray(boundaries, dtype=np.int64)
        self._codes = codes
        self._plain, self._quote, self._backslash, _ = json_classes(codes)
        self._touched: list[int] = []  # states whose row or run was made since `touched` was last asked
        tables = _whole_tables(dfa, codes, self._plain, cap, unicode_escapes)
        self.whole = tables is not None
        if self.whole:
            self._table, self.run, self.total, self.loops = tables
            self.n_rows = len(self._table)  # (a checked string's escapes are rows after its states: _dfa_lex_table)
            self.room = count_room(dfa, self.n_rows)  # (None: its loops are its own, read however deep)
            self.count_targets = None
            # Kept on its DFA (string_content), it does not point back: a DFA made per schema (a key's names, a
            # pattern, a bounded number) and its tables are then freed by reference counting with the schema, not
            # left as a cycle to a collector's pass inside some later schema's masks. A whole table needs no DFA.
            self.dfa = None
            return
        self.dfa = dfa  # (its rows are made from its moves as they are met; this content is not kept on it)
        # A length counter's product (regular.automata.CountLevels) has its rows made a level at a time, from its
        # other DFA's table, several levels ahead of the one asked for (_level_rows); and, where every ASCII
        # character is a class of its own, each state's simple escapes as a row after the states, as a whole
        # table's (_dfa_lex_table: state d's at n + d), not a machine state each.
        self._levels = getattr(dfa, "__dict__", {}).get("count_levels")
        self._levels_made = None if self._levels is None else np.zeros(len(self._levels.starts) - 1, dtype=bool)
        self._escape_rows = self._levels is not None and ascii_own(codes)
        self._other: tuple | None = None  # (_other_tables, made at the first level)
        self.n_rows = 2 * dfa.n_states if self._escape_rows else dfa.n_states
        self.room = count_room(dfa, self.n_rows)
        self.count_targets = count_targets(dfa, self.n_rows)  # (StringRows.rows: where each row made loops)
        self.total = np.zeros(self.n_rows, dtype=bool)  # not known: never claimed
        self.loops = None  # (StringRows notes a row's loops as it is stacked)
        self._accepting = np.zeros(dfa.n_states, dtype=bool)
        self._accepting[list(dfa.accepting)] = True
        self._at = np.full(self.n_rows, -1, dtype=np.int64)  # per row: where it is in _table, -1 not made yet
        self._shapes: dict[tuple, np.ndarray] = {}  # a shape of moves -> its row's template (_row)
        # Per state: the one next state every plain class leads to (-1: none, or not one), -2 until its shape is
        # known. A chain cut short (_run) is followed again from its last states: their shapes are not asked anew.
        self._next = np.full(self.n_rows, -2, dtype=np.int64)
        self._table = np.empty((8, len(codes)), dtype=np.int32)
        self._made = 0
        self.run = np.full(self.n_rows, -1, dtype=np.int64)

    @property
    def lex(self) -> np.ndarray:
        """The whole table (UNKNOWN in rows not made yet, for a DFA built by rows: made here, for checks only)."""
        if self.whole:
            return self._table
        out = np.full((self.n_rows, len(self._codes)), trie_walk.UNKNOWN, dtype=np.int32)
        made = np.flatnonzero(self._at >= 0)
        out[made] = self._table[self._at[made]]
        return out

    def row(self, d: int) -> np.ndarray:
        """DFA state d's row, made on first need."""
        if self.whole:
            return self._table[d]
        at = self._at[d]
        if at < 0:
            self._row(d)
            at = self._at[d]
        return self._table[at]

    def touched(self) -> np.ndarray:
        """The states whose row or run was made since the last call (a DFA built by rows), once each."""
        found = np.unique(np.array(self._touched, dtype=np.int64))
        self._touched.clear()
        return found

    def rows(self, ds: np.ndarray) -> None:
        if self._levels is not None:
            self._level_rows(ds)
        for d in ds.tolist():
            self._row(d)
            self._run(d)

    def made_rows(self, ds: np.ndarray) -> np.ndarray:
        """The rows of states `ds` of a DFA built by rows, each made already, as one array."""
        return self._table[self._at[ds]]

    def _level_rows(self, ds: np.ndarray, runs: bool = True) -> None:
        """For a length counter's product: the rows of every level from each of `ds`'s to `_LEVELS_AHEAD` levels
        beyond (the walk reads on into them: a walk asking for one row at a time stopped for a round at each
        character), all at once from the other DFA's table, with their escape rows, and their runs. The row of the
        pair (count, s) is s's row in the other DFA, its targets the pairs one level up (-1 where that pair is not
        kept): the product's moves, as `_row` reads them; its escape row is _dfa_lex_table's.
        A row asked for is a state's or its escape row's. runs: False inside `_run`'s chain, which follows them on
        itself (the runs of a chain's other states are found when their rows are asked for: -1 until then, which
        claims nothing)."""
        levels, made = self._levels, self._levels_made
        n = self.dfa.n_states
        wanted = np.zeros(len(made) + _LEVELS_AHEAD, dtype=bool)
        for c in (np.searchsorted(levels.starts, np.where(ds < n, ds, ds - n), side="right") - 1).tolist():
            wanted[c:c + _LEVELS_AHEAD] = True
        wanted = np.flatnonzero(wanted[:len(made)] & ~made)
        if not len(wanted):
            return
        made[wanted] = True
        starts = levels.starts
        ids = np.concatenate([np.arange(starts[c], starts[c + 1]) for c in wanted.tolist()])
        other_next, escapable_to, by_code_to, pair_at, level_of = self._other_tables()
        s = levels.others[ids]
        up = level_of[ids] + 1  # the level a move leads to: one up; at the top, the top again where it loops
        top = len(made) - 1
        up[up > top] = top if levels.top_loops else top + 1  # (top + 1: a level of no pairs)
        pairs = pair_at[up]  # per row: the other DFA's state -> its pair one level up, -1 where none is kept
        raw = np.take_along_axis(pairs, other_next[s], axis=1).astype(np.int32)  # (every class: escapes read it)
        kept = pairs[:, :-1] >= 0
        escapable = (escapable_to[s] & kept).any(axis=1)
        rows = np.where(self._plain, raw, np.int32(-1))
        rows[:, self._quote] = np.where(self._accepting[ids], trie_walk.CLOSE, -1)[:, None]
        if self._escape_rows:
            rows[:, _BACKSLASH] = np.where(escapable, n + ids, -1)
            by_code = (by_code_to[s] & kept).any(axis=1)
            self._store_rows(np.concatenate([ids, n + ids]),
                             np.concatenate([rows, checked_escape_rows(raw, by_code, trie_walk.EXIT)]))
            self._next[n + ids] = -1
            self.run[n + ids] = 0
        else:
            rows[:, self._backslash] = np.where(escapable, trie_walk.EXIT, -1)[:, None]
            self._store_rows(ids, rows)
        plain = rows[:, self._plain]
        if plain.shape[1]:  # the one next state every plain class leads to (_shape's `one`), else -1
            one = (plain[:, 0] >= 0) & (plain == plain[:, :1]).all(axis=1)
            self._next[ids] = np.where(one, plain[:, 0], -1)
        else:
            self._next[ids] = -1
        ends = self._next[ids] < 0
        self.run[ids[ends & (self.run[ids] < 0)]] = 0  # (_run's answer where no plain character goes on alike)
        if runs:
            for d in ids[~ends].tolist():  # (a counter's chain: followed as ever)
                self._run(d)

    def _other_tables(self) -> tuple:
        """(the other DFA's state after each class's first character, its -1 the pair map's last cell; whether a
        character an escape may stand for moves state s to state t, and one a `\\u` escape may; per level, the
        other DFA's state -> its pair in the level (-1: not kept), with a level of none after the top; each pair's
        level): kept on this content."""
        found = self._other
        if found is None:
            levels = self._levels
            other = levels.other
            moves = moves_array(other)
            other_next = next_states(other, self._codes, moves)
            other_next[other_next < 0] = other.n_states
            to = []
            for bounds in (ESCAPABLE_BOUNDS, ANY_CHAR_BOUNDS):
                pairs = np.zeros((other.n_states, other.n_states), dtype=bool)
                on = meets(moves[:, 1], moves[:, 2], bounds)
                pairs[moves[on, 0], moves[on, 3]] = True
                to.append(pairs)
            n_levels = len(levels.starts) - 1
            level_of = np.repeat(np.arange(n_levels), np.diff(levels.starts))
            pair_at = np.full((n_levels + 1, other.n_states + 1), -1, dtype=np.int64)
            pair_at[level_of, levels.others] = np.arange(len(level_of))
            found = self._other = (other_next, *to, pair_at, level_of)
        return found

    def _store_rows(self, ds, rows: np.ndarray) -> None:
        """Rows of states `ds` (a list, or an array) stored at once."""
        end = self._made + len(ds)
        if end > len(self._table):
            self._table = _grown(self._table, max(end, 2 * self._made), trie_walk.UNKNOWN)
        self._table[self._made:end] = rows
        self._at[ds] = np.arange(self._made, end)
        self._made = end
        self._touched.extend(ds if type(ds) is list else ds.tolist())

    def counted(self, d: int) -> int:
        """n where, from d, a run of plain characters is read up to n of them and never further (a maxLength
        counter with n characters left: the chain `run` follows ends where no plain character goes on), else 0.
        Every token of plain characters only is then read exactly when it is at most n long."""
        found = self._counted.get(d)
        if found is not None:
            return found
        n = int(self.run[d])
        found = 0
        if 0 < n <= self.cap:
            first = int(np.flatnonzero(self._plain)[0])  # along the chain every plain class leads to one state
            e = d
            for _ in range(n):
                e = int(self.row(e)[first])
            found = n if (self.row(e)[self._plain] == -1).all() else 0
        self._counted[d] = found
        return found

    def _row(self, d: int) -> None:
        """State d's row, made from the DFA's moves: per shape of those moves (their intervals, targets numbered in
        order of appearance; whether d accepts; whether an escape could go on), one template whose targets are
        filled in, so the states of a counter (one shape) cost a lookup each, not a search of every class."""
        if self.whole or self._at[d] >= 0:
            return
        if self._levels is not None:
            self._level_rows(np.array([d], dtype=np.int64))
            return
        template, one, targets = self._shape(d)
        self._next[d] = targets[one] if one >= 0 else -1
        self._store([d], template, [targets])

    def _shape(self, d: int) -> tuple:
        """(the template of state d's shape (_row), the rank of the one next state every plain class leads to in it
        (-1: none, or not one), d's targets), the template made on first need."""
        moves, targets = move_shape(self.dfa, d)
        shape = (moves, bool(self._accepting[d]), dfa_live_on(self.dfa, d, _ESCAPABLE))
        found = self._shapes.get(shape)
        if found is None:
            template = self._template(shape)
            ranks = template[self._plain]
            one = int(ranks[0]) if len(ranks) and ranks[0] >= 0 and (ranks == ranks[0]).all() else -1
            found = self._shapes[shape] = (template, one)
        return found[0], found[1], targets

    def _store(self, ds: list[int], template: np.ndarray, targets: list[list[int]]) -> None:
        """The rows of states `ds` of one template (their targets per state), filled in and stored at once."""
        into = template >= 0
        if len(ds) == 1:  # most calls (a row asked for alone): without the chain's 2-D gather, which costs more
            rows = template.copy()
            if targets[0]:
                rows[into] = np.array(targets[0], dtype=np.int32)[template[into]]
        else:
            rows = np.repeat(template[None, :], len(ds), axis=0)
            if into.any():
                rows[:, into] = np.array(targets, dtype=np.int32)[:, template[into]]
        self._store_rows(ds, rows)

    def _template(self, shape: tuple) -> np.ndarray:
        """A row of `shape` (_row) with target ranks where its states go."""
        moves, accepting, escapable = shape
        row = np.full(len(self._codes), -1, dtype=np.int32)
        if moves:
            los = np.array([m[0] for m in moves], dtype=np.int64)
            his = np.array([m[1] for m in moves], dtype=np.int64)
            targets = np.array([m[2] for m in moves], dtype=np.int32)
            k = np.searchsorted(los, self._codes, side="right") - 1  # a class is one character for the DFA
            inside = k >= 0
            inside[inside] = self._codes[inside] <= his[k[inside]]
            row[inside] = targets[k[inside]]
        row[~self._plain] = -1
        row[self._quote] = trie_walk.CLOSE if accepting else -1
        row[self._backslash] = trie_walk.EXIT if escapable else -1
        return row

    def _run(self, d: int) -> None:
        """run[d]: plain characters the DFA surely takes in a row from d: a chain of states each sending every
        plain class to one next state (a maxLength counter); a loop is unbounded. A chain is followed up to
        2 `cap` + 2 states; cut short there, only the states more than `cap` before the cut get their run (at least
        `cap` + 1: as good as unbounded, no token is longer), the rest are left to a later chain, so every run
        known is either exact or more than `cap`."""
        chain, seen = [], set()
        e = d
        made: dict[int, tuple] = {}  # id(template) -> (template, the chain's states of it not made, their targets)
        following = self._next
        while self.run[e] < 0 and e not in seen and len(chain) <= 2 * self.cap + 1:
            nxt = int(following[e])
            if nxt == -2 and self._levels is not None:  # a count's product: its level made (a row per state, not
                self._level_rows(np.array([e], dtype=np.int64), runs=False)  # one made alone, which has no escape row)
                nxt = int(following[e])
            if nxt == -2:  # its shape (not its row: the chain's rows are made at once below)
                template, one, targets = self._shape(e)
                nxt = following[e] = targets[one] if one >= 0 else -1
                if self._at[e] < 0:
                    group = made.setdefault(id(template), (template, [], []))
                    group[1].append(e)
                    group[2].append(targets)
            chain.append(e)
            seen.add(e)
            if nxt < 0:
                self.run[e] = 0
                chain.pop()
                break
            e = nxt
        else:
            if e in seen:  # back to a state of this chain: plain characters are taken for ever
                self.run[e] = 1 << 40
            elif self.run[e] < 0:  # cut short
                chain = chain[:len(chain) - self.cap]
                e = -1
        for template, ds, targets in made.values():
            self._store(ds, template, targets)
        tail = max(int(self.run[e]), 0) if e >= 0 else self.cap
        for state in reversed(chain):
            tail = min(tail + 1, 1 << 40)
            self.run[state] = tail
        self._touched.extend(chain)



_WHOLE_CELLS = 1 << 18  # a DFA's table up to this many cells is built whole at once (1 MiB)
_LEVELS_AHEAD = 32  # a length counter's product built by rows: levels made at once (StringContent._level_rows)
_KEPT_PARTITIONS = 8  # a DFA keeps its tables for this many class partitions (and caps), the least recent let go


def _recalled(dfa, name: str, key):
    """What `dfa` keeps under `name` for `key` (a partition's boundaries as bytes, a cap, the escapes), made the most
    recent of what it keeps there; None where it keeps none."""
    kept = dfa.__dict__.setdefault(name, {})
    found = kept.pop(key, None)
    if found is not None:
        kept[key] = found  # the most recent last: the partition let go first is the one used longest ago
    return found


def _keep(dfa, name: str, key, value) -> None:
    """Keep `value` on `dfa` under `name` for `key` (_recalled first), for at most _KEPT_PARTITIONS keys: schemas
    naming non-ASCII characters have partitions of their own, and the one used longest ago is let go."""
    kept = dfa.__dict__[name]
    if len(kept) >= _KEPT_PARTITIONS:
        del kept[next(iter(kept))]
    kept[key] = value


def string_content(dfa, boundaries: np.ndarray, cap: int, unicode_escapes: tuple[str, ...] | None = None):
    """The DFA's StringContent over this partition, kept on the DFA where its table is whole (read-only then), as
    its tables are: every string of a free string's, an unbounded number's or a literal's kind, in every schema, has
    one, not one per constraint (a fifth of a free string's first mask was making it again). A DFA built by rows
    records which rows a walk made: one per constraint."""
    key = (np.asarray(boundaries, dtype=np.int64).tobytes(), cap, unicode_escapes)
    found = _recalled(dfa, "_string_contents", key)
    if found is None:
        found = StringContent(dfa, boundaries, cap, unicode_escapes)
        if found.whole:
            _keep(dfa, "_string_contents", key, found)
    return found


def _whole_tables(dfa, codes: np.ndarray, plain: np.ndarray, cap: int, unicode_escapes: tuple[str, ...] | None = None):
    """(lex, run, total, loops) for every state of `dfa` at once, kept on it per class partition; None where its
    table would be too big to build whole (then rows are built as the walk meets them). total[d]: from d, every run
    of plain characters as long as a token is read (a walk starting there allows every plain token at once:
    TokenTrie.plain_tokens); loops: `_loop_bits`."""
    key = (codes.tobytes(), cap, unicode_escapes)
    found = _recalled(dfa, "_string_mode_tables", key)
    if found is not None:
        return found
    if hasattr(dfa, "table_parts") and trie_walk.compiled():  # a key's tree of names: its tables, compiled
        found = trie_walk.key_trie_tables(dfa.table_parts(), dfa.n_states, codes, trie_walk.CLOSE, trie_walk.EXIT, cap)
    elif hasattr(dfa, "string_tables"):  # a key's DFA: its own tables
        found = dfa.string_tables(codes, trie_walk.CLOSE, trie_walk.EXIT, cap)
    elif hasattr(dfa, "lexeme_tables"):  # a number's or a literal's: its own tables
        found = dfa.lexeme_tables(codes, trie_walk.CLOSE, trie_walk.END, cap)
    elif hasattr(dfa, "string_table"):  # a key checked by DFAs (structbench.jsonschema.key_patterns): its own table
        lex = dfa.string_table(codes, trie_walk.CLOSE, trie_walk.EXIT)
        found = (lex, *_plain_runs(lex, plain, cap))
        first = getattr(dfa, "counted_from", None)  # (its other keys' states: no context's rows differ there)
        if first is not None:
            _find_chains(dfa, lex[:dfa.content_states], plain, first)
    elif dfa.n_states * len(codes) <= _WHOLE_CELLS:
        lex = _dfa_lex_table(dfa, codes, plain, unicode_escapes)
        found = (lex, *_plain_runs(lex, plain, cap))
        if hasattr(dfa, "__dict__"):  # (a pattern's counted repetitions, read as a count's)
            _find_chains(dfa, lex[:dfa.n_states], plain)
    else:
        return None
    found = (*found, _loop_bits(found[0], count_targets(dfa, len(found[0]))))
    _keep(dfa, "_string_mode_tables", key, found)
    return found


_CHAIN_STATES = 8  # a DFA with fewer states (past `first`) is not searched for chains: too short to skip a subtree
# worth their search (an enum's three letters, a key table's one other-keys state), 20-50 µs of a first mask


def _find_chains(dfa, lex: np.ndarray, plain: np.ndarray, first: int = 0) -> None:
    """A DFA's count steps found in its table (`lex`: its states' rows; trie_walk._chain_steps says which) and kept on
    it as a count's (`count_steps`), where it has no count of its own and some state steps on to another; states
    before `first` keep their own loops alone (a key's name prefixes, whose rows a context may refuse:
    KeyPatternDFA.counted_from)."""
    if _count_steps(dfa) is not None or len(lex) - first < _CHAIN_STATES:
        return
    steps = trie_walk.chain_steps(lex[:, plain])
    if steps is None:
        return
    head = steps[:first]
    head[head != np.arange(len(head))] = -1
    if (steps > np.arange(len(steps))).any():
        dfa.__dict__["count_steps"] = steps


def count_targets(dfa, n_rows: int) -> np.ndarray | None:
    """Per row of a DFA's table, where a character "loops": the row itself, but in a length counter's product with
    another DFA (regular.automata's `count_steps`) the state one count on where the other DFA loops, so that string
    mode takes a subtree of its loop characters whole while the count has room (`count_room`); rows past the DFA's
    states (escapes) loop on nothing. None for a DFA of no count: its own loops."""
    steps = _count_steps(dfa)
    if steps is None:
        return None
    targets = np.full(n_rows, _NO_TARGET, dtype=np.int64)
    targets[:len(steps)] = np.where(steps >= 0, steps, _NO_TARGET)
    return targets


def count_room(dfa, n_rows: int) -> np.ndarray | None:
    """Per row of a count's product's table, how many characters in a row its count's loops read from there (0 past
    its states); None for a DFA of no count (its loops hold for ever). Per state, kept on the DFA."""
    steps = _count_steps(dfa)
    if steps is None:
        return None
    per_state = dfa.__dict__.get("_count_room")
    if per_state is None:
        per_state = dfa.__dict__["_count_room"] = trie_walk.count_room(steps)
    out = np.zeros(n_rows, dtype=np.int64)
    out[:len(per_state)] = per_state
    return out


def _count_steps(dfa) -> np.ndarray | None:
    """A DFA's `count_steps`: a length counter's product's (regular.automata._counted_product), or those found in a
    DFA's whole table (_find_chains, kept on it); None for any other DFA."""
    return getattr(dfa, "__dict__", {}).get("count_steps")


_NO_TARGET = -(1 << 40)  # (no table cell holds it: a row of no count loop loops on nothing)


def _loop_bits(lex: np.ndarray, targets: np.ndarray | None = None) -> np.ndarray | None:
    """Per DFA state, the classes whose character leaves it where it is (or, in a count's product, one count on:
    count_targets), as bits (class c at bit c % 64 of word c // 64), so a subtree holding only those is read whole
    from there (a pattern's `[a-z0-9]+`); None where no state loops (most keys' tables). Rows not built yet (UNKNOWN)
    loop on nothing."""
    if trie_walk.compiled():
        return trie_walk.loop_bits(lex, targets)
    return _loop_bits_vectorised(lex, targets)


def _loop_bits_vectorised(lex: np.ndarray, targets: np.ndarray | None = None) -> np.ndarray | None:
    """_loop_bits without numba: the whole table compared, then packed."""
    looping = lex == (np.arange(len(lex)) if targets is None else targets)[:, None]
    return trie_walk.bool_bits_rows(looping, (lex.shape[1] + 63) // 64) if looping.any() else None


def _dfa_lex_table(dfa, codes: np.ndarray, plain: np.ndarray,
                   unicode_escapes: tuple[str, ...] | None = None) -> np.ndarray:
    """StringContent's table for a DFA, every state at once (regular.dfa.next_states: a class is one character for
    the DFA, its moves are cut at class boundaries). Where every ASCII character is a class of its own, its simple
    escapes are rows too (free_text.checked_escape_rows): n more rows after the DFA's n states, row n + d the state
    after a backslash at d; and where `unicode_escapes` are given, the `\\u` escapes tokens hold (_unicode_rows)
    after them. The DFA's rows and its simple escapes' are built in one compiled pass where numba is installed
    (trie_walk.checked_string_table: a table built inside a walk meets cold caches, where each of the dozen NumPy
    calls below costs several times its work), else by _dfa_rows_vectorised."""
    n = dfa.n_states
    moves = moves_array(dfa)  # (the backslash's test below reads them too)
    accepting = np.zeros(n, dtype=bool)
    accepting[np.fromiter(dfa.accepting, dtype=np.int64, count=len(dfa.accepting))] = True
    if trie_walk.compiled():
        lex, by_code = trie_walk.checked_string_table(moves, codes, plain, accepting, ascii_own(codes))
    else:
        lex, by_code = _dfa_rows_vectorised(dfa, moves, codes, plain, accepting)
    if by_code is None or unicode_escapes is None or not by_code.any():  # (None: the `u` is the checker's; no
        return lex  # state: it is refused)
    u_column, unicode = _unicode_rows(moves, n, unicode_escapes, by_code, 2 * n, len(codes))
    lex[n:, ord("u")] = u_column
    return np.concatenate([lex, unicode])


def _dfa_rows_vectorised(dfa, moves: np.ndarray, codes: np.ndarray, plain: np.ndarray,
                         accepting: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """(the DFA's rows, and where every ASCII character is a class of its own its simple escapes' rows after them;
    per state, whether a `\\u` escape may go on there, None where there are no escape rows): _dfa_lex_table's
    first part, vectorised."""
    n = dfa.n_states
    raw = next_states(dfa, codes, moves).astype(np.int32)
    lex = np.where(plain, raw, np.int32(-1))
    lex[:, codes == _QUOTE] = np.where(accepting, trie_walk.CLOSE, -1)[:, None]
    # The backslash: where no escape could stand for a character the DFA goes on by, refused here (as the
    # checker's string_step refuses it), not in a machine step when a walk meets it.
    escapable = _live_on(moves, n, ESCAPABLE_BOUNDS)
    if not ascii_own(codes):
        lex[:, codes == _BACKSLASH] = np.where(escapable, trie_walk.EXIT, -1)[:, None]
        return lex, None
    lex[:, _BACKSLASH] = np.where(escapable, n + np.arange(n), -1)
    by_code = _live_on(moves, n, ANY_CHAR_BOUNDS)  # where a `\\u` escape may go on at all
    return np.concatenate([lex, checked_escape_rows(raw, by_code, trie_walk.EXIT)]), by_code


def _unicode_rows(moves: np.ndarray, n: int, prefixes: tuple[str, ...], by_code: np.ndarray, first: int,
                  n_classes: int) -> tuple:
    """(the `u` column of the escape rows, the rows after `\\u` and each hex prefix tokens hold, placed from row
    `first`). No token holds a whole escape (unicode_escape_prefixes), so a token read past a `\\u` ends inside it,
    allowed where the DFA at d goes on by some character the escape may still stand for (the checker's string_step:
    strings.escape_candidates, which leave out lone surrogates and printable ASCII). That is all a state's rows say,
    so states that say the same (most: one or two groups a DFA) share them: one row per group and prefix, never
    back into the DFA's states, where each hex digit leads to its longer prefix (its case alike), if live, and
    anything else is refused. Every prefix, every group at once (a DFA's table is built inside a walk, where each
    NumPy call costs several times its work: a call per prefix and per group was most of a small DFA's table)."""
    k = len(prefixes)
    # Per state, the prefixes on which the escape may go on, as bits (the empty prefix's: by_code)
    sets = _escape_sets(prefixes)
    code = np.where(by_code, np.int64(1) << prefixes.index(""), 0)
    if len(sets[0]):
        # Each move against every prefix's set at once: prefix j's intervals and the moves read against them are
        # shifted by j * _SPAN, so a move meets no other prefix's (one `meets` for all)
        shift = np.arange(k, dtype=np.int64)[:, None] * _SPAN
        met = meets(moves[:, 1][None, :] + shift, moves[:, 2][None, :] + shift, sets)
        bits = (met * (np.int64(1) << np.arange(k, dtype=np.int64))[:, None]).sum(axis=0)  # per move (each bit once)
        np.bitwise_or.at(code, moves[:, 0], bits)
    if k <= _FEW_PREFIXES:  # the groups by a table over every code: a sort's cost is most of a small DFA's rows
        present = np.zeros(1 << k, dtype=bool)
        present[code] = True
        groups = np.flatnonzero(present)
        group_of = np.cumsum(present)[code] - 1
    else:
        groups, group_of = np.unique(code, return_inverse=True)
        group_of = group_of.reshape(-1)
    rows = _group_rows(prefixes, n_classes, tuple(groups.tolist()))
    rows = np.where(rows >= 0, rows + np.int32(first), np.int32(-1))
    return np.where(by_code, first + group_of * k + prefixes.index(""), -1).astype(np.int32), rows


@functools.lru_cache(maxsize=256)
def _group_rows(prefixes: tuple[str, ...], n_classes: int, groups: tuple[int, ...]) -> np.ndarray:
    """_unicode_rows' rows for these groups (each a code: the prefixes its states go on by, as bits), numbered from
    0: each hex digit to its longer prefix's row in its group, if live, anything else -1. A few sets of groups
    recur in every DFA whose strings admit non-ASCII characters."""
    k = len(prefixes)
    longer = _prefix_moves(prefixes, n_classes)  # per prefix and class: the longer prefix, -1 none
    to = np.where(longer >= 0, longer, 0)
    says = (np.array(groups, dtype=np.int64)[:, None] >> np.arange(k)) & 1 == 1  # per group and prefix
    live_to = (longer >= 0)[None] & says[:, to] & says[:, :, None]  # (a prefix the group refuses has no row pointed at)
    base = np.arange(len(groups), dtype=np.int64)[:, None, None] * k
    rows = np.where(live_to, base + to[None], -1).astype(np.int32).reshape(len(groups) * k, n_classes)
    rows.flags.writeable = False
    return rows


_SPAN = MAX_CODE_POINT + 2  # one prefix's code points apart from the next's (_unicode_rows)
_FEW_PREFIXES = 16  # up to this many prefixes (Llama 3's and Qwen's: 6), a state's group is found in a table of 2**k


@functools.cache
def _escape_sets(prefixes: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Every non-empty prefix's `_escape_bounds` as one set (bounds_of's (starts, ends)), prefix j's shifted by
    j * _SPAN."""
    starts, ends = [], []
    for j, p in enumerate(prefixes):
        if p:
            s, e = _escape_bounds("u" + p)
            starts.append(np.asarray(s, dtype=np.int64) + j * _SPAN)
            ends.append(np.asarray(e, dtype=np.int64) + j * _SPAN)
    out = tuple(np.concatenate(a) if a else np.zeros(0, dtype=np.int64) for a in (starts, ends))
    for a in out:
        a.flags.writeable = False
    return out


@functools.cache
def _escape_bounds(esc: str) -> tuple[np.ndarray, np.ndarray]:
    """What a partly read escape may still stand for, as `meets` searches it (a function of the escape alone)."""
    return bounds_of(escape_candidates(esc))


@functools.cache
def _prefix_moves(prefixes: tuple[str, ...], n_classes: int) -> np.ndarray:
    """Per prefix (of hex digits after a `\\u`) and ASCII class: the index of the prefix one more hex digit makes, -1
    where tokens hold none."""
    index = {p: j for j, p in enumerate(prefixes)}
    out = np.full((len(prefixes), n_classes), -1, dtype=np.int64)
    for j, p in enumerate(prefixes):
        for h in _HEX_DIGITS:
            out[j, ord(h)] = index.get(p + h.lower(), -1)
    out.flags.writeable = False
    return out


_HEX_DIGITS = "0123456789abcdefABCDEF"


def _live_on(moves: np.ndarray, n: int, bounds: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Per DFA state: does it move on some code point of the set `bounds` (charsets.bounds_of; strings.dfa_live_on,
    every state at once)?"""
    live = np.zeros(n, dtype=bool)
    live[moves[meets(moves[:, 1], moves[:, 2], bounds), 0]] = True
    return live


def _plain_runs(lex: np.ndarray, plain: np.ndarray, cap: int) -> tuple[np.ndarray, np.ndarray]:
    """(run, total) for every state at once (_run_lengths, _reads_every_plain_run), from one look at the plain
    classes' moves."""
    cols = np.flatnonzero(plain)
    if not len(cols):
        return np.zeros(len(lex), dtype=np.int64), np.ones(len(lex), dtype=bool)
    if trie_walk.compiled():  # the same in one compiled call: a table built inside a walk meets cold caches, where
        return trie_walk.plain_runs(np.ascontiguousarray(lex, dtype=np.int32), cols, int(cap))  # each NumPy call
    return _plain_runs_vectorised(lex, plain, cap)  # costs several times its work


def _plain_runs_vectorised(lex: np.ndarray, plain: np.ndarray, cap: int) -> tuple[np.ndarray, np.ndarray]:
    """_plain_runs without numba: a few vectorised passes (plain holds some class)."""
    rows = lex[:, plain]
    first = rows[:, 0]
    one = (rows == first[:, None]).all(axis=1)  # every plain class to one next state (or all refused)
    return _run_lengths(first, one, cap), _reads_every_plain_run(rows, first, one, cap)


def _run_lengths(first: np.ndarray, one: np.ndarray, cap: int) -> np.ndarray:
    """run[d] for every state at once (first[d]: its first plain class's next state; one[d]: every plain class
    goes there): a state whose every plain class goes to one next state takes one more than that state (a chain: a
    maxLength counter; a loop: for ever), counted by pointer jumping and capped above `cap` (no subtree is
    deeper)."""
    run = np.zeros(len(first), dtype=np.int64)
    chained = np.flatnonzero((first >= 0) & one)
    if not len(chained):
        return run
    where = np.full(len(first), -1, dtype=np.int64)
    where[chained] = np.arange(len(chained))
    jump = where[first[chained]]  # the next chained state's place, -1 where the chain ends
    total = np.ones(len(chained), dtype=np.int64)
    for _ in range(int(cap + 1).bit_length() + 1):
        on = jump >= 0
        if not on.any():
            break
        total = np.where(on, np.minimum(total + total[np.maximum(jump, 0)], cap + 1), total)
        jump = np.where(on, jump[np.maximum(jump, 0)], jump)
    run[chained] = np.where(jump >= 0, cap + 1, total)  # still jumping: a loop
    return run


def _reads_every_plain_run(rows: np.ndarray, first: np.ndarray, one: np.ndarray, cap: int) -> np.ndarray:
    """total[d] for every state at once: no run of fewer than `cap` plain characters (no token is longer) leads from
    d to a state that refuses some plain character, so the DFA reads every plain run a token holds, wherever it
    goes. A run of one next state (run > cap) is one such state, but so is any state of a pattern searched for
    (`[0-9a-f]{24}` unanchored: every character moves its count, none is refused), whose masks would otherwise
    walk the whole prefix tree. Found backwards, breadth first from the states that refuse one, along the DFA's
    distinct plain moves reversed, `cap` - 1 levels deep (a maxLength counter's chain is one move a state: its
    states are reached one a level, which a pass over the whole table per level would pay for every state)."""
    bad = (rows < 0).any(axis=1)
    n = len(rows)
    if cap <= 1 or not rows.shape[1] or bad.all() or not bad.any():
        return ~bad
    # The distinct moves (state, next state): a row's first target where it has one only (a chain), else its
    # distinct targets, few rows branching.
    srcs, dsts = [np.flatnonzero(one)], [first[one]]
    branching = np.flatnonzero(~one)
    if len(branching):
        ordered = np.sort(rows[branching], axis=1)
        new = np.ones(ordered.shape, dtype=bool)
        new[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
        srcs.append(np.repeat(branching, new.sum(axis=1)))
        dsts.append(ordered[new])
    src, dst = np.concatenate(srcs), np.concatenate(dsts)
    keep = dst >= 0
    order = np.argsort(dst[keep], kind="stable")
    before = np.searchsorted(dst[keep][order], np.arange(n + 1)).tolist()  # per state: its moves in, as a slice
    into = src[keep][order].tolist()
    seen, frontier = bad.tolist(), np.flatnonzero(bad).tolist()
    for _ in range(cap - 1):
        found = []
        for e in frontier:
            for d in into[before[e]:before[e + 1]]:
                if not seen[d]:
                    seen[d] = True
                    found.append(d)
        if not found:
            break
        frontier = found
    return ~np.array(seen, dtype=bool)


class StringRows:
    """Every string met under one constraint, as rows the compiled walk indexes. Per row r (a string's DFA state
    d, r = base[r] + d): `lex_row[r]` d's row in `lex`, the stacked tables of every DFA met (a DFA's table
    once, whoever shares it; its moves are DFA states, so row base[r] + lex[lex_row[r], c] is where a plain
    character leads); `run`, `total`, `loops` (the classes a state loops on, as bits) and `room` (how many of those
    it may read in a row: unbounded but in a count's product, count_room) per row of `lex` (a DFA built by rows has
    its rows stacked as they are made, and lex row 0, all UNKNOWN, until then); and,
    computed when a walk first needs them, `exits[r]` (the
    machine state after a backslash at d) and `closes[r]` (after the closing quote, or a literal's last letter; for
    a number, after the number, which reads the character that ends it; both -1: refused). Arrays grow by doubling:
    only rows in use are ever indexed.

    resolve(stack, d), close(stack, d, closing character), end(stack, d): those machine states for a string's DFA
    state d (end: a number's, at a state its DFA accepts), its stack given at d=0."""

    def __init__(self, boundaries: np.ndarray, depth, resolve, close, end,
                 unicode_escapes: tuple[str, ...] | None = None):
        self.boundaries, self._depth, self._resolve, self._close, self._end = boundaries, depth, resolve, close, end
        self._unicode_escapes = unicode_escapes  # (StringContent's: the vocabulary's unicode_escape_prefixes)
        codes = boundaries.astype(np.int64)
        self.plain = trie_walk.class_bits(np.flatnonzero(json_plain(codes)), (len(codes) + 63) // 64)
        # First lengths (doubled when full) that most fresh answers stay within: about 70 lex rows and 250 rows
        self.lex = np.full((_FIRST_LEX_ROWS, len(codes)), -1, dtype=np.int32)
        self.run = np.zeros(_FIRST_LEX_ROWS, dtype=np.int64)
        self.total = np.zeros(_FIRST_LEX_ROWS, dtype=bool)
        self.loops = np.zeros((_FIRST_LEX_ROWS, self.plain.shape[0]), dtype=np.uint64)
        self.room = np.full(_FIRST_LEX_ROWS, trie_walk.UNBOUNDED_ROOM, dtype=np.int64)  # (count_room; own loops: all)
        self.lex_row = np.zeros(_FIRST_ROWS, dtype=np.int64)
        self.base = np.zeros(_FIRST_ROWS, dtype=np.int64)
        self.exits = np.full(_FIRST_ROWS, trie_walk.UNKNOWN, dtype=np.int64)
        self.closes = np.full(_FIRST_ROWS, trie_walk.UNKNOWN, dtype=np.int64)
        self.lex[0] = trie_walk.UNKNOWN  # row 0: a row not made yet (a DFA built by rows)
        self._lex_used, self._rows_used = 1, 0
        self._dfas: dict[int, tuple] = {}  # id(dfa) -> its tables, their first row in lex, its own rows (_dfa)
        self._by_rows: dict[int, tuple[np.ndarray, list]] = {}  # id(content) built by rows -> its rows' lex rows
        # (-1: none yet), the strings' bases
        self._kept: list = []  # the DFAs met, kept alive while their ids are keys
        self._strings: dict = {}  # (id(dfa), stack at d=0) -> the string's first row
        self._bases: list[int] = []  # per string, in row order: its first row, and (tables, first lex row, stack)
        self._owners: list[tuple] = []
        self._stacked: dict[int, np.ndarray] = {}  # first row of a DFA stacked whole -> its rows (_lex_rows)

    def content(self, dfa) -> StringContent:
        """The DFA's tables (made, and stacked into `lex`, on first need); a DFA that shares another's table
        (`shared`: a key's context, structbench.jsonschema.key_patterns) has that one's."""
        return self._dfa(dfa)[0]

    def lex_of(self, dfa, d: int) -> np.ndarray:
        """DFA state d's row of its table (built if it was not), the DFA's own where it overrides a shared table."""
        content, _, own = self._dfa(dfa)
        at = own[2].get(d) if own is not None else None
        return content.row(d) if at is None else self.lex[at]

    def row(self, dfa, stack, d: int) -> int:
        """The row of DFA state d of the string `stack` is in (`stack` given at d=0), registered on first need."""
        key = (id(dfa), stack)
        base = self._strings.get(key)
        if base is None:
            content, first, own = self._dfa(dfa)
            n = content.n_rows
            base = self._strings[key] = self._rows_used
            self._rows_used += n
            if self._rows_used > len(self.lex_row):
                self._reserve_rows(self._rows_used)
            if first >= 0:  # (the DFA's rows in `lex`, made once per DFA: every string of it points at the same)
                self.lex_row[base:base + n] = self._lex_rows(first, n)
            else:  # built by rows: the rows made so far, the rest not made yet
                self.lex_row[base:base + n] = 0
                made, bases = self._by_rows[id(content)]
                stacked = np.flatnonzero(made >= 0)
                self.lex_row[base + stacked] = made[stacked]
                bases.append(base)
            if own is not None:  # a context's own rows, where they differ from the shared table's
                self.lex_row[base + own[0]] = own[1]
            self.base[base:base + n] = base
            self._bases.append(base)
            self._owners.append((content, first, stack, own))
        return base + d

    def _lex_rows(self, first: int, n: int) -> np.ndarray:
        """first + arange(n), kept per (first, n): a DFA stacked whole at `first`, whose rows each new string of it
        points at."""
        found = self._stacked.get(first)
        if found is None or len(found) != n:
            found = self._stacked[first] = first + np.arange(n)
        return found

    def rows(self, rows: list[int]) -> None:
        """The lex rows of these rows' DFA states, where a DFA too big to build whole has not made them yet."""
        contents = {}
        for r in rows:
            content = self._owner(r)[0]
            content.rows(np.array([r - int(self.base[r])]))
            contents[id(content)] = content
        for content in contents.values():  # a row's run may have followed a chain through others: copy them all
            made, bases = self._by_rows[id(content)]
            states = content.touched()
            new = states[made[states] < 0]
            if len(new):  # stacked, and every string of the DFA pointed at them
                first = self._stack(content.made_rows(new), np.zeros(len(new), dtype=np.int64),
                                    np.zeros(len(new), dtype=bool))
                made[new] = np.arange(first, first + len(new))
                for base in bases:
                    self.lex_row[base + new] = made[new]
            at = made[states]
            self.run[at] = content.run[states]
            # Every plain run a token holds is read where more plain characters than the deepest token's are surely
            # taken (a maxLength counter far from its end); elsewhere `total` is not claimed for a DFA built by rows.
            self.total[at] = content.run[states] > content.cap
            targets = states if content.count_targets is None else content.count_targets[states]
            looping = self.lex[at] == targets[:, None]
            if looping.any():
                self.loops[at] = trie_walk.bool_bits_rows(looping, self.plain.shape[0])
            if content.room is not None:
                self.room[at] = content.room[states]

    def counted(self, r: int) -> int:
        """StringContent.counted at row r's DFA state (0, claiming nothing, where a context overrides its row)."""
        content, _, _, own = self._owner(r)
        d = r - int(self.base[r])
        return content.counted(d) if own is None or d not in own[2] else 0

    def exits_for(self, rows: list[int]) -> None:
        for r in rows:
            content, _, stack, _ = self._owner(r)
            d, n = r - int(self.base[r]), content.content_states
            # A DFA state's backslash, or in a checked string's escape row (_dfa_lex_table) the `u` after it
            self.exits[r] = self._resolve(stack, d) if d < n else self._resolve(stack, d - n, "u")

    def closes_for(self, rows: list[int]) -> None:
        for r in rows:
            content, _, stack, _ = self._owner(r)
            d = r - int(self.base[r])
            if content.ends_open:  # a number: ended where its DFA accepts, else refused
                self.closes[r] = self._end(stack, d) if d in content.accepting else -1
            else:
                self.closes[r] = self._close(stack, d, content.closing)

    def _owner(self, r: int) -> tuple:
        return self._owners[bisect.bisect_right(self._bases, r) - 1]

    def _dfa(self, dfa, content: StringContent | None = None) -> tuple:
        """(the DFA's tables, their first row in `lex` (-1: built by rows), and its own rows or None): for a DFA
        that shares another's table, (its states, their rows in `lex`, {state: row}) where its rows differ
        (`overrides`: moves refused). content: its StringContent where the caller has made it (tables_ahead)."""
        found = self._dfas.get(id(dfa))
        if found is not None:
            return found
        shared = getattr(dfa, "shared", None)
        if shared is not None:
            content, first, _ = self._dfa(shared)
            ds, rows = dfa.overrides(content.lex, np.asarray(self.boundaries, dtype=np.int64), trie_walk.EXIT,
                                     trie_walk.context_rows)
            at = self._stack(rows, np.zeros(len(ds), dtype=np.int64), np.zeros(len(ds), dtype=bool))  # (claims nothing)
            self.loops[at:at + len(ds)] = self.loops[first + ds]  # (a refused move was no loop)
            own = (ds, np.arange(at, at + len(ds)), dict(zip(ds.tolist(), range(at, at + len(ds)))))
            found = self._dfas[id(dfa)] = (content, first, own)
            self._kept.append(dfa)  # its id stays its own
            return found
        if content is None:
            content = string_content(dfa, self.boundaries, self._depth(), self._escapes_of(dfa))
        if content.whole:
            first = self._stack(content.lex, content.run, content.total)
            if content.loops is not None:  # (rows there start with none: a grown array's fill)
                self.loops[first:first + len(content.loops)] = content.loops
            if content.room is not None:  # (and with unbounded room)
                self.room[first:first + len(content.room)] = content.room
        else:  # its rows are stacked as they are made (rows)
            first = -1
            self._by_rows[id(content)] = (np.full(content.n_rows, -1, dtype=np.int64), [])
        found = self._dfas[id(dfa)] = (content, first, None)
        self._kept.append(dfa)  # its id stays its own (a whole content does not keep its DFA)
        return found

    def _escapes_of(self, dfa) -> tuple[str, ...] | None:
        """The `\\u` prefixes read in the DFA's table (unicode_escape_prefixes), or None: the `u` is the checker's. A
        union of a checked string and free ones (string_unions.or_free) leaves it to the checker: its free
        branches read a `\\u` escape by the lenient rules (a lone surrogate), where the table's rows follow a checked
        string's strict ones."""
        return None if type(dfa) is OrFreeDFA else self._unicode_escapes

    def _stack(self, lex: np.ndarray, run: np.ndarray, total: np.ndarray) -> int:
        """Rows appended to `lex` (and run, total), growing the arrays by doubling: where they start."""
        first = self._lex_used
        self._lex_used += len(lex)
        if self._lex_used > len(self.lex):
            self._grow_lex(max(self._lex_used, 2 * len(self.lex)))
        self.lex[first:self._lex_used] = lex
        self.run[first:self._lex_used] = run
        self.total[first:self._lex_used] = total
        return first

    def tables_ahead(self, dfas) -> None:
        """These DFAs' tables made and stacked now (`content`), the arrays grown once for all of them."""
        made, seen = [], set()
        for dfa in dfas:
            table = getattr(dfa, "shared", None) or dfa
            first = id(table) not in seen  # (key contexts share their base table: made and counted once)
            seen.add(id(table))
            made.append((table, string_content(table, self.boundaries, self._depth(), self._escapes_of(table))
                         if first else None))
        size = self._lex_used + sum(content.n_rows for _, content in made if content is not None and content.whole)
        if size > len(self.lex):
            self._grow_lex(size)
        for dfa, (table, content) in zip(dfas, made):  # (a content too big to be whole is not kept on its DFA:
            self._dfa(table, content)                    # this one is registered, not a second; None: done already)
            self.content(dfa)

    def _grow_lex(self, size: int) -> None:
        """`lex` and the arrays beside it, `size` rows long."""
        self.lex = _grown(self.lex, size, -1)
        self.run = _grown(self.run, size, 0)
        self.total = _grown(self.total, size, False)
        self.loops = _grown(self.loops, size, 0)
        self.room = _grown(self.room, size, trie_walk.UNBOUNDED_ROOM)

    def _reserve_rows(self, n: int) -> None:
        if n <= len(self.lex_row):
            return
        size = max(n, 2 * len(self.lex_row))
        self.lex_row = _grown(self.lex_row, size, 0)
        self.base = _grown(self.base, size, 0)
        self.exits = _grown(self.exits, size, trie_walk.UNKNOWN)
        self.closes = _grown(self.closes, size, trie_walk.UNKNOWN)


def _grown(a: np.ndarray, size: int, fill) -> np.ndarray:
    out = np.empty((size,) + a.shape[1:], dtype=a.dtype)
    out[:len(a)] = a
    out[len(a):] = fill  # (filled where new only: a table's rows are copied, not written twice)
    return out
