"""The checker's frames: the fast field replacements the advance uses are namedtuple's _replace."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from structbench.jsonschema.frames import (
    Frame,
    Kind,
    Phase,
    key_closed,
    key_opened,
    read_as,
    value_done,
    value_written,
    with_at,
    with_phase,
    with_seen,
    with_text,
    with_text_ks,
    with_ws,
)

FRAMES = st.builds(Frame, st.sampled_from(list(Kind)), st.integers(-1, 50), st.sampled_from(list(Phase)),
                   st.text(max_size=5), st.integers(0, 9), st.frozensets(st.text(max_size=3), max_size=3),
                   st.sampled_from(["", "\\", "\\u00"]), st.integers(0, 5), st.integers(0, 2), st.integers(-1, 9))


@given(FRAMES, st.text(max_size=6), st.integers(0, 99))
def test_with_text_and_with_at_are_replace(frame, text, at):
    """with_text and with_at give the frame _replace gives (a Frame, equal, hashing alike), one field changed."""
    for got, want in ((with_text(frame, text), frame._replace(text=text)), (with_at(frame, at), frame._replace(at=at))):
        assert type(got) is Frame and got == want and hash(got) == hash(want)
    assert with_text(frame, text)[:3] == frame[:3] and with_at(frame, at).text == frame.text


@given(FRAMES, st.integers(0, 9), st.sampled_from(list(Phase)))
def test_with_ws_with_phase_and_value_done_are_replace(frame, ws, phase):
    """The container's fast replacements (the steps between values) give the frame _replace gives."""
    for got, want in ((with_ws(frame, ws), frame._replace(ws=ws)),
                      (with_phase(frame, phase), frame._replace(phase=phase, ws=0)),
                      (value_done(frame), frame._replace(phase=Phase.AFTER_VALUE, ws=0, child=-1))):
        assert type(got) is Frame and got == want and hash(got) == hash(want)


@given(FRAMES, st.tuples(st.integers(0, 3)), st.integers(-1, 9), st.frozensets(st.text(max_size=3), max_size=3),
       st.integers(0, 5), st.text(max_size=4))
def test_an_objects_key_frames_are_replace(frame, ks, child, seen, count, text):
    """A key's opening, its closing, its value written and its mask key's reading give the frame _replace gives."""
    for got, want in ((key_opened(frame, ks), frame._replace(phase=Phase.KEY, text="", ks=ks, ws=0)),
                      (key_closed(frame, child, seen, count),
                       frame._replace(phase=Phase.COLON, child=child, text="", esc="", ks=(), seen=seen, ws=0,
                                      count=count)),
                      (value_written(frame, seen),
                       frame._replace(phase=Phase.AFTER_VALUE, child=-1, ws=0, text="", esc="", ks=(), seen=seen)),
                      (read_as(frame, (seen, child), text), frame._replace(seen=(seen, child), text=text, node=-1, at=0))):
        assert type(got) is Frame and got == want and hash(got) == hash(want)


@given(FRAMES, st.text(max_size=6), st.tuples(st.none() | st.integers(0, 3)),
       st.frozensets(st.text(max_size=3), max_size=3) | st.tuples(st.booleans(), st.booleans()))
def test_a_pattern_keys_frame_and_a_frame_read_below_a_value_are_replace(frame, text, ks, seen):
    """with_text_ks (a key read by its names' and DFAs' product) and with_seen (a mask key's reading of an object
    below a value: its used keys as a tuple, not a set, and no node) give the frame _replace gives."""
    for got, want in ((with_text_ks(frame, text, ks), frame._replace(text=text, ks=ks)),
                      (with_seen(frame, seen), frame._replace(seen=seen, node=-1))):
        assert type(got) is Frame and got == want and hash(got) == hash(want)
