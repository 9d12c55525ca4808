"""After compiling: which kinds of value each node admits that can be finished, and the forms refused
because the checker could not promise that.

The checker's promise is "not dead means completable": a node's kind counts only if some value of that
kind can be written to the end (its required keys' values, its minimum items, enough keys for
minProperties). Kinds are computed as a least fixpoint over the (possibly cyclic) node graph.
A mixin of :class:`structbench.jsonschema.compiler.SchemaCompiler`.
"""

from __future__ import annotations

from structbench.errors import InvalidSchema, UnsupportedSchema
from structbench.jsonschema.nodes import Node
from structbench.regular import accepts_at_least, intersect_all


class Completion:
    """finish(): node kinds, completability checks, oneOf exclusivity (see exclusivity.Exclusivity)."""

    def finish(self, root: int) -> None:
        nodes = self.nodes
        kinds = [frozenset() for _ in nodes]
        changed = True
        while changed:
            changed = False
            for i, n in enumerate(nodes):
                k = self._kinds(n, kinds)
                if k != kinds[i]:
                    kinds[i] = k
                    changed = True
        for i, n in enumerate(nodes):
            n.kinds = kinds[i]
        for n in nodes:
            if "object" in n.kinds and not n.alts:
                self._check_object(n)
        self._check_exclusive()
        if not nodes[root].kinds:
            raise InvalidSchema("no JSON value satisfies the schema")

    def _kinds(self, n: Node, kinds) -> frozenset:
        if n.alts:
            return frozenset().union(*(kinds[a] for a in n.alts))
        out = set(n.words)
        if "string" in n.types:
            out.add("string")
        if n.types & {"number", "integer"} and n.number_dfa is not None:
            out.add("number")
        if "object" in n.types and self._object_ok(n, kinds):
            out.add("object")
        if "array" in n.types and self._array_ok(n, kinds):
            out.add("array")
        return frozenset(out)

    def _object_ok(self, n: Node, kinds) -> bool:
        if n.max_props is not None and (len(n.required) > n.max_props or n.min_props > n.max_props):
            return False
        for r in n.required:
            c = n.child_of_required(r)
            if c is None or not kinds[c] or (n.key_dfa is not None and not n.key_dfa.accepts(r)):
                return False
        return not n.min_props or _enough_keys(n, lambda i: kinds[i])

    def _array_ok(self, n: Node, kinds) -> bool:
        if n.max_items is not None and n.min_items > n.max_items:
            return False
        for i in range(n.min_items):
            c = n.prefix[i] if i < len(n.prefix) else n.items
            if c is None or not kinds[c]:
                return False
        return True

    def _check_object(self, n: Node) -> None:
        """Forms whose completability the checker cannot promise are refused (rare in real schemas)."""
        kinds = lambda i: self.nodes[i].kinds
        if n.min_props and not _enough_keys(n, kinds):
            raise UnsupportedSchema("minProperties", "#", "more keys than the named properties, with "
                                    "patternProperties or propertyNames")
        if n.key_dfa is not None and any(not kinds(c) for _, c in n.properties):
            raise UnsupportedSchema("propertyNames", "#", "with a property no value satisfies")
        for chosen, c in n.combos.items():
            if not kinds(c):
                dfas = [n.patterns[i][0] for i in sorted(chosen)]
                if intersect_all(dfas) is not None:
                    raise UnsupportedSchema("patternProperties", "#", "a pattern whose schema no value satisfies")
        if n.additional is not None and not kinds(n.additional):
            n.additional, n.additional_dropped = None, True


def _enough_keys(n: Node, kinds) -> bool:
    """Can an object of this node reach minProperties distinct keys? Named properties count one each;
    additionalProperties (without patterns) adds without end, a pattern as many keys as it matches."""
    names = sum(1 for name, c in n.properties if kinds(c) and (n.key_dfa is None or n.key_dfa.accepts(name)))
    if names >= n.min_props:
        return True
    enough = n.min_props + len(n.properties)  # other keys beside the named ones (each may be a name)
    others = n.additional is not None and kinds(n.additional)
    if n.key_dfa is not None:  # propertyNames (never with patterns): other keys are what it accepts
        return bool(others) and accepts_at_least(n.key_dfa, enough)
    if any(kinds(c) and accepts_at_least(dfa, enough) for dfa, c in n.patterns):
        return True
    # additionalProperties: keys no pattern matches. Enough short ones exist unless the patterns cover
    # nearly everything; look for them.
    return bool(others) and sum(1 for k in _probe_keys(enough) if not any(d.accepts(k) for d, _ in n.patterns)) >= enough


def _probe_keys(n: int):
    """Some distinct short keys (letters, then letter pairs), enough to find n outside a few patterns."""
    letters = [chr(c) for c in range(ord("a"), ord("z") + 1)] + [chr(c) for c in range(ord("A"), ord("Z") + 1)]
    yield from letters
    yield from (a + b for a in letters for b in letters)
    yield from (f"k{i}" for i in range(n + 1))
