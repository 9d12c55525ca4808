"""oneOf's exclusivity proofs: no value satisfies two of its branches.

The checker runs oneOf as anyOf, which is exact only when the branches are mutually exclusive; that is
proved here from the compiled nodes (string sets, number languages, item counts, object keys), kind of
value by kind of value. Every test is sufficient, not necessary: any doubt leaves the kind unproved, and
the compiler then tells the branches apart by absent keys (rewrites.exclusive_by_absence) or refuses.
A mixin of :class:`structbench.jsonschema.compiler.SchemaCompiler`.
"""

from __future__ import annotations

from structbench.errors import NotExclusive, TooComplex
from structbench.jsonschema.keywords import KINDS
from structbench.jsonschema.nodes import Node
from structbench.limits import current as limits
from structbench.regular import DFA, is_empty


class Exclusivity:
    """declared / overlap / exclusive over the compiler's nodes, and the check of every pending oneOf."""

    def _check_exclusive(self) -> None:
        """Every oneOf (and enum of containers) compiled: its alternatives pairwise exclusive, or NotExclusive
        naming the first pair not proved (with every such pair, for the rewrite that tells them apart)."""
        for alts, path in self.pending_exclusive:
            pairs = {(x, y): self.overlap(alts[x], alts[y]) for x in range(len(alts)) for y in range(x + 1, len(alts))}
            pairs = {pair: kinds for pair, kinds in pairs.items() if kinds}
            if pairs:
                x, y = min(pairs)
                raise NotExclusive("oneOf", path, f"branches {x} and {y} are not provably exclusive", pairs)

    def declared(self, i: int) -> frozenset:
        """The kinds of value the node's schema may allow, as stated (a superset of what the checker
        accepts, which narrowing may have cut): what exclusivity proofs start from."""
        n = self.nodes[i]
        if n.narrowed:
            return frozenset(KINDS)
        if n.alts:
            return frozenset().union(*(self.declared(a) for a in n.alts))
        types = n.stated_types if n.stated_types is not None else n.types
        out = set(n.words)
        out |= {"string"} if "string" in types else set()
        out |= {"number"} if types & {"number", "integer"} else set()
        out |= {k for k in ("object", "array") if k in types}
        return frozenset(out)

    def exclusive(self, a: int, b: int, depth: int = 0) -> bool:
        """No value satisfies both nodes (a sufficient test)."""
        return not self.overlap(a, b, depth)

    def overlap(self, a: int, b: int, depth: int = 0) -> frozenset:
        """The kinds of value for which no proof says the two nodes are exclusive: by string values,
        number languages, item counts and object keys; empty when no value satisfies both."""
        if depth > limits().max_proof_depth or self.nodes[a].narrowed or self.nodes[b].narrowed:
            return self.declared(a) & self.declared(b)
        na, nb = self.nodes[a], self.nodes[b]
        if na.alts:
            return frozenset().union(*(self.overlap(x, b, depth + 1) for x in na.alts))
        if nb.alts:
            return frozenset().union(*(self.overlap(a, y, depth + 1) for y in nb.alts))
        out = set()
        for kind in self.declared(a) & self.declared(b):
            if kind == "string":
                # Exact string sets only: a string DFA may be narrower than its keywords (\w read safely,
                # formats as stricter patterns), so DFAs apart would not prove the values apart.
                la, lb = na.string_literals, nb.string_literals
                proved = la is not None and lb is not None and not la & lb
            elif kind == "number":
                # Every number DFA holds each allowed value's plain spelling (integer form when whole):
                # spellings apart are values apart.
                proved = _disjoint(na.number_dfa, nb.number_dfa)
            elif kind == "array":
                proved = _counts_apart(na, nb)
            elif kind == "object":
                proved = self._objects_exclusive(na, nb, depth)
            else:
                proved = False
            if not proved:
                out.add(kind)
        return frozenset(out)

    def _objects_exclusive(self, na: Node, nb: Node, depth: int) -> bool:
        """A key both require whose values are exclusive, or a key one requires that the other (strict)
        does not allow."""
        if na.patterns or nb.patterns:
            return False
        for r in na.required & nb.required:
            ca, cb = na.child_of_required(r), nb.child_of_required(r)
            if ca is not None and cb is not None and self.exclusive(ca, cb, depth + 1):
                return True
        for x, y in ((na, nb), (nb, na)):
            if x.strict and not x.additional_dropped and any(x.child_of_required(r) is None for r in y.required):
                return True
        return False


def _counts_apart(na: Node, nb: Node) -> bool:
    """Item counts that cannot agree: one side's minimum above the other's maximum."""
    most = [x for x in (na.max_items, nb.max_items) if x is not None]
    return bool(most) and max(na.min_items, nb.min_items) > min(most)


def _disjoint(a: DFA | None, b: DFA | None) -> bool:
    """No text both DFAs accept (None is every text): a proof, so any doubt answers False."""
    if a is None or b is None:
        return False
    try:
        return is_empty(a, b)
    except TooComplex:
        return False
