"""The Limits table: documented in the README, every field; Fuel and the error every limit raises."""

from __future__ import annotations

import dataclasses

import pytest
from helpers import ROOT

from structbench.errors import LimitExceeded
from structbench.limits import Fuel, Limits, documented, exceeded, markdown_table, using


def test_every_limit_is_documented_and_the_readme_lists_them_all():
    assert [name for _, name, _, _ in documented()] == [f.name for f in dataclasses.fields(Limits)]
    assert all(doc for _, _, _, doc in documented())
    assert markdown_table() in (ROOT / "README.md").read_text(), "regenerate it: python -m structbench.limits"


def test_fuel_raises_on_the_step_past_its_limit_naming_it():
    with using(Limits(mask_steps=10)):
        fuel = Fuel("mask_steps", "one mask")
        fuel.spend(10)  # exactly the limit: allowed
        with pytest.raises(LimitExceeded, match=r"one mask took more than 10 steps \(limits.mask_steps = 10; "
                                                r"raise it with \+limits.mask_steps=N\)"):
            fuel.spend(1)


def test_exceeded_reads_the_limit_in_force():
    with using(Limits(max_nesting=7)):
        error = exceeded("max_nesting", "too deep")
    assert isinstance(error, LimitExceeded)
    assert str(error) == "too deep (limits.max_nesting = 7; raise it with +limits.max_nesting=N)"
