"""Hydra configs, shipped with the package as structbench.conf (found through pkg://structbench.conf)."""
