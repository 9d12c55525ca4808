"""`python -m structbench`: the Hydra entry point. Composes one trial's settings and runs it.

`python -m structbench +sweep=validity` runs a whole sweep (each sweep file sets
hydra.mode=MULTIRUN). This is the only module that imports Hydra.
"""

from __future__ import annotations

import sys
from pathlib import Path

import hydra
from omegaconf import DictConfig, OmegaConf

from structbench.errors import StructbenchError


@hydra.main(version_base="1.3", config_path="pkg://structbench.conf", config_name="config")
def main(cfg: DictConfig) -> None:
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    from structbench.bench.runner import run_trial
    from structbench.bench.sweep_summary import MANIFEST_NAME

    settings = OmegaConf.to_container(cfg, resolve=True)
    hc = HydraConfig.get()
    manifest = Path(hc.sweep.dir) / MANIFEST_NAME if hc.mode == RunMode.MULTIRUN else None
    try:
        result = run_trial(settings, manifest=manifest)
    except (StructbenchError, ValueError) as e:  # ValueError: a bad value met outside our own checks
        print(f"structbench: error: {e}", file=sys.stderr)
        sys.exit(2)
    what = "skipped (already stored)" if result.skipped else f"{result.n_rows} rows in {result.seconds:.2f} s"
    print(f"[{result.trial_id}] {what} -> {result.path}")
    if hc.mode != RunMode.MULTIRUN and not result.skipped:
        from structbench.bench.store import read_results
        from structbench.report.summary import format_summary

        print(format_summary(read_results(files=[result.path]), str(result.path)))


if __name__ == "__main__":
    main()
