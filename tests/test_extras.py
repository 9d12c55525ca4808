"""One install line per optional extra, and the README and docs give the same ones."""

from helpers import ROOT

from structbench.extras import EXTRAS


def test_every_extra_is_in_pyproject_and_its_line_is_in_the_docs():
    pyproject = (ROOT / "pyproject.toml").read_text()
    docs = (ROOT / "README.md").read_text() + (ROOT / "docs" / "running.md").read_text()
    for extra, line in EXTRAS.items():
        assert f"\n{extra} = [" in pyproject, extra
        assert line in docs, f"the {extra} extra's install line is not in README.md or docs/running.md: {line}"
