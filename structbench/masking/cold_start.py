"""A cold start: forget what compiles kept for later schemas, so the next compile and its first walk pay what they
would in a new process after the vocabulary's setup.

Within one process, work that depends on more than the vocabulary is kept and shared by later schemas: automata
per pattern, format and bound (structbench.regular.kept), the hints' class masks per class partition
(tabled.forget_partitions), the prefix-tree index of a partition with non-ASCII classes, and the nodes numbered by
their structure with the lazy masks kept by their keys (structbench.jsonschema.node_store: a new generation). A corpus run is served by
them as a server would be; one task compiled again would be served by its own earlier compile, which is not a
fresh schema. The speed sweep's cold starts (`cold_starts`) call :func:`cold_start` before each compile.

What holds nothing of any schema is not forgotten, as a server builds it once: JSON's own syntax for a free string,
an unbounded integer or number (its DFA, structbench.jsonschema.lexemes.unbounded_number_dfa) and the literals, with
their string-mode tables per class partition; and the hints JSON's syntax asks of the default class partition (each
type's first characters, a string's escapes: structbench.masking.json_syntax, learnt at the vocabulary's setup),
of which a partition keeps only those across a cold start, and which of its classes are plain, the quote and the
backslash (charsets.json_classes, ascii_own: made again at once after their caches are cleared).
"""

from __future__ import annotations

import gc

from structbench.jsonschema import node_store
from structbench.lm.vocab import Vocabulary
from structbench.masking.tabled import (
    forget_partitions,
    machine_boundaries,
    vocab_codes,
)
from structbench.masking.token_index import forget_indexes
from structbench.regular.charsets import ascii_own, json_classes
from structbench.regular.kept import forget_kept


def cold_start(vocab: Vocabulary) -> None:
    """Forget every schema's kept work (what index_vocabulary sets up for the vocabulary stays: the shared index,
    over the checker's ASCII classes), then collect the garbage that leaves, so that the collector does not run
    inside the compile timed next."""
    forget_kept()
    node_store.forget()  # nodes numbered by structure, and the masks kept across schemas by their keys
    forget_partitions()  # (it makes the syntax's partition again, asking ascii_own of it)
    shared = machine_boundaries()  # what the default partition alone tells of JSON's syntax: made again, untimed
    json_classes(shared)
    ascii_own(shared)
    forget_indexes(vocab_codes(vocab), keep=shared)
    gc.collect()
