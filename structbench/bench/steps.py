"""Where a cold walk's steps go: each step of the fresh experiment's cold walks (a mask, then the advance by the
answer's token) grouped by how its mask was found and by the state it was asked at.

    python -m structbench.bench.steps [--every 10] [--offset 0] [--limit N] [--strategy lazy] [--vocab llama3] [--kept]

A mask is `cached` (its state's mask was made before: a table read), `shared` (a state no token tells from this
one has its mask: read back by the machine's mask key, structbench.masking.shared_masks) or `built` (walked now).
The state is named by the checker's innermost frame: its kind, its phase, and whether it has read whitespace
(`ws`); a pattern's DFA state is `pattern`. Each group's steps, their share of all steps, how many fall below
the TBM median and how many at or above it, their step times (p25 / p50 / p75), the mask's and the advance's
medians, their sum's share of all steps' time, and how many of its built masks equal one built earlier in the same
walk (`again`: states the mask key tells apart whose masks are equal; what a key that told fewer states apart
could share at most). A second table sorts those masks by what told their two states apart (`again_differs`: the
innermost frame's fields that differ, a frame below it, or the depth), with their share of the time and TBM's p99
were they shared.

Each step also holds the garbage collector's time inside its mask and advance (`gc_us`, told by gc.callbacks): its
passes land in whichever step allocates when one is due, and a line under the table says how many steps hold one,
their share of the steps' time, and TBM's p99 with and without it.

Why: TBM's median is whichever group straddles it, and the fresh answer's time is the groups' sums; a change aimed
at either is judged by this table first, then by an A/B run (structbench.bench.ab) of the whole cold walk.
Steps are timed as timed_walk times them, after a cold start before each schema (structbench.masking.cold_start;
`--kept`: none, so kept automata and partitions serve later schemas, as in the fresh sweep);
the first step of each walk (TTFM's) is left out, as TBM leaves it out. One instance per schema: the first valid one
the constraint accepts (each mask checked, untimed, to allow the walk's token, as timed_walk checks it); schemas
that do not compile, have no such instance, time out or fail are counted by the fresh experiment's outcome names
(`walked` for the rest), not walked.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from structbench.errors import SettingsError, TokenRejected

OUTCOMES = ("cached", "shared", "built")
_OURS = ("lazy", "tabled")


def state_name(constraint, state: int) -> tuple[str, str, bool]:
    """(kind, phase, whitespace read) of the checker's innermost frame at `state`; ("pattern", "", False) for a
    pattern's DFA state, whose states are numbers."""
    stack = constraint.dense.states[state]
    if not isinstance(stack, tuple) or not stack:
        return "pattern", "", False
    top = stack[-1]
    return str(top.kind), str(top.phase), bool(top.ws)


def walk_steps(constraint, ids, vocab, collections=None) -> list[dict]:
    """Every step of one cold walk of `ids` (the end token last), timed by timed_walk (the fresh experiment's walk):
    its mask's and advance's microseconds, how the mask was found, the state's name, and the collector's
    microseconds inside the step (`gc_us`; 0 unless `collections`, a structbench.bench.walk.Collections, is given and
    installed). TokenRejected where a mask or an advance refuses the walk's token: the end token's mask refuses it
    where the walk may not end there."""
    from structbench.bench.walk import timed_walk

    work, seen, states = constraint.work, [], []

    def before_mask(step, state):  # (only a mask counts a mask made: an advance builds none)
        seen.append(((work.masks_shared, work.masks_built), state_name(constraint, state)))
        states.append(state)

    walk = timed_walk(constraint, ids, vocab, before_mask, collections)
    if walk.refused_at is not None:
        raise TokenRejected(f"the walk's token at step {walk.refused_at} is refused")
    after = [c for c, _ in seen[1:]] + [(work.masks_shared, work.masks_built)]  # each mask's counts once made
    rows, built_masks = [], {}  # a built mask's bits -> the state it was first built at
    for step, (((shared, built), name), (shared_after, built_after), mask_us) in enumerate(
            zip(seen, after, walk.mask_us)):
        how = "shared" if shared_after > shared else "built" if built_after > built else "cached"
        advance_us = walk.advance_us[step] if step < len(walk.advance_us) else 0.0  # (the end token has none)
        gc_us = 0.0
        if collections is not None:
            gc_us = walk.mask_gc_us[step] + (walk.advance_gc_us[step] if step < len(walk.advance_gc_us) else 0.0)
        again, differs = False, ""
        if how == "built":  # (after the walk, untimed: the mask is a table read now)
            bits = constraint.mask_bits(states[step]).tobytes()
            first = built_masks.setdefault(bits, states[step])
            again = first != states[step]
            if again:
                differs = what_differs(constraint.dense.states[first], constraint.dense.states[states[step]])
        rows.append({"step": step, "mask_us": mask_us, "advance_us": advance_us, "how": how,
                     "kind": name[0], "phase": name[1], "ws": name[2], "built_again": again,
                     "again_differs": differs, "gc_us": gc_us})
    return rows


def what_differs(first, later) -> str:
    """What tells apart two states whose masks are equal (a mask built again): for the checker's stacks, `depth`
    where one has more frames, else the fields of the innermost frame that differ (`top at`: a string's or
    number's DFA state; `top seen`: an object's used keys; `top child`: the node of the value after a key; ...), else
    `below` (a frame under the innermost); `pattern` for a pattern's DFA states. Where a mask key that told fewer
    states apart would look first."""
    if not isinstance(first, tuple) or not isinstance(later, tuple):
        return "pattern"
    if len(first) != len(later):
        return "depth"
    a, b = first[-1], later[-1]
    if a == b:
        return "below"
    fields = getattr(a, "_fields", None)
    if fields is None or type(a) is not type(b):
        return "top"
    return "top " + "+".join(f for f, x, y in zip(fields, a, b) if x != y)


COLUMNS = ["schema_file", "step", "mask_us", "advance_us", "how", "kind", "phase", "ws", "built_again",
           "again_differs", "gc_us"]


def corpus_steps(files: list[Path], strategy: str, vocab, timeout_s: float = 10.0, progress=None,
                 kept: bool = False) -> tuple:
    """(one row per step after the first of every schema's cold walk, {outcome: schemas}) over corpus files, as
    the fresh experiment compiles and walks them (ours read keys in any order, whitespace as the lesson writes it);
    kept: no cold start before each compile."""
    from structbench.experiments.speed import prepare_vocabulary

    if strategy not in _OURS:
        raise SettingsError(f"steps breaks down our strategies' masks ({', '.join(_OURS)}), not {strategy!r}: an "
                            f"engine does not say how it found a mask")
    from structbench.bench.walk import Collections

    prepare_vocabulary(strategy, vocab)
    rows, outcomes = [], {}
    with Collections() as collections:
        for k, path in enumerate(files):
            outcome, steps = schema_steps(path, strategy, vocab, timeout_s, kept, collections)
            rows += [{"schema_file": path.name, **row} for row in steps[1:]]
            outcomes[outcome] = outcomes.get(outcome, 0) + 1
            if progress is not None:
                progress(k + 1, len(files))
    return pd.DataFrame(rows, columns=COLUMNS), outcomes


def schema_steps(path: Path, strategy: str, vocab, timeout_s: float,
                 kept: bool = False, collections=None) -> tuple[str, list[dict]]:
    """(the fresh experiment's outcome name, the steps of the cold walk) of one corpus file: compiled after a cold
    start (none where `kept`), and walked on the first valid instance the constraint accepts, compiled again (as
    the first) before each further one tried; every compile and every walk under the time limit."""
    from structbench.bench.strategies import compile_constraint
    from structbench.bench.tasks import Task
    from structbench.errors import CompileTimeout
    from structbench.experiments.coverage import classify_error, compile_limit, read_corpus_file
    from structbench.experiments.fresh import valid_instances
    from structbench.masking.cold_start import cold_start

    file = read_corpus_file(path)
    if file.outcome != "ok":
        return file.outcome, []
    task = Task(path.stem, "schema", file.schema, "{}")

    def compiled():
        """(a constraint compiled after a cold start, None), or (None, the compile's outcome name)."""
        if not kept:
            cold_start(vocab)
        try:
            with compile_limit(timeout_s):
                return compile_constraint(task, vocab, strategy, "any", "lesson"), None
        except SettingsError:
            raise
        except Exception as e:  # noqa: BLE001 - counted by the coverage experiment's names, not walked
            return None, classify_error(e)[0]

    constraint, failed = compiled()
    if failed:
        return failed, []
    for n, (_, _, ids) in enumerate(valid_instances(file.tests, file.schema, file.referee, vocab, "lesson")):
        if n:  # cold again: the refused walk built part of the masks
            constraint, failed = compiled()
            if failed:
                return failed, []
        try:
            with compile_limit(timeout_s):
                return "walked", walk_steps(constraint, ids, vocab, collections)
        except TokenRejected:
            continue
        except CompileTimeout:
            return "walk_timeout", []
        except Exception:  # noqa: BLE001 - as the fresh experiment's schema_row: this file's outcome
            return "error", []
    return "no_instance", []


def breakdown(steps: pd.DataFrame) -> tuple[pd.DataFrame, float]:
    """Per group (how, kind, phase, ws), largest first: steps, their share, how many fall below the TBM median
    (`below_p50`) and at or above it (`from_p50`), step p25 / p50 / p75 (µs), mask and advance p50 (µs), the
    group's share of all steps' time, and its masks built again (`built_again`: equal to a mask built earlier in the
    same walk) with their steps' share of all steps' time; and the TBM median (µs)."""
    if "built_again" not in steps:  # (per-step rows kept by --out before the column was counted)
        steps = steps.assign(built_again=False)
    total = steps["mask_us"] + steps["advance_us"]
    median = float(np.median(total)) if len(steps) else float("nan")
    frame = steps.assign(step_us=total, below=total < median)
    out = []
    for key, group in frame.groupby(["how", "kind", "phase", "ws"], sort=False):
        q = np.percentile(group["step_us"], [25, 50, 75])
        out.append({"how": key[0], "kind": key[1], "phase": key[2], "ws": key[3], "steps": len(group),
                    "share": len(group) / len(frame), "below_p50": int(group["below"].sum()),
                    "from_p50": int((~group["below"]).sum()), "p25_us": q[0], "p50_us": q[1], "p75_us": q[2],
                    "built_again": int(group["built_again"].sum()),
                    "again_time_share": float(group["step_us"][group["built_again"]].sum() / total.sum()),
                    "mask_p50_us": float(group["mask_us"].median()),
                    "advance_p50_us": float(group["advance_us"].median()),
                    "time_share": float(group["step_us"].sum() / total.sum())})
    table = pd.DataFrame(out)
    if len(table):
        table = table.sort_values("steps", ascending=False, kind="stable").reset_index(drop=True)
    return table, median


def collector_line(steps: pd.DataFrame) -> str | None:
    """How much of the steps' time the garbage collector's passes inside them hold, and TBM's p99 with and without
    that time (None for rows kept by --out before `gc_us` was recorded, or none at all)."""
    if "gc_us" not in steps or not len(steps):
        return None
    total = steps["mask_us"] + steps["advance_us"]
    held = steps["gc_us"] > 0
    p99, p99_without = np.percentile(total, 99), np.percentile(total - steps["gc_us"], 99)
    return (f"the garbage collector: {int(held.sum())} of {len(steps)} steps hold a pass, "
            f"{steps['gc_us'].sum() / 1000:.0f} of the steps' {total.sum() / 1000:.0f} ms; "
            f"TBM p99 {p99:.1f} µs, {p99_without:.1f} µs with the passes' time taken out; "
            f"{int(held[total >= p99].sum())} of the {int((total >= p99).sum())} steps from p99 up hold one")


def again_table(steps: pd.DataFrame) -> pd.DataFrame:
    """The masks built again (equal to one built earlier in the same walk) by their state (kind, phase) and what told
    the two states apart (`again_differs`), most first: how many, their steps' share of all steps' time, and TBM's
    p99 were those steps alone to cost what a shared mask's step costs at the median (`p99_if_shared`, µs): what a
    mask key that told those states together would gain at most, step time and tail. Empty for rows kept by --out
    before `again_differs` was recorded, or with no mask built again."""
    if "again_differs" not in steps or not steps["built_again"].any():
        return pd.DataFrame(columns=["kind", "phase", "again_differs", "masks", "time_share", "p99_if_shared"])
    total = (steps["mask_us"] + steps["advance_us"]).to_numpy()
    shared = total[(steps["how"] == "shared").to_numpy()]
    shared_median = float(np.median(shared)) if len(shared) else 0.0
    at = np.flatnonzero(steps["built_again"].to_numpy())  # (positions: the rows' index may be anything)
    again = steps.iloc[at][["kind", "phase", "again_differs"]].assign(at=at)
    out = []
    for (kind, phase, differs), group in again.groupby(["kind", "phase", "again_differs"], sort=False):
        these = group["at"].to_numpy()
        as_shared = total.copy()
        as_shared[these] = shared_median
        out.append({"kind": kind, "phase": phase, "again_differs": differs, "masks": len(group),
                    "time_share": float(total[these].sum() / total.sum()),
                    "p99_if_shared": float(np.percentile(as_shared, 99))})
    return pd.DataFrame(out).sort_values("masks", ascending=False, kind="stable").reset_index(drop=True)


def report(table: pd.DataFrame, median: float, outcomes: dict, how: str, rows: int = 25) -> str:
    walked = outcomes.get("walked", 0)
    others = ", ".join(f"{n} {name}" for name, n in sorted(outcomes.items()) if name != "walked")
    n_steps = int(table["steps"].sum()) if len(table) else 0
    lines = [f"{walked} schemas walked ({how}){'; ' + others if others else ''}",
             f"{n_steps} steps after each walk's first; TBM p50 {median:.1f} µs"]
    if len(table):
        totals = table.groupby("how")[["steps", "time_share"]].sum()
        lines.append("by how the mask was found: " + ", ".join(
            f"{name} {int(totals.loc[name, 'steps'])} steps, {100 * totals.loc[name, 'time_share']:.0f}% of the time"
            for name in OUTCOMES if name in totals.index))
        built = table[table["how"] == "built"]
        if len(built):
            lines.append(f"built again: {int(built['built_again'].sum())} of {int(built['steps'].sum())} built masks "
                         f"({100 * built['built_again'].sum() / built['steps'].sum():.0f}%, "
                         f"{100 * built['again_time_share'].sum() / built['time_share'].sum():.0f}% of their steps' "
                         f"time) equal a mask built earlier in the same walk: what a mask key that told fewer states "
                         f"apart could share at most")
        shown = table.head(rows).copy()
        shown["state"] = (shown["kind"] + " " + shown["phase"]).str.strip() + np.where(shown["ws"], " +ws", "")
        shown["share"] = (100 * shown["share"]).round(1)
        shown["time_share"] = (100 * shown["time_share"]).round(1)
        columns = ["how", "state", "steps", "share", "below_p50", "from_p50", "p25_us", "p50_us", "p75_us",
                   "mask_p50_us", "advance_p50_us", "time_share", "built_again"]
        lines.append(shown[columns].rename(columns={"share": "share_%", "time_share": "time_%", "built_again": "again"})
                     .to_string(index=False, float_format=lambda v: f"{v:.1f}"))
        if len(table) > rows:
            lines.append(f"({len(table) - rows} smaller groups not shown)")
    return "\n".join(lines)


def main(argv=None) -> int:
    from structbench.bench.shared_data import add_corpus_selection, corpus_command_inputs

    parser = argparse.ArgumentParser(prog="python -m structbench.bench.steps", description=__doc__.splitlines()[0])
    add_corpus_selection(parser)
    parser.add_argument("--strategy", default="lazy", help=f"one of ours: {', '.join(_OURS)} (default lazy)")
    parser.add_argument("--vocab", default="llama3", help="gpt2, llama3, qwen, or the lesson's toy (default llama3)")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds per compile and per walk")
    parser.add_argument("--kept", action="store_true",
                        help="no cold start before each schema: kept automata serve later schemas, as in a sweep")
    parser.add_argument("--rows", type=int, default=25, help="groups printed, largest first (default 25)")
    parser.add_argument("--out", default=None, help="a Parquet file for the per-step rows")
    args = parser.parse_args(argv)
    if args.rows < 1:
        parser.error("--rows is at least 1")
    try:
        files, vocab, progress = corpus_command_inputs(parser, args)
        steps, outcomes = corpus_steps(files, args.strategy, vocab, args.timeout, progress, args.kept)
        print(file=sys.stderr)
    except (SettingsError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.out:
        steps.to_parquet(args.out)
    table, median = breakdown(steps)
    how = "kept work between schemas" if args.kept else "a cold start before each"
    print(report(table, median, outcomes, f"{args.strategy} on {args.vocab}, {how}", args.rows))
    again = again_table(steps)
    if len(again):
        p99 = np.percentile(steps["mask_us"] + steps["advance_us"], 99)
        shown = again.head(args.rows).assign(time_share=lambda t: (100 * t["time_share"]).round(2))
        print(f"masks built again, by what told their states apart (TBM p99 {p99:.1f} µs; p99_if_shared: were those "
              f"steps a shared mask's median step)")
        print(shown.rename(columns={"time_share": "time_%"}).to_string(index=False, float_format=lambda v: f"{v:.1f}"))
    line = collector_line(steps)
    if line is not None:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
