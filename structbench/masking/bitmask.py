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


_BYTE_BITS = np.array([bin(i).count("1") for i in range(256)], dtype=np.int64)  # set bits per byte value
_BITWISE_COUNT = getattr(np, "bitwise_count", None)  # NumPy 2.0 on (looked up at each call: the tests swap it)


def count_allowed(words: np.ndarray, size: int) -> int:
    """The tokens the int32 words allow among the first `size` (bits past them, a last word's padding, not
    counted): what unpack_bits(words, size).sum() counts, without a boolean array over the vocabulary (a
    timed walk's untimed check: MaskBench's runner reads the words it is given, it does not unpack them)."""
    words = np.ascontiguousarray(words, dtype="<i4").view("<u4")
    if size > 32 * len(words):
        raise ValueError(f"{len(words):,} int32 words hold {32 * len(words):,} tokens' bits, not {size:,}")
    full, rest = divmod(size, 32)
    count = _popcount(words[:full])
    if rest:
        count += (int(words[full]) & ((1 << rest) - 1)).bit_count()
    return count


def _popcount(words: np.ndarray) -> int:
    """Set bits over uint32 words: NumPy's bitwise_count where it has one, else a table per byte."""
    if _BITWISE_COUNT is not None:
        return int(_BITWISE_COUNT(words).sum(dtype=np.int64))
    return int(_BYTE_BITS[words.view(np.uint8)].sum())


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
