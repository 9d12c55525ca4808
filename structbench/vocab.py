"""Vocabularies: the tokens a model can write, one of them the end token.

A token is a piece of text (`str`); the end token adds no text. The toy
vocabulary is the lesson's: every single character its examples need plus a
few multi-character pieces, the way a real BPE vocabulary holds both letters
and common chunks.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

EOS = "<eos>"  # the toy vocabulary's "I'm finished" token


class VocabularyError(ValueError):
    """A vocabulary that cannot be used: no end token, duplicates, empty pieces."""


class Vocabulary:
    """An ordered list of tokens with one designated end token.

    Token ids are positions in `tokens`. `trie` shares prefixes between tokens
    so that masks can walk many tokens through a machine at once.
    """

    def __init__(self, tokens: list[str], eos: str = EOS, name: str = "custom"):
        tokens = list(tokens)
        if eos not in tokens:
            raise VocabularyError(f"vocabulary {name!r} has no end token {eos!r}; every constrained answer needs one to finish")
        seen: set[str] = set()
        for i, t in enumerate(tokens):
            if not isinstance(t, str):
                raise VocabularyError(f"vocabulary {name!r}: token {i} is {type(t).__name__}, not str")
            if t == "":
                raise VocabularyError(f"vocabulary {name!r}: token {i} is empty")
            if t in seen:
                raise VocabularyError(f"vocabulary {name!r}: token {t!r} appears twice")
            seen.add(t)
        self.tokens, self.eos, self.name = tokens, eos, name
        self.eos_id = tokens.index(eos)
        self.index = {t: i for i, t in enumerate(tokens)}

    def __len__(self) -> int:
        return len(self.tokens)

    def __getitem__(self, i: int) -> str:
        return self.tokens[i]

    def __repr__(self) -> str:
        return f"Vocabulary({self.name!r}, {len(self)} tokens, eos={self.eos!r})"

    def text_of(self, token_id: int) -> str:
        """The text a token writes; the end token writes nothing."""
        return "" if token_id == self.eos_id else self.tokens[token_id]

    @cached_property
    def lengths(self) -> np.ndarray:
        """Characters per token (the end token counts 0)."""
        return np.array([len(self.text_of(i)) for i in range(len(self))], dtype=np.int64)

    @cached_property
    def trie(self) -> "TokenTrie":
        return TokenTrie(self)


class TokenTrie:
    """Every non-end token in one prefix tree: `children[node]` maps a character
    to a child node, `ends[node]` lists the token ids spelled by the path to it."""

    def __init__(self, vocab: Vocabulary):
        self.children: list[dict[str, int]] = [{}]
        self.ends: list[list[int]] = [[]]
        for tid, token in enumerate(vocab.tokens):
            if tid == vocab.eos_id:
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
