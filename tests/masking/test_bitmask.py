"""The int32 bitmask layout's readers: what a timed walk's untimed check reads of each mask (bench.walk), without
unpacking it, must be what the unpacked mask says, whatever the words hold past the vocabulary's last token."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from structbench.masking import bitmask
from structbench.masking.bitmask import allows, count_allowed, pack_bits, unpack_bits

# Both ways of counting a mask's bits: NumPy's bitwise_count (2.0 on) and the table per byte (before it)
_COUNTERS = [pytest.param(None, id="byte-table")] + (
    [pytest.param(np.bitwise_count, id="bitwise_count")] if hasattr(np, "bitwise_count") else [])


@pytest.mark.parametrize("counter", _COUNTERS)
@settings(max_examples=150, deadline=None)
@given(words=st.lists(st.integers(min_value=-(2**31), max_value=2**31 - 1), min_size=1, max_size=12),
       cut=st.integers(min_value=0, max_value=31), spare=st.integers(min_value=0, max_value=2))
def test_the_words_read_as_the_unpacked_mask_says(counter, words, cut, spare):
    """Any int32 words (sign bits, padding bits set), a vocabulary ending anywhere in the last word it needs, and
    words to spare past it (an engine may fill more than the vocabulary holds)."""
    words = np.array(words, dtype=np.int32)
    size = max(1, 32 * (len(words) - spare) - cut)
    unpacked = unpack_bits(words, size)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(bitmask, "_BITWISE_COUNT", counter)
        assert count_allowed(words, size) == int(np.count_nonzero(unpacked))
    assert [allows(words, t) for t in range(size)] == unpacked.tolist()


def test_bits_past_the_vocabulary_are_not_counted():
    """An engine fills whole words: bits past the vocabulary's last token (a last word's padding) are not tokens."""
    mask = np.zeros(70, dtype=bool)
    mask[[0, 31, 32, 69]] = True  # bit 31 is the sign bit of word 0: an int32 below zero
    words = pack_bits(mask)
    assert words[0] < 0
    by_byte = words.view(np.uint8)
    by_byte[8] |= np.uint8(0xC0)  # tokens 70 and 71: past the vocabulary, in the byte that holds token 69
    by_byte[-1] |= np.uint8(0xF0)  # tokens 92-95
    assert count_allowed(words, 70) == 4 == int(unpack_bits(words, 70).sum())
    assert count_allowed(words, 96) == 10  # counted where the vocabulary holds them
    assert count_allowed(words, 64) == 3 and count_allowed(words, 32) == 2
    with pytest.raises(ValueError, match="3 int32 words hold 96 tokens' bits, not 97"):
        count_allowed(words, 97)


def test_a_view_of_the_words_is_read_as_the_words():
    """A strided view (not one block of memory) counts as its copy does, both ways."""
    words = np.arange(-40, 40, 3, dtype=np.int32)[::2]
    assert not words.flags.c_contiguous
    for counter in [None, getattr(np, "bitwise_count", None)]:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(bitmask, "_BITWISE_COUNT", counter)
            assert count_allowed(words, 32 * len(words) - 3) == int(unpack_bits(words.copy(), 32 * len(words) - 3).sum())
