"""Input files: only regular files are read, within the size limit, as UTF-8 (structbench.bench.files)."""

import os
import re

import pytest
from helpers import run_cli

from structbench.bench.files import read_text_file
from structbench.errors import InputFileError, StructbenchError
from structbench.limits import Limits, using


def test_a_regular_file_is_read(tmp_path):
    f = tmp_path / "s.json"
    f.write_text('{"type": "integer"}', encoding="utf-8")
    assert read_text_file(f) == '{"type": "integer"}'
    link = tmp_path / "link.json"
    link.symlink_to(f)
    assert read_text_file(link) == '{"type": "integer"}'


@pytest.mark.parametrize("make,message", [
    (lambda d: d / "missing.json", "does not exist"),
    (lambda d: d, "is not a regular file (it is a directory)"),
    (lambda d: (os.mkfifo(d / "fifo"), d / "fifo")[1], "is not a regular file (it is a FIFO, socket or device)"),
    (lambda d: __import__("pathlib").Path("/dev/null"), "is not a regular file"),
    (lambda d: ((d / "bin").write_bytes(b"\xff\xfe{"), d / "bin")[1], "is not UTF-8 text (byte 0)"),
])
def test_what_is_not_a_readable_text_file_is_refused_by_name(tmp_path, make, message):
    path = make(tmp_path)
    with pytest.raises(InputFileError, match=re.escape(message)) as e:
        read_text_file(path, "task file")
    assert str(path) in str(e.value) and isinstance(e.value, StructbenchError)


def test_the_size_limit_holds_before_reading(tmp_path):
    f = tmp_path / "big.json"
    f.write_text("x" * 2000)
    with using(Limits(max_schema_bytes=1000)):
        with pytest.raises(InputFileError, match=r"larger than 1000 bytes \(limits.max_schema_bytes\)"):
            read_text_file(f)
    assert len(read_text_file(f)) == 2000  # within the default limit


def test_a_task_file_that_is_a_fifo_or_a_folder_fails_in_one_line(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    for path, said in ((tmp_path / "fifo", "FIFO"), (tmp_path, "directory")):
        out = run_cli("task=file", f"task.path={path}", "task.reference=1", "n=1", f"results_dir={tmp_path / 'r'}",
                      timeout=120)
        assert out.returncode == 2, out.stderr
        assert out.stderr.startswith("structbench: error: ") and out.stderr.count("\n") == 1, out.stderr
        assert said in out.stderr and "not a regular file" in out.stderr
    assert not (tmp_path / "r").exists()
