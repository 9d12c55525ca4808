"""Per-vocabulary indexes over a character partition: what lets a cold mask skip most of the vocabulary.

A mask at a state is a walk of every token from it. Two facts about the vocabulary, known before any schema,
make most of that walk unnecessary (llguidance's "slicer" and XGrammar's context-independent tokens, in the
form a vectorised walk can use):

* **Staying put.** Inside a string most characters lead back to the same state (a self-loop). A token made
  only of such characters is allowed without walking it. Listing, per class, the tokens that contain it
  (`containing`) gives the few tokens that contain a character that does not loop (a quote, a backslash, a
  control character): only those are walked.

* **Shared prefixes.** Tokens share their beginnings: Llama 3's 126,648 text tokens hold 736,597 characters
  but only 250,911 distinct prefixes. The walk goes over the prefix tree (:class:`TokenTrie`, llguidance's
  toktrie), level by level, so a prefix is read once for all the tokens that start with it, and a subtree the
  state refuses is dropped whole.

All of these depend on the vocabulary and the character classes only, so they are built once and shared by
every schema with the same classes (most schemas: ASCII plus the non-ASCII characters they name).
"""

from __future__ import annotations

from collections import OrderedDict
from functools import cached_property

import numpy as np

_KEPT = 8  # indexes kept per vocabulary (one per distinct class partition: most schemas share one)


class TokenTrie:
    """The vocabulary's prefix tree, nodes numbered level by level (breadth first), children of a node
    contiguous and in code-point order: node n's children are `child_lo[n]:child_hi[n]`, the root's are
    `0:n_first`. `node_of[p]` is the node where the token at walk position p ends."""

    def __init__(self, vc):
        texts = vc.texts
        by_depth: list[dict[str, int]] = []
        for text in texts:
            for k in range(1, len(text) + 1):
                while len(by_depth) < k:
                    by_depth.append({})
                by_depth[k - 1].setdefault(text[:k], 0)
        codes, parents, ids = [], [], {}
        lo_of_level = []
        for depth, prefixes in enumerate(by_depth):
            keyed = sorted(((ids[p[:-1]] if depth else -1), ord(p[-1]), p) for p in prefixes)
            lo_of_level.append(len(codes))
            for parent, code, p in keyed:
                ids[p] = len(codes)
                codes.append(code)
                parents.append(parent)
        self.codes = np.array(codes, dtype=np.int64)
        parent = np.array(parents, dtype=np.int64)
        n = len(codes)
        self.n_first = int(np.searchsorted(parent, 0)) if n else 0  # level 1: the nodes whose parent is the root
        # Levels come in order and each is sorted by parent, so the parent array ascends: search it for the bounds.
        self.child_lo = np.searchsorted(parent, np.arange(n), side="left").astype(np.int64)
        self.child_hi = np.searchsorted(parent, np.arange(n), side="right").astype(np.int64)
        self.node_of = np.array([ids[t] for t in texts], dtype=np.int64)
        self.size = n


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
        self.node_classes = (np.searchsorted(boundaries, self.trie.codes, side="right") - 1).astype(np.int32)

    @cached_property
    def classes(self) -> np.ndarray:
        """The class of every character of the vocabulary (the walk order's characters, flattened)."""
        return (np.searchsorted(self.boundaries, self.vc.codes, side="right") - 1).astype(np.int32)

    @cached_property
    def first(self) -> np.ndarray:
        """The class of every token's first character."""
        return self.classes[self.vc.offsets] if self.n_tokens else np.zeros(0, dtype=np.int32)

    @cached_property
    def _containing(self) -> tuple[np.ndarray, np.ndarray]:
        """The tokens containing each class (each token once per class): positions, and each class's start."""
        owner = np.repeat(np.arange(self.n_tokens, dtype=np.int64), self.vc.lengths)
        present = np.zeros((self.n_classes, self.n_tokens), dtype=bool)  # class x token: a few MB, briefly
        present[self.classes, owner] = True
        cls, positions = np.nonzero(present)  # row-major: grouped by class, positions ascending within
        return positions.astype(np.int64), np.searchsorted(cls, np.arange(self.n_classes + 1)).astype(np.int64)

    def count_containing(self, classes: np.ndarray) -> int:
        """How many (token, class) entries the tokens containing these classes make: a bound on their number."""
        starts = self._containing[1]
        return int((starts[classes + 1] - starts[classes]).sum())

    def containing_any(self, classes: np.ndarray) -> np.ndarray:
        """The positions of the tokens that contain at least one of these classes, sorted."""
        positions, starts = self._containing
        parts = [positions[starts[c]:starts[c + 1]] for c in classes.tolist()]
        return np.unique(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)


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
