"""The int32 bitmask layout's readers: what a timed walk's untimed check reads of each mask (bench.walk), without
unpacking it, must be what the unpacked mask says."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from structbench.masking import bitmask
from structbench.masking.bitmask import allows, count_allowed, pack_bits, unpack_bits


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=1, max_value=300).flatmap(
    lambda n: st.lists(st.booleans(), min_size=n, max_size=n)))
def test_the_words_read_as_the_unpacked_mask_says(flags):
    mask = np.array(flags, dtype=bool)
    words = pack_bits(mask)
    assert count_allowed(words, len(mask)) == int(mask.sum())
    assert [allows(words, t) for t in range(len(mask))] == flags


def test_bits_past_the_vocabulary_are_not_counted():
    """An engine fills whole words: bits past the vocabulary's last token (a last word's padding) are not tokens."""
    mask = np.zeros(70, dtype=bool)
    mask[[0, 31, 32, 69]] = True  # bit 31 is the sign bit of word 0: an int32 below zero
    words = pack_bits(mask)
    assert words[0] < 0
    words.view(np.uint8)[-1] |= np.uint8(0xF0)  # tokens 76-79 do not exist
    assert count_allowed(words, 70) == 4 == int(unpack_bits(words, 70).sum())
    assert count_allowed(words, 96) == 8  # counted where the vocabulary holds them
    assert count_allowed(words, 64) == 3 and count_allowed(words, 32) == 2


def test_the_byte_table_counts_as_numpys_bitwise_count(monkeypatch):
    """Without NumPy's bitwise_count (before 2.0) a table per byte counts: the same answers."""
    rng = np.random.default_rng(0)
    words = rng.integers(-(2**31), 2**31, size=4008, dtype=np.int64).astype(np.int32)
    expected = int(unpack_bits(words, 4008 * 32).sum())
    monkeypatch.setattr(bitmask, "_BITWISE_COUNT", None)
    assert count_allowed(words, 4008 * 32) == expected
    assert count_allowed(words, 4008 * 32 - 5) == int(unpack_bits(words, 4008 * 32 - 5).sum())
    if getattr(np, "bitwise_count", None) is None:
        pytest.skip("this NumPy has no bitwise_count: the table is its only path")
    monkeypatch.setattr(bitmask, "_BITWISE_COUNT", np.bitwise_count)
    assert count_allowed(words, 4008 * 32) == expected
