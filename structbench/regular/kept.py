"""What this package keeps per process for later schemas, and how to forget it.

Automata are immutable, and real schemas repeat their patterns, formats and bounds, so each construction below is
kept per process (an LRU cache): a pattern met again costs nothing. A *cold start* (the speed sweep's: a compile
that pays what it would in a new process) forgets them all first (:func:`forget_kept`).
"""

from __future__ import annotations

from structbench.regular import automata, charsets, dfa, formats, numbers, search

# Every cache of this package that a schema fills; a test checks that no other cache is added unseen.
KEPT = (dfa._compile_pattern, search._search_dfa, formats.format_dfa, numbers.multiple_of_dfa, automata._counted,
        charsets._json_classes, charsets._ascii_own)
# Caches that hold the same value in every process, whatever the schemas (Unicode's classes): not forgotten.
CONSTANT = (charsets.unicode_class,)


def forget_kept() -> None:
    """Drop every automaton kept for later schemas (KEPT): the next schema builds its own, as in a new process."""
    for cache in KEPT:
        cache.cache_clear()
