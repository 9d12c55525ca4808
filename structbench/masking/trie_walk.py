"""The prefix-tree walk of a cold mask, compiled: every token prefix read once, a refused subtree dropped whole,
a subtree the state reads without leaving it taken whole.

A mask at a state is the set of tokens whose every character the machine reads from there. The walk goes
down the vocabulary's prefix tree (structbench.masking.token_index.TokenTrie, nodes in preorder) depth first,
one table lookup `trans[state, class]` a node, as llguidance's toktrie does. Two shortcuts:

* a refused node drops its subtree (every token through it);
* where the state loops on every class found below a node (inside a string: every character but the quote,
  the backslash and the control characters), the whole subtree is read without looking at it: the tokens
  below are allowed. `loops[state]` holds the classes a state loops on, as bits, once its row is known.

The transition table is filled lazily by the Python machine, so the walk cannot finish alone: a node whose
transition is not known yet is set aside ("pending"); the caller computes those transitions and resumes the
walk from the pending nodes until none is left. Each round reads only new ground.

Compiled with numba (a dependency; it installs from wheels). Without numba, masks take the vectorised token
walk (structbench.masking.tabled.LazyDense.mask), which the tests check gives the same masks.
"""

from __future__ import annotations

import importlib.util
from functools import cache

import numpy as np

UNKNOWN = -2  # a transition not computed yet (the table's filler); -1 is a dead end


def _walk(trans, loops, loops_known, node_classes, below, subtree, lo, hi, states, reached, pend_nodes,
          pend_states, stack_size):
    """Read the sibling ranges lo[r]:hi[r] from states[r], and their subtrees. Marks the nodes read in `reached`;
    returns the pending nodes' count (written to pend_nodes / pend_states) and the nodes looked at."""
    n_pend = 0
    steps = 0
    n_words = below.shape[1]
    st_pos = np.empty(stack_size, np.int64)
    st_end = np.empty(stack_size, np.int64)
    st_state = np.empty(stack_size, np.int64)
    for r in range(lo.shape[0]):
        top = 0
        st_pos[0] = lo[r]
        st_end[0] = hi[r]
        st_state[0] = states[r]
        while top >= 0:
            node = st_pos[top]
            if node >= st_end[top]:
                top -= 1
                continue
            st_pos[top] = node + subtree[node]  # the next sibling
            state = st_state[top]
            nxt = trans[state, node_classes[node]]
            steps += 1
            if nxt == UNKNOWN:
                pend_nodes[n_pend] = node
                pend_states[n_pend] = state
                n_pend += 1
                continue
            if nxt < 0:
                continue
            reached[node] = True
            if subtree[node] == 1:
                continue
            if loops_known[nxt]:
                inside = True
                for w in range(n_words):
                    if below[node, w] & ~loops[nxt, w]:
                        inside = False
                        break
                if inside:  # every character below loops: every token below is read
                    reached[node + 1:node + subtree[node]] = True
                    continue
            top += 1
            st_pos[top] = node + 1
            st_end[top] = node + subtree[node]
            st_state[top] = nxt
    return n_pend, steps


def _classes_below(parent, node_classes, n_words):
    """Per node, the bits of the classes of its descendants (children come after their parent in preorder)."""
    below = np.zeros((parent.shape[0], n_words), np.uint64)
    for n in range(parent.shape[0] - 1, -1, -1):
        p = parent[n]
        if p >= 0:
            c = node_classes[n]
            below[p, c // 64] |= np.uint64(1) << np.uint64(c % 64)
            for w in range(n_words):
                below[p, w] |= below[n, w]
    return below


@cache
def _kernels():
    """The compiled walk and the classes-below pass (numba imported on first need: it takes a while)."""
    from numba import njit

    return njit(cache=True, nogil=True)(_walk), njit(cache=True, nogil=True)(_classes_below)


def warm_up() -> None:
    """Compile the walk now (or load it from numba's cache), with the argument types masks use."""
    walk_kernel, below_kernel = _kernels()
    trans = np.full((1, 1), -1, dtype=np.int32)
    one = np.zeros(1, dtype=np.int64)
    walk_kernel(trans, np.zeros((1, 1), np.uint64), np.zeros(1, bool), np.zeros(1, np.int32), np.zeros((1, 1), np.uint64),
                   np.ones(1, np.int64), one, one + 1, one, np.zeros(1, bool), one.copy(), one.copy(), 3)
    below_kernel(np.full(1, -1, dtype=np.int64), np.zeros(1, np.int32), 1)


@cache
def compiled() -> bool:
    """Whether the compiled walk is available (numba installed)."""
    return importlib.util.find_spec("numba") is not None


def classes_below(parent: np.ndarray, node_classes: np.ndarray, n_words: int) -> np.ndarray:
    return _kernels()[1](parent, node_classes, n_words)


def loop_bits(row: np.ndarray, state: int, n_words: int) -> np.ndarray:
    """The classes a state loops on, as bits (`row` its complete transition row)."""
    bits = np.zeros(n_words, dtype=np.uint64)
    for c in np.flatnonzero(row == state).tolist():
        bits[c // 64] |= np.uint64(1) << np.uint64(c % 64)
    return bits


def walk(index, start: int, tables, fill) -> tuple[np.ndarray, int]:
    """The nodes read from `start` (a boolean array over the trie's nodes) and the node lookups made.

    tables() -> the current (transition table, loop bits, loop bits known) (they grow as states are met);
    fill(states, classes) computes the transitions a round left pending."""
    trie = index.trie
    reached = np.zeros(trie.size, dtype=bool)
    pend_nodes = np.empty(trie.size, dtype=np.int64)  # a node is pending at most once a round
    pend_states = np.empty(trie.size, dtype=np.int64)
    lo, hi = np.array([0], dtype=np.int64), np.array([trie.size], dtype=np.int64)
    states = np.array([start], dtype=np.int64)
    total = 0
    while True:
        trans, loops, known = tables()
        n_pend, steps = _kernels()[0](trans, loops, known, index.node_classes, index.below, trie.subtree, lo, hi,
                                       states, reached, pend_nodes, pend_states, trie.depth + 2)
        total += steps
        if not n_pend:
            return reached, total
        lo = pend_nodes[:n_pend].copy()
        states = pend_states[:n_pend].copy()
        hi = lo + 1
        fill(states, index.node_classes[lo])
        total -= n_pend  # looked at again next round: count each node once
