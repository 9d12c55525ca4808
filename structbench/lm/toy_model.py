"""The lesson's toy model: a pretend language model that has *mostly* learned one answer.

It copies `reference` (from the reference's first character onwards, which for
JSON answers is the first "{"), preferring longer tokens the way a real model
prefers its tokenizer's usual pieces. Normal noise on every logit stands in for
everything the model is unsure of, and `chatter` is its habit of opening with
"Sure". Deterministic given the random generator: each call draws exactly one
normal vector of vocabulary size, so the lesson's counts reproduce draw for draw.
"""

from __future__ import annotations

import math

import numpy as np

from structbench.lm.vocab import Vocabulary, toy_vocabulary

CHATTER_TOKEN = "Sure"


class ToyModel:
    def __init__(self, reference: str, vocab: Vocabulary | None = None, skill: float = 8.0, noise: float = 1.0, chatter: float = 6.0):
        vocab = vocab if vocab is not None else toy_vocabulary()
        for name, value in (("skill", skill), ("noise", noise), ("chatter", chatter)):
            if not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ValueError(f"toy model {name} must be a finite number, got {value!r}")
        if noise < 0:
            raise ValueError(f"toy model noise is a standard deviation and must be >= 0, got {noise}")
        if not reference:
            raise ValueError("toy model reference answer must not be empty")
        self.reference, self.vocab = reference, vocab
        self.skill, self.noise, self.chatter = float(skill), float(noise), float(chatter)
        self.anchor = reference[0]
        self._chatter_id = vocab.index.get(CHATTER_TOKEN)
        # Longer pieces get a small bonus: a trained model has seen "42" far more often than "4" then "2".
        self._piece_bonus = 0.5 * (vocab.lengths - 1)

    def start(self) -> str:
        """The model's state is the text written so far: it needs nothing else."""
        return ""

    def advance(self, text: str, token_id: int) -> str:
        return text + self.vocab.text_of(token_id)

    def logits(self, text: str, rng: np.random.Generator) -> np.ndarray:
        return self._add_base(rng.normal(0.0, self.noise, len(self.vocab)), text)

    def base_logits(self, text: str) -> np.ndarray:
        """The logits without noise: what the noise is drawn around (structbench.distortion reads them)."""
        return self._add_base(np.zeros(len(self.vocab)), text)

    def _add_base(self, z: np.ndarray, text: str) -> np.ndarray:
        # In place and in the lesson's order, so logits() adds to its draw exactly as the lesson did.
        start = text.find(self.anchor)
        # Where the model thinks it is in its answer: characters written since the anchor.
        remaining = self.reference if start < 0 else self.reference[len(text) - start :]
        if text == "" and self._chatter_id is not None:
            z[self._chatter_id] += self.chatter
        ids = self.vocab.trie.prefixes_of(remaining)  # every token that copies the next piece of the answer
        if ids:
            z[ids] += self.skill + self._piece_bonus[ids]
        if start >= 0 and remaining == "":
            z[self.vocab.eos_id] += self.skill
        return z
