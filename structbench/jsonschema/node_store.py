"""Nodes numbered once per process by their structure, and the masks kept by their keys across schemas.

A schema compiles to nodes numbered in its own list (compiler.py). Numbered so, equal subschemas of two schemas
are two node ids, and the checker's mask key (a stack with each node read by its id: shared_masks.py) tells their
states apart, though no token can. Here every node is numbered again, by what it is: its fields, its DFAs (equal
small automata one number) and its children's numbers, so a `{"type": "string"}` property, a free object's
any-value node or an enum of the same words has one number in every schema of the process. A cyclic group (a
recursive schema; the any-value node, whose items and additional values are itself) is numbered by its nodes read
depth first from each member, so groups of one shape share their numbers too (up to `_MAX_CYCLE` nodes; bigger
ones keep numbers of their own). Each checker holds its own nodes, renumbered.

With node numbers shared, a mask key (its parts, not the checker's numbers for them: SchemaChecker.stored_key)
means the same in every checker with the same settings (key order, whitespace, number syntax, whitespace run cap)
over the same vocabulary, and a mask built for one schema serves the next schema's state with that key
(`MaskStore`: the lazy strategy's `TabledConstraint` asks it where its own masks have none for the key). Over every
fifth MaskBench schema walked in one process, 36% of the built masks' time went to masks whose key an earlier schema
had (docs/design.md, "Masks kept across schemas").

What is kept lives in a :class:`Generation`: the structures' numbers, and the stored masks (at most
`limits.max_stored_masks` per setting and vocabulary, the least recently used let go). A cold start
(structbench.masking.cold_start) and each trial (structbench.bench.runner) begin a new one, as does a generation
past `limits.max_stored_nodes` node structures; checkers made before keep theirs (their node numbers mean nothing
in the next), and it goes with them.
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
    """What schemas share while it lasts: the numbers of node structures, and the stored masks. It holds no node:
    each checker holds its own, renumbered (the garbage collector's full passes would look at every one of them
    for as long as the generation lasts), and the structures are tuples of strings and numbers, which it does
    not track."""

    def __init__(self):
        self._numbers: dict = {}  # a node's structure (its children and DFAs by number) -> its number
        self._dfas: dict = {}  # a small DFA's structure -> its number
        self._sets: dict = {}  # a frozenset in a node -> the one object kept for it (its id is its number)
        self._count = 0  # numbers given (to node structures and DFAs alike: one count, never a number twice)
        self._mark = object()  # what a DFA notes its number with, for this generation alone
        self._stores: dict = {}  # (checker settings, id(vocabulary)) -> MaskStore

    def __len__(self) -> int:
        """Node structures numbered: what `limits.max_stored_nodes` caps."""
        return len(self._numbers)

    def mask_store(self, settings: tuple, vocab) -> MaskStore:
        store = self._stores.get((settings, id(vocab)))
        if store is None or store.vocab is not vocab:  # (an id reused by a later vocabulary)
            store = self._stores[(settings, id(vocab))] = MaskStore(vocab)
        return store

    def number(self, root: int, nodes: list[Node]) -> tuple[int, dict[int, Node]]:
        """(the root's number, {number: node renumbered}) for one schema's compiled nodes: children by their
        numbers, equal nodes once."""
        own: dict[int, int] = {}
        children = [_children(node) for node in nodes]
        for group in _groups(children):
            if len(group) == 1 and group[0] not in children[group[0]]:
                v = group[0]
                key = self._key(nodes[v], own)
                n = self._numbers.get(key)
                if n is None:
                    n = self._numbers[key] = self._new()
                own[v] = n
            elif len(group) <= _MAX_CYCLE:
                members = set(group)
                for v in group:
                    key = ("cycle", self._cycle_key(nodes, children, v, members, own))
                    n = self._numbers.get(key)
                    if n is None:
                        n = self._numbers[key] = self._new()
                    own[v] = n
            else:
                for v in group:
                    own[v] = self._new()
        renumbered: dict[int, Node] = {}
        for v, node in enumerate(nodes):
            if own[v] not in renumbered:  # (a node with no children is itself renumbered)
                renumbered[own[v]] = self._renumbered(node, own) if children[v] else node
        return own[root], renumbered

    def _new(self) -> int:
        self._count += 1
        return self._count - 1

    def _dfa(self, dfa) -> int | None:
        """A DFA's number: one for DFAs of one structure (moves, accepting states, start, and the length bounds
        `_length_as_read` reads off a counter) where it has at most _MAX_SHARED_DFA states, else its own (kept
        ones are one object: regular.kept); noted on the DFA, so it is looked up once."""
        if dfa is None:
            return None
        found = dfa.__dict__.get("_numbered")
        if found is not None and found[0] is self._mark:
            return found[1]
        if dfa.n_states > _MAX_SHARED_DFA:
            n = self._new()
        else:
            key = (type(dfa).__name__, dfa.moves, tuple(sorted(dfa.accepting)), dfa.start,
                   dfa.__dict__.get("_length_counter"))
            n = self._dfas.get(key)
            if n is None:
                n = self._dfas[key] = self._new()
        dfa.__dict__["_numbered"] = (self._mark, n)  # (a frozen dataclass: its __dict__ written directly)
        return n

    def _key(self, node: Node, number) -> tuple:
        """Node's structure, its children by `number` (a dict, or a function for a cyclic group's reading), its
        DFAs and sets by their numbers: a tuple of strings and numbers."""
        get = number.__getitem__ if isinstance(number, dict) else number
        dfa, one = self._dfa, self._set
        return (one(node.types), tuple((name, get(c)) for name, c in node.properties), one(node.required),
                None if node.additional is None else get(node.additional),
                tuple((dfa(d), get(c)) for d, c in node.patterns),
                tuple(sorted((tuple(sorted(k)), get(c)) for k, c in node.combos.items())),
                dfa(node.key_dfa), node.min_props, node.max_props,
                tuple(get(c) for c in node.prefix), None if node.items is None else get(node.items),
                node.min_items, node.max_items, dfa(node.string_dfa), one(node.string_literals),
                dfa(node.number_dfa), one(node.words), one(node.stated_types), node.narrowed,
                node.additional_dropped, tuple(get(c) for c in node.alts), one(node.kinds))

    def _set(self, values: frozenset | None) -> int | None:
        """A frozenset's number (the kept object's id: equal sets, one object), so a key holds no set the garbage
        collector would track; a few hundred distinct sets are kept."""
        return None if values is None else id(self._sets.setdefault(values, values))

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

    @staticmethod
    def _renumbered(node: Node, own: dict) -> Node:
        """A copy of node with its children by their numbers."""
        return Node(
            types=node.types, properties=tuple((name, own[c]) for name, c in node.properties),
            required=node.required, additional=None if node.additional is None else own[node.additional],
            patterns=tuple((d, own[c]) for d, c in node.patterns),
            combos={k: own[c] for k, c in node.combos.items()}, key_dfa=node.key_dfa,
            min_props=node.min_props, max_props=node.max_props, prefix=tuple(own[c] for c in node.prefix),
            items=None if node.items is None else own[node.items], min_items=node.min_items,
            max_items=node.max_items, string_dfa=node.string_dfa, string_literals=node.string_literals,
            number_dfa=node.number_dfa, words=node.words, stated_types=node.stated_types, narrowed=node.narrowed,
            additional_dropped=node.additional_dropped, alts=tuple(own[c] for c in node.alts), kinds=node.kinds)


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
    if len(_current) > limits().max_stored_nodes:
        _current = Generation()
    return _current


def forget() -> None:
    """Begin a new generation (a cold start: what every earlier schema left is not read again)."""
    global _current
    _current = Generation()
