"""Nodes numbered once per process by their structure, and the masks kept by their keys across schemas.

A schema compiles to nodes numbered in its own list (compiler.py). Numbered so, equal subschemas of two schemas
are two node ids, and the checker's mask key (a stack with each node read by its id: shared_masks.py) tells their
states apart, though no token can. Here every node is numbered again, by what it is: its fields, its DFAs (equal
automata are one object) and its children's numbers, so a `{"type": "string"}` property, a free object's any-value
node or an enum of the same words has one number in every schema of the process. A cyclic group (a recursive
schema; the any-value node, whose items and additional values are itself) is numbered by its nodes read depth
first from each member, so groups of one shape share their numbers too (up to `_MAX_CYCLE` nodes; bigger ones keep
numbers of their own).

With node numbers shared, a mask key (its parts, not the checker's numbers for them: SchemaChecker.stored_key)
means the same in every checker with the same settings (key order, whitespace, number syntax, whitespace run cap)
over the same vocabulary, and a mask built for one schema serves the next schema's state with that key
(`MaskStore`: the lazy strategy's `TabledConstraint` asks it where its own masks have none for the key). Over every
fifth MaskBench schema walked in one process, 36% of the built masks' time went to masks whose key an earlier schema
had (docs/design.md, "Masks kept across schemas").

What is kept lives in a :class:`Generation`: the nodes and their DFAs, and the stored masks (at most
`limits.max_stored_masks` per setting and vocabulary, the least recently used let go). A cold start
(structbench.masking.cold_start) and each trial (structbench.bench.runner) begin a new one, as does a generation
past `limits.max_stored_nodes` nodes; checkers made before keep theirs (their node numbers mean nothing in the
next), and it goes with them.
"""

from __future__ import annotations

from collections import OrderedDict

from structbench.jsonschema.nodes import Node
from structbench.limits import current as limits

_MAX_CYCLE = 64  # a cyclic group of more nodes keeps numbers of its own (its reading from each member: squared)
_MAX_SHARED_DFA = 256  # a DFA of more states is one by identity (kept ones are: regular.kept), not hashed whole


class MaskStore:
    """Masks (a constraint's packed bits, read-only) by their mask keys, for one checker setting and vocabulary;
    at most `limits.max_stored_masks`, the least recently used let go first."""

    def __init__(self, vocab):
        self.vocab = vocab
        self._masks: OrderedDict = OrderedDict()
        self._cap = limits().max_stored_masks
        self.hits = 0  # masks read back (what the walks they spared would have built)

    def get(self, key):
        bits = self._masks.get(key)
        if bits is not None:
            self._masks.move_to_end(key)
            self.hits += 1
        return bits

    def put(self, key, bits) -> None:
        self._masks[key] = bits
        if len(self._masks) > self._cap:
            self._masks.popitem(last=False)

    def __len__(self) -> int:
        return len(self._masks)


class Generation:
    """What schemas share while it lasts: nodes numbered by structure, the mask key's parts, the stored masks."""

    def __init__(self):
        self.nodes: list[Node] = []
        self._numbers: dict = {}  # a node's structure (its children by number) -> its number
        self._dfas: dict = {}  # a DFA's structure -> the one DFA object every node with it holds
        self._sets: dict = {}  # a frozenset -> the one object for it (_one)
        self._serial = object()  # what a DFA notes its kept one with, for this generation alone
        self._stores: dict = {}  # (checker settings, id(vocabulary)) -> MaskStore

    def mask_store(self, settings: tuple, vocab) -> MaskStore:
        store = self._stores.get((settings, id(vocab)))
        if store is None or store.vocab is not vocab:  # (an id reused by a later vocabulary)
            store = self._stores[(settings, id(vocab))] = MaskStore(vocab)
        return store

    def number(self, root: int, nodes: list[Node]) -> tuple[int, list[int]]:
        """(the root's number, each node's number in the schema's order) for one schema's compiled nodes."""
        own: dict[int, int] = {}
        children = [_children(node) for node in nodes]
        for group in _groups(children):
            if len(group) == 1 and group[0] not in children[group[0]]:
                v = group[0]
                key = self._key(nodes[v], own)
                n = self._numbers.get(key)
                if n is None:
                    n = self._numbers[key] = self._add(self._renumbered(nodes[v], own))
                own[v] = n
            elif len(group) <= _MAX_CYCLE:
                members = set(group)
                keys = {v: ("cycle", self._cycle_key(nodes, children, v, members, own)) for v in group}
                new = []
                for v in group:
                    n = self._numbers.get(keys[v])
                    if n is None:
                        n = self._numbers[keys[v]] = self._add(None)
                        new.append(v)
                    own[v] = n
                for v in new:
                    self.nodes[own[v]] = self._renumbered(nodes[v], own)
            else:
                for v in group:
                    own[v] = self._add(None)
                for v in group:
                    self.nodes[own[v]] = self._renumbered(nodes[v], own)
        return own[root], [own[v] for v in range(len(nodes))]

    def _add(self, node: Node | None) -> int:
        self.nodes.append(node)
        return len(self.nodes) - 1

    def _dfa(self, dfa):
        """The one DFA object kept for dfa's structure (its moves, accepting states, start, and the length bounds
        `_length_as_read` reads off a counter); a big one is its own."""
        if dfa is None:
            return None
        found = dfa.__dict__.get("_kept_as")  # (this generation's answer, noted on the DFA: it lives as long as that)
        if found is not None and found[0] is self._serial:
            return found[1] or dfa
        if dfa.n_states > _MAX_SHARED_DFA:
            kept = dfa
        else:
            key = (type(dfa), dfa.moves, dfa.accepting, dfa.start, dfa.__dict__.get("_length_counter"))
            kept = self._dfas.setdefault(key, dfa)
        dfa.__dict__["_kept_as"] = (self._serial, None if kept is dfa else kept)  # (None: itself, not a cycle)
        return kept

    def _key(self, node: Node, number) -> tuple:
        """Node's structure, its children by `number` (a dict, or a function for a cyclic group's reading), its
        DFAs by the kept objects' ids (kept alive by the generation)."""
        get = number.__getitem__ if isinstance(number, dict) else number
        dfa, one = self._dfa, self._set_id
        # (DFAs and sets by the kept objects' ids: a tuple of strings and numbers is one the garbage collector stops
        # tracking, and the generation keeps a key per node for as long as it lasts)
        return (one(node.types), tuple((name, get(c)) for name, c in node.properties), one(node.required),
                None if node.additional is None else get(node.additional),
                tuple((id(dfa(d)), get(c)) for d, c in node.patterns),
                tuple(sorted((tuple(sorted(k)), get(c)) for k, c in node.combos.items())),
                id(dfa(node.key_dfa)) if node.key_dfa is not None else None, node.min_props, node.max_props,
                tuple(get(c) for c in node.prefix), None if node.items is None else get(node.items),
                node.min_items, node.max_items,
                id(dfa(node.string_dfa)) if node.string_dfa is not None else None, one(node.string_literals),
                id(dfa(node.number_dfa)) if node.number_dfa is not None else None, one(node.words),
                one(node.stated_types), node.narrowed, node.additional_dropped, tuple(get(c) for c in node.alts),
                one(node.kinds))

    def _cycle_key(self, nodes: list[Node], children: list, v: int, members: set, own: dict) -> tuple:
        """A cyclic group's nodes read depth first from v (children in field order), each by its structure with
        the group's members as their order of reading: equal for a member of any group of the same shape."""
        order: dict[int, int] = {}
        todo = [v]
        while todo:
            u = todo.pop()
            if u in order:
                continue
            order[u] = len(order)
            todo.extend(reversed([c for c in children[u] if c in members]))

        def number(c):
            return ("member", order[c]) if c in members else own[c]
        return tuple(self._key(nodes[u], number) for u in order)

    def _renumbered(self, node: Node, own: dict) -> Node:
        """A copy of node with its children by their numbers here, and its DFAs the kept ones."""
        dfa, one = self._dfa, self._one
        return Node(
            types=one(node.types), properties=tuple((name, own[c]) for name, c in node.properties),
            required=one(node.required), additional=None if node.additional is None else own[node.additional],
            patterns=tuple((dfa(d), own[c]) for d, c in node.patterns),
            combos={k: own[c] for k, c in node.combos.items()}, key_dfa=dfa(node.key_dfa),
            min_props=node.min_props, max_props=node.max_props, prefix=tuple(own[c] for c in node.prefix),
            items=None if node.items is None else own[node.items], min_items=node.min_items,
            max_items=node.max_items, string_dfa=dfa(node.string_dfa), string_literals=node.string_literals,
            number_dfa=dfa(node.number_dfa), words=one(node.words), stated_types=one(node.stated_types),
            narrowed=node.narrowed, additional_dropped=node.additional_dropped, alts=tuple(own[c] for c in node.alts),
            kinds=one(node.kinds))

    def _set_id(self, values: frozenset | None) -> int | None:
        return None if values is None else id(self._sets.setdefault(values, values))

    def _one(self, values: frozenset | None) -> frozenset | None:
        """One frozenset object for equal ones (a node's types, kinds, words, required names): the generation keeps
        its nodes for long, and each set object is one more the garbage collector's full passes look at."""
        return None if values is None else self._sets.setdefault(values, values)


def _children(node: Node) -> list[int]:
    out = [c for _, c in node.properties]
    if node.additional is not None:
        out.append(node.additional)
    out += [c for _, c in node.patterns]
    out += node.combos.values()
    out += node.prefix
    if node.items is not None:
        out.append(node.items)
    out += node.alts
    return out


def _groups(children: list[list[int]]) -> list[list[int]]:
    """The strongly connected groups of the nodes' graph (each node's children), children's groups first (Tarjan's,
    iterative: a schema nests up to limits.max_ref_depth, and its nodes up to max_schema_nodes)."""
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    on_stack: set[int] = set()
    stack: list[int] = []
    out: list[list[int]] = []
    for root in range(len(children)):
        if root in index:
            continue
        work = [(root, iter(children[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, unread = work[-1]
            for w in unread:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(children[w])))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[v])
                if low[v] == index[v]:
                    group = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        group.append(w)
                        if w == v:
                            break
                    out.append(group)
    return out


_current = Generation()


def current() -> Generation:
    """The generation new checkers number their nodes in: a new one once this one holds more than
    `limits.max_stored_nodes` nodes."""
    global _current
    if len(_current.nodes) > limits().max_stored_nodes:
        _current = Generation()
    return _current


def forget() -> None:
    """Begin a new generation (a cold start: what every earlier schema left is not read again)."""
    global _current
    _current = Generation()
