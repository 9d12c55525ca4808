"""The step breakdown (structbench.bench.steps): each cold step's mask told as cached, shared or built by the
constraint's own counters, grouped by state, and its table's counts and shares against the rows they came from."""

import json

import numpy as np
import pandas as pd
import pytest

from structbench.bench import steps
from structbench.bench.strategies import compile_constraint
from structbench.bench.tasks import Task
from structbench.bench.walk import timed_walk
from structbench.errors import SettingsError, TokenRejected
from structbench.lm.vocab import toy_vocabulary

ITEM = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}, "required": ["a"]}
ITEMS = {"schema": {"type": "array", "items": ITEM},
         "tests": [{"data": [{"a": 1, "b": "x"}, {"a": 2, "b": "y"}, {"a": 3}], "valid": True}]}
CONTAINS = {"schema": {"type": "array", "contains": {"type": "integer"}, "minContains": 2},  # unsupported
            "tests": [{"data": [1, 2], "valid": True}]}
AGE = {"schema": {"type": "object", "properties": {"age": {"type": "integer"}}, "required": ["age"]},
       "tests": [{"data": {"age": 42}, "valid": True}]}


@pytest.fixture
def corpus(tmp_path):
    folder = tmp_path / "corpus"
    folder.mkdir()
    for name, file in {"Toy---items.json": ITEMS, "Toy---age.json": AGE, "Toy---none.json": {"schema": {}},
                       "Toy---contains.json": CONTAINS}.items():
        (folder / name).write_text(json.dumps(file))
    return folder


def test_each_step_is_told_by_how_its_mask_was_found():
    vocab = toy_vocabulary()
    constraint = compile_constraint(Task("items", "schema", ITEMS["schema"], "{}"), vocab, "lazy", "any", "lesson")
    ids = vocab.encode(json.dumps(ITEMS["tests"][0]["data"], separators=(",", ": "))) + [vocab.eos_id]
    rows = steps.walk_steps(constraint, ids, vocab)
    assert [r["step"] for r in rows] == list(range(len(ids)))
    assert rows[0]["how"] == "built" and rows[0]["kind"] == "root" and rows[0]["phase"] == "value"
    assert rows[-1]["advance_us"] == 0.0  # the end token's mask has no advance
    hows = [r["how"] for r in rows]
    # Each mask was made once: the masks built are the constraint's, the rest read back
    assert hows.count("built") == constraint.work.masks_built and hows.count("shared") == constraint.work.masks_shared
    assert set(hows) == {"cached", "shared", "built"}  # the later items meet the first's states again, or its masks
    again = steps.walk_steps(constraint, ids, vocab)  # warm: every mask is a table read
    assert {r["how"] for r in again} == {"cached"}
    assert [(r["kind"], r["phase"], r["ws"]) for r in again] == [(r["kind"], r["phase"], r["ws"]) for r in rows]


def test_a_built_mask_equal_to_one_built_earlier_in_the_walk_is_told():
    """built_again: a built mask whose bits a mask built earlier in the same walk has (states the mask key tells
    apart that no token does), checked against each built state's mask looked up again on a second constraint."""
    vocab = toy_vocabulary()
    task = Task("two", "schema", {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}},
                "{}")
    ids = _ids(vocab, {"a": "x", "b": "y"})
    rows = steps.walk_steps(compile_constraint(task, vocab, "lazy", "any", "lesson"), ids, vocab)
    other, states = compile_constraint(task, vocab, "lazy", "any", "lesson"), []
    timed_walk(other, ids, vocab, lambda step, state: states.append(state))
    expected, earlier = [], []
    for row, state in zip(rows, states):
        bits = other.mask_bits(state).tobytes()
        expected.append(row["how"] == "built" and bits in earlier)
        if row["how"] == "built":
            earlier.append(bits)
    assert [row["built_again"] for row in rows] == expected and any(expected)  # (the key's end: as its start)
    table, _ = steps.breakdown(pd.DataFrame(rows))
    assert table["built_again"].sum() == sum(expected)
    # What told each one's states apart: told for those built again alone, and the states' own difference
    assert all(bool(row["again_differs"]) == row["built_again"] for row in rows)
    first_of, seen = {}, {}
    for row, state in zip(rows, states):
        if row["how"] == "built":
            bits = other.mask_bits(state).tobytes()
            first = seen.setdefault(bits, state)
            if row["built_again"]:
                first_of[row["step"]] = steps.what_differs(other.dense.states[first], other.dense.states[state])
    assert {row["step"]: row["again_differs"] for row in rows if row["built_again"]} == first_of


def test_what_tells_two_states_apart_is_named_by_the_first_difference_from_the_top():
    from structbench.jsonschema.frames import Frame, Kind, Phase

    root = Frame(Kind.ROOT, 0, Phase.VALUE)
    key = Frame(Kind.OBJECT, 1, Phase.KEY, text="a")
    assert steps.what_differs((root, key), (root, key._replace(text="b"))) == "top text"
    assert steps.what_differs((root, key), (root, key._replace(text="b", seen=frozenset({"c"})))) == "top text+seen"
    assert steps.what_differs((root, key), (root._replace(node=5), key)) == "below"
    assert steps.what_differs((root, key), (root, root, key)) == "depth"
    assert steps.what_differs(3, 4) == "pattern"


def test_the_masks_built_again_are_counted_by_what_told_them_apart():
    """again_table: per (kind, phase, again_differs), the masks built again, their share of the time, and TBM's p99
    with those steps at the shared masks' median step."""
    rows = pd.DataFrame({"mask_us": [10.0, 20.0, 500.0, 400.0, 30.0, 600.0], "advance_us": 0.0,
                         "how": ["shared", "shared", "built", "built", "shared", "built"],
                         "kind": ["object", "object", "string", "string", "object", "object"],
                         "phase": ["key", "key", "", "", "key", "value"],
                         "built_again": [False, False, True, True, False, False],
                         "again_differs": ["", "", "top at", "top at", "", ""]}, index=[7, 3, 9, 1, 0, 2])
    table = steps.again_table(rows)
    assert len(table) == 1
    row = table.iloc[0]
    assert (row["kind"], row["phase"], row["again_differs"], row["masks"]) == ("string", "", "top at", 2)
    assert row["time_share"] == pytest.approx(900 / 1560)
    # the two built again cost the shared masks' median (20 µs) instead
    assert row["p99_if_shared"] == pytest.approx(np.percentile([10, 20, 20, 20, 30, 600], 99))
    assert steps.again_table(rows.assign(built_again=False)).empty
    assert steps.again_table(rows.drop(columns="again_differs")).empty


def test_a_corpus_is_walked_cold_and_its_outcomes_counted(corpus):
    vocab = toy_vocabulary()
    rows, outcomes = steps.corpus_steps(sorted(corpus.glob("*.json")), "lazy", vocab)
    assert outcomes == {"walked": 2, "no_instance": 1, "unsupported": 1}  # counted, not walked
    counts = rows.groupby("schema_file").size().to_dict()
    for name, file in (("Toy---items.json", ITEMS), ("Toy---age.json", AGE)):
        data = [t for t in file["tests"] if t["valid"]][0]["data"]
        assert counts[name] == len(vocab.encode(json.dumps(data, separators=(",", ": "))))  # every step but the first
    assert (rows["step"] >= 1).all()


def _ids(vocab, data) -> list[int]:
    return vocab.encode(json.dumps(data, separators=(",", ": "))) + [vocab.eos_id]


def test_a_walk_is_refused_where_a_mask_refuses_its_token_or_it_may_not_end():
    vocab = toy_vocabulary()
    task = Task("items", "schema", ITEMS["schema"], "{}")
    # a string where an integer goes; an answer that stops before its end
    for ids in (_ids(vocab, [{"a": "x"}]), vocab.encode('[{"a": 1}') + [vocab.eos_id]):
        constraint = compile_constraint(task, vocab, "lazy", "any", "lesson")
        with pytest.raises(TokenRejected):
            steps.walk_steps(constraint, ids, vocab)


def test_an_instance_the_constraint_refuses_is_passed_over_for_the_next_compiled_cold(corpus, monkeypatch):
    vocab = toy_vocabulary()
    good = _ids(vocab, ITEMS["tests"][0]["data"])
    refused = [(0, "", _ids(vocab, [{"a": "x"}])), (1, "", good)]
    monkeypatch.setattr("structbench.experiments.fresh.valid_instances", lambda *args: refused)
    outcome, rows = steps.schema_steps(corpus / "Toy---items.json", "lazy", vocab, 10.0)
    assert outcome == "walked" and len(rows) == len(good)
    assert rows[0]["how"] == "built"  # compiled again: the refused walk's masks are not read back
    monkeypatch.setattr("structbench.experiments.fresh.valid_instances", lambda *args: refused[:1])
    assert steps.schema_steps(corpus / "Toy---items.json", "lazy", vocab, 10.0) == ("no_instance", [])


def test_the_table_adds_up_to_the_steps_it_groups():
    rng = np.random.default_rng(0)
    n = 200
    rows = pd.DataFrame({"schema_file": "x", "step": np.arange(n), "mask_us": rng.exponential(10, n),
                         "advance_us": rng.exponential(3, n), "how": rng.choice(steps.OUTCOMES, n),
                         "kind": rng.choice(["object", "string"], n), "phase": "", "ws": rng.random(n) < 0.2,
                         "built_again": rng.random(n) < 0.3})
    table, median = steps.breakdown(rows)
    total = rows["mask_us"] + rows["advance_us"]
    assert median == pytest.approx(np.median(total))
    assert table["steps"].sum() == n and list(table["steps"]) == sorted(table["steps"], reverse=True)
    assert (table["below_p50"] + table["from_p50"] == table["steps"]).all()
    assert table["below_p50"].sum() == (total < median).sum()
    assert table["share"].sum() == pytest.approx(1.0) and table["time_share"].sum() == pytest.approx(1.0)
    group = (rows["how"] == "built") & (rows["kind"] == "string") & ~rows["ws"]
    row = table[(table["how"] == "built") & (table["kind"] == "string") & ~table["ws"]].iloc[0]
    assert row["p50_us"] == pytest.approx(np.median(total[group]))
    assert row["advance_p50_us"] == pytest.approx(np.median(rows.loc[group, "advance_us"]))
    assert row["time_share"] == pytest.approx(total[group].sum() / total.sum())
    assert row["built_again"] == (group & rows["built_again"]).sum()
    assert row["again_time_share"] == pytest.approx(total[group & rows["built_again"]].sum() / total.sum())


def test_an_engine_is_refused_by_name(corpus):
    with pytest.raises(SettingsError, match="'llguidance'"):
        steps.corpus_steps(sorted(corpus.glob("*.json")), "llguidance", toy_vocabulary())


def test_the_command_prints_the_table_and_keeps_the_rows(corpus, tmp_path, capsys):
    out = tmp_path / "steps.parquet"
    code = steps.main(["--corpus", str(corpus), "--every", "1", "--vocab", "toy", "--out", str(out)])
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert printed.startswith("2 schemas walked (lazy on toy, a cold start before each); 1 no_instance, 1 unsupported")
    assert "TBM p50" in printed and "object key" in printed and "built again: " in printed
    assert "masks built again, by what told their states apart" in printed
    assert len(pd.read_parquet(out)) == int(printed.splitlines()[1].split()[0])
    assert steps.main(["--corpus", str(corpus), "--strategy", "xgrammar", "--vocab", "toy"]) == 2
    assert "not 'xgrammar'" in capsys.readouterr().err


def test_kept_work_between_schemas_skips_the_cold_starts(corpus, monkeypatch):
    vocab = toy_vocabulary()
    starts = []
    monkeypatch.setattr("structbench.masking.cold_start.cold_start", lambda v: starts.append(v))
    files = sorted(corpus.glob("*.json"))
    steps.corpus_steps(files, "lazy", vocab, kept=True)
    assert starts == []
    steps.corpus_steps(files, "lazy", vocab)
    assert len(starts) == 4  # one per compile: every file is read and compiled (the empty schema too)


def test_the_collectors_time_inside_a_step_is_told_and_its_share_reported():
    """gc_us: a collection forced inside one step's mask is that step's alone; without a Collections, none."""
    import gc

    from structbench.bench.walk import Collections

    vocab = toy_vocabulary()
    task = Task("items", "schema", ITEMS["schema"], "{}")
    ids = _ids(vocab, ITEMS["tests"][0]["data"])
    constraint = compile_constraint(task, vocab, "lazy", "any", "lesson")
    own_mask, asked = constraint.mask_bits, []

    def mask_bits(state):  # the third mask holds a full collection
        asked.append(state)
        if len(asked) == 3:
            gc.collect()
        return own_mask(state)

    constraint.mask_bits = mask_bits
    enabled = gc.isenabled()
    gc.disable()  # no pass of its own lands elsewhere
    try:
        with Collections() as collections:
            rows = steps.walk_steps(constraint, ids, vocab, collections)
        assert collections._callback not in gc.callbacks  # removed when done
        plain = steps.walk_steps(compile_constraint(task, vocab, "lazy", "any", "lesson"), ids, vocab)
    finally:
        if enabled:
            gc.enable()
    held = [row["step"] for row in rows if row["gc_us"] > 0]
    assert held == [2]
    assert rows[2]["gc_us"] <= rows[2]["mask_us"]  # inside the mask's own time
    assert all(row["gc_us"] == 0 for row in plain)
    frame = pd.DataFrame(rows)
    line = steps.collector_line(frame)
    assert "1 of " in line and f"{len(rows)} steps hold a pass" in line
    assert steps.collector_line(frame.drop(columns="gc_us")) is None  # rows kept before the column


def test_the_p99_without_the_collector_is_the_steps_less_their_passes():
    rows = pd.DataFrame({"mask_us": [10.0] * 99 + [500.0], "advance_us": 0.0, "gc_us": [0.0] * 99 + [450.0]})
    line = steps.collector_line(rows)
    without = np.percentile(rows["mask_us"] - rows["gc_us"], 99)
    assert f"{without:.1f} µs with the passes' time taken out" in line
    assert f"TBM p99 {np.percentile(rows['mask_us'], 99):.1f} µs" in line
    assert "1 of the 1 steps from p99 up hold one" in line
