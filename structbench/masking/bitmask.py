"""Masks as int32 bitmasks: the layout xgrammar, llguidance and outlines-core fill, token i at bit i % 32 of
word i // 32. Every strategy answers `mask_bits` in it, so timings compare like with like."""

from __future__ import annotations

import numpy as np


def pack_bits(mask: np.ndarray) -> np.ndarray:
    """Boolean mask(s) -> int32 words (over the last axis)."""
    mask = np.asarray(mask, dtype=bool)
    pad = (-mask.shape[-1]) % 32
    if pad:
        mask = np.concatenate([mask, np.zeros(mask.shape[:-1] + (pad,), dtype=bool)], axis=-1)
    return np.packbits(mask, axis=-1, bitorder="little").view("<i4")


def unpack_bits(words: np.ndarray, size: int) -> np.ndarray:
    """int32 words -> the boolean mask over `size` tokens."""
    return np.unpackbits(np.asarray(words, dtype="<i4").view(np.uint8), axis=-1, bitorder="little")[..., :size].astype(bool)
