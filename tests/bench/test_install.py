"""Installs anywhere: the wheel lists every package, and a non-editable install runs the main sweep from an empty
folder, conf and experiments included, with the rows the repository stores."""

import shutil
import subprocess
import sys
import tomllib
import venv
from pathlib import Path

import pandas as pd
import pytest
from helpers import ROOT

from structbench.bench.store import PROVENANCE_COLUMNS, TIMING_COLUMNS, read_results

SHIPPED = ("structbench", "experiments", "conf", "pyproject.toml", "README.md")


def test_pyproject_lists_every_package():
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "structbench").rglob("__init__.py")}
    found |= {"structbench.experiments", "structbench.conf"}
    found |= {f"structbench.conf.{d.name}" for d in (ROOT / "conf").iterdir() if d.is_dir() and any(d.glob("*.yaml"))}
    assert listed == found


def _site_packages(python) -> str:
    return subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                          capture_output=True, text=True, check=True).stdout.strip()


def _setuptools_major() -> int:
    from importlib.metadata import version

    return int(version("setuptools").split(".")[0])


@pytest.mark.slow
def test_a_non_editable_install_runs_the_main_sweep_from_an_empty_folder(tmp_path):
    # A copy of what the wheel is built from, so the build never writes into the repository.
    source = tmp_path / "source"
    source.mkdir()
    for name in SHIPPED:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, source / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(src, source / name)
    # A fresh venv that finds the dependencies, pip and setuptools in this one (a path in a .pth file: this
    # venv's own .pth files, the editable install's among them, are not read), so nothing is downloaded.
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    (Path(_site_packages(python)) / "deps.pth").write_text(_site_packages(sys.executable) + "\n")
    # Built with this venv's setuptools when it is recent enough for pyproject.toml (a venv made by Python 3.11
    # starts with setuptools 65), else in pip's isolated build environment, from the package index.
    local_build = ["--no-build-isolation", "--no-index"] if _setuptools_major() >= 68 else []
    install = subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-deps", *local_build, str(source)],
                             capture_output=True, text=True, timeout=600)
    assert install.returncode == 0, install.stderr

    empty = tmp_path / "anywhere"
    empty.mkdir()
    where = subprocess.run([str(python), "-c", "import structbench; print(structbench.__file__)"], cwd=empty,
                           capture_output=True, text=True, check=True).stdout.strip()
    assert where.startswith(str(env_dir)), where

    out = subprocess.run([str(python), "-m", "structbench", "+sweep=validity", "progress=false"], cwd=empty,
                         capture_output=True, text=True, timeout=1200)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "valid share" in out.stdout
    rows = read_results(empty / "results", "validity")
    assert len(rows) == 4800 and rows["trial_id"].nunique() == 24
    stored = read_results(ROOT / "results", "validity")
    if len(stored):  # the same rows as the repository's results, timing and provenance aside
        keep = [c for c in rows.columns if c not in set(TIMING_COLUMNS) | set(PROVENANCE_COLUMNS)]
        pd.testing.assert_frame_equal(rows[keep], stored[keep])
    # The installed copy runs its own errors through the same one line.
    bad = subprocess.run([str(python), "-m", "structbench", "strategy=fastest"], cwd=empty, capture_output=True,
                         text=True, timeout=120)
    assert bad.returncode == 2 and bad.stderr.startswith("structbench: error: ")
