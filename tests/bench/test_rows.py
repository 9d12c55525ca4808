"""Rows and trial ids: the declared columns are the store's schema and the README's table, the parts already
stored read back with them, and every stored trial keeps its id."""

import json

import pyarrow.parquet as pq
import pytest
from helpers import ROOT, settings_of

from structbench.bench.rows import COLUMNS, Kind, markdown_table
from structbench.bench.settings import Settings
from structbench.bench.store import PROVENANCE_COLUMNS, ROW_SCHEMA, SCHEMA_VERSION, TIMING_COLUMNS

STORED_PARTS = sorted((ROOT / "results").glob("*/part-*.parquet"))
README_HEADING = "## What a row holds"


def test_the_store_schema_is_the_declared_columns():
    assert ROW_SCHEMA.names == [c.name for c in COLUMNS]
    assert [ROW_SCHEMA.field(c.name).type for c in COLUMNS] == [c.type for c in COLUMNS]
    assert TIMING_COLUMNS == ("mask_us", "compile_ms", "wall_ms", "warm_mask_us", "advance_us", "warm_advance_us",
                              "exact_seconds", "paired_fresh_ms", "paired_compile_ms", "paired_mask_us",
                              "paired_advance_us")
    assert PROVENANCE_COLUMNS == ("git_sha", "structbench_version", "created_at", "hostname", "engine_versions",
                                  "runtime")
    assert all(c.description and isinstance(c.kind, Kind) for c in COLUMNS)


@pytest.mark.skipif(not STORED_PARTS, reason="no stored results in this checkout")
def test_stored_parts_have_the_declared_schema():
    for path in STORED_PARTS:
        schema = pq.read_schema(path)
        assert schema.remove_metadata().equals(ROW_SCHEMA.remove_metadata()), path
        assert schema.metadata[b"structbench_schema_version"] == str(SCHEMA_VERSION).encode()


@pytest.mark.skipif(not STORED_PARTS, reason="no stored results in this checkout")
def test_every_stored_trial_keeps_its_id():
    """A part's config_json is its trial's identity: read back as settings, it validates and hashes to the id
    that names the part."""
    for path in STORED_PARTS:
        first = pq.read_table(path, columns=["trial_id", "config_json"]).slice(0, 1).to_pylist()[0]
        assert Settings.from_dict(json.loads(first["config_json"])).trial_id == first["trial_id"], path


@pytest.mark.parametrize("overrides,expected", [
    (["+sweep=validity", "task=age", "strategy=tabled", "model.noise=1.0"], "f8b17d954687a797"),
    (["+sweep=validity", "task=person", "strategy=retry", "model.noise=2.0"], "a3645f4139f285a9"),
    (["+sweep=lesson", "part=work"], "145a1d602ceb58b0"),
    (["+sweep=speed", "task=nested5", "strategy=llguidance"], "f9d9c9ecb78d13e1"),  # cold_starts: 5, paired: llguidance (schema 7)
    (["+sweep=realmodel", "model=smollm2", "task=person", "strategy=tabled", "temperature=0"], "49388a5e3361ee77"),
])
def test_sweep_points_keep_their_trial_ids(compose, overrides, expected):
    assert Settings.from_dict(settings_of(compose(overrides))).trial_id == expected


def test_readme_column_table_is_the_generated_one():
    readme = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    if README_HEADING not in readme:
        pytest.skip(f"README.md has no {README_HEADING!r} section yet")
    after = readme[readme.index(README_HEADING) + 1:]
    start = next(i for i, line in enumerate(after) if line.startswith("|"))
    table = []
    for line in after[start:]:
        if not line.startswith("|"):
            break
        table.append(line)
    assert "\n".join(table) == markdown_table(), "regenerate it: python -m structbench.bench.rows"
