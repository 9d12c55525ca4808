"""Random walks over corpus schemas (structbench.bench.random_walks): every compiled schema walked on tokens drawn
from its masks, its slowest mask and the peak memory it raised reported, unsupported and unreadable files counted
apart."""

import json

import pandas as pd
import pytest

from structbench.bench import random_walks
from structbench.lm.vocab import toy_vocabulary

FILES = {
    "Toy---free_keys.json": {"schema": {"type": "object", "minProperties": 2}},
    "Toy---age.json": {"schema": {"type": "object", "properties": {"age": {"type": "integer"}}, "required": ["age"]}},
    "Toy---contains.json": {"schema": {"type": "array", "contains": {"type": "integer"}, "minContains": 2}},
}


@pytest.fixture
def corpus(tmp_path):
    folder = tmp_path / "corpus"
    folder.mkdir()
    for name, file in FILES.items():
        (folder / name).write_text(json.dumps(file))
    (folder / "Toy---broken.json").write_text("{not json")
    return folder


def test_every_compiled_schema_is_walked_and_the_rest_counted(corpus, tmp_path, capsys):
    out = tmp_path / "rows.parquet"
    assert random_walks.main(["--corpus", str(corpus), "--every", "1", "--vocab", "toy", "--walks", "2",
                              "--steps", "30", "--out", str(out)]) == 0
    rows = pd.read_parquet(out).set_index("file")
    assert rows.outcome.to_dict() == {"Toy---age.json": "ok", "Toy---broken.json": "not read",
                                      "Toy---contains.json": "unsupported", "Toy---free_keys.json": "ok"}
    assert (rows.loc[["Toy---age.json", "Toy---free_keys.json"], "worst_mask_ms"] > 0).all()
    printed = capsys.readouterr().out
    assert "outcomes: ok 2" in printed and "Toy---free_keys.json" in printed


def test_a_walk_draws_only_allowed_tokens_and_stops_where_none_is_left():
    from structbench.bench.strategies import compile_constraint
    from structbench.bench.tasks import Task

    import numpy as np

    vocab = toy_vocabulary()
    constraint = compile_constraint(Task("lit", "schema", {"const": True}, "true"), vocab, "lazy")
    lengths = np.array([len(t) if t else 99 for t in vocab.tokens])
    worst, before = random_walks.walk_schema(constraint, vocab, np.random.default_rng(0), 3, 50, 0.5, lengths)
    assert worst > 0 and "true".startswith(before)  # (advance refuses a token its mask did not allow)


def test_bad_options_are_refused(corpus, tmp_path, monkeypatch, capsys):
    with pytest.raises(SystemExit):
        random_walks.main(["--corpus", str(corpus), "--short", "2"])
    with pytest.raises(SystemExit):
        random_walks.main(["--corpus", str(corpus), "--strategy", "naive"])
    with pytest.raises(SystemExit):
        random_walks.main(["--corpus", str(tmp_path / "none")])
    assert f"--corpus {tmp_path / 'none'} is not a directory" in capsys.readouterr().err
    monkeypatch.setenv("STRUCTBENCH_DATA", str(tmp_path / "nowhere"))  # no shared data: where to put it is said
    with pytest.raises(SystemExit):
        random_walks.main(["--vocab", "toy"])
    assert "maskbench/ is not at" in capsys.readouterr().err
