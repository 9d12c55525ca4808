"""What JSON's own syntax asks of the checker's class partition, made once per process and kept across cold starts.

A lazy or tabled mask computes a state's row from the checker's hints (structbench.masking.tabled.LazyDense): the
characters a state may read as a mask over the classes (`_classes_of`) and as class indexes (`_class_indexes`), and
the plain characters that step alike. Those are kept per class partition (tabled._partition) and are functions of
the characters alone, so the strings JSON's syntax makes (a value's first characters per type, `,}`, `:`, a string's
escapes, a number's digits and exponent) are the same for every schema over the partition that names no non-ASCII
character (machine_boundaries()), which most schemas have. A server makes them once, as it builds the free string's
tables once (structbench.masking.cold_start keeps those); a cold start before each compile made them again for every
fresh schema, each a NumPy call on cold caches.

:func:`learn_syntax` walks documents that use every part of the syntax, each type in an object's value, an array's
item and the root, under schemas that name nothing but types, for each whitespace policy and number syntax, at the
vocabulary's setup (tabled.index_vocabulary, untimed). What the default partition holds after those walks is kept
across cold starts (tabled.keep_partition_entries, tabled.forget_partitions); what a schema adds (the letters a key's
names may go on by, an enum's first characters, a union's value starts) is forgotten.
"""

from __future__ import annotations

import json

from structbench.jsonschema.frames import WHITESPACE_POLICIES
from structbench.lm.vocab import Vocabulary

_TYPES = ("string", "number", "integer", "boolean", "null", "object", "array")
_SAMPLE = {"string": "x", "number": -2.5, "integer": 7, "boolean": True, "null": None, "object": {"k": 1}, "array": [1]}
# Any JSON value (schema {}): objects and arrays empty and not, nested; strings empty and not, with each kind of
# escape; numbers negative and fractional; the three literals. An exponent is added where the number syntax has one.
_ANY = {"a": [1, -2.5, 0, True, False, None, 'x\n"\\\u00e9y', {}, []], "b": {"c": {"d": ""}}}
_EXPONENT = 1e-07  # (json.dumps writes it as 1e-07)
# Each type alone: an object's property, an array's items, the root (the documents below)
_TYPED = {"type": "object", "properties": {
    **{t[0] + t[-1]: {"type": t} for t in _TYPES},
    **{"a" + t[0] + t[-1]: {"type": "array", "items": {"type": t}} for t in _TYPES}}}
_SEPARATORS = {"lesson": (", ", ": "), "compact": (",", ":")}  # "flexible": indented, whitespace everywhere it may go


def _documents(numbers: str) -> list[tuple[dict, object]]:
    """(schema, a value it accepts) pairs that use the whole syntax: any value, each type in each place."""
    any_value = dict(_ANY, e=[_EXPONENT]) if numbers == "json" else _ANY
    typed = {**{t[0] + t[-1]: _SAMPLE[t] for t in _TYPES}, **{"a" + t[0] + t[-1]: [_SAMPLE[t]] for t in _TYPES}}
    roots = [({"type": t}, _SAMPLE[t]) for t in _TYPES]
    return [({}, any_value), (_TYPED, typed), *roots]


def _spelled(value, whitespace: str) -> str:
    if whitespace in _SEPARATORS:
        return json.dumps(value, separators=_SEPARATORS[whitespace])
    return json.dumps(value, indent=1)


def learn_syntax(vocab: Vocabulary) -> None:
    """Walk the syntax documents with the lazy strategy over `vocab` (every mask built, each token advanced), once per
    process: the default partition's entries then are JSON's syntax, kept across cold starts. A document the
    vocabulary does not spell token by token (a toy or synthetic vocabulary's gaps) is left to a later vocabulary,
    which walks them all again (each vocabulary walks them once); a mask that refuses a document's token is a bug here: an error."""
    from structbench.errors import TokenRejected
    from structbench.jsonschema.checker import NUMBER_SYNTAXES, SchemaChecker
    from structbench.masking.lazy import lazy_constraint
    from structbench.masking.tabled import (
        forget_partitions,
        keep_partition_entries,
        kept_partition_entries,
        machine_boundaries,
    )

    boundaries = machine_boundaries()
    if kept_partition_entries(boundaries) or vocab.__dict__.get("_syntax_walked"):
        return
    vocab.__dict__["_syntax_walked"] = True  # (a vocabulary that spells only some walks them once, not per setup)
    forget_partitions()  # (what schemas walked before added is not syntax: not kept)
    spelled_all = True
    for whitespace in WHITESPACE_POLICIES:
        for numbers in NUMBER_SYNTAXES:
            for schema, value in _documents(numbers):
                document = _spelled(value, whitespace)
                token_ids = _tokens(vocab, document)
                if token_ids is None:
                    spelled_all = False
                    continue
                constraint = lazy_constraint(SchemaChecker(schema, whitespace=whitespace, numbers=numbers), vocab)
                state = constraint.start()
                for tid in token_ids:
                    constraint.mask_bits(state)
                    try:
                        state = constraint.advance(state, tid)
                    except TokenRejected as e:
                        raise ValueError(f"the syntax document {document!r} is refused under whitespace={whitespace}, "
                                         f"numbers={numbers}: {e}") from None
                constraint.mask_bits(state)
    keep_partition_entries(boundaries, complete=spelled_all)
    # The documents' masks went into the node store's generation, as any schema's do: begun anew, so that the first
    # schemas after the setup find nothing of it, as those after a cold start do (a trial's rows would else count
    # differently as its process's first: the fresh sample's JME trial built 259 masks first, 272 after another)
    from structbench.jsonschema import node_store

    node_store.forget()


def _tokens(vocab: Vocabulary, document: str) -> list[int] | None:
    """The document's tokens, None where the vocabulary does not spell it token by token."""
    try:
        token_ids = vocab.encode(document)
    except (KeyError, ValueError):
        return None
    return token_ids if "".join(vocab.text_of(t) for t in token_ids) == document else None
