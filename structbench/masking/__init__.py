"""Masking: which tokens may come next, under one protocol, by several strategies.

    protocol.py   the Constraint protocol (the extension point for your own strategy or engine),
                  the Machine a constraint walks, WorkCounter, PatternMachine
    naive.py      every token walked through the machine at every step; the prefix-tree walk A(s)
    tabled.py     masks tabled once per state by a vectorised walk of the vocabulary (LazyDense), with
                  XGrammar's context split for stacks without end; the lesson's mask table
    lazy.py       fresh schemas: nothing tabled ahead, each mask a compiled walk of the prefix tree
    string_mode.py  the tables that walk reads checked strings and keys by (a DFA per string)
    token_index.py, trie_walk.py
                  the vocabulary's prefix tree and what is known below each node; the compiled walk
    bitmask.py    masks as the engines' int32 words
    engines/      xgrammar, llguidance and outlines-core behind the same protocol (optional extra)

What the rest of structbench uses is imported here.
"""

from structbench.masking.bitmask import pack_bits, unpack_bits
from structbench.masking.engines import ENGINES, engine_constraint, prepare
from structbench.masking.lazy import TrieDense, lazy_constraint
from structbench.masking.naive import NaiveConstraint, allowed_tokens, trie_mask
from structbench.masking.protocol import (
    Constraint,
    Machine,
    PatternMachine,
    WorkCounter,
)
from structbench.masking.tabled import (
    LazyDense,
    TabledConstraint,
    index_vocabulary,
    machine_boundaries,
    mask_table,
    pattern_constraint,
    schema_constraint,
    vocab_codes,
)

__all__ = [
    "ENGINES", "Constraint", "LazyDense", "Machine", "NaiveConstraint", "PatternMachine", "TabledConstraint", "TrieDense",
    "WorkCounter", "allowed_tokens", "index_vocabulary", "lazy_constraint", "engine_constraint", "machine_boundaries", "mask_table", "pack_bits",
    "pattern_constraint", "prepare", "schema_constraint", "trie_mask", "unpack_bits", "vocab_codes",
]
