"""A cold start forgets what compiles kept for later schemas, and nothing else: the next compile builds its own, with
the same masks."""

import gc
import importlib
import json
import pkgutil
import weakref

import numpy as np
import pytest
from helpers import require_llama3

import structbench.regular
from structbench.bench.strategies import compile_constraint
from structbench.bench.tasks import Task
from structbench.masking import machine_boundaries, tabled, vocab_codes
from structbench.masking.cold_start import cold_start
from structbench.regular import charsets, format_dfa
from structbench.regular.charsets import json_classes
from structbench.regular.kept import CONSTANT, KEPT

# A pattern, a format, a multipleOf, a maxLength and a key naming a non-ASCII character (a partition of its own).
SCHEMA = {"type": "object", "properties": {
    "code": {"type": "string", "pattern": "^[A-Z]{2}-[0-9]+$"}, "at": {"type": "string", "format": "date"},
    "n": {"type": "integer", "multipleOf": 7}, "note": {"type": "string", "maxLength": 9},
    "été": {"type": "boolean"}}, "required": ["code", "at", "n", "note", "été"]}
VALUE = {"code": "AB-12", "at": "2024-02-29", "n": 21, "note": "ok", "été": True}


def walked_masks(vocab) -> list[bytes]:
    task = Task("t", "schema", SCHEMA, json.dumps(VALUE, separators=(", ", ": "), ensure_ascii=False))
    constraint = compile_constraint(task, vocab, "lazy", "any", "lesson")
    state, masks = constraint.start(), []
    for tid in vocab.encode(task.reference) + [vocab.eos_id]:
        bits = constraint.mask_bits(state)
        assert np.unpackbits(bits.view(np.uint8), bitorder="little")[tid]
        masks.append(bits.tobytes())
        if tid != vocab.eos_id:
            state = constraint.advance(state, tid)
    return masks


def test_a_cold_start_forgets_every_schemas_kept_work_and_the_masks_stay(vocab):
    require_llama3(vocab)  # (the synthetic stand-in cannot spell the answer's "été")
    before = walked_masks(vocab)
    assert all(cache.cache_info().currsize for cache in KEPT), [c.__name__ for c in KEPT if not c.cache_info().currsize]
    assert tabled._PARTITIONS
    indexes = vocab_codes(vocab).__dict__["_token_indexes"]
    shared = machine_boundaries().tobytes()
    assert shared in indexes and len(indexes) > 1  # the non-ASCII key's partition has an index of its own
    date = format_dfa("date")

    syntax = tabled._SYNTAX[shared]

    cold_start(vocab)
    # (charsets' answers for the default partition are JSON's syntax: made again at once)
    syntax_caches = {charsets._json_classes, charsets._ascii_own}
    assert [cache.cache_info().currsize for cache in KEPT] == [int(cache in syntax_caches) for cache in KEPT]
    assert json_classes(machine_boundaries()) is json_classes(machine_boundaries())  # (read back, not made again)
    # Of the partitions' hints, JSON's own syntax's alone (structbench.masking.json_syntax), exactly
    assert list(tabled._PARTITIONS) == [shared]
    default = tabled._PARTITIONS[shared]
    assert (default.class_masks, default.class_lists, default.alike_masks) == (syntax.class_masks, syntax.class_lists, syntax.alike_masks)
    assert list(indexes) == [shared]  # the vocabulary's setup stays

    assert walked_masks(vocab) == before
    assert format_dfa("date") is not date  # built again, not read back


def test_every_cache_of_the_regular_package_is_forgotten_or_constant():
    """A cache added to structbench.regular must be listed: in KEPT (a cold start forgets it) or CONSTANT."""
    listed = {id(cache) for cache in KEPT + CONSTANT}
    found = []
    for info in pkgutil.iter_modules(structbench.regular.__path__):
        module = importlib.import_module(f"structbench.regular.{info.name}")
        for name, value in vars(module).items():
            if hasattr(value, "cache_info") and getattr(value, "__module__", None) == module.__name__:
                found.append((f"{module.__name__}.{name}", id(value) in listed))
    assert len(found) >= len(listed)
    assert [name for name, ok in found if not ok] == []


@pytest.mark.parametrize("strategy", ["lazy", "tabled"])
def test_a_dropped_constraint_is_freed_at_once(vocab, strategy):
    """A constraint, its table and its checker hold no reference cycle: dropped, they are freed by reference counting
    at once, not left (with every state they met) to the garbage collector's next full pass, which would then run
    inside some later schema's timed masks."""
    require_llama3(vocab)
    task = Task("t", "schema", SCHEMA, json.dumps(VALUE, separators=(", ", ": "), ensure_ascii=False))
    gc.collect()
    gc.disable()
    try:
        constraint = compile_constraint(task, vocab, strategy, "any", "lesson")
        state = constraint.start()
        for tid in vocab.encode(task.reference):
            constraint.mask_bits(state)
            state = constraint.advance(state, tid)
        dense = constraint.dense
        parts = [constraint, dense, dense.machine] + ([dense._strings] if hasattr(dense, "_strings") else [])
        refs = [weakref.ref(part) for part in parts]
        del constraint, dense, parts
        alive = [type(ref()).__name__ for ref in refs if ref() is not None]
    finally:
        gc.enable()
    assert not alive, f"kept alive by a reference cycle: {alive}"


# Besides SCHEMA's: a key pattern and a bounded number (their DFAs are the schema's own), a literal, a union, and a
# union of a checked string and a free one (string_unions.or_free).
CYCLE_FREE_SCHEMA = {"type": "object", "properties": {
    **SCHEMA["properties"], "big": {"type": "integer", "minimum": 3, "maximum": 9000}, "none": {"type": "null"},
    "either": {"anyOf": [{"type": "string", "maxLength": 4}, {"type": "number"}]},
    "checked_or_free": {"anyOf": [  # "a": checked in one branch, free in the other
        {"type": "object", "properties": {"a": {"type": "string", "maxLength": 5, "pattern": "^[a-c]+$"}}},
        {"type": "object", "properties": {"id": {"type": "string"}}}]}},
    "patternProperties": {"^x-[a-z]+$": {"type": "string"}}, "required": SCHEMA["required"]}
CYCLE_FREE_VALUE = {**VALUE, "big": 42, "none": None, "either": "abc", "checked_or_free": {"a": "cab"}, "x-tag": "v"}


@pytest.mark.parametrize("strategy", ["lazy", "tabled"])
def test_a_walked_constraint_leaves_no_garbage_for_the_collector(vocab, strategy):
    """Compiled, walked and dropped, a constraint leaves no reference cycle anywhere (its DFAs, their string-mode
    tables and lexemes included: a table kept on its DFA does not point back at it): the collector then finds
    nothing, where its passes would otherwise free a schema's DFAs inside some later schema's timed masks."""
    require_llama3(vocab)
    reference = json.dumps(CYCLE_FREE_VALUE, separators=(", ", ": "), ensure_ascii=False)
    task = Task("t", "schema", CYCLE_FREE_SCHEMA, reference)
    ids = vocab.encode(reference) + [vocab.eos_id]
    compile_constraint(task, vocab, strategy, "any", "lesson")  # (what a first compile keeps for later ones)
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        constraint = compile_constraint(task, vocab, strategy, "any", "lesson")
        state = constraint.start()
        for tid in ids:
            assert np.unpackbits(constraint.mask_bits(state).view(np.uint8), bitorder="little")[tid]
            if tid != vocab.eos_id:
                state = constraint.advance(state, tid)
        del constraint
        gc.collect()
        garbage = sorted({type(o).__name__ for o in gc.garbage})
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert garbage == [], f"left to the collector: {garbage}"


def test_a_cold_start_keeps_json_syntaxs_hints_and_forgets_a_schemas(vocab):
    """The default partition's hints that JSON's own syntax asks for (structbench.masking.json_syntax: each type's
    first characters, a string's escapes, ...) stay; a schema's own (a nullable integer's first characters) go."""
    require_llama3(vocab)  # (the synthetic stand-in does not spell every syntax document: then less is kept)
    shared = machine_boundaries()
    assert tabled.kept_partition_entries(shared)
    syntax = tabled._SYNTAX[shared.tobytes()]
    assert {(' "', True), (" -0123456789", True), ('"\\/bfnrtu', True)} <= set(syntax.class_masks)
    schema = {"type": "object", "properties": {"size": {"type": ["integer", "null"]}}}
    task = Task("t", "schema", schema, '{"size": null}')
    constraint = compile_constraint(task, vocab, "lazy", "any", "lesson")
    state = constraint.start()
    for tid in vocab.encode(task.reference):
        constraint.mask_bits(state)
        state = constraint.advance(state, tid)
    default = tabled._PARTITIONS[shared.tobytes()]
    assert (" n-0123456789", True) in default.class_masks and (" n-0123456789", True) not in syntax.class_masks

    cold_start(vocab)
    default = tabled._PARTITIONS[shared.tobytes()]
    assert (default.class_masks, default.class_lists, default.alike_masks) == (syntax.class_masks, syntax.class_lists, syntax.alike_masks)


def test_the_kept_syntax_hints_are_what_the_partition_alone_makes_of_them(vocab):
    """Each kept class mask and class list is the function of its characters and the partition that LazyDense makes
    (so keeping them cannot change a mask): made again here on a partition of its own."""
    require_llama3(vocab)
    boundaries = machine_boundaries()
    syntax = tabled._SYNTAX[boundaries.tobytes()]
    masks, lists = syntax.class_masks, syntax.class_lists
    assert syntax.complete and masks and lists
    reps = np.array([chr(int(b)) for b in boundaries])
    for (chars, outside), mask in masks.items():
        assert np.array_equal(mask, np.isin(reps, list(chars)) != outside), (chars, outside)
        assert not mask.flags.writeable
    for chars, classes in lists.items():
        assert classes == sorted({int(np.searchsorted(boundaries, ord(ch), side="right")) - 1 for ch in chars}), chars


def test_the_vocabularys_setup_leaves_the_schemas_nothing_stored():
    """The setup walks JSON's syntax documents with the lazy strategy (json_syntax.learn_syntax), whose masks go into
    the node store's generation as any schema's do: it begins a new one after, so the first schemas of a process
    find nothing stored, as those after a cold start do (else a fresh trial counted fewer masks built as its
    process's first: JME's sample 259 against 272). In a new process, where the setup runs for the first time."""
    require_llama3()
    from helpers import ROOT

    code = ("from structbench.lm.real_vocab import llama3_vocabulary\n"
            "from structbench.masking import index_vocabulary\n"
            "from structbench.jsonschema import node_store\n"
            "generation = node_store.current()\n"
            "index_vocabulary(llama3_vocabulary())\n"
            "after = node_store.current()\n"
            "stored = sum(len(store) for store in after._stores.values())\n"
            "print(after is not generation, len(after), stored)\n")
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["True", "0", "0"]
