"""asap: grammar-aligned decoding by adaptive sampling with approximate expected futures (Park et al., 2024).

Masking decides one token at a time and so over-weights prefixes whose valid continuations the model finds
unlikely (the lesson's two-token example: 0.091 becomes 0.9). ASAp keeps a trie of every prefix w sampled so
far with EFG(w), its estimated expected future validity (the probability that the model, continuing w, ends
with a valid answer within the token budget; EFG(root) = Z). The next token after w is drawn

    ∝ p(t | w) · EFG(w t),   EFG(w t) = the mask's 0/1 where w t is not in the trie yet,

and after each answer every EFG on its path is recomputed from its children, leaf to root:

    EFG(w) = Σ_t p(t | w) · EFG(w t)      (the end token counts 1 where the answer may end)

A prefix at the budget (max_tokens text tokens) can only be cut off: its EFG is 0, so the last step may only
end. Starting from the mask (an over-estimate: locally constrained decoding's law on the first answer), the
EFGs tighten as answers accrue, and the law of the answers converges to p*. A dead end (no allowed token)
gets EFG 0 the first time it is met; that run returns its unfinished answer.

The model's next-token law at each node is what ASAp reweights. The toy model's logits carry fresh noise at
every call, so its law is the softmax averaged over the noise: a node keeps the running mean of the softmaxes
seen at its visits (one model call per visit), which converges to that law. A deterministic model (a real one)
gives the same softmax at every visit, so a node keeps only the few numbers the update needs, not a vector.
"""

from __future__ import annotations

import math
import time
import weakref

import numpy as np

from structbench.errors import SettingsError
from structbench.lm.sampling import check_budget
from structbench.samplers.particles import Particle, check_pair
from structbench.samplers.result import SampledAnswer


class _Node:
    """One prefix: its constraint state, depth (text tokens), children by token id, EFG, and what the update
    reads: `kept`, the estimated mass of the allowed next tokens (only the end token at the budget's last
    step), and `child_p`, the estimated probability of each child's token."""

    __slots__ = ("constraint_state", "depth", "children", "efg", "kept", "child_p", "p_sum", "visits")

    def __init__(self, constraint_state, depth: int, efg: float):
        self.constraint_state, self.depth, self.efg = constraint_state, depth, efg
        self.children: dict[int, _Node] = {}
        self.kept = 0.0
        self.child_p: dict[int, float] = {}
        self.p_sum = None
        self.visits = 0


class AsapGuide:
    """The trie of one (model, constraint, max_tokens): what ASAp has learned so far. Pass the same guide to
    every run that should learn from the others (or let :func:`guide_for` keep one per constraint)."""

    def __init__(self, model, constraint, max_tokens: int = 40):
        check_pair(model, constraint)
        self.max_tokens = check_budget(max_tokens)
        self.constraint, self.vocab = constraint, model.vocab
        self.model_key = _model_key(model)
        self._model = model  # held, so an id in model_key cannot be reused by another model while the guide lives
        self.deterministic = bool(getattr(model, "deterministic", False))
        self.root = _Node(constraint.start(), 0, 1.0)
        self.runs = 0
        self.nodes = 1

    def serves(self, model, max_tokens: int) -> bool:
        return _model_key(model) == self.model_key and max_tokens == self.max_tokens

    @property
    def log_z(self) -> float:
        """log of the current estimate of Z, EFG(root)."""
        return math.log(self.root.efg) if self.root.efg > 0 else -math.inf

    def sample(self, model, rng: np.random.Generator) -> SampledAnswer:
        """One answer, then the EFGs on its path updated."""
        if not self.serves(model, self.max_tokens):
            raise SettingsError("this ASAp guide was built for another model (or prompt); use one guide per model")
        t0 = time.perf_counter()
        vocab, constraint = self.vocab, self.constraint
        answer = SampledAnswer(sampler="asap", particles=1, final_ess=1.0)
        node, path = self.root, []
        written = Particle(model.start(), None)  # the answer's text, kept as a particle keeps it
        for _ in range(self.max_tokens):
            path.append(node)
            logits = model.logits(written.model_state, rng)
            answer.model_calls += 1
            t = time.perf_counter_ns()
            allowed = constraint.mask(node.constraint_state)
            answer.mask_us.append((time.perf_counter_ns() - t) / 1000.0)
            answer.constraint_checks += len(allowed)
            answer.allowed_counts.append(int(np.count_nonzero(allowed)))
            p = _softmax(logits)
            answer.removed_mass.append(float(1 - p[allowed].sum()))
            weights = self._visit(node, p, allowed)
            total = weights.sum()
            if total <= 0:  # every way on is known to fail (or none exists): this prefix is worth 0
                node.efg = 0.0
                break
            token_id = int(rng.choice(len(weights), p=weights / total))
            answer.tokens_drawn += 1
            if token_id == vocab.eos_id:
                answer.finished = True
                break
            child = node.children.get(token_id)
            if child is None:
                state = constraint.advance(node.constraint_state, token_id)
                child = _Node(state, node.depth + 1, 1.0)
                node.children[token_id] = child
                node.child_p[token_id] = float(self._estimate(node, p)[token_id])
                self.nodes += 1
            written.model_state = model.advance(written.model_state, token_id)
            written.write(vocab, token_id)
            node = child
        answer.text, answer.tokens, answer.token_ids = written.text, written.tokens, written.token_ids
        for visited in reversed(path):
            visited.efg = _efg(visited)
        self.runs += 1
        answer.log_z = self.log_z
        answer.wall_ms = (time.perf_counter() - t0) * 1000
        return answer

    def _estimate(self, node: _Node, p: np.ndarray) -> np.ndarray:
        """The node's estimate of the model's next-token law: this visit's softmax for a deterministic model,
        else the mean over its visits (this one included)."""
        return p if self.deterministic else node.p_sum / node.visits

    def _visit(self, node: _Node, p: np.ndarray, allowed: np.ndarray) -> np.ndarray:
        """Record this visit's softmax and return the sampling weights p̂(t)·EFG(w t)."""
        node.visits += 1
        if not self.deterministic:
            node.p_sum = p.copy() if node.p_sum is None else node.p_sum + p
        est = self._estimate(node, p)
        eos = self.vocab.eos_id
        if node.depth + 1 >= self.max_tokens:  # the budget's last step: only the end token leads anywhere
            weights = np.zeros(len(est))
            weights[eos] = est[eos] if allowed[eos] else 0.0
            node.kept = float(weights[eos])
            return weights
        weights = np.where(allowed, est, 0.0)
        node.kept = float(weights.sum())
        for token_id, child in node.children.items():
            node.child_p[token_id] = float(est[token_id])
            weights[token_id] = est[token_id] * child.efg
        return weights


def _efg(node: _Node) -> float:
    """EFG(w) = kept(w) - Σ_children p̂(c | w)·(1 - EFG(w c)), written so unseen allowed tokens count 1."""
    lost = sum(node.child_p[t] * (1.0 - child.efg) for t, child in node.children.items())
    return max(0.0, node.kept - lost) if node.kept > 0 else 0.0


def _softmax(logits: np.ndarray) -> np.ndarray:
    e = np.exp(logits - logits.max())
    return e / e.sum()


def _model_key(model):
    """Which model a guide learned: a real model by its weights and prompt (its per-answer views share both),
    anything else by identity."""
    if hasattr(model, "prompt_ids"):
        return ("prompt", id(getattr(model, "torch_model", model)), tuple(model.prompt_ids))
    return ("object", id(model))


# One guide per (constraint, model, max_tokens), kept as long as the compiled constraint lives: one trial.
_GUIDES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def guide_for(constraint, model, max_tokens: int = 40) -> AsapGuide:
    """The guide kept for this constraint and model (created empty on first use)."""
    try:
        guides = _GUIDES.setdefault(constraint, [])
    except TypeError:
        raise SettingsError(f"asap keeps its guide with the constraint, and a {type(constraint).__name__} cannot "
                            f"be weakly referenced; pass guide=AsapGuide(model, constraint, max_tokens)") from None
    for guide in guides:
        if guide.serves(model, max_tokens):
            return guide
    guide = AsapGuide(model, constraint, max_tokens)
    guides.append(guide)
    return guide


def asap(model, rng: np.random.Generator, constraint, guide: AsapGuide | None = None,
         max_tokens: int = 40) -> SampledAnswer:
    """One ASAp answer, learning into `guide` (by default the one kept for this constraint and model)."""
    max_tokens = check_budget(max_tokens)
    if guide is None:
        guide = guide_for(constraint, model, max_tokens)
    elif guide.constraint is not constraint or guide.max_tokens != max_tokens:
        raise SettingsError("the ASAp guide was built for another constraint or max_tokens")
    return guide.sample(model, rng)
