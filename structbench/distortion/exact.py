"""The exact conditional p*, P(valid), and locally constrained decoding's law q, by dynamic programming.

For a model law (structbench.distortion.nexttoken: the toy model's, or an explicit table) and a constraint
(tabled or naive, any constraint with hashable states), the sums run over nodes (model state, constraint
state) step by step (structbench.distortion.graph), never over strings. Answers are token sequences of at
most `max_tokens` tokens, the end token included in the count (as structbench.lm.sampling counts them).

    p     the model's own law, every token allowed. Its answers are valid (finished where the constraint may
          end), invalid (finished elsewhere, or left the language on the way) or unfinished at the budget.
    Z     P(valid) under p.
    p*    p conditioned on validity, p*(y) = p(y)·[y valid] / Z. Step by step it is p reweighted by
          V_{t+1}(child) / V_t(node), V_t = P(valid completion within the remaining budget), solved backwards.
    q     locally constrained decoding (naive and tabled alike: the same masks): at each step the model's law
          over the allowed tokens only. For the toy model that is the argmax over the allowed set, which under
          noise is not p renormalised (nexttoken.py); for a table model it is, and then q(y) = p(y) / Π Z_t(y)
          with Z_t the step's kept mass. Its answers are valid, dead ends (nothing allowed, or nothing the
          model can write) or unfinished.

Precision: the next-token laws are exact to ~1e-12 (nexttoken.py). A node first reached with mass at most
`prune` under p and under q alike (1e-15 by default) is not expanded and its mass is dropped; the total
dropped is :attr:`Summary.pruned_mass`, a bound on the error of every mass here. With prune=0 nothing is.

KL divergences are between laws of token sequences (y = the tokens), where they decompose over steps:
KL(p*‖q̃) = E_p*[Σ_t log p*_t/q_t] + log Q and KL(q̃‖p*) = E_q̃[Σ_t log q_t/p*_t] - log Q, q̃ being q
conditioned on a valid answer and Q = q's valid mass (q's dead-end and unfinished mass, to which p* gives
0, is reported apart). Between laws of texts they can only be smaller (two spellings of one text merge).
Total variation does not decompose; it is taken between texts (:meth:`ExactSolver.score` sums a text's
probability over all its spellings) on samples: exact draws from q give it by importance weights
(:meth:`ExactSolver.tv_lcd`), R runs of a sampler give TV(empirical, p*) against the noise floor
(:meth:`ExactSolver.noise_floor`).

Whole-answer retry draws from p* exactly; with at most m attempts it succeeds with 1 - (1 - Z)^m
(:func:`retry_law`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from structbench.distortion.graph import NodeGraph
from structbench.distortion.metrics import Bucket, empirical, tv_to_exact
from structbench.lm.sampling import check_budget

PRUNE = 1e-15  # a node first reached with no more mass than this under p and q is not expanded
DEAD = -1  # the constraint state (number) of a text that has left the language


@dataclass(frozen=True)
class TextScore:
    """One answer's exact probabilities, summed over every spelling of its text within the budget."""

    text: str
    valid: bool
    p: float
    q: float
    pstar: float


@dataclass(frozen=True)
class Summary:
    """The exact quantities of one (law, constraint, budget)."""

    z: float                    # P(valid) under the model
    invalid_mass: float         # finished outside the language, under the model
    truncated_mass: float       # unfinished at max_tokens, under the model
    q_valid_mass: float         # locally constrained decoding's mass on valid answers
    q_dead_end_mass: float
    q_truncated_mass: float
    kl_pstar_q: float           # KL(p*‖q̃), token sequences, nats
    kl_q_pstar: float           # KL(q̃‖p*)
    q_expected_log_kept: float  # E_q[Σ_t log Z_t]: the expectation of the log of the kept mass q's runs log
    pruned_mass: float          # mass dropped at unexpanded nodes (under p or q, the larger): the error bound
    nodes: int                  # nodes expanded
    p_expected_tokens: float    # E_p[tokens drawn by one run of the model], the end token included
    q_expected_tokens: float    # E_q[tokens drawn by one masked run] (a dead end draws nothing more)


def retry_law(z: float, max_attempts: int | None = None) -> tuple[float, float]:
    """Whole-answer retry: (chance it ends with a valid answer, expected model runs). Its valid answers
    follow p* exactly. Unbounded attempts: (1, 1/Z)."""
    if not 0.0 <= z <= 1.0:
        raise ValueError(f"Z is a probability, got {z!r}")
    if max_attempts is None:
        return (1.0, math.inf if z == 0 else 1.0 / z)
    if isinstance(max_attempts, bool) or not isinstance(max_attempts, int) or max_attempts < 1:
        raise ValueError(f"max_attempts must be an integer >= 1, got {max_attempts!r}")
    if z == 0:
        return (0.0, float(max_attempts))
    success = 1.0 - (1.0 - z) ** max_attempts
    return (success, success / z)


@dataclass
class _Layer:
    """The nodes where step t chooses a token (sorted), which of them carry mass on, and per node the
    reach under p and q and (after the backward pass) V_t and W_t."""

    nodes: np.ndarray
    live: np.ndarray
    p: np.ndarray
    q: np.ndarray
    v: np.ndarray | None = None
    w: np.ndarray | None = None

    def lookup(self, values: np.ndarray, nodes: np.ndarray) -> np.ndarray:
        """values (aligned with self.nodes) at `nodes`; 0 for a node not in this layer."""
        at = np.searchsorted(self.nodes, nodes)
        at = np.minimum(at, len(self.nodes) - 1)
        return np.where(self.nodes[at] == nodes, values[at], 0.0)


class ExactSolver:
    """The exact p, p* and q of a model law under a constraint and a token budget (see the module's
    docstring); :attr:`summary` holds the exact quantities."""

    def __init__(self, law, constraint, max_tokens: int, prune: float = PRUNE):
        if not isinstance(prune, (int, float)) or not 0 <= prune < 1:
            raise ValueError(f"prune is a probability mass in [0, 1), got {prune!r}")
        self.max_tokens = check_budget(max_tokens)
        self.graph = NodeGraph(law, constraint)
        self.vocab, self.prune = law.vocab, float(prune)
        self.layers: list[_Layer] = []
        forward = self._forward()
        self.summary = self._backward(forward)
        self._pstar: dict[str, float] = {}

    # --- the passes --------------------------------------------------------------------------------------

    def _forward(self) -> dict:
        g = self.graph
        nodes, p_reach, q_reach = np.array([g.root]), np.ones(1), np.ones(1)
        dead = np.zeros(0)  # per model state: p's mass of texts already out of the language
        totals = dict.fromkeys(("valid", "invalid", "q_valid", "q_dead", "log_kept", "pruned_p", "pruned_q",
                                "p_tokens", "q_tokens"), 0.0)
        for _ in range(self.max_tokens):
            live = np.ones(len(nodes), dtype=bool)
            for i in np.flatnonzero(~g.expanded[nodes]).tolist():
                if max(p_reach[i], q_reach[i]) > self.prune:
                    g.expand(int(nodes[i]))
                else:
                    live[i] = False
            totals["pruned_p"] += p_reach[~live].sum()
            totals["pruned_q"] += q_reach[~live].sum()
            p_reach, q_reach = np.where(live, p_reach, 0.0), np.where(live, q_reach, 0.0)
            self.layers.append(_Layer(nodes, live, p_reach, q_reach))
            on, pr, qr = nodes[live], p_reach[live], q_reach[live]
            eos_ok, dead_end, p_eos, q_eos = g.eos_ok[on], g.dead_end[on], g.p_eos[on], g.q_eos[on]
            totals["p_tokens"] += pr.sum() + dead.sum()  # every unfinished run draws one token this step
            totals["q_tokens"] += qr[~dead_end].sum()
            totals["valid"] += np.dot(pr, p_eos * eos_ok)
            totals["invalid"] += np.dot(pr, p_eos * ~eos_ok)
            totals["q_valid"] += np.dot(qr, q_eos * eos_ok)
            totals["q_dead"] += qr[dead_end].sum()
            totals["log_kept"] += np.dot(qr[~dead_end], np.log(g.kept[on[~dead_end]]))
            dead = self._dead_step(dead, on, pr, totals)
            position, e = g.edges(on)
            child, p, q = g.edge_child[e], g.edge_p[e], g.edge_q[e]
            nodes, inverse = np.unique(child, return_inverse=True)
            p_reach = np.bincount(inverse, weights=pr[position] * p, minlength=len(nodes))
            q_reach = np.bincount(inverse, weights=qr[position] * q, minlength=len(nodes))
        totals["truncated"] = p_reach.sum() + dead.sum()
        totals["q_truncated"] = q_reach.sum()
        return totals

    def _dead_step(self, dead: np.ndarray, on: np.ndarray, pr: np.ndarray, totals: dict) -> np.ndarray:
        """One step of the texts out of the language: they finish (invalid) or write on, unmasked."""
        g = self.graph
        targets, masses = [], []
        for m in np.flatnonzero(dead).tolist():
            totals["invalid"] += dead[m] * g.model_probs(m)[g.eos]
            to, p = g.dead_step(m)
            targets.append(to)
            masses.append(dead[m] * p)
        position, e = g.leaves(on)
        targets.append(g.leave_to[e])
        masses.append(pr[position] * g.leave_p[e])
        size = len(g.model_states)
        return np.bincount(np.concatenate(targets), weights=np.concatenate(masses), minlength=size)

    def _backward(self, totals: dict) -> Summary:
        g = self.graph
        kl_pq = kl_qp = 0.0
        later = None
        for layer in reversed(self.layers):
            on = layer.nodes[layer.live]
            position, e = g.edges(on)
            child, p, q = g.edge_child[e], g.edge_p[e], g.edge_q[e]
            v_child = later.lookup(later.v, child) if later is not None else np.zeros(len(child))
            w_child = later.lookup(later.w, child) if later is not None else np.zeros(len(child))
            p_eos, q_eos = g.p_eos[on] * g.eos_ok[on], g.q_eos[on] * g.eos_ok[on]
            v = p_eos + np.bincount(position, weights=p * v_child, minlength=len(on))
            w = q_eos + np.bincount(position, weights=q * w_child, minlength=len(on))
            layer.v, layer.w = np.zeros(len(layer.nodes)), np.zeros(len(layer.nodes))
            layer.v[layer.live], layer.w[layer.live] = v, w
            pr, qr = layer.p[layer.live], layer.q[layer.live]
            # KL(p*‖q): p* reaches a node with p's reach·V/Z and steps with p·V_child/V.
            kl_pq += _weighted_log(pr[position] * p * v_child, p * v_child, v[position] * q)
            kl_pq += _weighted_log(pr * p_eos, p_eos, v * q_eos)
            # KL(q‖p*) on valid answers: q's steps weighted by W_child, against p*'s step p·V_child/V.
            kl_qp += _weighted_log(qr[position] * q * w_child, q * v[position], p * v_child)
            kl_qp += _weighted_log(qr * q_eos, q_eos * v, p_eos)
            later = layer
        z, q_valid = float(self.layers[0].v[0]), float(self.layers[0].w[0])
        if z == 0.0:
            raise ValueError("no valid answer has any probability within the budget: p* does not exist (Z = 0)")
        return Summary(
            z=z, invalid_mass=float(totals["invalid"]), truncated_mass=float(totals["truncated"]),
            q_valid_mass=q_valid, q_dead_end_mass=float(totals["q_dead"]),
            q_truncated_mass=float(totals["q_truncated"]),
            kl_pstar_q=max(0.0, kl_pq / z + math.log(q_valid)) if q_valid > 0 else math.inf,
            kl_q_pstar=max(0.0, kl_qp / q_valid - math.log(q_valid)) if q_valid > 0 else math.nan,
            q_expected_log_kept=float(totals["log_kept"]),
            pruned_mass=float(max(totals["pruned_p"], totals["pruned_q"])),
            nodes=int(g.expanded.sum()),
            p_expected_tokens=float(totals["p_tokens"]), q_expected_tokens=float(totals["q_tokens"]),
        )

    # --- single answers and exact draws ------------------------------------------------------------------

    def score(self, text: str) -> TextScore:
        """p, q and p* of one answer text, summed over every spelling of it (every token sequence that
        writes it, then the end token) within the budget: answers are compared as texts."""
        if not isinstance(text, str):
            raise ValueError(f"an answer to score is a text, got {type(text).__name__}")
        g, budget = self.graph, self.max_tokens
        # at[position][(model state, constraint state)] = (p, q) mass per number of tokens written so far
        at: list[dict[tuple[int, int], tuple[np.ndarray, np.ndarray]]] = [{} for _ in range(len(text) + 1)]
        at[0][g.node_key[g.root]] = (_unit(budget), _unit(budget))
        for pos in range(len(text)):
            starts = self.vocab.trie.prefixes_of(text[pos:]) if at[pos] else []
            for (m, c), (p_mass, q_mass) in at[pos].items():
                p_all, next_ms = g.model_probs(m), g.next_model_states(m)
                allowed = g.mask(c) if c != DEAD else None
                q_all = g.masked_probs(m, c) if c != DEAD else None
                for token in starts:
                    ok = allowed is not None and bool(allowed[token])
                    child = (int(next_ms[token]), g.advance_constraint(c, token) if ok else DEAD)
                    end = pos + len(self.vocab.text_of(token))
                    old = at[end].get(child, (np.zeros(budget + 1), np.zeros(budget + 1)))
                    at[end][child] = (old[0] + _shift(p_mass) * p_all[token],
                                      old[1] + _shift(q_mass) * (q_all[token] if ok else 0.0))
        p = q = 0.0
        valid = False
        for (m, c), (p_mass, q_mass) in at[len(text)].items():
            p += p_mass[:budget].sum() * g.model_probs(m)[g.eos]  # the end token is one more: budget - 1 before it
            if c != DEAD and g.mask(c)[g.eos]:
                valid = True
                q += q_mass[:budget].sum() * g.masked_probs(m, c)[g.eos]
        return TextScore(text, valid, float(p), float(q), float(p) / self.summary.z if valid else 0.0)

    def exact_pstar(self, outcome) -> float:
        """p* of one outcome: 0 for a bucket, its text's score otherwise (cached)."""
        if isinstance(outcome, Bucket):
            return 0.0
        found = self._pstar.get(outcome)
        if found is None:
            found = self._pstar[outcome] = self.score(outcome).pstar
        return found

    def sample(self, rng: np.random.Generator, n: int, law: str = "pstar") -> list:
        """n exact draws as outcomes (a text, or a Bucket) from p* ("pstar") or q ("q"): no model runs."""
        if law not in ("pstar", "q"):
            raise ValueError(f"law must be 'pstar' or 'q', got {law!r}")
        return [self._draw(rng, law == "q") for _ in range(n)]

    def _draw(self, rng: np.random.Generator, from_q: bool):
        g, number, pieces = self.graph, self.graph.root, []
        for t in range(self.max_tokens):
            g.expand(number)  # a q draw may wander where the passes pruned
            children, tokens, p, q = g.children(number)
            if from_q:
                if g.dead_end[number]:
                    return Bucket.DEAD_END
                weights, eos = q, g.q_eos[number]
            else:
                later = self.layers[t + 1] if t + 1 < len(self.layers) else None
                weights = p * (later.lookup(later.v, children) if later else 0.0)
                eos = g.p_eos[number]
            weights = np.append(weights, eos if g.eos_ok[number] else 0.0)
            choice = int(rng.choice(len(weights), p=weights / weights.sum()))
            if choice == len(children):
                return "".join(pieces)
            pieces.append(self.vocab.text_of(int(tokens[choice])))
            number = int(children[choice])
        return Bucket.UNFINISHED

    def tv_bounds(self, threshold: float = 1e-9, max_visits: int = 200_000) -> tuple[float, float] | None:
        """TV(q, p*) between texts, bounded by listing token sequences: each prefix with more than `threshold`
        mass under p* or q is followed to every valid end, the rest is set aside. With S = Σ over the listed
        texts of min(q, p*) and r_p*, r_q the masses set aside, TV lies in [1 - S - min(r_p*, r_q), 1 - S]
        (min is monotone, so a text listed in part adds no more than its own share to S). q's dead ends and
        unfinished answers, where p* is 0, add nothing to S. None when more than `max_visits` prefixes would
        be followed (too many texts to list: :meth:`tv_lcd` estimates it instead)."""
        g, layers = self.graph, self.layers
        texts: dict[str, list[float]] = {}
        left_pstar = left_q = 0.0
        stack, visits = [(g.root, 0, "", 1.0, 1.0)], 0  # (node, tokens so far, text, p* mass, q mass)
        while stack:
            n, t, text, ps, qs = stack.pop()
            if max(ps, qs) <= threshold:
                left_pstar, left_q = left_pstar + ps, left_q + qs
                continue
            visits += 1
            if visits > max_visits:
                return None
            if t >= len(layers):  # unfinished at the budget: p* gives it nothing
                continue
            g.expand(n)  # q may go where the passes pruned
            v = float(layers[t].lookup(layers[t].v, np.array([n]))[0])
            if g.eos_ok[n]:
                entry = texts.setdefault(text, [0.0, 0.0])
                entry[0] += ps * g.p_eos[n] / v if v > 0 else 0.0
                entry[1] += qs * g.q_eos[n]
            if g.dead_end[n]:
                continue
            children, tokens, p, q = g.children(n)
            later = layers[t + 1] if t + 1 < len(layers) else None
            v_child = later.lookup(later.v, children) if later is not None else np.zeros(len(children))
            p_step = ps * p * v_child / v if v > 0 else np.zeros(len(children))
            q_step = qs * q
            for i in np.flatnonzero((p_step > 0) | (q_step > 0)).tolist():
                stack.append((int(children[i]), t + 1, text + self.vocab.text_of(int(tokens[i])),
                              float(p_step[i]), float(q_step[i])))
        shared = math.fsum(min(a, b) for a, b in texts.values())
        return max(0.0, 1.0 - shared - min(left_pstar, left_q)), max(0.0, 1.0 - shared)

    def tv_lcd(self, rng: np.random.Generator, draws: int) -> tuple[float, float]:
        """TV(q, p*) between texts, by importance weights on exact draws from q: the mean of
        (1 - p*(y)/q(y))⁺ (1 for a dead end or an unfinished answer), and its standard error."""
        if isinstance(draws, bool) or not isinstance(draws, int) or draws < 2:
            raise ValueError(f"draws must be an integer >= 2, got {draws!r}")
        scores: dict[str, TextScore] = {}
        terms = []
        for y in self.sample(rng, draws, "q"):
            if isinstance(y, Bucket):
                terms.append(1.0)
                continue
            s = scores.get(y) or scores.setdefault(y, self.score(y))
            terms.append(max(0.0, 1.0 - s.pstar / s.q))
        terms = np.array(terms)
        return float(terms.mean()), float(terms.std(ddof=1) / math.sqrt(draws))

    def noise_floor(self, rng: np.random.Generator, runs: int, repeats: int) -> tuple[float, float]:
        """What TV(empirical, p*) is from sampling alone: the mean and standard deviation, over `repeats`
        simulations, of the TV of `runs` exact draws from p* against p*."""
        for name, value, least in (("runs", runs, 1), ("repeats", repeats, 2)):
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(f"{name} must be an integer >= {least}, got {value!r}")
        floors = np.array([tv_to_exact(empirical(self.sample(rng, runs)), self.exact_pstar) for _ in range(repeats)])
        return float(floors.mean()), float(floors.std(ddof=1))


def _unit(budget: int) -> np.ndarray:
    mass = np.zeros(budget + 1)
    mass[0] = 1.0
    return mass


def _shift(mass: np.ndarray) -> np.ndarray:
    """One more token written: the mass moves up one count (what reaches the budget's end drops off)."""
    return np.concatenate(([0.0], mass[:-1]))


def _weighted_log(weight: np.ndarray, numerator: np.ndarray, denominator: np.ndarray) -> float:
    """Σ weight·log(numerator/denominator) over the entries with weight > 0; +inf where a denominator is 0."""
    used = weight > 0
    if not used.any():
        return 0.0
    if (denominator[used] <= 0).any():
        return math.inf
    return float(np.sum(weight[used] * np.log(numerator[used] / denominator[used])))
