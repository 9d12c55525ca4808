"""An A/B run: two versions of the code walk the same corpus schemas, alternating per schema, and their fresh-answer
and TBM times are compared, with every mask compared bit for bit.

    python -m structbench.bench.ab A [B] [--every 10] [--strategy lazy] [--vocab llama3] [--out rows.parquet]

A and B are each a git revision of the repository the command runs in (checked out to a temporary worktree, removed
after) or a directory holding a structbench checkout; B defaults to that repository's working tree, uncommitted
changes included. So `python -m structbench.bench.ab HEAD` measures what the working tree's changes do.

Why not two fresh sweeps: on a shared host the speed drifts by more than a tuning change's few percent between runs
minutes apart (issue 12's whole-corpus runs of one code differed by 0.16 in TBM p99). Here each side is its own
process (structbench.bench.ab_worker) set up once; each schema is walked by both, seconds apart, the first side
alternating (A first at even schemas), each after a cold start (structbench.masking.cold_start) unless `--kept`.
Both processes run on one CPU (`--cpu`) with one hash seed. A/A runs (one revision on both sides, 475 schemas, 4
repeats each, 2026-12-03) measure the floor: pinned, the per-schema median 1.001 (0.999-1.003), its repeats
0.997-1.009; left to the scheduler, 0.993 (0.989-0.998), every repeat 0.991-0.995, and single unpinned runs strayed
by up to 1.8% with intervals that excluded 1. The interval is over schemas: the spread between process pairs
(`--repeats`) is the other half of the noise. Sums are led by a few slow schemas and moved by up to 3% between runs:
read the per-schema median first.
Before the measured processes start, each side's numba kernels are compiled and cached in its checkout by a
process that walks the first schema and stops (`warm_numba_caches`): one that compiled them itself ran about 1.2%
slower than one that loaded them, which made a new worktree's revision look slower than the working tree by that
much (2026-12-05: HEAD against an unchanged working tree read 0.983 and 0.983; with the warm-up, 0.999 and 1.005).
The first schema is walked once by both before anything is counted: numba's kernels load, caches fill.

Printed: per metric of the fresh report (compile, TTFM, fresh answer per schema; TBM and warm step per step), A's
and B's p50 / p90 / p99 and sum over the schemas both walked (outcome ok), B/A of each, the median of the per-schema
fresh-answer ratios with a bootstrap 95% interval; and the schemas whose outcome, instance, allowed counts or mask
bits differ (a speed change should have none).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

import numpy as np
import pandas as pd

from structbench.errors import SettingsError
from structbench.report.fresh import METRICS, PERCENTILES, metric_values

SIDES = ("A", "B")
_LABELS = {"compile": "compile", "ttfm": "TTFM", "tbm": "TBM", "fresh": "fresh answer", "warm": "warm step"}
_WORKER = Path(__file__).with_name("ab_worker.py")


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], check=False, capture_output=True, text=True)
    if done.returncode:
        raise SettingsError(f"git {' '.join(args)} failed in {repo}: {done.stderr.strip()}")
    return done.stdout.strip()


def is_checkout(path: Path) -> bool:
    return (path / "structbench" / "__init__.py").is_file()


def repository(start: Path) -> Path:
    """The git repository holding `start` (the folder the command runs in)."""
    return Path(_git(start, "rev-parse", "--show-toplevel"))


def resolve_side(spec: str, repo: Path | None, stack: ExitStack, scratch: Path) -> tuple[Path, str]:
    """(the checkout a side imports structbench from, its label): a directory holding a checkout as it is, else a
    git revision checked out to a worktree under `scratch` (removed when `stack` closes)."""
    path = Path(spec).expanduser()
    if path.is_dir():
        if not is_checkout(path):
            raise SettingsError(f"{spec!r} is a directory but holds no structbench checkout (no structbench/__init__.py)")
        return path.resolve(), f"{path.resolve()} (working tree)"
    if repo is None:
        raise SettingsError(f"{spec!r} is no directory, and the command runs outside a git repository, where it could "
                            f"be a revision: run it inside the structbench repository")
    commit = _revision(repo, spec)
    if commit is None:
        raise SettingsError(f"{spec!r} is neither a directory nor a revision of {repo}")
    tree = scratch / f"{commit[:12]}-{len(list(scratch.iterdir()))}"
    _git(repo, "worktree", "add", "--detach", "--quiet", str(tree), commit)
    stack.callback(lambda: subprocess.run(["git", "-C", str(repo), "worktree", "remove", "--force", str(tree)],
                                          check=False, capture_output=True))
    if not is_checkout(tree):
        raise SettingsError(f"revision {spec} ({commit[:12]}) holds no structbench package")
    return tree, f"{spec} ({commit[:12]})"


def _revision(repo: Path, spec: str) -> str | None:
    """The commit `spec` names in `repo`, or None."""
    done = subprocess.run(["git", "-C", str(repo), "rev-parse", "--verify", "--quiet", f"{spec}^{{commit}}"],
                          check=False, capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else None


def pinned_cpu(spec: str) -> int | None:
    """The CPU `--cpu` names: 'last' (of those this process may use), 'none' (None), or a number among them."""
    if spec == "none" or not hasattr(os, "sched_getaffinity"):
        return None
    allowed = sorted(os.sched_getaffinity(0))
    if spec == "last":
        return allowed[-1]
    if not spec.isdigit() or int(spec) not in allowed:
        raise ValueError(f"--cpu {spec!r}: give 'last', 'none' or one of the CPUs this process may use: "
                         f"{', '.join(map(str, allowed))}")
    return int(spec)


class Worker:
    """One side's process (structbench.bench.ab_worker), its stderr kept in a log file named in any error."""

    def __init__(self, name: str, root: Path, config: dict, scratch: Path):
        self.name, self.log = name, scratch / f"worker-{name}.log"
        script = scratch / "ab_worker.py"  # a copy outside every checkout: it imports the side's structbench only
        if not script.exists():
            shutil.copy(_WORKER, script)
        self._stderr = open(self.log, "w")
        # One hash seed for both sides: a process's seed orders its sets and dicts of strings, so both walk alike
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        self.process = subprocess.Popen([sys.executable, str(script), json.dumps({**config, "root": str(root)})],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
                                        text=True, cwd=scratch, env=env)

    def read(self) -> dict:
        line = self.process.stdout.readline()
        if not line:
            self.process.wait()
            tail = self.log.read_text().strip().splitlines()[-15:]
            raise RuntimeError(f"side {self.name}'s worker stopped (exit {self.process.returncode}); the end of its "
                               f"stderr ({self.log}):\n" + "\n".join(tail))
        return json.loads(line)

    def walk(self, path: Path) -> dict:
        self.process.stdin.write(json.dumps({"path": str(path)}) + "\n")
        self.process.stdin.flush()
        return self.read()

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.stdin.close()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self._stderr.close()


def run(files: list[Path], roots: dict[str, Path], config: dict, scratch: Path, progress=None,
        repeat: int = 0) -> pd.DataFrame:
    """Both sides' rows over `files` (the first walked once by both before, uncounted), by a new pair of processes:
    one row per (schema, side). `repeat` numbers the pair (its rows' `repeat`); odd pairs start B's process first."""
    workers = {}
    try:
        for name in (SIDES if repeat % 2 == 0 else SIDES[::-1]):
            workers[name] = Worker(name, roots[name], config, scratch)
        for worker in workers.values():
            worker.read()  # ready: vocabulary loaded, its index built
        for worker in workers.values():
            worker.walk(files[0])  # numba's kernels loaded, first-call costs paid
        rows = []
        for k, path in enumerate(files):
            for name in (SIDES if k % 2 == 0 else SIDES[::-1]):
                rows.append({"repeat": repeat, "schema_file": path.name, "order": k, "side": name,
                             **workers[name].walk(path)})
            if progress is not None:
                progress(k + 1, len(files))
        return pd.DataFrame(rows)
    finally:
        for worker in workers.values():
            worker.close()


def warm_numba_caches(path: Path, roots: dict[str, Path], config: dict, scratch: Path) -> None:
    """Each side's numba kernels compiled and cached in its checkout by a process of its own that walks one schema
    and stops, before any measured process starts: a process that compiled them itself (a new worktree's first,
    with no cache) then ran about 1.2% slower than one that loaded them (a checkout with the same code and its
    cache walked every fifth corpus schema at 1.012 and 1.013, per-schema median over two pairs of processes), so a
    revision against the working tree read about 0.98 where nothing had changed."""
    for name in SIDES:
        worker = Worker(f"{name}-warm-up", roots[name], config, scratch)
        try:
            worker.read()
            worker.walk(path)
        finally:
            worker.close()


def differences(rows: pd.DataFrame) -> pd.DataFrame:
    """Per schema (and repeat) where the sides differ: what differs (outcome, the instance walked, allowed counts,
    mask bits)."""
    out = []
    for (_, name), group in rows.groupby(["repeat", "schema_file"], sort=False):
        a, b = (group[group["side"] == s].iloc[0] for s in SIDES)
        what = [label for label, column in (("outcome", "outcome"), ("instance", "instance"),
                                            ("allowed counts", "allowed_counts"), ("mask bits", "masks"))
                if _plain(a[column]) != _plain(b[column])]
        if what:
            out.append({"schema_file": name, "differs": ", ".join(what), "A": a["outcome"], "B": b["outcome"]})
    return pd.DataFrame(out, columns=["schema_file", "differs", "A", "B"])


def _plain(value):
    return list(value) if isinstance(value, (list, np.ndarray)) else value


def summary(rows: pd.DataFrame, seed: int = 0, resamples: int = 2000) -> dict:
    """The comparison over the schemas both sides walked (outcome ok, the same instance): per metric each side's
    percentiles and sum and B/A of each (`ratio`); the median per-schema fresh-answer ratio and its bootstrap 95% interval."""
    ok = rows[rows["outcome"] == "ok"]
    both = ok.groupby(["repeat", "schema_file"]).filter(lambda g: len(g) == 2 and g["instance"].nunique() == 1)
    sides = {s: both[both["side"] == s].set_index(["repeat", "schema_file"]).sort_index() for s in SIDES}
    # The fresh report's metrics (structbench.report.fresh), per side, over the same schemas in the same order
    values = {s: metric_values(frame) for s, frame in sides.items()}
    table = []
    for metric, unit, _ in METRICS:
        a, b = values["A"][metric], values["B"][metric]
        if not len(a) or not len(b):
            continue
        for label, f in [(f"p{q}", (lambda v, q=q: np.percentile(v, q))) for q in PERCENTILES] + [("sum", np.sum)]:
            table.append({"metric": f"{_LABELS[metric]} ({unit})", "stat": label, "A": f(a), "B": f(b),
                          "ratio": f(b) / f(a)})
    result = {"schemas": rows["schema_file"].nunique(), "repeats": rows["repeat"].nunique(),
              "walked_by_both": sides["A"].index.get_level_values("schema_file").nunique(),
              "table": pd.DataFrame(table, columns=["metric", "stat", "A", "B", "ratio"])}
    if len(sides["A"]):
        ratio = values["B"]["fresh"] / values["A"]["fresh"]
        rng = np.random.default_rng(seed)
        medians = np.median(ratio[rng.integers(0, len(ratio), (resamples, len(ratio)))], axis=1)
        result["per_schema_median"] = float(np.median(ratio))
        result["per_schema_interval"] = tuple(float(x) for x in np.percentile(medians, (2.5, 97.5)))
        repeats = sides["A"].index.get_level_values("repeat").to_numpy()
        result["per_repeat_medians"] = [float(np.median(ratio[repeats == r])) for r in sorted(set(repeats.tolist()))]
    return result


def report(rows: pd.DataFrame, labels: dict[str, str], how: str = "") -> str:
    found = summary(rows)
    lines = [f"A: {labels['A']}", f"B: {labels['B']}", *([how] if how else []),
             f"{found['schemas']} schemas, {found['walked_by_both']} walked by both (outcome ok, the same instance)"
             + (f", {found['repeats']} repeats" if found["repeats"] > 1 else ""), ""]
    table = found["table"]
    if len(table):
        lines.append("| metric | stat | A | B | B/A |")
        lines.append("|---|---|---|---|---|")
        for r in table.itertuples():
            lines.append(f"| {r.metric} | {r.stat} | {r.A:,.3f} | {r.B:,.3f} | {r.ratio:.3f} |")
        low, high = found["per_schema_interval"]
        lines += ["", (f"fresh answer, median of the per-schema B/A: {found['per_schema_median']:.3f} "
                       f"(bootstrap 95% over schemas: {low:.3f}-{high:.3f})")]
        if len(found["per_repeat_medians"]) > 1:  # the spread between process pairs, which the interval leaves out
            lines.append("  per repeat (a new pair of processes each): "
                         + ", ".join(f"{m:.3f}" for m in found["per_repeat_medians"]))
    diff = differences(rows)
    lines.append("")
    if diff.empty:
        lines.append("every schema: the same outcome, allowed counts and mask bits on both sides")
    else:
        lines.append(f"{len(diff)} schemas differ:")
        lines += [f"  {r.schema_file}: {r.differs} (A {r.A}, B {r.B})" for r in diff.head(20).itertuples()]
    return "\n".join(lines)


def main(argv=None) -> int:
    from structbench.bench.shared_data import add_corpus_selection, selected_corpus_files
    from structbench.masking import ENGINES

    parser = argparse.ArgumentParser(prog="python -m structbench.bench.ab", description=__doc__.splitlines()[0])
    parser.add_argument("a", metavar="A", help="a git revision, or a directory holding a structbench checkout")
    parser.add_argument("b", metavar="B", nargs="?", default=None,
                        help="the same (default: the repository's working tree, uncommitted changes included)")
    add_corpus_selection(parser)
    parser.add_argument("--strategy", default="lazy", help="ours or an engine (default lazy)")
    parser.add_argument("--vocab", default="llama3", help="gpt2, llama3, qwen, or the lesson's toy (default llama3)")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds per compile and per walk")
    parser.add_argument("--kept", action="store_true",
                        help="no cold start before each schema: kept automata serve later schemas, as in a sweep")
    parser.add_argument("--cpu", default="last",
                        help="the CPU both sides run on, one after the other (default: the last this process may use; "
                             "'none': not pinned, where the scheduler's placement of each process moved an A/A run's "
                             "per-schema median by 1-2%%)")
    parser.add_argument("--repeats", type=int, default=1,
                        help="walk the schemas this many times, each by a new pair of processes (default 1): their "
                             "per-schema medians show the spread between processes")
    parser.add_argument("--key-order", choices=("any", "schema"), default=None,
                        help="how ours read an object's keys (default: any, as the fresh sweep; the engines always "
                             "schema); schema is the speed sweep's, where a regular schema is one DFA")
    parser.add_argument("--out", default=None, help="a Parquet file for the per-(schema, side) rows")
    args = parser.parse_args(argv)
    try:
        cpu = pinned_cpu(args.cpu)
    except ValueError as e:
        parser.error(str(e))
    if args.repeats < 1:
        parser.error("--repeats is at least 1")
    try:
        files = selected_corpus_files(parser, args)
        try:
            repo = repository(Path.cwd())
        except SettingsError:
            repo = None
        with ExitStack() as stack:
            scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="structbench-ab-")))
            trees = scratch / "trees"
            trees.mkdir()
            roots, labels = {}, {}
            for name, spec in zip(SIDES, (args.a, args.b)):
                if spec is None:
                    if repo is None:
                        parser.error("B defaults to the repository's working tree: run inside it, or name B")
                    spec = str(repo)
                roots[name], labels[name] = resolve_side(spec, repo, stack, trees)
            # The fresh sweep's settings: ours read keys in any order (unless --key-order), the engines in schema order
            key_order = "schema" if args.strategy in ENGINES else args.key_order or "any"
            config = {"strategy": args.strategy, "vocab": args.vocab, "timeout_s": args.timeout,
                      "cold_start": not args.kept, "key_order": key_order,
                      "whitespace": "lesson", "cpu": cpu}
            t0 = time.time()

            def progress(done, total):
                print(f"\r{done}/{total} schemas, {time.time() - t0:.0f} s", end="", file=sys.stderr, flush=True)

            warm_numba_caches(files[0], roots, config, scratch)
            rows = pd.concat([run(files, roots, config, scratch, progress, repeat) for repeat in range(args.repeats)],
                             ignore_index=True)
            print(file=sys.stderr)
    except (SettingsError, ValueError, RuntimeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.out:
        rows.to_parquet(args.out)
    how = (f"{args.strategy} on {args.vocab}, keys in {key_order} order, "
           f"{'kept work between schemas' if args.kept else 'a cold start before each schema'}, "
           f"{'not pinned' if cpu is None else f'both sides on CPU {cpu}'}")
    print(report(rows, labels, how))
    return 0


if __name__ == "__main__":
    sys.exit(main())
