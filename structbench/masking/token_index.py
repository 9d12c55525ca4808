"""Per-vocabulary indexes over a character partition: what lets a cold mask skip most of the vocabulary.

A mask at a state is a walk of every token from it. What the vocabulary alone tells, known before any schema,
makes most of that walk unnecessary (llguidance's toktrie and "slicer"):

* **Shared prefixes.** Tokens share their beginnings: Llama 3's 126,648 text tokens hold 736,597 characters
  but only 250,911 distinct prefixes. The walk goes over the prefix tree (:class:`TokenTrie`, llguidance's
  toktrie), depth first, so a prefix is read once for all the tokens that start with it, and a subtree the
  state refuses is dropped whole.
* **Characters below a node.** Inside a string most characters lead back to the same state (a self-loop).
  Knowing, per node, which classes occur anywhere below it (`below`) lets the walk take a whole subtree
  at once where the state loops on all of them: only the tokens holding a quote, a backslash or a control
  character are walked.

All of these depend on the vocabulary and the character classes only, so they are built once and shared by
every schema with the same classes (most schemas: ASCII plus the non-ASCII characters they name).
"""

from __future__ import annotations

from collections import OrderedDict
from functools import cached_property

import numpy as np

from structbench.masking import trie_walk
from structbench.masking.bitmask import pack_bits
from structbench.regular.charsets import ascii_own, json_plain

_KEPT = 8  # indexes kept per vocabulary (one per distinct class partition: most schemas share one)


class TokenTrie:
    """The vocabulary's prefix tree, nodes numbered in depth-first preorder with children in code-point order
    (the distinct prefixes sorted), so node n's subtree is the range `n : n + size[n]`, its first child is n + 1
    and its next sibling n + size[n]. `node_of[p]` is the node where the token at walk position p ends."""

    def __init__(self, vc):
        texts = vc.texts
        prefixes = sorted({text[:k] for text in texts for k in range(1, len(text) + 1)})
        ids = {p: n for n, p in enumerate(prefixes)}
        self.codes = np.array([ord(p[-1]) for p in prefixes], dtype=np.int64)
        self.parent = np.array([ids.get(p[:-1], -1) for p in prefixes], dtype=np.int64)
        size = np.ones(len(prefixes), dtype=np.int64)
        for n in range(len(prefixes) - 1, -1, -1):  # children come after their parent: add each subtree upwards
            if self.parent[n] >= 0:
                size[self.parent[n]] += size[n]
        self.subtree = size
        self.node_of = np.array([ids[t] for t in texts], dtype=np.int64)
        # Per node, the token that ends there (-1: none); a token spelled like an earlier one is in dup_ids,
        # allowed exactly when that one (dup_of) is.
        self.token_at = np.full(len(prefixes), -1, dtype=np.int64)
        dup_ids, dup_of = [], []
        for token, node in zip(vc.token_ids.tolist(), self.node_of.tolist()):
            if self.token_at[node] < 0:
                self.token_at[node] = token
            else:
                dup_ids.append(token)
                dup_of.append(int(self.token_at[node]))
        self.dup_ids, self.dup_of = np.array(dup_ids, dtype=np.int64), np.array(dup_of, dtype=np.int64)
        self.node_of_id = np.full(vc.size, -1, dtype=np.int64)  # by token id (-1: the end token, no text)
        self.node_of_id[vc.token_ids] = self.node_of
        self.ends = np.flatnonzero(self.token_at >= 0).astype(np.int64)  # the nodes a token ends at, in preorder
        self.end_ids = self.token_at[self.ends]
        # Plain characters (from U+0020 up, neither the quote nor the backslash): what a string's content is made
        # of. `plain_subtree[n]`: every token through node n is plain (its path and everything below it);
        # `plain_tokens` (by token id): the tokens made of plain characters only, allowed at once wherever any run
        # of plain characters may come (a free string, a free key), so the walk skips plain subtrees there
        # (llguidance's slicer).
        plain = json_plain(self.codes)
        self.plain_subtree = plain.copy()
        path = plain.copy()
        for n in range(len(prefixes)):  # parents first: a path is plain if its parent's is
            if self.parent[n] >= 0:
                path[n] &= path[self.parent[n]]
        for n in range(len(prefixes) - 1, -1, -1):  # children first: a subtree is plain if its children's are
            if not self.plain_subtree[n] and self.parent[n] >= 0:
                self.plain_subtree[self.parent[n]] = False
        self.plain_subtree &= path
        self.plain_tokens = np.zeros(vc.size, dtype=bool)
        self.plain_tokens[vc.token_ids] = path[self.node_of]
        self.plain_bits = pack_bits(self.plain_tokens).view(np.uint8)  # the same, as the walk's bits
        self._plain_lengths = np.zeros(vc.size, dtype=np.int64)  # by token id: its length where it is plain only
        self._plain_lengths[vc.token_ids] = np.where(path[self.node_of], vc.lengths, 0)
        self._plain_upto: dict[int, np.ndarray] = {}
        self.non_ascii = np.flatnonzero(self.codes >= 128)  # the nodes of non-ASCII characters, in preorder
        self.size = len(prefixes)
        self.depth = max((len(p) for p in prefixes), default=0)  # the longest token's length


    def plain_bits_upto(self, n: int) -> np.ndarray:
        """The plain-only tokens of at most n characters, as the walk's bits (kept per n): what a maxLength
        counter with n characters left reads of them."""
        found = self._plain_upto.get(n)
        if found is None:
            found = self._plain_upto[n] = pack_bits((self._plain_lengths > 0) & (self._plain_lengths <= n)).view(np.uint8)
        return found


def _node_classes(trie: TokenTrie, boundaries: np.ndarray) -> np.ndarray:
    """The class of every node's character. Where every ASCII character is a class of its own, an ASCII
    character's class is its code, so only the non-ASCII nodes (an eighth of Llama 3's) are looked up."""
    if not ascii_own(boundaries):
        return (np.searchsorted(boundaries, trie.codes, side="right") - 1).astype(np.int32)
    classes = trie.codes.astype(np.int32)
    classes[trie.non_ascii] = np.searchsorted(boundaries, trie.codes[trie.non_ascii], side="right") - 1
    return classes


def token_trie(vc) -> TokenTrie:
    """The vocabulary's prefix tree, built once and kept on it."""
    trie = vc.__dict__.get("_trie")
    if trie is None:
        trie = vc.__dict__["_trie"] = TokenTrie(vc)
    return trie


class TokenIndex:
    """For a vocabulary's walk order (structbench.masking.tabled.VocabCodes) and class boundaries. Each part is
    built on first use: a schema naming its own non-ASCII characters has its own classes, and should pay only
    for what its masks read."""

    def __init__(self, vc, boundaries: np.ndarray):
        self.vc, self.boundaries = vc, boundaries
        self.n_classes, self.n_tokens = len(boundaries), len(vc.token_ids)
        self.trie = token_trie(vc)
        self.node_classes = _node_classes(self.trie, boundaries)
        self.n_words = (self.n_classes + 63) // 64

    @cached_property
    def _below(self) -> tuple[np.ndarray, np.ndarray]:
        """(below, height). Where every ASCII character is a class of its own, from the checker's classes' index
        (built once per vocabulary): the ASCII bits are the same, and only the non-ASCII nodes' ancestors are
        walked for the rest (a schema naming non-ASCII characters: an eighth of the nodes, not all of them)."""
        from structbench.masking.tabled import (
            machine_boundaries,  # here: tabled imports this module
        )

        base_boundaries = machine_boundaries()
        if ascii_own(self.boundaries) and not np.array_equal(self.boundaries, base_boundaries):
            base = token_index(self.vc, base_boundaries)
            below = trie_walk.non_ascii_below(base.below, self.trie.parent, self.node_classes, self.trie.non_ascii,
                                              self.n_words)
            return below, base.height
        return trie_walk.classes_below(self.trie.parent, self.node_classes, self.n_words)

    @property
    def below(self) -> np.ndarray:
        """Per node, the classes of the characters below it (its descendants), as bits: `below[n, c // 64]` has
        bit c % 64. A state that loops on all of them reads the whole subtree without walking it."""
        return self._below[0]

    @property
    def height(self) -> np.ndarray:
        """Per node, how deep its subtree goes below it (0 for a leaf)."""
        return self._below[1]

    @cached_property
    def run_end(self) -> np.ndarray:
        """Per node, where the run of its next siblings with its class ends (trie_walk.class_runs): a refused node
        drops them all."""
        return trie_walk.class_runs(self.trie, self.node_classes, ascii_own(self.boundaries))

    def walk_buffers(self) -> tuple[np.ndarray, ...]:
        """The walk's scratch arrays, one entry a node (a node's subtree is covered, or its run pending, at most once
        a walk): covered ranges' starts and ends, then two sets of pending runs' first nodes, ends, states and kinds
        (a round reads the runs the last one set aside in one set while it writes the next in the other). Allocated
        once per vocabulary and shared by every index over it (walks run one at a time): fresh megabytes per mask,
        or per schema with classes of its own, cost more in page faults than the walk."""
        buffers = self.trie.__dict__.get("_walk_buffers")
        if buffers is None:
            buffers = self.trie.__dict__["_walk_buffers"] = tuple(np.empty(self.trie.size, dtype=np.int64)
                                                                  for _ in range(10))
        return buffers

    @cached_property
    def classes(self) -> np.ndarray:
        """The class of every character of the vocabulary (the walk order's characters, flattened)."""
        return (np.searchsorted(self.boundaries, self.vc.codes, side="right") - 1).astype(np.int32)

    @cached_property
    def first(self) -> np.ndarray:
        """The class of every token's first character."""
        return self.classes[self.vc.offsets] if self.n_tokens else np.zeros(0, dtype=np.int32)


def forget_indexes(vc, keep: np.ndarray) -> None:
    """Drop the indexes kept on the vocabulary's codes but the one over `keep` (a cold start:
    structbench.masking.cold_start)."""
    cache = vc.__dict__.get("_token_indexes")
    if cache:
        for key in [k for k in cache if k != keep.tobytes()]:
            del cache[key]


def token_index(vc, boundaries: np.ndarray) -> TokenIndex:
    """The index of these classes over this vocabulary, built once and kept on it (the last few partitions)."""
    cache = vc.__dict__.setdefault("_token_indexes", OrderedDict())
    key = boundaries.tobytes()
    index = cache.get(key)
    if index is None:
        index = cache[key] = TokenIndex(vc, boundaries)
        while len(cache) > _KEPT:
            cache.popitem(last=False)
    else:
        cache.move_to_end(key)
    return index


def unicode_escape_prefixes(vocab) -> tuple[str, ...] | None:
    """The hex digits tokens hold after a `\\u` (lower case, every prefix of each, the empty one first), kept on the
    vocabulary: a string's `\\u` escapes are read in its table as far as tokens go (string_mode._unicode_rows).
    None where some token holds four (it could finish an escape, and what follows is the checker's to read): then
    the `u` is left to the checker. Llama 3 and Qwen hold '', 'b', 'c', 'd', 'f', 'ff'; GPT-2 holds no `\\u`."""
    found = vocab.__dict__.get("_unicode_escape_prefixes", False)
    if found is False:
        prefixes = {""}
        for i, text in enumerate(vocab.tokens):
            if not text or i == vocab.eos_id:
                continue
            at = text.find("\\u")
            while at >= 0:
                digits = 0
                while digits < 4 and at + 2 + digits < len(text) and text[at + 2 + digits] in _HEX:
                    digits += 1
                if digits == 4:
                    prefixes = None
                    break
                prefixes.update(text[at + 2:at + 2 + k].lower() for k in range(1, digits + 1))
                at = text.find("\\u", at + 1)
            if prefixes is None:
                break
        found = vocab.__dict__["_unicode_escape_prefixes"] = (
            None if prefixes is None else tuple(sorted(prefixes, key=lambda p: (len(p), p))))
    return found


_HEX = frozenset("0123456789abcdefABCDEF")
