"""The tabled strategy: a mask computed once per machine state by one vectorised walk of the whole
vocabulary, then read back.

Read top-down:

* :class:`TabledConstraint` is the strategy. For a pattern or a non-recursive schema every reachable
  state is tabled up front (the lesson's mask table); otherwise each state is tabled when first met, and
  a pushdown checker's stacks go through the context split.
* :class:`ContextSplit` is XGrammar's split for stacks without end (JSON mode, recursive schemas): a mask
  from the top of the stack alone, plus a walk of the few tokens that reach below it.
* :class:`LazyDense` is the engine under both: a machine seen through character classes (code-point
  ranges on which it cannot tell characters apart), its states numbered as they are met, a transition
  row `trans[state, class]` (-1: dead) computed on first need. A mask is one walk of the vocabulary with
  NumPy gathers, one character position at a time, dropping every token that gets stuck: no Python loop
  runs over the vocabulary. Its API is what the two above use: `id_of`, `step`, `accepts`,
  `expand_all`, `mask`, and for the split `walk_until` / `resume`.
* :class:`VocabCodes` and the class boundaries are its inputs.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from functools import partial

import numpy as np

from structbench.errors import LimitExceeded, TokenRejected, TooManyStates
from structbench.jsonschema.container_reach import learn as learn_container_reach
from structbench.jsonschema.free_text import free_escapes
from structbench.limits import Fuel, exceeded
from structbench.limits import current as limits
from structbench.lm.vocab import Vocabulary
from structbench.masking import trie_walk
from structbench.masking.bitmask import pack_bits, set_bit, unpack_bits
from structbench.masking.protocol import Machine, PatternMachine, WorkCounter
from structbench.masking.shared_masks import token_reach
from structbench.masking.token_index import (
    TokenIndex,
    token_index,
    unicode_escape_prefixes,
)
from structbench.masking.trie_walk import UNKNOWN
from structbench.regular import DFA, MAX_CODE_POINT
from structbench.regular.charsets import ascii_own

_ASK = object()
_FEW_READ = 8  # a state that may read at most this many characters: its row stepped character by character
_CONTROL = "".join(map(chr, range(0x20)))  # never in a JSON string raw
_NOT_PLAIN = '"\\' + _CONTROL  # what a string's plain characters are not


class TabledConstraint:
    """A :class:`~structbench.masking.protocol.Constraint` whose states are :class:`LazyDense` state
    numbers. With `eager`, every reachable state is enumerated and tabled at compile time (patterns,
    non-recursive schemas), so a step is a row lookup; otherwise each state is tabled the first time it is
    met (through :class:`ContextSplit` for a checker's stacks)."""

    def __init__(self, machine: Machine, vocab: Vocabulary, boundaries: np.ndarray, eager: bool = False,
                 split: bool = True, dense: type[LazyDense] | None = None, mask_key=None):
        """mask_key: machine state -> a key such that states with equal keys allow the same tokens (see
        structbench.masking.shared_masks): a state whose key a built mask has is given that mask, not walked."""
        self.vocab = vocab
        self._n_tokens = len(vocab)  # (a mask's reads, counted at every step)
        self.work = WorkCounter()
        self.dense = (dense or LazyDense)(machine, boundaries, vocab)
        self.table: dict[int, np.ndarray] = {}
        self._bits: dict[int, np.ndarray] = {}
        self._mask_key = mask_key
        self._built_by_key: dict = {}  # mask_key -> the state whose mask was built for it
        # Masks other schemas built, by the same keys (a checker's node numbers are its process's: node_store)
        store = getattr(machine, "mask_store", None) if mask_key is not None else None
        self._store = None if store is None else store(vocab)
        self._stored_key = None if store is None else partial(machine.stored_key, reach=token_reach(vocab))
        self._next: dict[tuple[int, int], int] = {}
        self._end_only = getattr(self.dense, "end_only", None)  # (_build: the end token's mask, found at once)
        branches = getattr(machine, "mask_branches", None) if mask_key is not None else None
        self._branches = None if branches is None else partial(branches, reach=token_reach(vocab))  # (_by_branches)
        self._mask_twin = getattr(machine, "mask_twin", None) if getattr(machine, "has_mask_twins", False) else None
        self._twin_bits: dict[int, np.ndarray] = {}  # a mask twin's state -> its walk's bits (_by_twin)
        self._remembered = getattr(machine, "remembered_chars", None) if getattr(machine, "remembers_keys", False) \
            else None  # (_by_own_characters)
        self.split = None
        self.eager = False
        # Tabling ahead is an optimisation: past its budget it stops, and the rest is tabled when first met.
        ahead = Fuel("precompute_steps", "tabling ahead")
        if eager:
            try:
                with fueled(ahead, self.dense):
                    self.dense.expand_all(limits().max_eager_states)
                self.eager = True
            except (TooManyStates, LimitExceeded):
                pass  # too many to table up front: table each state when first met
            if self.eager:
                self._build_ahead()
        if split and not self.eager and hasattr(machine, "context_frame"):
            self.split = ContextSplit(machine, vocab, boundaries, ahead)
            self.work.chars += self.split.compile_steps

    def _build_ahead(self) -> None:
        """Every state's mask, while the walks stay within `limits.precompute_token_chars`."""
        budget, start = limits().precompute_token_chars, self.work.chars
        for state in range(len(self.dense.states)):
            if self.work.chars - start >= budget:  # _build counts each walk's steps there
                break
            self._build(state)

    def start(self) -> int:
        return self.dense.start

    def can_end(self, state: int) -> bool:
        return self.dense.accepts(state)

    def advance(self, state: int, token_id: int) -> int:
        nxt = self._next.get((state, token_id))  # a token's move from a state, remembered like its mask
        if nxt is not None:
            return nxt
        text = self.vocab.tokens[token_id]
        if token_id == self.vocab.eos_id or text is None:
            raise TokenRejected(f"token id {token_id} writes no text; there is no state after it")
        nxt = self.dense.step_text(state, text)
        if nxt is None:
            raise TokenRejected(f"token {text!r} (id {token_id}) is not allowed here")
        self._next[(state, token_id)] = nxt
        return nxt

    def mask(self, state: int) -> np.ndarray:
        allowed = self.table.get(state)
        if allowed is None:
            bits = self._bits.get(state)
            if bits is None:
                self._build(state)
                bits = self._bits[state]
            allowed = self.table.get(state)
            if allowed is None:  # built as bits alone (mask_packed): the boolean row once asked for, then kept
                allowed = self.table[state] = unpack_bits(bits, len(self.vocab))
                allowed.flags.writeable = False
        self.work.reads += len(allowed)
        return allowed

    def mask_bits(self, state: int) -> np.ndarray:
        """The same mask as int32 words, token i at bit i % 32 of word i // 32."""
        bits = self._bits.get(state)
        if bits is None:
            self._build(state)
            bits = self._bits[state]
        self.work.reads += self._n_tokens
        return bits

    def _build(self, state: int) -> None:
        """State's mask into the tables: its bits, and its boolean row unless the walk made only the bits; or,
        where another state's mask_key is its own, that state's mask."""
        key = None if self._mask_key is None else self._mask_key(self.dense.states[state])
        twin = None if key is None else self._built_by_key.get(key)
        if twin is not None:  # a state no token tells from this one has its mask built: read back
            self._bits[state] = self._bits[twin]
            if twin in self.table:
                self.table[state] = self.table[twin]
            self.work.masks_shared += 1
            return
        if self._end_only is not None and self.split is None:  # the answer's last mask, the end token alone: at once,
            bits = self._end_only(state)  # not looked up among the stored masks nor walked (asked after the key's
            if bits is not None:  # lookup: the shared masks, most of the steps, do not pay for asking)
                self._bits[state] = bits
                if key is not None:
                    self._built_by_key[key] = state
                self.work.masks_built += 1
                return
        stored_key = None
        if self._store is not None and key is not None:
            stored_key = self._stored_key(key)
            stored = self._store.get(stored_key)
            if stored is not None:  # an earlier schema's state with this key: read back, as a shared mask
                self._bits[state] = stored
                self._built_by_key[key] = state
                self.work.masks_shared += 1
                return
        branches = None if self._branches is None or key is None else self._branches(self.dense.states[state])
        twin = self._mask_twin(self.dense.states[state]) if self._mask_twin is not None and branches is None else None
        if branches is not None:
            allowed, bits, steps = None, self._by_branches(branches), 0
        elif twin is not None:
            allowed, bits, steps = None, *self._by_twin(state, twin)
        else:
            allowed, bits, steps = self._walk(state, self.dense.states[state])
        if self._remembered is not None:
            restepped = self._by_own_characters(state, bits)
            if restepped is not None:
                allowed, bits, more = None, *restepped
                steps += more
        if allowed is not None:
            allowed.flags.writeable = False  # shared by every step that reaches this state
            self.table[state] = allowed
        bits.flags.writeable = False
        self._bits[state] = bits
        self.work.chars += steps
        self.work.masks_built += 1
        if key is not None:
            self._built_by_key[key] = state
            if stored_key is not None:
                self._store.put(stored_key, bits)

    def _walk(self, state: int, stack) -> tuple:
        """(the boolean mask or None where the walk made bits alone, the bits, the steps) of state's walk."""
        packed = getattr(self.dense, "mask_packed", None) if self.split is None else None
        if packed is not None:  # (fueled, inline: one dense, and this is every lazy mask's path)
            dense = self.dense
            outer, dense.fuel = dense.fuel, Fuel("mask_steps", "one mask")
            try:
                bits, steps = packed(state)
            finally:
                dense.fuel = outer
            return None, bits, steps
        with fueled(Fuel("mask_steps", "one mask"), self.dense, *self._split_denses()):
            if self.split is not None:
                allowed, steps = self.split.mask(stack)
            else:
                allowed, steps = self.dense.mask(state)
        return allowed, pack_bits(allowed), steps

    def _by_branches(self, branches: list) -> np.ndarray:
        """The bits of a union's mask as its branches' masks together (the machine's `mask_branches`: no token
        finishes a branch, so a token is allowed where some branch allows it), each branch a state of its own
        whose mask is built, or read back by its key, once: a union's branches recur in the unions after it."""
        bits = None
        for branch in branches:
            i = self.dense.id_of(branch)
            own = self._bits.get(i)
            if own is None:
                self._build(i)
                own = self._bits[i]
            bits = own.copy() if bits is None else np.bitwise_or(bits, own, out=bits)
        return bits

    def _by_twin(self, state: int, twin) -> tuple[np.ndarray, int]:
        """(bits, steps) of state's mask from its mask twin's (the machine's `mask_twin`: an object whose keys are
        remembered whole, whose walk would make a state per token prefix read into a key), walked once per twin;
        the tokens with three or more quotes, which alone may tell the two apart, stepped from the state itself,
        and the end token's bit its own."""
        t = self.dense.id_of(twin)
        walked = self._twin_bits.get(t)
        steps = 0
        if walked is None:
            _, walked, steps = self._walk(t, twin)
            self._twin_bits[t] = walked
        bits = walked.copy()
        steps += self._restep(state, bits, quoted_tokens(self.vocab))
        set_bit(bits, self.vocab.eos_id, self.dense.accepts(state))
        return bits, steps

    def _by_own_characters(self, state: int, bits: np.ndarray) -> tuple[np.ndarray, int] | None:
        """(bits, steps) of state's mask with the tokens a walk may read wrongly stepped from the state by their own
        characters (LazyDense._step_own), where the machine remembers keys whole; None where there are none. A walk
        steps a class of characters by its representative, so two keys whose characters share a class read as one:
        a key is compared with the used keys (a token holding their characters of such classes: own_ranges) and
        with a key closed earlier in the same token (three or more quotes, and some character past ASCII)."""
        ranges = self.dense.own_ranges(self._remembered(self.dense.states[state]))
        tokens = quoted_tokens(self.vocab, past_ascii=True)
        if ranges:  # (a new list: both are kept on the vocabulary)
            tokens = tokens + tokens_holding(self.vocab, ranges)
        if not tokens:
            return None
        bits = bits.copy()
        return bits, self._restep(state, bits, tokens)

    def _restep(self, state: int, bits: np.ndarray, tokens) -> int:
        """Each of `tokens` ((id, text)) stepped from the state itself, its bit in `bits` set to the answer; the
        characters stepped."""
        steps = 0
        for token_id, text in tokens:
            steps += len(text)
            set_bit(bits, token_id, self.dense.step_text(state, text) is not None)
        return steps

    def _split_denses(self) -> tuple:
        return () if self.split is None else (self.split.top_dense, self.split.full_dense)


@dataclass
class _Partition:
    """What a class partition alone tells (each class's representative, the hints' class masks), shared by every
    LazyDense over it: most schemas have the checker's ASCII partition, and a fresh schema would otherwise build
    these again."""

    reps: list[str]
    bounds: list[int]
    class_masks: dict
    class_lists: dict
    alike_masks: dict
    ascii: list[int]  # the class of each ASCII character by its code: a list index, where most advances' are
    # The control characters' classes as a slice (0-31) where each ASCII character is a class of its own (the checker's
    # partitions: a row's cells read or written as a view), else None (a boolean mask of the classes, _classes_of)
    controls: slice | None
    wide: list[bool]  # per class: more than one character (stepped by its representative, LazyDense._step_own)


_PARTITIONS: dict[bytes, _Partition] = {}
_MAX_PARTITIONS = 64  # schemas naming non-ASCII characters have partitions of their own: the oldest are let go


def _partition(boundaries: np.ndarray) -> _Partition:
    key = np.asarray(boundaries, dtype=np.int64).tobytes()
    found = _PARTITIONS.get(key)
    if found is None:
        if len(_PARTITIONS) >= _MAX_PARTITIONS:
            del _PARTITIONS[next(iter(_PARTITIONS))]
        bounds = [int(b) for b in boundaries]
        ascii = [bisect.bisect_right(bounds, o) - 1 for o in range(128)]
        # (each ASCII character's class list at once: a hint of one character, a key name's next letter, is most)
        found = _PARTITIONS[key] = _Partition([chr(b) for b in bounds], bounds, {},
                                              {chr(o): [c] for o, c in enumerate(ascii)}, {}, ascii,
                                              slice(0, 0x20) if ascii_own(boundaries) else None,
                                              [hi - lo > 1 for lo, hi in zip(bounds, bounds[1:] + [MAX_CODE_POINT + 1])])
    return found


def forget_partitions() -> None:
    """Drop every partition's hints (a cold start: structbench.masking.cold_start), but for JSON's own syntax's
    (keep_partition_entries), which every schema over the partition asks for alike."""
    _PARTITIONS.clear()
    for kept in _SYNTAX.values():
        found = _partition(kept.boundaries)
        found.class_masks.update(kept.class_masks)
        found.class_lists.update(kept.class_lists)
        found.alike_masks.update(kept.alike_masks)


@dataclass
class _SyntaxEntries:
    """A partition's hints that JSON's own syntax asks for (structbench.masking.json_syntax), kept across cold starts:
    what its dicts held at each keep_partition_entries call, their union; `complete`: some call had every syntax
    document walked."""

    boundaries: np.ndarray
    class_masks: dict
    class_lists: dict
    alike_masks: dict
    complete: bool = False


_SYNTAX: dict[bytes, _SyntaxEntries] = {}  # per partition, its boundaries as bytes


def keep_partition_entries(boundaries: np.ndarray, complete: bool = True) -> None:
    """What the partition's hints hold now (its class masks, class lists and alike masks) is kept across cold
    starts: called once the JSON syntax's walks have filled them (structbench.masking.json_syntax.learn_syntax).
    complete: every syntax document was walked (else a later vocabulary walks them again, and adds its entries)."""
    boundaries = np.asarray(boundaries, dtype=np.int64)
    found = _partition(boundaries)
    kept = _SYNTAX.setdefault(boundaries.tobytes(), _SyntaxEntries(boundaries, {}, {}, {}))
    kept.class_masks.update(found.class_masks)
    kept.class_lists.update(found.class_lists)
    kept.alike_masks.update(found.alike_masks)
    kept.complete = kept.complete or complete


def kept_partition_entries(boundaries: np.ndarray) -> bool:
    """Whether the whole syntax's entries of this partition are kept (keep_partition_entries, complete)."""
    kept = _SYNTAX.get(np.asarray(boundaries, dtype=np.int64).tobytes())
    return kept is not None and kept.complete


def distinct(ordered: np.ndarray) -> np.ndarray:
    """The distinct values of an ordered array (the states of cells, which come ordered by state)."""
    if not len(ordered):
        return ordered
    return ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]


def pattern_constraint(dfa: DFA, vocab: Vocabulary) -> TabledConstraint:
    return TabledConstraint(PatternMachine(dfa), vocab, pattern_boundaries(dfa), eager=True)


def schema_constraint(checker, vocab: Vocabulary, eager: bool = True) -> TabledConstraint:
    return TabledConstraint(checker, vocab, machine_boundaries(checker.special_chars()), eager=eager and checker.is_finite())


def mask_table(dfa: DFA, vocab: Vocabulary) -> np.ndarray:
    """The lesson's table: row s is the allowed-token mask at DFA state s, for every state."""
    tabled = pattern_constraint(dfa, vocab)
    rows = {tabled.dense.states[i]: tabled.table[i] for i in range(len(tabled.dense.states))}
    return np.stack([rows[s] for s in range(dfa.n_states)])


# --- the context split ---------------------------------------------------------------------------------------


class ContextSplit:
    """XGrammar's split for stacks without end: a mask from the top of the stack alone, plus a walk of the
    few tokens that reach below it.

    For a stack's top frame, every token is walked from (context, top): a stand-in for the frames below. A
    token that stays within the top frame (and whatever it opens) is decided there once, for every stack
    with that top: context-independent. A token that closes the top and reads on is context-dependent: it
    is recorded with the offset of its first character that belongs below, and at run time only those
    suffixes are walked, from the real stack with its top closed.
    """

    def __init__(self, checker, vocab: Vocabulary, boundaries: np.ndarray, ahead: Fuel):
        self.checker, self.vocab = checker, vocab
        self.top_dense = LazyDense(_StartAt(checker), boundaries, vocab)
        self.full_dense = LazyDense(checker, boundaries, vocab)
        self.refeed = (checker.context_frame("refeed"),)  # where a walk from a top hands over to the frames below
        self.by_top: dict = {}
        self.memo: dict = {}
        self.compile_steps = 0
        # Tops tabled ahead, within `ahead` (an object's used keys make tops without number: past the budget
        # the rest is tabled when first met, with the same result).
        try:
            with fueled(ahead, self.top_dense, self.full_dense):
                for top in self._reachable_tops(ahead):
                    self.compile_steps += self._top_part(top)[1]
                self.compile_steps += self.mask(checker.start())[1]
        except LimitExceeded:
            pass

    def mask(self, stack) -> tuple[np.ndarray, int]:
        """The allowed tokens at `stack`, and the steps taken to find them (0 when remembered)."""
        known = self.memo.get(stack)
        if known is not None:
            return known, 0
        if len(stack) < 2:  # only the root: nothing below to split off
            allowed, steps = self.full_dense.mask(self.full_dense.id_of(stack))
        else:
            part, steps = self._top_part(stack[-1])
            allowed = part.read.copy()
            below = self.checker.close_top(stack)
            if part.handed_at_once.any():
                # Tokens the frames below read from their first character: the mask of the stack below.
                below_mask, more = self.mask(below)
                allowed |= below_mask & part.handed_at_once
                steps += more
            if len(part.crossing.positions):
                read, more = self.full_dense.resume(below, part.crossing)
                allowed[read] = True
                steps += more
            allowed[self.vocab.eos_id] = self.checker.can_end(stack)
        allowed.flags.writeable = False
        self.memo[stack] = allowed
        return allowed, steps

    def _top_part(self, top) -> tuple[SplitWalk, int]:
        """For a top frame, the walk of every token from (context, top), handing over at the frames below;
        and the steps it took (0 when remembered)."""
        part = self.by_top.get(top)
        if part is not None:
            return part, 0
        part = self.by_top[top] = self.top_dense.walk_until((self.checker.context_frame("value"), top), self.refeed)
        return part, part.steps

    def _reachable_tops(self, fuel: Fuel) -> list:
        """Every top frame met on stacks up to `Limits.split_depth` deep: their parts are tabled at compile
        time. (A deeper top repeats one of these in the recursive schemas this serves; any other is tabled
        when first met.)"""
        reps = self.full_dense.reps
        max_depth, max_stacks = limits().split_depth, limits().split_stacks
        start = self.checker.start()
        seen, queue, tops = {start}, [start], {}
        while queue and len(seen) < max_stacks:
            stack = queue.pop()
            if len(stack) >= 2:
                tops.setdefault(stack[-1], None)
            before = steps_taken(self.checker)
            for ch in reps:
                nxt = self.checker.step(stack, ch)
                if nxt is not None and len(nxt) <= max_depth and nxt not in seen:
                    seen.add(nxt)
                    queue.append(nxt)
            fuel.spend(steps_taken(self.checker) - before or len(reps))
        return list(tops)


class fueled:
    """Run a block (``with fueled(fuel, *denses):``) with these walks' machine steps drawn from `fuel`, and from
    what they drew on before, after it. A class, not a generator: every mask built enters one."""

    __slots__ = ("fuel", "denses", "before")

    def __init__(self, fuel: Fuel, *denses: LazyDense):
        self.fuel, self.denses = fuel, denses

    def __enter__(self) -> Fuel:
        self.before = [dense.fuel for dense in self.denses]
        for dense in self.denses:
            dense.fuel = self.fuel
        return self.fuel

    def __exit__(self, *exc) -> None:
        for dense, outer in zip(self.denses, self.before):
            dense.fuel = outer


def steps_taken(machine) -> int:
    """The steps a machine has taken, where it counts them (the schema checker counts a union's alternatives);
    0 where it does not (a DFA: one step a character, counted by the caller)."""
    return getattr(machine, "steps_taken", 0)


class _StartAt:
    """The checker, seen as a machine whose states are given to it (the split's truncated stacks)."""

    def __init__(self, checker):
        self.checker = checker

    @property
    def steps_taken(self) -> int:
        return self.checker.steps_taken

    def start(self):
        return (self.checker.context_frame("refeed"),)

    def step(self, stack, ch):
        return self.checker.step(stack, ch)

    def can_end(self, stack) -> bool:
        return False


# --- the vectorised walk -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Handover:
    """Tokens a walk handed over: their places in the vocabulary's walk order (:class:`VocabCodes`) and the
    offset of each one's first character not read."""

    positions: np.ndarray
    offsets: np.ndarray


@dataclass(frozen=True)
class SplitWalk:
    """A walk of the whole vocabulary that hands tokens over where they reach a stop state."""

    read: np.ndarray            # over the vocabulary: the tokens read to their end without reaching it
    handed_at_once: np.ndarray  # over the vocabulary: the tokens whose first character reaches it
    crossing: Handover          # the tokens that reach it after reading part of themselves
    steps: int


class LazyDense:
    """A machine's states numbered as they are met, its transition rows computed on first need.

    Serves machines with unboundedly many states (JSON mode, recursive schemas) and the finite ones alike:
    a vectorised mask walk expands only the rows it meets. Rows are cached, so the cost of a state is paid
    once per compiled constraint.
    """

    UNEXPANDED = UNKNOWN
    EXPAND_HINTED = True  # a state with a may_read hint gets its whole row at its first cell (the rows are short)
    FIRST_STATES = 128  # the per-state arrays' first length (doubled when full): a fresh answer numbers about 70

    def __init__(self, machine: Machine, boundaries: np.ndarray, vocab: Vocabulary):
        self.machine, self.boundaries, self.vocab = machine, boundaries, vocab
        shared = _partition(boundaries)  # what the class partition alone tells, shared by every schema that has it
        self.reps = shared.reps  # one character per class
        self._bounds = shared.bounds  # bisect on a list: far cheaper than NumPy for one character
        self._ascii = shared.ascii
        self._index: TokenIndex | None = None  # the vocabulary's index over these classes, looked up on the first walk
        self.states: list = []
        self._ids: dict = {}
        self._trans = np.full((self.FIRST_STATES, len(boundaries)), self.UNEXPANDED, dtype=np.int32)
        self._refused = np.full(len(boundaries), -1, dtype=np.int32)  # a row refusing every class, copied where one
        # is needed (a copy costs a fifth of np.full)
        self._expanded = np.zeros(self.FIRST_STATES, dtype=bool)
        self._accepting = np.zeros(self.FIRST_STATES, dtype=bool)
        self.fuel: Fuel | None = None  # set by fueled(): the budget machine steps draw from
        self._may_read_of = getattr(machine, "may_read", None)
        self._plain_default_of = getattr(machine, "plain_default", None)
        self._alike_of = getattr(machine, "alike", None)
        self._rows_of = getattr(machine, "rows", None)  # a machine's rows at once (a pattern's DFA): see _expand_rows
        self._hints: dict[int, list] = {}  # per state: may_read, plain_default, the plain step once taken, alike,
        # the steps of alike's characters once taken
        self._class_masks = shared.class_masks
        self._class_lists = shared.class_lists
        self._alike_masks = shared.alike_masks
        self._controls = shared.controls
        self._alike_classes: dict[int, tuple] = {}  # id(an alike hint) -> (it, its groups of classes): _settle_alike
        # Where the machine remembers keys whole, two keys whose characters share a class are two keys: a token's
        # step by a character past ASCII is then by that character, not its class's representative (_step_own)
        self._wide = shared.wide if getattr(machine, "remembers_keys", False) else None
        self._own_steps: dict[tuple[int, str], int] = {}
        self.start = self.id_of(machine.start())

    # --- states, one at a time ---

    def id_of(self, state) -> int:
        """The number of a machine state (numbered now if new)."""
        n = len(self.states)
        i = self._ids.setdefault(state, n)  # (one hash of the state, not a lookup and then an insert)
        if i == n:
            self._number(state, self.machine.can_end(state))
        return i

    def _number(self, state, accepting: bool) -> None:
        """Numbers a new machine state, the table grown where it is full. `state` is in `_ids` already, with the
        number len(states) (id_of and its like put it there as they look it up)."""
        i = len(self.states)
        if i >= len(self._expanded):
            if 2 * i * self._trans.shape[1] > limits().max_table_cells:  # (checked before anything is changed)
                del self._ids[state]
                raise exceeded("max_table_cells", f"the constraint's table of machine states is full at {i:,} "
                               f"states x {self._trans.shape[1]} character classes, and twice that is past the limit")
            self._grow()
        self.states.append(state)
        if accepting:  # (the arrays start False)
            self._accepting[i] = True

    def _grow(self, by: int | None = None) -> None:
        """The per-state arrays, twice as long (or `by` states longer)."""
        grow = len(self._expanded) if by is None else by
        self._trans = np.concatenate([self._trans, np.full((grow, self._trans.shape[1]), self.UNEXPANDED, np.int32)])
        self._expanded = np.concatenate([self._expanded, np.zeros(grow, dtype=bool)])
        self._accepting = np.concatenate([self._accepting, np.zeros(grow, dtype=bool)])

    def accepts(self, i: int) -> bool:
        return bool(self._accepting[i])

    def step(self, i: int, ch: str) -> int | None:
        o = ord(ch)
        if o < 128:
            c = self._ascii[o]
        else:
            c = bisect.bisect_right(self._bounds, o) - 1
            if self._wide is not None and self._wide[c] and ch != self.reps[c]:
                return self._step_own(i, ch)
        nxt = self._trans.item(i, c)
        if nxt == self.UNEXPANDED:
            self._fill_one(i, c)
            nxt = int(self._trans[i, c])
        return None if nxt < 0 else nxt

    def _step_own(self, i: int, ch: str) -> int | None:
        """State i's step by `ch`, a character of a class of many, by that character itself (kept per state and
        character, not in the class's cell: a walk's cells stay its representative's steps)."""
        nxt = self._own_steps.get((i, ch))
        if nxt is None:
            before = steps_taken(self.machine)
            state = self.machine.step(self.states[i], ch)
            nxt = self._own_steps[(i, ch)] = -1 if state is None else self.id_of(state)
            if self.fuel is not None:
                self.fuel.spend(steps_taken(self.machine) - before or 1)
        return None if nxt < 0 else nxt

    def own_ranges(self, chars) -> tuple[tuple[int, int], ...]:
        """The code-point ranges [lo, hi) a walk may step wrongly where keys holding `chars` are compared: each of
        them in a class of many (a walk steps its representative), or that whole class where one is the
        representative (a walk steps the class's every character as that one)."""
        out = set()
        for ch in chars:
            c = bisect.bisect_right(self._bounds, ord(ch)) - 1
            if self._wide is not None and self._wide[c]:
                hi = self._bounds[c + 1] if c + 1 < len(self._bounds) else MAX_CODE_POINT + 1
                out.add((ord(ch), ord(ch) + 1) if ch != self.reps[c] else (self._bounds[c], hi))
        return tuple(sorted(out))

    def step_text(self, i: int, text: str) -> int | None:
        """The state after `text` from state i (None: refused): a token's advance, a character at a time."""
        for ch in text:
            i = self.step(i, ch)
            if i is None:
                return None
        return i

    def expand_all(self, max_states: int) -> None:
        """Enumerate every reachable state (a finite machine); TooManyStates past the cap."""
        i = 0
        while i < len(self.states):
            if len(self.states) > max_states:
                raise TooManyStates(f"more than {max_states} reachable states")
            self._expand([i])
            i += 1

    # --- the whole vocabulary at once ---

    def mask(self, i: int) -> tuple[np.ndarray, int]:
        """The allowed tokens at state i, walked for the whole vocabulary at once; and the steps taken."""
        vc = vocab_codes(self.vocab)
        allowed = np.zeros(vc.size, dtype=bool)
        allowed[vc.eos_id] = bool(self._accepting[i])
        if not len(vc.token_ids):
            return allowed, 0
        self._expand([i])
        # First characters for the whole vocabulary in one gather; only the tokens that survive it walk on.
        first = self._trans[i, self._first_classes(vc)]
        live = np.flatnonzero(first >= 0)
        done, _, _, steps = self._walk(vc, first[live], live, np.ones(len(live), dtype=np.int64))
        allowed[vc.token_ids[done]] = True
        return allowed, steps + len(vc.token_ids)

    def walk_until(self, state, stop) -> SplitWalk:
        """Every token walked from machine state `state`, handed over where it reaches machine state `stop`."""
        vc = vocab_codes(self.vocab)
        stop_id = self.id_of(stop)
        n = len(vc.token_ids)
        done, stopped, stopped_at, steps = self._walk(vc, self.id_of(state), np.arange(n), np.zeros(n, dtype=np.int64),
                                                      stop=stop_id)
        read = np.zeros(vc.size, dtype=bool)
        read[vc.token_ids[done]] = True
        handed_at_once = np.zeros(vc.size, dtype=bool)
        handed_at_once[vc.token_ids[stopped[stopped_at == 0]]] = True
        crossing = stopped_at > 0
        return SplitWalk(read, handed_at_once, Handover(stopped[crossing], stopped_at[crossing]), steps)

    def resume(self, state, handover: Handover) -> tuple[np.ndarray, int]:
        """Handed-over tokens walked on from machine state `state`, each from its first character not read:
        the ids of those read to their end, and the steps taken."""
        vc = vocab_codes(self.vocab)
        done, _, _, steps = self._walk(vc, self.id_of(state), handover.positions, handover.offsets)
        return vc.token_ids[done], steps

    # --- inside ---

    def _fill(self, cur: np.ndarray, cls: np.ndarray) -> None:
        """Compute the transitions (cur[k], cls[k]) not computed yet: only the cells a walk meets (a state met in
        the middle of tokens is left by a few of its characters, not all of them), or the whole row where the
        machine's hints make it cheap."""
        states, classes = self._cells(cur, cls)
        if self._rows_of is not None:  # a whole row costs about what one cell does: every state's at once
            self._expand(distinct(states))
            return
        if self.EXPAND_HINTED:
            hinted = [i for i in distinct(states).tolist() if not self._expanded[i] and self._hints_of(i)[0] is not None]
            if hinted:
                self._expand(hinted)
        self._fill_cells(list(zip(states.tolist(), classes.tolist())))

    def _fill_one(self, i: int, c: int) -> None:
        """_fill of the one cell (i, c): a token's advance."""
        self._fill(np.array([i]), np.array([c]))

    def _cells(self, cur: np.ndarray, cls: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The distinct cells among (cur[k], cls[k]), ordered by state: (states, classes)."""
        if len(cur) == 1:  # a token's advance asks for one cell
            return cur.astype(np.int64), cls.astype(np.int64)
        n = len(self.reps)
        keys = cur.astype(np.int64) * n + cls
        keys.sort()
        keys = distinct(keys)  # np.unique's result, at half its overhead on the few cells a round has
        return keys // n, keys % n

    def _fill_cells(self, cells: list[tuple[int, int]]) -> None:
        """Step the distinct cells (state, class) that are still unknown (most cells a walk asks for are settled by
        hints or rows computed on the way)."""
        trans = self._trans
        todo = [(i, c) for i, c in cells if trans[i, c] == self.UNEXPANDED]
        before = steps_taken(self.machine)
        for i, c in todo:
            nxt = self._step_class(i, c)
            self._trans[i, c] = -1 if nxt is None else self.id_of(nxt)  # id_of may grow the table: index it anew
        if self.fuel is not None:  # the cells are facts whatever the budget says: a budget error leaves them right
            self.fuel.spend(steps_taken(self.machine) - before or len(cells))

    def _expand(self, ids) -> None:
        if self._rows_of is not None:
            self._expand_rows([int(i) for i in ids if not self._expanded[i]])
            return
        for i in ids:
            i = int(i)
            if self._expanded[i]:
                continue
            before = steps_taken(self.machine)
            may = self._hints_of(i)[0]
            if may is not None and len(may) <= _FEW_READ:
                # A state that may read only a few characters (after a key, a value, a string): those stepped,
                # every other class refused, without settling the row's hints class by class. Such a state has no
                # other hint (_hints_of), so each is the machine's step (_step_class's last line), called directly.
                row = self._refused.copy()
                state, step, reps = self.states[i], self.machine.step, self.reps
                loops = False
                for k in self._class_indexes(may):  # (each character a hint names is a class of its own)
                    ch = reps[k]
                    nxt = step(state, ch) if ch in may else None
                    row[k] = j = -1 if nxt is None else self.id_of(nxt)
                    loops = loops or j == i
                if not loops:
                    self._no_loop(i)
                todo = ()
            else:
                row = self._trans[i].copy()
                self._settle_by_hints(i, row)
                self._settle_alike(i, row)
                todo = (row == self.UNEXPANDED).nonzero()[0].tolist()
            for k in todo:
                nxt = self._step_class(i, k)
                row[k] = -1 if nxt is None else self.id_of(nxt)
            if self.fuel is not None:  # after the row: a row is all or nothing, so a budget error leaves no half
                self.fuel.spend(steps_taken(self.machine) - before or len(self.reps))
            self._trans[i] = row
            self._expanded[i] = True

    def _no_loop(self, i: int) -> None:
        """State i's row, being computed whole, leads back to i on no class (a subclass that keeps loop bits notes
        it without looking at the row again)."""

    def _expand_rows(self, ids: list[int]) -> None:
        """The rows of `ids` from the machine's own vectorised `rows` (a pattern's DFA: every class looked up among
        its moves at once), not a step per class; fuel as the step-by-step rows spend it (one a class)."""
        if not ids:
            return
        nxt = self._rows_of([self.states[i] for i in ids], self.boundaries)
        targets = np.unique(nxt[nxt >= 0])
        numbered = np.array([self.id_of(int(t)) for t in targets.tolist()], dtype=np.int32)
        rows = np.full(nxt.shape, -1, dtype=np.int32)
        live = nxt >= 0
        rows[live] = numbered[np.searchsorted(targets, nxt[live])]
        self._trans[ids] = rows  # id_of may have grown the table: index it anew
        self._expanded[ids] = True
        if self.fuel is not None:
            self.fuel.spend(len(ids) * len(self.reps))

    def _settle_by_hints(self, i: int, row: np.ndarray) -> None:
        """What state i's hints settle in `row` (a copy of its transitions) without stepping what it may read:
        the classes it could not read at all refused in one go (`may_read`); where plain characters step alike
        (`plain_default`), control characters refused and the alike ones stepped once for them all."""
        may, plain = self._hints_of(i)[:2]
        # Cells known already are the hints' answers too (a hint is a promise about every step), so the settled
        # classes are written whole, not only where unknown.
        if may is not None:
            row[self._classes_of(may, outside=True)] = -1
        if plain is not None:
            row[self._control_classes()] = -1
            found = self._alike_masks.get((plain[1], may))
            if found is None:  # the plain classes that step alike: not special, and readable at all
                alike = self._plain_classes() & self._classes_of(plain[1], outside=True)
                if may is not None:
                    alike &= self._classes_of(may)
                alike.flags.writeable = False  # shared by every schema over this partition
                first = int(np.flatnonzero(alike)[0]) if alike.any() else -1
                found = self._alike_masks[(plain[1], may)] = (alike, first)
            alike, first = found
            if first >= 0:
                nxt = self._step_class(i, first)
                row[alike] = -1 if nxt is None else self.id_of(nxt)

    def _settle_alike(self, i: int, row: np.ndarray) -> None:
        """In a row being computed whole: the unknown cells of each group of characters that step alike (the `alike`
        hint: a number's digits), one step a group, written at once, not looked up class by class (as _step_class
        would: where a plain_default hint holds, it comes first there, so it is left to it)."""
        hints = self._hints_of(i)
        alike = hints[3]
        if alike is None or hints[1] is not None:
            return
        found = self._alike_classes.get(id(alike))
        if found is None:  # the hint's classes by the character they step like (kept with the hint: its id stays its)
            groups: dict[str, list[int]] = {}
            for ch, like in alike.items():
                c = self._class_indexes(ch)[0]
                if self.reps[c] == ch:
                    groups.setdefault(like, []).append(c)
            found = self._alike_classes[id(alike)] = (alike, [(like, np.array(cs)) for like, cs in groups.items()])
        taken = hints[4]
        for like, classes in found[1]:
            todo = classes[row[classes] == self.UNEXPANDED]
            if len(todo):
                if like not in taken:
                    taken[like] = self.machine.step(self.states[i], like)
                row[todo] = -1 if taken[like] is None else self.id_of(taken[like])

    def _hints_of(self, i: int) -> list:
        """The machine's hints about state i, asked once: [may_read, plain_default, the plain step once taken, alike,
        alike's steps once taken] (a checker's `may_read`: what a state could read at all; `plain_default`: the
        characters that all step alike; `alike`: characters that step as another does; None where the machine
        gives none). A state that may read at most _FEW_READ characters is not asked for the other two: its row
        is those characters stepped one by one (_expand), and a hint is a promise that spares steps, never one that
        a step needs (most such states are an object's or an array's between values: neither hint holds there)."""
        hints = self._hints.get(i)
        if hints is None:
            state = self.states[i]
            may = self._may_read_of(state) if self._may_read_of else None
            few = may is not None and len(may) <= _FEW_READ
            plain = self._plain_default_of(state) if self._plain_default_of and not few else None
            alike = self._alike_of(state) if self._alike_of and not few else None
            hints = self._hints[i] = [may, plain, _ASK, alike, {}]
        return hints

    def _class_indexes(self, chars: str) -> list[int]:
        """The classes of these characters (memoised: hints repeat). Every character a hint names is a class of
        its own (see _step_class), so its class is the one it represents."""
        found = self._class_lists.get(chars)
        if found is None:
            found = self._class_lists[chars] = sorted({bisect.bisect_right(self._bounds, ord(ch)) - 1 for ch in chars})
        return found

    def _classes_of(self, chars: str, outside: bool = False) -> np.ndarray:
        """Over the classes: those whose representative is one of `chars`, or (outside) is not (memoised: hints
        repeat)."""
        mask = self._class_masks.get((chars, outside))
        if mask is None:  # the class of each character, where that character is its representative
            mask = np.full(len(self.reps), outside, dtype=bool)
            mask[[c for c in self._class_indexes(chars) if self.reps[c] in chars]] = not outside
            mask.flags.writeable = False  # shared by every schema over this partition
            self._class_masks[(chars, outside)] = mask
        return mask

    def _control_classes(self):
        """The control characters' classes, to index a row with: a slice where they are classes 0-31 (a view, not a
        boolean mask's copy), else their mask."""
        return self._controls if self._controls is not None else self._classes_of(_CONTROL)

    def _plain_classes(self) -> np.ndarray:
        """Over the classes: characters from U+0020 up but the quote and the backslash."""
        return self._classes_of(_NOT_PLAIN, outside=True)

    def _step_class(self, i: int, c: int):
        """The machine's step from state i on class c, spared where its hints tell it. A class's representative
        stands for it: every character the checker names (ASCII, and the non-ASCII ones of its property names)
        is a class of its own (machine_boundaries)."""
        ch = self.reps[c]
        hints = self._hints_of(i)
        may, plain = hints[:2]
        if may is not None and ch not in may:
            return None
        if plain is not None and ch < " ":
            return None
        if plain is not None and ch not in _NOT_PLAIN and ch not in plain[1]:
            if hints[2] is _ASK:
                hints[2] = self.machine.step(self.states[i], plain[0])
            return hints[2]
        like = None if hints[3] is None else hints[3].get(ch)
        if like is not None:  # steps as `like` does: one step for its group
            taken = hints[4]
            if like not in taken:
                taken[like] = self.machine.step(self.states[i], like)
            return taken[like]
        return self.machine.step(self.states[i], ch)

    def _token_index(self, vc: VocabCodes) -> TokenIndex:
        """The vocabulary's index over these classes, shared by every LazyDense with these boundaries."""
        if self._index is None:
            self._index = token_index(vc, self.boundaries)
        return self._index

    def _class_codes(self, vc: VocabCodes) -> np.ndarray:
        """The class of every character of the vocabulary."""
        return self._token_index(vc).classes

    def _first_classes(self, vc: VocabCodes) -> np.ndarray:
        """The class of every token's first character, in the walk order."""
        return self._token_index(vc).first

    def _walk(self, vc: VocabCodes, start, positions, offsets, stop: int | None = None):
        """Walk tokens (positions in the vocabulary's walk order) from their start states, each from its own
        character offset, all at once.

        Returns the positions of the tokens read to their end, the positions and character offsets of the
        tokens that reached the `stop` state (where the walk hands over), and the steps taken."""
        classes = self._class_codes(vc)
        alive = np.asarray(positions, dtype=np.int64)
        offs = np.asarray(offsets, dtype=np.int64)
        cur = np.broadcast_to(np.asarray(start, dtype=np.int32), alive.shape).copy()
        rem = vc.lengths[alive] - offs
        order = np.argsort(rem, kind="stable")
        alive, offs, cur, rem = alive[order], offs[order], cur[order], rem[order]
        done, stopped, stopped_at, steps, j = [], [], [], 0, 0
        while alive.size:
            cut = np.searchsorted(rem, j, side="right")  # tokens with nothing left to read are complete
            done.append(alive[:cut])
            alive, offs, cur, rem = alive[cut:], offs[cut:], cur[cut:], rem[cut:]
            if not alive.size:
                break
            cls = classes[vc.offsets[alive] + offs + j]
            nxt = self._trans[cur, cls]
            missing = nxt == self.UNEXPANDED
            if missing.any():
                self._fill(cur[missing], cls[missing])
                nxt[missing] = self._trans[cur[missing], cls[missing]]
            steps += alive.size
            keep = nxt >= 0
            if stop is not None:
                hit = nxt == stop
                if hit.any():
                    stopped.append(alive[hit])
                    stopped_at.append(offs[hit] + j)  # this character was not read: it belongs below
                    keep &= ~hit
            alive, offs, cur, rem = alive[keep], offs[keep], nxt[keep], rem[keep]
            j += 1
        cat = lambda parts: np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)  # noqa: E731
        return cat(done), cat(stopped), cat(stopped_at), steps


# --- the walk's inputs ---------------------------------------------------------------------------------------


class VocabCodes:
    """A vocabulary's text tokens as code points, flattened, grouped for vectorised walks: the walk order is
    shortest first (tokens that end early leave a prefix)."""

    def __init__(self, vocab: Vocabulary):
        ids = [i for i, t in enumerate(vocab.tokens) if t is not None and i != vocab.eos_id]
        texts = [vocab.tokens[i] for i in ids]
        lengths = np.array([len(t) for t in texts], dtype=np.int64)
        order = np.argsort(lengths, kind="stable")
        self.token_ids = np.array(ids, dtype=np.int64)[order]
        self.lengths = lengths[order]
        self.offsets = np.concatenate([[0], np.cumsum(self.lengths)[:-1]]).astype(np.int64)
        self.texts = [texts[i] for i in order]
        joined = "".join(self.texts)
        self.codes = np.frombuffer(joined.encode("utf-32-le"), dtype=np.uint32).astype(np.int64)
        self.size = len(vocab)
        self.eos_id = vocab.eos_id
        # The mask of a state that reads no character where the output may end (a value done): the end token alone,
        # one read-only array for every such state of every schema over this vocabulary.
        end_only = np.zeros(-(-self.size // 32) * 4, dtype=np.uint8)
        end_only[self.eos_id >> 3] |= np.uint8(1 << (self.eos_id & 7))
        end_only.flags.writeable = False
        self.end_only_bits = end_only.view("<i4")


def vocab_codes(vocab: Vocabulary) -> VocabCodes:
    """The vocabulary's codes, built once and kept on it (every constraint over it shares them)."""
    codes = vocab.__dict__.get("_codes")
    if codes is None:
        codes = vocab.__dict__["_codes"] = VocabCodes(vocab)
    return codes


def quoted_tokens(vocab: Vocabulary, past_ascii: bool = False) -> list[tuple[int, str]]:
    """(id, text) of the tokens holding three or more quotes (Llama 3: 30), found once and kept on the vocabulary
    (index_vocabulary, untimed: a scan of every token): the only ones whose mask a mask twin may not tell
    (SchemaChecker.mask_twin). past_ascii: those of them that also hold a character past ASCII
    (TabledConstraint._by_own_characters)."""
    found = vocab.__dict__.get("_quoted")
    if found is None:
        every = [(i, t) for i, t in enumerate(vocab.tokens) if t is not None and t.count('"') >= 3 and i != vocab.eos_id]
        found = vocab.__dict__["_quoted"] = (every, [(i, t) for i, t in every if not t.isascii()])
    return found[1] if past_ascii else found[0]


def tokens_holding(vocab: Vocabulary, ranges: tuple[tuple[int, int], ...]) -> list[tuple[int, str]]:
    """(id, text) of the tokens holding a character in one of the code-point ranges [lo, hi) (kept on the
    vocabulary, for the last few sets of ranges asked)."""
    kept = vocab.__dict__.setdefault("_holding", {})
    found = kept.get(ranges)
    if found is None:
        vc = vocab_codes(vocab)
        hit = np.zeros(len(vc.codes), dtype=bool)
        for lo, hi in ranges:
            hit |= (vc.codes >= lo) & (vc.codes < hi)
        at = np.unique(np.searchsorted(vc.offsets, np.flatnonzero(hit), side="right") - 1)
        if len(kept) >= 64:
            del kept[next(iter(kept))]
        found = kept[ranges] = [(int(vc.token_ids[k]), vc.texts[k]) for k in at.tolist()]
    return found


def index_vocabulary(vocab: Vocabulary) -> None:
    """The per-vocabulary setup every schema shares: the character codes, the prefix tree, the texts tokens hold
    around a key (shared_masks.token_reach, with which containers they close and read on: container_reach.learn)
    and after a `\\u` (token_index.unicode_escape_prefixes), free text's
    escape DFA (free_text.free_escapes), the index over the classes of a schema that names no non-ASCII character,
    and the tokens holding three quotes (quoted_tokens) (the speed and fresh experiments do it untimed, as an
    engine's tokenizer setup)."""
    index = token_index(vocab_codes(vocab), machine_boundaries())
    reach = token_reach(vocab)
    learn_container_reach(reach.close_texts, reach.closes_read_on)  # where a mask key may leave frames out
    unicode_escape_prefixes(vocab)
    free_escapes()  # free text's escape as a DFA: the string syntax alone, the same for every schema
    if trie_walk.compiled():
        trie_walk.walk_constants(index)  # the index's arrays and the walk's buffers, built now, untimed
        trie_walk.warm_up()
    from structbench.masking.json_syntax import learn_syntax

    learn_syntax(vocab)  # what JSON's own syntax asks of the partition's hints, kept across cold starts
    quoted_tokens(vocab)  # (a scan of every token, for the schemas whose objects remember keys whole)


def pattern_boundaries(dfa: DFA) -> np.ndarray:
    """Classes on which the DFA's every row is constant."""
    cuts = {0}
    for row in dfa.moves:
        for lo, hi, _ in row:
            cuts.add(lo)
            if hi < MAX_CODE_POINT:
                cuts.add(hi + 1)
    return np.array(sorted(cuts), dtype=np.int64)


def machine_boundaries(special_chars=()) -> np.ndarray:
    """For the schema checker: every ASCII character its own class, every non-ASCII character the schema
    names (in a key or an enum value) too; it treats all other characters alike."""
    cuts = set(range(129)) | {0xD800, 0xE000}
    for ch in special_chars:
        cuts.add(ord(ch))
        if ord(ch) < MAX_CODE_POINT:
            cuts.add(ord(ch) + 1)
    return np.array(sorted(c for c in cuts if c <= MAX_CODE_POINT), dtype=np.int64)
