"""The graph the exact distributions are summed over: nodes (model state, constraint state), expanded on need.

A node is a pair of a model law's state (structbench.distortion.nexttoken) and a constraint's state (any
structbench.masking.Constraint with hashable states). Expanding a node computes, once, what every exact pass
needs from it: the allowed tokens other than the end token and the nodes they lead to (its edges, with the
model's probability p and the masked law's q of each), the end token's p and q and whether it is allowed,
the kept mass Z_t, and where the model's disallowed tokens lead (texts that leave the language: only the
model state matters from then on). Model states and constraint states are numbered as met, and what
depends on one of them alone (the unmasked law, the mask, the next states) is cached per state, so a node
costs a few array operations and one dictionary look-up per edge.
"""

from __future__ import annotations

import numpy as np


class _Column:
    """A growable NumPy array (capacity doubles): per-node values, or the edges of every node end to end."""

    def __init__(self, dtype, fill=0):
        self.data, self.size, self.fill = np.full(1024, fill, dtype=dtype), 0, fill

    def reserve(self, size: int) -> None:
        if size > len(self.data):
            grown = np.full(max(size, 2 * len(self.data)), self.fill, dtype=self.data.dtype)
            grown[: self.size] = self.data[: self.size]
            self.data = grown

    def extend(self, values: np.ndarray) -> int:
        """Append values; returns where they start."""
        start = self.size
        self.reserve(start + len(values))
        self.data[start:start + len(values)] = values
        self.size += len(values)
        return start


class NodeGraph:
    """Nodes numbered as met; an unexpanded node finishes nothing and has no edges (its mass goes nowhere).

    Per node (arrays indexed by node number): `eos_ok`, `p_eos`, `q_eos`, `kept`, `dead_end`, `expanded`;
    its edges are `edge_count[n]` entries from `edge_start[n]` in `edge_child`, `edge_token`, `edge_p`,
    `edge_q`; its leaving mass (p of the disallowed tokens, by the model state they lead to) likewise in
    `leave_to` and `leave_p`."""

    def __init__(self, law, constraint):
        if constraint.vocab is not law.vocab and constraint.vocab.tokens != law.vocab.tokens:
            raise ValueError(f"the constraint was compiled for {constraint.vocab!r}, the model writes {law.vocab!r}")
        self.law, self.constraint, self.vocab = law, constraint, law.vocab
        self.eos = self.vocab.eos_id
        self._everything = np.ones(len(self.vocab), dtype=bool)
        self.model_states: list = []
        self._ms_number: dict = {}
        self._ms_probs: list[np.ndarray] = []  # the unmasked law
        self._ms_next: list[np.ndarray | None] = []  # next model state number per token (None until needed)
        self._cs_number: dict = {}
        self._cs: list[tuple] = []  # (state, allowed mask, allowed ids but the end token, their next cs numbers)
        self._masks: dict[bytes, int] = {}  # each distinct mask, numbered
        self._mask_number: list[int] = []  # per constraint state
        self._steps: dict[tuple[int, int], tuple] = {}  # per (model state, mask): see _step
        self._node_number: dict[tuple[int, int], int] = {}
        self.node_key: list[tuple[int, int]] = []
        self._nodes = {name: _Column(dtype, fill) for name, dtype, fill in (
            ("expanded", bool, False), ("eos_ok", bool, False), ("p_eos", float, 0.0), ("q_eos", float, 0.0),
            ("kept", float, 1.0), ("dead_end", bool, False), ("edge_start", np.int64, 0),
            ("edge_count", np.int64, 0), ("leave_start", np.int64, 0), ("leave_count", np.int64, 0))}
        self._edges = {name: _Column(dtype) for name, dtype in (
            ("edge_child", np.int64), ("edge_token", np.int64), ("edge_p", float), ("edge_q", float))}
        self._leaves = {name: _Column(dtype) for name, dtype in (("leave_to", np.int64), ("leave_p", float))}
        self.root = self.node(self.model_state(law.start()), self.constraint_state(constraint.start()))

    def __getattr__(self, name: str) -> np.ndarray:
        """A per-node or edge column by name, as an array (a view: valid until the graph grows)."""
        for table in ("_nodes", "_edges", "_leaves"):
            column = self.__dict__.get(table, {}).get(name)
            if column is not None:
                return column.data[: column.size]
        raise AttributeError(name)

    # --- numbering ---------------------------------------------------------------------------------------

    def model_state(self, ms) -> int:
        number = self._ms_number.get(ms)
        if number is None:
            number = self._ms_number[ms] = len(self.model_states)
            self.model_states.append(ms)
            self._ms_probs.append(self.law.probs(ms, self._everything))
            self._ms_next.append(None)
        return number

    def next_model_states(self, m: int) -> np.ndarray:
        nxt = self._ms_next[m]
        if nxt is None:
            nxt = self._ms_next[m] = np.array([self.model_state(s) for s in self.law.advance_all(self.model_states[m])],
                                             dtype=np.int64)
        return nxt

    def model_probs(self, m: int) -> np.ndarray:
        return self._ms_probs[m]

    def constraint_state(self, cs) -> int:
        number = self._cs_number.get(cs)
        if number is None:
            number = self._cs_number[cs] = len(self._cs)
            allowed = self.constraint.mask(cs)
            ids = np.flatnonzero(allowed)
            ids = ids[ids != self.eos]
            self._cs.append((cs, allowed, ids, None))
            self._mask_number.append(self._masks.setdefault(np.packbits(allowed).tobytes(), len(self._masks)))
        return number

    def _constraint_next(self, c: int) -> np.ndarray:
        cs, allowed, ids, nxt = self._cs[c]
        if nxt is None:
            nxt = np.array([self.constraint_state(self.constraint.advance(cs, int(t))) for t in ids], dtype=np.int64)
            self._cs[c] = (cs, allowed, ids, nxt)
        return nxt

    def mask(self, c: int) -> np.ndarray:
        return self._cs[c][1]

    def advance_constraint(self, c: int, token_id: int) -> int:
        return self.constraint_state(self.constraint.advance(self._cs[c][0], token_id))

    def masked_probs(self, m: int, c: int) -> np.ndarray:
        """The masked law at (model state m, constraint state c); zeros where the mask allows nothing."""
        allowed = self._cs[c][1]
        return self.law.probs(self.model_states[m], allowed) if allowed.any() else np.zeros(len(allowed))

    def node(self, m: int, c: int) -> int:
        number = self._node_number.get((m, c))
        if number is None:
            number = self._node_number[(m, c)] = len(self.node_key)
            self.node_key.append((m, c))
            for column in self._nodes.values():
                column.reserve(number + 1)
                column.size = number + 1  # the fill value: an unexpanded node's
        return number

    # --- expansion ---------------------------------------------------------------------------------------

    def is_expanded(self, n: int) -> bool:
        return bool(self._nodes["expanded"].data[n])

    def _step(self, m: int, c: int) -> tuple:
        """What a node needs from its model state and its mask alone, shared by the nodes with both alike."""
        _, allowed, ids, _ = self._cs[c]
        key = (m, self._mask_number[c])
        found = self._steps.get(key)
        if found is None:
            p_all = self._ms_probs[m]
            eos_ok = bool(allowed[self.eos])
            kept = float(p_all[ids].sum() + (p_all[self.eos] if eos_ok else 0.0))
            dead_end = not allowed.any() or kept == 0.0
            q_all = np.zeros(len(p_all)) if dead_end else self.law.probs(self.model_states[m], allowed)
            leaving = ~allowed
            leaving[self.eos] = False
            ms_next = self.next_model_states(m)
            to, p = _grouped(ms_next[leaving], p_all[leaving])
            found = self._steps[key] = (ms_next[ids].tolist(), p_all[ids], q_all[ids], to, p, {
                "eos_ok": eos_ok, "p_eos": p_all[self.eos], "q_eos": q_all[self.eos], "kept": kept,
                "dead_end": dead_end, "leave_count": len(to), "edge_count": len(ids)})
        return found

    def expand(self, n: int) -> None:
        if self.is_expanded(n):
            return
        m, c = self.node_key[n]
        child_ms, p, q, leave_to, leave_p, scalars = self._step(m, c)
        ids = self._cs[c][2]
        children = [self.node(a, b) for a, b in zip(child_ms, self._constraint_next(c).tolist())]
        start = self._edges["edge_child"].extend(np.array(children, dtype=np.int64))
        self._edges["edge_token"].extend(ids)
        self._edges["edge_p"].extend(p)
        self._edges["edge_q"].extend(q)
        leave_start = self._leaves["leave_to"].extend(leave_to)
        self._leaves["leave_p"].extend(leave_p)
        nodes = self._nodes
        for name, value in scalars.items():
            nodes[name].data[n] = value
        nodes["edge_start"].data[n], nodes["leave_start"].data[n], nodes["expanded"].data[n] = start, leave_start, True

    def dead_step(self, m: int) -> tuple[np.ndarray, np.ndarray]:
        """A text out of the language at model state m: the model states its non-end tokens lead to, with p."""
        probs = self._ms_probs[m]
        keep = np.ones(len(probs), dtype=bool)
        keep[self.eos] = False
        return _grouped(self.next_model_states(m)[keep], probs[keep])

    def edges(self, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The edges out of `nodes`: (position in `nodes` of each edge's source, index into the edge columns)."""
        return _ranges(self.edge_start[nodes], self.edge_count[nodes])

    def leaves(self, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Likewise for the leaving mass (index into leave_to and leave_p)."""
        return _ranges(self.leave_start[nodes], self.leave_count[nodes])

    def children(self, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """One node's edges: (child, token, p, q)."""
        start, count = int(self.edge_start[n]), int(self.edge_count[n])
        return tuple(self._edges[name].data[start:start + count]
                     for name in ("edge_child", "edge_token", "edge_p", "edge_q"))


def _ranges(starts: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For ranges [start, start + count): each entry's range number and the entry itself, all ranges end to end."""
    total = int(counts.sum())
    position = np.repeat(np.arange(len(starts)), counts)
    offsets = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
    return position, starts[position] + offsets


def _grouped(keys: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if len(keys) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    unique, inverse = np.unique(keys, return_inverse=True)
    return unique, np.bincount(inverse, weights=weights, minlength=len(unique))
