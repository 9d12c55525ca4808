"""A cold start: forget what compiles kept for later schemas, so the next compile and its first walk pay what they
would in a new process after the vocabulary's setup.

Within one process, work that depends on more than the vocabulary is kept and shared by later schemas: automata
per pattern, format and bound (structbench.regular.kept), the hints' class masks per class partition
(tabled._PARTITIONS), and the prefix-tree index of a partition with non-ASCII classes. A corpus run is served by
them as a server would be; one task compiled again would be served by its own earlier compile, which is not a
fresh schema. The speed sweep's cold starts (`cold_starts`) call :func:`cold_start` before each compile.
"""

from __future__ import annotations

import gc

from structbench.lm.vocab import Vocabulary
from structbench.masking import tabled
from structbench.masking.tabled import machine_boundaries, vocab_codes
from structbench.regular.kept import forget_kept


def cold_start(vocab: Vocabulary) -> None:
    """Forget every schema's kept work (what index_vocabulary sets up for the vocabulary stays), then collect the
    garbage that leaves, so that the collector does not run inside the compile timed next."""
    forget_kept()
    tabled._PARTITIONS.clear()
    indexes = vocab_codes(vocab).__dict__.get("_token_indexes")
    if indexes:  # the shared index (the checker's ASCII classes) is the vocabulary's setup: kept
        shared = machine_boundaries().tobytes()
        for key in [k for k in indexes if k != shared]:
            del indexes[key]
    gc.collect()
