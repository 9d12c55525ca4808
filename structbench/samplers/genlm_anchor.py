"""An anchor: genlm-control 0.4.1's own AWRS-SMC run on our model and constraint, to cross-check ours.

genlm-control (Lipkin et al.; the library the AWRS paper ships) samples from a product of *potentials*:
functions of a token context with async `prefix`, `complete` and `logw_next` returning log-weights. Two
adapters put our pieces behind that interface:

* the model as a potential: `logw_next(context)` is the log-softmax of `model.logits` after the context
  (the end token last, as genlm orders its vocabulary), `prefix` the sum of those along the context,
  `complete` that plus the end token's;
* the constraint as a Boolean condition: 0 where the constraint walks the context (and, for `complete`, may
  end there), -inf elsewhere.

genlm's `AWRS(model, condition)` inside `SMC` then targets the same p* as our samplers: its max_tokens counts
the end token, and a particle at the budget is ended with the end token's weight, so the target is p
restricted to valid answers of at most max_tokens tokens, ours exactly. Potentials must be functions of the
context, so the model must be deterministic (the toy model at noise 0, or any model whose states are values):
the toy model's noise would give a different softmax at every call. genlm's resampling draws from NumPy's
global generator, which `sample` seeds from the caller's rng so a run is reproducible.

genlm-control is optional and heavy (its declared requirements pull a CUDA torch and vLLM); what its import
really needs installs without them: :data:`INSTALL`.
"""

from __future__ import annotations

import asyncio
import math

import numpy as np

from structbench.errors import SettingsError, TokenRejected, Unavailable
from structbench.extras import install_line
from structbench.samplers.particles import check_pair

# Everything `import genlm.control` needs, with --no-deps so that pip never replaces the CPU torch.
INSTALL = install_line("anchor")


def require_genlm():
    try:
        import genlm.control as genlm_control
    except ImportError as e:
        raise Unavailable(f"the genlm-control cross-check needs genlm-control 0.4.1 ({e}); {INSTALL}") from None
    return genlm_control


class GenlmAnchor:
    """Our model and constraint as genlm-control potentials, and genlm's AWRS-SMC over them."""

    def __init__(self, model, constraint):
        check_pair(model, constraint)
        if getattr(model, "noise", None):
            raise SettingsError(f"genlm-control's potentials are functions of the context; the toy model's noise "
                                f"({model.noise}) draws a new softmax at every call: cross-check at noise 0")
        genlm = require_genlm()
        vocab = model.vocab
        # genlm's vocabulary: our text tokens (bytes), the end token its own EOS, placed last.
        self.ids = [i for i in range(len(vocab)) if i != vocab.eos_id and vocab.tokens[i] is not None]
        self.token_of = {vocab.token_bytes[i]: i for i in self.ids}
        self.vocab = vocab
        self.lm = _model_potential(genlm, model, self)
        self.condition = _condition_potential(genlm, constraint, self)
        self._genlm = genlm

    def sample(self, rng: np.random.Generator, particles: int, ess_threshold: float, max_tokens: int):
        """One run: (the answer's text, or None when every particle weighs 0; log Ẑ; the final ESS)."""
        genlm = self._genlm
        np.random.seed(int(rng.integers(2**32)))  # genlm resamples with NumPy's global generator
        sampler = genlm.AWRS(self.lm, self.condition, seed=int(rng.integers(2**32)))
        smc = genlm.SMC(sampler)
        sequences = asyncio.run(smc(n_particles=particles, ess_threshold=ess_threshold, max_tokens=max_tokens))
        if sequences.log_ml == -math.inf:
            return None, -math.inf, 0.0
        weights = np.exp(np.asarray(sequences.log_normalized_weights, dtype=float))
        context = sequences.contexts[int(rng.choice(len(weights), p=weights / weights.sum()))]
        text = b"".join(t for t in context if isinstance(t, bytes)).decode("utf-8", "replace")
        return text, float(sequences.log_ml), float(sequences.ess)


def _model_potential(genlm, model, anchor: GenlmAnchor):
    class ModelPotential(genlm.Potential):
        """The model's next-token log-probabilities as a potential (cached by context)."""

        def __init__(self):
            super().__init__([anchor.vocab.token_bytes[i] for i in anchor.ids])
            self._states = {(): model.start()}
            self._log_p = {}
            self._order = np.array(anchor.ids + [anchor.vocab.eos_id])

        def _state(self, context: tuple):
            if context not in self._states:
                self._states[context] = model.advance(self._state(context[:-1]), anchor.token_of[context[-1]])
            return self._states[context]

        def _next(self, context) -> np.ndarray:
            context = tuple(context)
            if context not in self._log_p:
                logits = model.logits(self._state(context), np.random.default_rng(0))  # noise 0: draws nothing used
                top = logits.max()
                self._log_p[context] = (logits - top - math.log(np.exp(logits - top).sum()))[self._order]
            return self._log_p[context]

        async def prefix(self, context):
            return float(sum(self._next(context[:k])[self.lookup[t]] for k, t in enumerate(context)))

        async def complete(self, context):
            return await self.prefix(context) + float(self._next(context)[-1])

        async def logw_next(self, context):
            return self.make_lazy_weights(self._next(context).copy())

    return ModelPotential()


def _condition_potential(genlm, constraint, anchor: GenlmAnchor):
    class ConstraintPotential(genlm.Potential):
        """The constraint as a Boolean potential: 0 where it walks the context, -inf where it refuses."""

        def __init__(self):
            super().__init__([anchor.vocab.token_bytes[i] for i in anchor.ids])
            self._states = {(): constraint.start()}

        def _state(self, context: tuple):
            if context not in self._states:
                before = self._state(context[:-1])
                try:
                    after = None if before is None else constraint.advance(before, anchor.token_of[context[-1]])
                except TokenRejected:
                    after = None
                self._states[context] = after
            return self._states[context]

        async def prefix(self, context):
            return 0.0 if self._state(tuple(context)) is not None else -math.inf

        async def complete(self, context):
            state = self._state(tuple(context))
            return 0.0 if state is not None and constraint.can_end(state) else -math.inf

    return ConstraintPotential()
