"""Reading an input file (a task's schema or pattern, a coverage corpus file) without surprises.

Only a regular file is read: a directory, FIFO, socket or device is refused before it is opened (opening a
FIFO would wait for a writer forever, a device may never end). Its size is checked against
``Limits.max_schema_bytes`` before reading, and at most that many bytes (plus one) are read, since a file's
reported size can lie (files under /proc report 0). Every failure is an :class:`InputFileError` naming the file.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

from structbench.errors import InputFileError, LimitExceeded
from structbench.limits import current as limits


def read_text_file(path, what: str = "input file") -> str:
    """The UTF-8 text of the regular file at `path`; `what` names it in errors ("task file", ...)."""
    path = Path(path)
    cap = limits().max_schema_bytes
    try:
        info = os.stat(path)  # follows a link: what it points to is what gets read
    except FileNotFoundError:
        raise InputFileError(f"{what} {str(path)!r} does not exist") from None
    except OSError as e:
        raise InputFileError(f"{what} {str(path)!r} cannot be read: {e.strerror or e}") from None
    if not stat.S_ISREG(info.st_mode):
        kind = "a directory" if stat.S_ISDIR(info.st_mode) else "a FIFO, socket or device"
        raise InputFileError(f"{what} {str(path)!r} is not a regular file (it is {kind})")
    if info.st_size > cap:
        raise InputFileError(f"{what} {str(path)!r} is larger than {cap} bytes (limits.max_schema_bytes)")
    try:
        with open(path, "rb") as f:
            data = f.read(cap + 1)
    except OSError as e:
        raise InputFileError(f"{what} {str(path)!r} cannot be read: {e.strerror or e}") from None
    if len(data) > cap:
        raise InputFileError(f"{what} {str(path)!r} is larger than {cap} bytes (limits.max_schema_bytes)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputFileError(f"{what} {str(path)!r} is not UTF-8 text (byte {e.start})") from None


def parse_json_text(text: str, what: str):
    """The JSON value in `text` (read from the file `what` names). Python's json reads Infinity and NaN (the
    schema compiler refuses them by name), but its own limits surface as errors naming the file: nesting past
    the recursion limit, integers past 4,300 digits."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise InputFileError(f"{what} is not valid JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
    except RecursionError:
        raise LimitExceeded(f"{what} nests objects and arrays deeper than Python's JSON reader can "
                            f"(about {sys.getrecursionlimit():,} levels; limits.max_nesting allows "
                            f"{limits().max_nesting})") from None
    except ValueError as e:  # Python's cap on int <- str conversion
        raise InputFileError(f"{what} holds a number Python will not read: {e}") from None
