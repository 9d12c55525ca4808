"""A wall-clock limit on a block of Python code, by SIGALRM.

Why a signal and not a thread or a worker process: the work to bound includes Python's `re` backtracking on
a pattern (a referee judging `^(a+)+$` against 41 a's and a '!'), which no other thread can interrupt, and it
runs once per answer, too often to pay for a process. CPython's regex engine checks for signals while it
matches, as pure-Python code does between bytecodes, so the handler's exception stops it within the limit
(tests/bench/test_referee_limits.py measures it).

A signal handler runs on the main thread only; on any other thread the block runs without a limit (Hydra's
launchers, basic and joblib, run a trial on a process's main thread). Limits nest: an inner one never
outlives an outer one, and when the outer one's time comes first, the outer one's handler is what runs.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from typing import Callable


def can_limit() -> bool:
    """Whether a time limit can be enforced here (a POSIX interval timer, on the main thread)."""
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


@contextlib.contextmanager
def time_limit(seconds: float, error: Callable[[], BaseException]):
    """Run the block; past `seconds` raise `error()` inside it. `seconds` of 0 or None: no limit."""
    if not seconds or not can_limit():
        yield
        return
    outer_handler = signal.getsignal(signal.SIGALRM)
    outer_left, _ = signal.getitimer(signal.ITIMER_REAL)
    ours_first = outer_left == 0 or seconds < outer_left
    active = [True]  # cleared first thing on the way out: a signal that lands during cleanup is then ignored
    outer_fired = [False]

    def fire(signum, frame):
        if not active[0]:
            return
        if ours_first:
            raise error()
        outer_fired[0] = True
        if callable(outer_handler):
            outer_handler(signum, frame)

    start = time.monotonic()
    signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds if ours_first else outer_left)
    try:
        yield
    finally:
        active[0] = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, outer_handler)
        if outer_left and not outer_fired[0]:
            # The outer limit's remaining time; one already due fires at once.
            signal.setitimer(signal.ITIMER_REAL, max(outer_left - (time.monotonic() - start), 1e-6))
