"""Vocabularies: the tokens a model can write, one of them the end token.

A token is a piece of text (`str`); the end token adds no text. The toy
vocabulary is the lesson's: every single character its examples need plus a
few multi-character pieces, the way a real BPE vocabulary holds both letters
and common chunks.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from structbench.errors import VocabularyError
from structbench.limits import current as limits
from structbench.limits import exceeded

EOS = "<eos>"  # the toy vocabulary's "I'm finished" token


class Vocabulary:
    """An ordered list of tokens with one designated end token.

    Token ids are positions in `tokens`. A token is its text (`str`), or None
    for a token no answer may contain: a special token other than the end
    token, or (in a real byte-level vocabulary) a piece of a UTF-8 character
    that is not text on its own. `token_bytes` keeps a real vocabulary's bytes
    for the engines; `encoder` spells a text the way the real tokenizer does.
    `trie` shares prefixes between tokens so that masks can walk many tokens
    through a machine at once. `special_ids`, where the tokenizer declares them, are
    the ids of its special tokens (the end token among them): text to no engine.
    """

    def __init__(self, tokens: list, eos: str = EOS, name: str = "custom", token_bytes: list | None = None,
                 encoder=None, special_ids=None):
        tokens = list(tokens)
        if eos not in tokens:
            raise VocabularyError(f"vocabulary {name!r} has no end token {eos!r}; every constrained answer needs one to finish")
        seen: set[str] = set()
        for i, t in enumerate(tokens):
            if t is None:
                continue
            if not isinstance(t, str):
                raise VocabularyError(f"vocabulary {name!r}: token {i} is {type(t).__name__}, not str")
            if t == "":
                raise VocabularyError(f"vocabulary {name!r}: token {i} is empty")
            if t in seen:
                raise VocabularyError(f"vocabulary {name!r}: token {t!r} appears twice")
            seen.add(t)
        if token_bytes is not None and len(token_bytes) != len(tokens):
            raise VocabularyError(f"vocabulary {name!r}: {len(token_bytes)} byte strings for {len(tokens)} tokens")
        self.tokens, self.eos, self.name = tokens, eos, name
        self.eos_id = tokens.index(eos)
        self.index = {t: i for i, t in enumerate(tokens) if t is not None}
        self.token_bytes = token_bytes if token_bytes is not None else [
            b"" if t is None else t.encode("utf-8") for t in tokens]
        self.encoder = encoder
        self.special_ids = frozenset(int(i) for i in special_ids or ())

    def __len__(self) -> int:
        return len(self.tokens)

    def __getitem__(self, i: int) -> str:
        return self.tokens[i]

    def __repr__(self) -> str:
        return f"Vocabulary({self.name!r}, {len(self)} tokens, eos={self.eos!r})"

    def text_of(self, token_id: int) -> str:
        """The text a token writes; the end token (and a token that is not text) writes nothing."""
        return "" if token_id == self.eos_id else self.tokens[token_id] or ""

    def cut(self, size: int) -> "Vocabulary":
        """The first `size` - 1 tokens and the end token: a real vocabulary at a smaller size."""
        if size < 2 or size > len(self):
            raise VocabularyError(f"cannot cut vocabulary {self.name!r} of {len(self)} tokens to {size}")
        keep = [i for i in range(size - 1) if i != self.eos_id][: size - 1]
        ids = keep + [self.eos_id]
        return Vocabulary([self.tokens[i] for i in ids], self.eos, name=self.name,
                          token_bytes=[self.token_bytes[i] for i in ids],
                          special_ids=[new for new, old in enumerate(ids) if old in self.special_ids])

    def encode(self, text: str) -> list[int]:
        """Token ids for a reference answer: the real tokenizer's spelling where there is one."""
        return self.encoder(text) if self.encoder is not None else self.encode_greedy(text)

    @cached_property
    def has_partial_tokens(self) -> bool:
        """Whether some token is not text on its own (a piece of a UTF-8 character, or a special)."""
        return any(t is None for t in self.tokens)

    @cached_property
    def lengths(self) -> np.ndarray:
        """Characters per token (the end token counts 0)."""
        return np.array([len(self.text_of(i)) for i in range(len(self))], dtype=np.int64)

    @cached_property
    def trie(self) -> "TokenTrie":
        return TokenTrie(self)

    def encode_greedy(self, text: str) -> list[int]:
        """Spell `text` with the longest token at each position (how a tokenizer usually prefers pieces)."""
        ids, i = [], 0
        while i < len(text):
            node, best, j = 0, None, i
            while j < len(text):
                node = self.trie.children[node].get(text[j])
                if node is None:
                    break
                j += 1
                if self.trie.ends[node]:
                    best = (self.trie.ends[node][0], j)
            if best is None:
                raise VocabularyError(f"vocabulary {self.name!r} cannot spell {text[i]!r} at position {i} of {text!r}")
            ids.append(best[0])
            i = best[1]
        return ids


class TokenTrie:
    """Every non-end token in one prefix tree: `children[node]` maps a character
    to a child node, `ends[node]` lists the token ids spelled by the path to it."""

    def __init__(self, vocab: Vocabulary):
        self.children: list[dict[str, int]] = [{}]
        self.ends: list[list[int]] = [[]]
        for tid, token in enumerate(vocab.tokens):
            if tid == vocab.eos_id or token is None:
                continue
            node = 0
            for ch in token:
                nxt = self.children[node].get(ch)
                if nxt is None:
                    nxt = len(self.children)
                    self.children[node][ch] = nxt
                    self.children.append({})
                    self.ends.append([])
                node = nxt
            self.ends[node].append(tid)
        self.ends_arrays = [np.array(e, dtype=np.int64) for e in self.ends]

    def prefixes_of(self, text: str) -> list[int]:
        """Ids of every token that `text` starts with."""
        found, node = [], 0
        for ch in text:
            node = self.children[node].get(ch)
            if node is None:
                break
            found.extend(self.ends[node])
        return found


_SINGLE = list('{}[]":, -.!\'\n') + list("0123456789") + list("abcdefghijklmnopqrstuvwxyz") + list("ABDEGPSU")
_MULTI = [
    "Sure", " Here", '"age"', "age", '": ', ": ", ", ", '"}', "42", "17", "20", "null", "true", "false",
    '"name"', "name", "Ada", '"amount"', "amount", '"currency"', "currency", '"USD"', "USD", "EUR", "GBP",
]
TOY_TOKENS: list[str] = _SINGLE + _MULTI + [EOS]


def toy_vocabulary() -> Vocabulary:
    """The lesson's 83-token vocabulary, in the lesson's order (the order fixes the random draws)."""
    return Vocabulary(TOY_TOKENS, EOS, name="toy")


# Characters the synthetic pieces are made of: what the tasks' answers are written with.
_SYNTHETIC_ALPHABET = list('{}[]":, -.') + list("0123456789") + list("abcdefghijklmnopqrstuvwxyz") + list("ADEU")


def synthetic_vocabulary(size: int, seed: int = 0) -> Vocabulary:
    """The toy vocabulary extended to `size` tokens with synthetic multi-character pieces.

    Pieces are 2 to 6 characters drawn from the answers' alphabet by a generator
    seeded with `seed`, so the same (size, seed) always gives the same tokens in the
    same order. The toy tokens keep their ids; the end token stays last.
    """
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)):
        raise VocabularyError(f"synthetic vocabulary size must be an integer, got {size!r}")
    base = TOY_TOKENS[:-1]
    if size < len(TOY_TOKENS):
        raise VocabularyError(f"synthetic vocabulary size must be at least the toy vocabulary's {len(TOY_TOKENS)}, got {size}")
    if size > limits().max_vocab_size:
        raise exceeded("max_vocab_size", f"a synthetic vocabulary of {size:,} tokens is larger than allowed")
    rng = np.random.default_rng(seed)
    tokens, seen = list(base), set(base)
    alphabet = np.array(_SYNTHETIC_ALPHABET)
    while len(tokens) < size - 1:
        need = size - 1 - len(tokens)
        lengths = rng.integers(2, 7, size=need)
        for length in lengths:
            piece = "".join(rng.choice(alphabet, size=int(length)))
            if piece not in seen and piece != EOS:
                seen.add(piece)
                tokens.append(piece)
    return Vocabulary(tokens + [EOS], EOS, name="synthetic")
