"""The naive strategy: every token walked through the machine at every step (the lesson's SchemaConstraint
way), |V| walks per mask and no memory; and the prefix-tree walk the lesson's A(s) is defined by."""

from __future__ import annotations

import numpy as np

from structbench.errors import TokenRejected
from structbench.lm.vocab import Vocabulary
from structbench.masking.bitmask import pack_bits
from structbench.masking.protocol import Machine, PatternMachine, WorkCounter
from structbench.regular import DFA


class NaiveConstraint:
    """A :class:`~structbench.masking.protocol.Constraint` whose states are the machine's own."""

    def __init__(self, machine: Machine, vocab: Vocabulary):
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


def trie_mask(machine: Machine, vocab: Vocabulary, state) -> tuple[np.ndarray, int]:
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


def allowed_tokens(dfa: DFA, state, vocab: Vocabulary) -> list[str]:
    """A(s): every token the machine can swallow whole from `state`; the end token only where the text is complete."""
    if state is None:
        return []
    allowed, _ = trie_mask(PatternMachine(dfa), vocab, state)
    return [t for t, ok in zip(vocab.tokens, allowed) if ok]
