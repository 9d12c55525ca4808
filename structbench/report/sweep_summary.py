"""A Hydra callback printing the summary when a sweep ends (part of the entry point, so it may import Hydra).

Each trial appends a line to `<sweep dir>/trials.jsonl` (structbench.bench.runner.MANIFEST_NAME); at the end
this reads exactly those trials' parts, so a narrowed rerun summarises what it covered. It lives with the
summary it prints, above the harness that writes the rows.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from hydra.experimental.callback import Callback


class SweepSummary(Callback):
    def on_multirun_end(self, config, **kwargs) -> None:
        from structbench.bench.runner import MANIFEST_NAME

        manifest = Path(config.hydra.sweep.dir) / MANIFEST_NAME
        if not manifest.exists():
            print("structbench: no trial finished in this sweep", file=sys.stderr)
            return
        from structbench.bench.store import read_results
        from structbench.report.summary import format_summary

        entries = [json.loads(line) for line in manifest.read_text().splitlines() if line.strip()]
        paths = sorted({e["path"] for e in entries})
        skipped = sum(e["skipped"] for e in entries)
        df = read_results(files=paths)
        folders = sorted({str(Path(p).parent) for p in paths})
        print()
        print(format_summary(df, ", ".join(folders)))
        print(f"trials: {len(entries)} ({skipped} already stored and skipped; force=true reruns them)")
