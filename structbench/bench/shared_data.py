"""Where the shared real inputs live: the MaskBench corpus and the official JSON-Schema-Test-Suite.

``$STRUCTBENCH_DATA`` when it is set (a clone elsewhere, a cluster's shared storage), else ``../shared/data``
beside the checkout, where the project keeps them. Tests that need them skip, saying so, when they are absent;
the corpus sweeps read ``corpus_dir``, whose default (null) is :func:`maskbench_dir` (``conf/sweep/fresh.yaml``):
null in the trial's id, so where the data lives does not change a trial's id or its part file.
"""

from __future__ import annotations

import os
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[2]
ENV_VAR = "STRUCTBENCH_DATA"


def data_dir() -> Path:
    """The folder holding ``maskbench/`` and ``json-schema-test-suite/``."""
    given = os.environ.get(ENV_VAR)
    return Path(given).expanduser() if given else CHECKOUT.parent / "shared" / "data"


def maskbench_dir() -> Path:
    return data_dir() / "maskbench"


def official_suite_dir() -> Path:
    """The suite's draft 2020-12 tests."""
    return data_dir() / "json-schema-test-suite" / "tests" / "draft2020-12"
