"""Fixtures: Hydra's compose API over the project's config."""

import pytest
from helpers import CONF_DIR


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
