"""Nodes numbered by structure once per process, and lazy masks kept across schemas by their mask keys
(structbench.jsonschema.node_store): equal subschemas of any two schemas have one number, and a mask read back
from the store is the mask the state's own walk makes."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from helpers import CORPUS, corpus_schemas, require_llama3

from structbench.bench.tasks import nested_reference, nested_schema
from structbench.jsonschema import node_store
from structbench.jsonschema.checker import SchemaChecker
from structbench.limits import Limits, using
from structbench.limits import current as limits
from structbench.masking.cold_start import cold_start
from structbench.masking.lazy import lazy_constraint


def _child(checker, name):
    return dict(checker.nodes[checker.root].properties)[name]


def test_equal_subschemas_of_two_schemas_have_one_number():
    a = SchemaChecker({"type": "object", "properties": {"s": {"type": "string", "description": "a name"},
                                                        "n": {"type": "integer"}}})
    b = SchemaChecker({"type": "array", "items": {"type": "string", "title": "annotations are not read"}})
    c = SchemaChecker({"type": "object", "properties": {"s": {"type": "string", "maxLength": 3}}})
    assert a._generation() is b._generation()
    assert _child(a, "s") == b.nodes[b.root].items != _child(c, "s")
    assert a.root != b.root and a.root != c.root
    # The any-value node is cyclic (its items and additional values are itself): one number all the same
    free_object, free_array = SchemaChecker({"type": "object"}), SchemaChecker({"type": "array"})
    assert free_object.nodes[free_object.root].additional == free_array.nodes[free_array.root].items
    # A checker holds its own nodes, each once, by their numbers
    assert sorted(c.nodes) == sorted({c.root, _child(c, "s"), c.nodes[c.root].additional})


def test_recursive_schemas_of_one_shape_share_their_numbers():
    def tree(name, leaf="integer"):
        return {"$defs": {name: {"type": "object", "properties": {"v": {"type": leaf}, "c": {
            "type": "array", "items": {"$ref": f"#/$defs/{name}"}}}}}, "$ref": f"#/$defs/{name}"}

    one, two, other = SchemaChecker(tree("n")), SchemaChecker(tree("node")), SchemaChecker(tree("n", "string"))
    assert one.root == two.root != other.root
    text = '{"v": 1, "c": [{"c": [{"v": 2}]}]}'
    assert one.can_end(one.feed(one.start(), text)) and not other.can_end(other.feed(other.start(), text) or
                                                                           other.start())


def test_a_generation_starts_over_past_its_cap_and_older_checkers_keep_theirs():
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"], "additionalProperties": False}
    old = SchemaChecker(schema)
    with using(Limits(max_stored_nodes=1)):
        new = SchemaChecker({"type": "object", "properties": {"b": {"type": "boolean"}}})
    assert new._generation() is not old._generation()
    assert old.can_end(old.feed(old.start(), '{"a": 3}')) and old.feed(old.start(), '{"b"') is None
    assert new.can_end(new.feed(new.start(), '{"b": true}'))


def test_a_cold_start_begins_a_new_generation(vocab):  # noqa: F811
    before = SchemaChecker({"type": "string"})
    cold_start(vocab)
    after = SchemaChecker({"type": "string"})
    assert after._generation() is node_store.current() and before._generation() is not node_store.current()


def test_the_store_keeps_the_most_recently_used_masks():
    with using(Limits(max_stored_masks=2)):
        store = node_store.MaskStore(vocab=None)
    store.put("a", 1)
    store.put("b", 2)
    assert store.get("a") == 1  # now the most recent
    store.put("c", 3)
    assert store.get("b") is None and store.get("a") == 1 and store.get("c") == 3 and len(store) == 2
    assert store.hits == 3


def _walk_both(schema, text, vocab, key_order="any"):
    """Walk `text` with a lazy constraint that reads the store and one that does not: (masks read back, steps);
    every mask equal on both. The checker's constraints, in schema order too (where a regular schema is one DFA by
    default, whose masks no store keeps: regular_schema)."""
    with using(replace(limits(), max_schema_dfa_states=0)):
        stored = lazy_constraint(SchemaChecker(schema, key_order, "lesson"), vocab)
        alone = lazy_constraint(SchemaChecker(schema, key_order, "lesson"), vocab)
    alone._store = None
    hits = stored._store.hits
    a, b = stored.start(), alone.start()
    ids = vocab.encode(text)
    for step, tid in enumerate(ids + [vocab.eos_id]):
        assert np.array_equal(stored.mask_bits(a), alone.mask_bits(b)), (text, step)
        if tid != vocab.eos_id:
            a, b = stored.advance(a, tid), alone.advance(b, tid)
    return stored._store.hits - hits, len(ids)


def test_masks_read_back_from_the_store_are_the_walked_ones(vocab):  # noqa: F811
    """Schemas that share subschemas, walked one after another in one generation: the later ones read masks the
    earlier ones built, each equal to the mask its own walk makes."""
    require_llama3(vocab)
    cold_start(vocab)
    person = {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"},
                                                 "tags": {"type": "array", "items": {"type": "string"}}},
              "required": ["name"]}
    _walk_both(person, '{"name": "Ada", "age": 36, "tags": ["x"]}', vocab)
    again, _ = _walk_both({**person, "properties": {**person["properties"], "note": {"type": "string"}}},
                          '{"age": 7, "name": "Bo", "tags": [], "note": "n"}', vocab)
    assert again > 0
    _walk_both({}, '{"a": [1, {"b": null}], "c": "d"}', vocab)
    again, _ = _walk_both({"type": "object", "properties": {"x": {}}}, '{"x": {"a": [2, "e"]}, "y": [true]}', vocab)
    assert again > 0
    # In schema order, levels of nested objects (each level a node of its own)
    _walk_both(nested_schema(2), nested_reference(2), vocab, "schema")
    again, _ = _walk_both(nested_schema(3), nested_reference(3), vocab, "schema")
    assert again > 0


def test_corpus_masks_read_back_from_the_store_are_the_walked_ones(vocab):  # noqa: F811
    """The same over corpus schemas walked one after another, along their first valid instance."""
    if not CORPUS.is_dir() or vocab.name != "llama3":
        pytest.skip("needs the MaskBench corpus ($STRUCTBENCH_DATA or ../shared/data) and Llama 3's vocabulary")
    cold_start(vocab)
    read_back = walked = 0
    for _, schema, _, valid in corpus_schemas(61, 60):
        texts = [text for _, text in valid if "".join(vocab.text_of(i) for i in vocab.encode(text)) == text]
        if not texts:
            continue
        hits, _ = _walk_both(schema, texts[0], vocab)
        read_back += hits
        walked += 1
    assert walked >= 20 and read_back > 0, (walked, read_back)


def test_a_checker_kept_for_the_process_does_not_keep_its_generation(vocab):  # noqa: F811
    """A checker outliving a cold start (container_reach's twins live as long as the process) holds its generation
    weakly: the stored masks go with the generation, and its later constraints read a store of their own."""
    import gc
    import weakref

    kept = SchemaChecker({"type": "object"})
    generation = weakref.ref(node_store.current())
    constraint = lazy_constraint(SchemaChecker({"type": "object"}), vocab)
    constraint.mask_bits(constraint.start())
    assert len(constraint._store) > 0
    del constraint
    cold_start(vocab)
    gc.collect()
    assert generation() is None and kept._generation() is None
    late, other = lazy_constraint(kept, vocab), lazy_constraint(SchemaChecker({"type": "object"}), vocab)
    assert np.array_equal(late.mask_bits(late.start()), other.mask_bits(other.start()))
