"""One masking interface with incremental state, and the two mask-building strategies.

    constraint.start()            -> state
    constraint.mask(state)        -> boolean array over the vocabulary (end token included)
    constraint.advance(state, t)  -> state, or TokenRejected if t was not allowed
    constraint.can_end(state)     -> bool

A constraint wraps a *machine*: anything with `start()`, `step(state, ch)`
(None when stuck) and `can_end(state)`: a pattern's DFA or a schema's
pushdown checker. States are hashable, so masks can be memoised by state.

* :class:`NaiveConstraint` walks every token through the machine at every step
  (the lesson's SchemaConstraint way).
* :class:`TabledConstraint` computes the mask for a state once, by one
  vectorised walk of the whole vocabulary, and reads it back afterwards. For a
  pattern or a non-recursive schema every reachable state is tabled up front
  (the lesson's mask table); otherwise masks are memoised by the whole stack,
  which is exactly the state a token's fate depends on.

`work` counts what each spends: `chars`, the machine steps taken building
masks (the quantity the lesson's mask_cost formula predicts), and `reads`, the
table entries read back.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from structbench.errors import TokenRejected
from structbench.limits import current as limits
from structbench.lm.vocab import Vocabulary
from structbench.masking.dense import (
    LazyDense,
    TooManyStates,
    machine_boundaries,
    pack_bits,
    pattern_boundaries,
    vocab_codes,
)
from structbench.regular.patterns import DFA


@dataclass
class WorkCounter:
    chars: int = 0  # machine steps (one character each) spent building masks
    reads: int = 0  # mask entries read back from a table
    masks_built: int = 0

    def reset(self):
        self.chars = self.reads = self.masks_built = 0


class PatternMachine:
    """A DFA seen as a machine; its states are the DFA's state numbers."""

    def __init__(self, dfa: DFA):
        self.dfa = dfa

    def start(self) -> int:
        return self.dfa.start

    def step(self, state, ch: str):
        return self.dfa.step(state, ch)

    def can_end(self, state) -> bool:
        return state in self.dfa.accepting


class _MachineConstraint:
    def __init__(self, machine, vocab: Vocabulary):
        self.machine, self.vocab = machine, vocab
        self.work = WorkCounter()

    def start(self):
        return self.machine.start()

    def can_end(self, state) -> bool:
        return self.machine.can_end(state)

    def advance(self, state, token_id: int):
        if token_id == self.vocab.eos_id:
            raise TokenRejected("the end token finishes the answer; there is no state after it")
        step = self.machine.step
        if self.vocab.tokens[token_id] is None:
            raise TokenRejected(f"token id {token_id} is not text (a special token or part of a character)")
        for ch in self.vocab.tokens[token_id]:
            state = step(state, ch)
            if state is None:
                raise TokenRejected(f"token {self.vocab.tokens[token_id]!r} (id {token_id}) is not allowed here")
        return state


class NaiveConstraint(_MachineConstraint):
    """Every token checked against the machine at every step: |V| walks per step."""

    def mask(self, state) -> np.ndarray:
        step, tokens, eos_id = self.machine.step, self.vocab.tokens, self.vocab.eos_id
        allowed = np.zeros(len(tokens), dtype=bool)
        chars = 0
        for tid, token in enumerate(tokens):
            if tid == eos_id or token is None:  # a token that is not text is never allowed
                continue
            s = state
            for ch in token:
                chars += 1
                s = step(s, ch)
                if s is None:
                    break
            else:
                allowed[tid] = True
        allowed[eos_id] = self.machine.can_end(state)
        self.work.chars += chars
        self.work.masks_built += 1
        return allowed

    def mask_bits(self, state) -> np.ndarray:
        return pack_bits(self.mask(state))


def trie_mask(machine, vocab: Vocabulary, state) -> tuple[np.ndarray, int]:
    """The allowed tokens at `state`, walking the prefix tree: a shared prefix is walked once.

    Returns the mask and the number of machine steps taken."""
    trie = vocab.trie
    allowed = np.zeros(len(vocab), dtype=bool)
    step, children, ends = machine.step, trie.children, trie.ends_arrays
    chars = 0
    todo = [(0, state)]
    while todo:
        node, s = todo.pop()
        for ch, child in children[node].items():
            chars += 1
            nxt = step(s, ch)
            if nxt is None:
                continue
            allowed[ends[child]] = True
            if children[child]:
                todo.append((child, nxt))
    allowed[vocab.eos_id] = machine.can_end(state)
    return allowed, chars


class TabledConstraint:
    """Masks computed once per machine state, by one vectorised walk of the whole vocabulary, then
    read back. States are numbered by a :class:`~structbench.masking.dense.LazyDense`; with `eager`, every
    reachable state is enumerated and tabled at compile time (patterns, non-recursive schemas), so a
    step is a row lookup; otherwise each state is tabled the first time it is met."""

    def __init__(self, machine, vocab: Vocabulary, boundaries, eager: bool = False):
        self.machine, self.vocab = machine, vocab
        self.work = WorkCounter()
        self.dense = LazyDense(machine, boundaries)
        self.table: dict[int, np.ndarray] = {}
        self._bits: dict[int, np.ndarray] = {}
        self._next: dict[tuple[int, int], int] = {}
        self.split = None
        self.eager = False
        if eager:
            try:
                self.dense.expand_all(limits().max_eager_states)
                self.eager = True
            except TooManyStates:
                pass  # too many to table up front: table each state when first met
            if self.eager:
                for state in range(len(self.dense.states)):
                    self._build(state)
        if not self.eager and hasattr(machine, "context_frame"):
            self.split = ContextSplit(machine, vocab, boundaries)
            self.work.chars += self.split.compile_steps

    def start(self) -> int:
        return self.dense.start

    def can_end(self, state: int) -> bool:
        return bool(self.dense.accepting[state])

    def advance(self, state: int, token_id: int) -> int:
        nxt = self._next.get((state, token_id))  # a token's move from a state, remembered like its mask
        if nxt is not None:
            return nxt
        text = self.vocab.tokens[token_id]
        if token_id == self.vocab.eos_id or text is None:
            raise TokenRejected(f"token id {token_id} writes no text; there is no state after it")
        nxt = state
        for ch in text:
            nxt = self.dense.step(nxt, ch)
            if nxt is None:
                raise TokenRejected(f"token {text!r} (id {token_id}) is not allowed here")
        self._next[(state, token_id)] = nxt
        return nxt

    def _build(self, state: int) -> np.ndarray:
        if self.split is not None:
            allowed, steps = self.split.mask(self.dense.states[state])
        else:
            allowed, steps = self.dense.mask(state, self.vocab)
        allowed.flags.writeable = False  # shared by every step that reaches this state
        self.table[state] = allowed
        self._bits[state] = pack_bits(allowed)
        self.work.chars += steps
        self.work.masks_built += 1
        return allowed

    def mask(self, state: int) -> np.ndarray:
        allowed = self.table.get(state)
        if allowed is None:
            allowed = self._build(state)
        self.work.reads += len(allowed)
        return allowed

    def mask_bits(self, state: int) -> np.ndarray:
        """The same mask as int32 words, token i at bit i % 32 of word i // 32."""
        bits = self._bits.get(state)
        if bits is None:
            self._build(state)
            bits = self._bits[state]
        self.work.reads += len(self.vocab)
        return bits


class ContextSplit:
    """XGrammar's split for stacks without end (JSON mode, recursive schemas): a mask from the top of
    the stack alone, plus a walk of the few tokens that reach below it.

    For a stack's top frame, every token is walked from (context, top): a stand-in for the frames
    below. A token that stays within the top frame (and whatever it opens) is decided there once, for
    every stack with that top: context-independent. A token that closes the top and reads on is
    context-dependent: it is recorded with the offset of its first character that belongs below, and
    at run time only those suffixes are walked, from the real stack with its top closed.
    """

    def __init__(self, checker, vocab: Vocabulary, boundaries):
        self.checker, self.vocab = checker, vocab
        self.top_dense = LazyDense(_StartAt(checker), boundaries)
        self.full_dense = LazyDense(checker, boundaries)
        self.refeed = self.top_dense.id_of((checker.context_frame("refeed"),))
        self.by_top: dict = {}
        self.memo: dict = {}
        self.vc = vocab_codes(vocab)
        self.compile_steps = sum(self._top_part(top)[4] for top in self._reachable_tops())
        self.compile_steps += self.mask(checker.start())[1]

    def _reachable_tops(self) -> list:
        """Every top frame met on stacks up to `Limits.split_depth` deep: their parts are tabled at compile time.
        (A deeper top repeats one of these in the recursive schemas this serves; any other is tabled
        when first met.)"""
        reps = self.full_dense.reps
        max_depth, max_stacks = limits().split_depth, limits().split_stacks
        start = self.checker.start()
        seen, queue, tops = {start}, [start], {}
        while queue and len(seen) < max_stacks:
            stack = queue.pop()
            if len(stack) >= 2:
                tops.setdefault(stack[-1], None)
            for ch in reps:
                nxt = self.checker.step(stack, ch)
                if nxt is not None and len(nxt) <= max_depth and nxt not in seen:
                    seen.add(nxt)
                    queue.append(nxt)
        return list(tops)

    def _top_part(self, top):
        """For a top frame: the tokens decided within it, the tokens wholly read by the frames below
        (their first character already closes the top), and the rest with the offset where they cross."""
        part = self.by_top.get(top)
        if part is not None:
            return part[:4] + (0,)
        vc = self.vc
        start = self.top_dense.id_of((self.checker.context_frame("value"), top))
        done, cd, cd_at, steps = self.top_dense.walk(self.vocab, start, np.arange(len(vc.token_ids)),
                                                     np.zeros(len(vc.token_ids), dtype=np.int64), stop=self.refeed)
        independent = np.zeros(vc.size, dtype=bool)
        independent[vc.token_ids[done]] = True
        below_whole = np.zeros(vc.size, dtype=bool)
        below_whole[vc.token_ids[cd[cd_at == 0]]] = True
        crossing = cd_at > 0
        part = self.by_top[top] = (independent, below_whole, cd[crossing], cd_at[crossing], steps)
        return part

    def mask(self, stack) -> tuple[np.ndarray, int]:
        known = self.memo.get(stack)
        if known is not None:
            return known, 0
        if len(stack) < 2:  # only the root: nothing below to split off
            allowed, steps = self.full_dense.mask(self.full_dense.id_of(stack), self.vocab)
        else:
            independent, below_whole, crossing, crossing_at, steps = self._top_part(stack[-1])
            allowed = independent.copy()
            below = self.checker.close_top(stack)
            if below_whole.any():
                # Tokens the frames below read from their first character: the mask of the stack below.
                below_mask, more = self.mask(below)
                allowed |= below_mask & below_whole
                steps += more
            if len(crossing):
                done, _, _, more = self.full_dense.walk(self.vocab, self.full_dense.id_of(below), crossing, crossing_at)
                allowed[self.vc.token_ids[done]] = True
                steps += more
            allowed[self.vocab.eos_id] = self.checker.can_end(stack)
        allowed.flags.writeable = False
        self.memo[stack] = allowed
        return allowed, steps


class _StartAt:
    """The checker, seen as a machine whose states are given to it (the split's truncated stacks)."""

    def __init__(self, checker):
        self.checker = checker

    def start(self):
        return (self.checker.context_frame("refeed"),)

    def step(self, stack, ch):
        return self.checker.step(stack, ch)

    def can_end(self, stack) -> bool:
        return False


def pattern_constraint(dfa: DFA, vocab: Vocabulary) -> TabledConstraint:
    return TabledConstraint(PatternMachine(dfa), vocab, pattern_boundaries(dfa), eager=True)


def schema_constraint(checker, vocab: Vocabulary, eager: bool = True) -> TabledConstraint:
    return TabledConstraint(checker, vocab, machine_boundaries(checker.special_chars()), eager=eager and checker.is_finite())


def mask_table(dfa: DFA, vocab: Vocabulary) -> np.ndarray:
    """The lesson's table: row s is the allowed-token mask at DFA state s, for every state."""
    tabled = pattern_constraint(dfa, vocab)
    rows = {tabled.dense.states[i]: tabled.table[i] for i in range(len(tabled.dense.states))}
    return np.stack([rows[s] for s in range(dfa.n_states)])


def allowed_tokens(dfa: DFA, state, vocab: Vocabulary) -> list[str]:
    """A(s): every token the machine can swallow whole from `state`; the end token only where the text is complete."""
    if state is None:
        return []
    allowed, _ = trie_mask(PatternMachine(dfa), vocab, state)
    return [t for t, ok in zip(vocab.tokens, allowed) if ok]
