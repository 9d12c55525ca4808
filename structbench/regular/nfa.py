"""Thompson's construction: a pattern's syntax tree -> a nondeterministic automaton with free jumps.

The NFA is an intermediate step only: compile_pattern turns it into a DFA at once (subset construction),
so it keeps just what that needs, the edges and the closure under free jumps.
"""

from __future__ import annotations

from structbench.errors import TooComplex
from structbench.limits import current as limits
from structbench.limits import exceeded
from structbench.regular.charsets import Intervals
from structbench.regular.syntax import Alternation, Chars, Concat, Repeat


class NFA:
    """States are numbers; `edges[s]` lists (label, target), label None for a free jump. At most
    `limits.max_nfa_states` of them: counted repeats are copies, and nested ones multiply
    (`((a{1000}){1000}){1000}` would be a billion states); `what` names the pattern in that error."""

    def __init__(self, what: str):
        self.edges: list[list[tuple[Intervals | None, int]]] = []
        self.what, self.cap = what, limits().max_nfa_states

    def new(self) -> int:
        if len(self.edges) >= self.cap:
            raise exceeded("max_nfa_states", f"{self.what} needs more than {self.cap:,} automaton states "
                           "(counted repeats are copied, nested ones multiply)", TooComplex)
        self.edges.append([])
        return len(self.edges) - 1

    def closure(self, states) -> frozenset[int]:
        """Everywhere these states reach by free jumps alone."""
        stack, seen = list(states), set(states)
        while stack:
            for label, target in self.edges[stack.pop()]:
                if label is None and target not in seen:
                    seen.add(target)
                    stack.append(target)
        return frozenset(seen)

    def build(self, node) -> tuple[int, int]:
        """Add the states of one syntax tree; its (start, accept) pair."""
        if isinstance(node, Chars):
            s, e = self.new(), self.new()
            self.edges[s].append((node.intervals, e))
            return s, e
        if isinstance(node, Concat):
            return self._chain([self.build(p) for p in node.parts])
        if isinstance(node, Alternation):
            s, e = self.new(), self.new()
            for b_start, b_end in (self.build(b) for b in node.branches):
                self.edges[s].append((None, b_start))
                self.edges[b_end].append((None, e))
            return s, e
        if isinstance(node, Repeat):
            return self._repeat(node)
        raise AssertionError(f"unknown pattern node {node!r}")

    def _chain(self, pieces: list[tuple[int, int]]) -> tuple[int, int]:
        """Pieces one after another; no pieces at all is the empty string."""
        if not pieces:
            s = self.new()
            return s, s
        for (_, prev_end), (next_start, _) in zip(pieces, pieces[1:]):
            self.edges[prev_end].append((None, next_start))
        return pieces[0][0], pieces[-1][1]

    def _loop(self, inner, at_least_once: bool) -> tuple[int, int]:
        s, e = self.new(), self.new()
        i_start, i_end = self.build(inner)
        self.edges[s].append((None, i_start))
        self.edges[i_end].append((None, e))
        self.edges[i_end].append((None, i_start))  # another round
        if not at_least_once:
            self.edges[s].append((None, e))  # or none at all
        return s, e

    def _optional(self, inner) -> tuple[int, int]:
        s, e = self.new(), self.new()
        i_start, i_end = self.build(inner)
        self.edges[s].append((None, i_start))
        self.edges[i_end].append((None, e))
        self.edges[s].append((None, e))
        return s, e

    def _repeat(self, node: Repeat) -> tuple[int, int]:
        lo, hi = node.lo, node.hi
        if (lo, hi) == (0, None):
            return self._loop(node.inner, at_least_once=False)
        if (lo, hi) == (1, None):
            return self._loop(node.inner, at_least_once=True)
        if (lo, hi) == (0, 1):
            return self._optional(node.inner)
        # Counted repeats: lo mandatory copies, then either a star or (hi - lo) optional copies.
        pieces = [self.build(node.inner) for _ in range(lo)]
        if hi is None:
            pieces.append(self._loop(node.inner, at_least_once=False))
        else:
            pieces.extend(self._optional(node.inner) for _ in range(hi - lo))
        return self._chain(pieces)
