import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CONF_DIR = ROOT / "conf"
SWEEPS = sorted(p.stem for p in (CONF_DIR / "sweep").glob("*.yaml"))


def run_cli(*args, timeout=600, env=None):
    """Run `python -m structbench ARGS` from the repository root, as a user would."""
    full_env = {**os.environ, "HYDRA_FULL_ERROR": "0", **(env or {})}
    return subprocess.run([sys.executable, "-m", "structbench", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, env=full_env)


@pytest.fixture
def compose():
    """Compose the project's config with Hydra's compose API (no run, no working-directory change)."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    def _compose(overrides=(), hydra_config=False):
        GlobalHydra.instance().clear()
        with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
            return hydra_compose("config", overrides=list(overrides), return_hydra_config=hydra_config)

    yield _compose
    GlobalHydra.instance().clear()
