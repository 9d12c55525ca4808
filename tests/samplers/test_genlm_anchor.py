"""The anchor: genlm-control 0.4.1's AWRS-SMC on our model and constraint agrees with our awrs (optional: skipped
when genlm-control is not installed; the install line is structbench.samplers.genlm_anchor.INSTALL)."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from structbench.bench.strategies import compile_constraint
from structbench.bench.tasks import age_task
from structbench.errors import SettingsError
from structbench.lm.toy_model import ToyModel
from structbench.samplers import awrs
from structbench.samplers.genlm_anchor import INSTALL, GenlmAnchor

pytest.importorskip("genlm.control", reason=f"genlm-control not installed; {INSTALL}")
# Importing genlm-control (numba, scipy, IPython) alone takes 5-25 s here.
pytestmark = pytest.mark.slow


def test_genlm_awrs_smc_agrees_with_ours_on_the_two_token_example(two_token):
    constraint = two_token.constraint("awrs")
    anchor, rng, runs = GenlmAnchor(two_token.model, constraint), np.random.default_rng(0), 300
    theirs = [anchor.sample(rng, 4, 0.5, 3) for _ in range(runs)]
    ours = [awrs(two_token.model, rng, constraint, particles=4, max_tokens=3) for _ in range(runs)]
    share_by = Counter(t for t, _, _ in theirs)["By"] / runs, Counter(a.text for a in ours)["By"] / runs
    # The same algorithm at N = 4 leaves the same bias (By about 0.32, p* 0.91): agreement within sampling noise.
    assert abs(share_by[0] - share_by[1]) < 4 * math.sqrt(0.25 * 2 / runs), share_by
    for z in (np.array([math.exp(z) for _, z, _ in theirs]), np.array([math.exp(a.log_z) for a in ours])):
        assert abs(z.mean() - two_token.z) < 4 * z.std(ddof=1) / math.sqrt(runs)


def test_a_noisy_model_is_refused():
    model = ToyModel("{}", noise=1.0)
    with pytest.raises(SettingsError, match="noise"):
        GenlmAnchor(model, compile_constraint(age_task(), model.vocab, "awrs"))
