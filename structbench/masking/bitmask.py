"""Masks as int32 bitmasks: the layout xgrammar, llguidance and outlines-core fill, token i at bit i % 32 of
word i // 32. Every strategy answers `mask_bits` in it, so timings compare like with like."""

from __future__ import annotations

import numpy as np


def pack_bits(mask: np.ndarray) -> np.ndarray:
    """Boolean mask(s) -> int32 words (over the last axis)."""
    mask = np.asarray(mask, dtype=bool)
    packed = np.packbits(mask, axis=-1, bitorder="little")  # the last byte's missing bits are zeros
    pad = (-packed.shape[-1]) % 4
    if pad:  # whole words: pad the bytes, not the booleans (eight times less to copy)
        packed = np.concatenate([packed, np.zeros(packed.shape[:-1] + (pad,), dtype=np.uint8)], axis=-1)
    return packed.view("<i4")


def unpack_bits(words: np.ndarray, size: int) -> np.ndarray:
    """int32 words -> the boolean mask over `size` tokens."""
    return np.unpackbits(np.asarray(words, dtype="<i4").view(np.uint8), axis=-1, bitorder="little")[..., :size].astype(bool)


def allows(words: np.ndarray, token: int) -> bool:
    """Whether the int32 words allow `token` (its bit alone, without unpacking the mask)."""
    return bool((int(words[token >> 5]) >> (token & 31)) & 1)


def set_bit(words: np.ndarray, token: int, on: bool) -> None:
    """Sets (`on`) or clears `token`'s bit in the int32 words, in place: the writer beside `allows`."""
    by_byte = words.view(np.uint8)  # (little-endian words: token i is bit i % 8 of byte i // 8)
    if on:
        by_byte[token >> 3] |= np.uint8(1 << (token & 7))
    else:
        by_byte[token >> 3] &= np.uint8(~(1 << (token & 7)) & 0xFF)
