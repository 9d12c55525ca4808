"""fresh: the fresh-schema yardstick (issue 12). A serving system meets most schemas for the first time, so
what counts is compile plus the steps of the first answer, not warm steps over tables built long ago.

Per schema of a MaskBench-format corpus and per strategy (ours, lazy or tabled, and the engines, all compiled
through compile_constraint and walked through the one Constraint protocol): the compile, then the first
test instance the constraint accepts (valid under the referee, spelled as the coverage experiment spells it,
keys in schema order) walked cold with every mask and every advance timed (the end token's mask included;
it has no advance), then the same walk again on the same constraint (warm). Timed are `mask_bits`, the call
the speed experiment times, and `advance`, for every strategy; every mask is checked to allow the walk's next
token before its time is kept. A step is its mask and its advance, as MaskBench's runner times compute_mask
and commit_token together. From one row (structbench.report.fresh):

    TTFM          compile + the first mask
    TBM           each cold step after the first            (MaskBench's time between masks)
    fresh answer  compile + every cold step of the walk

The per-vocabulary setup (our codes and prefix tree, an engine's tokenizer info) is done once per trial
before anything is timed. One row per schema file, failures included: the compile's outcome (unsupported,
error, timeout), no_referee, `no_instance` (no test instance is valid, or the constraint accepts none of
them), `walk_refused` (a mask refused a token the constraint accepts, or a warm mask differs from its cold
one), `walk_timeout` (structbench.report.fresh.OUTCOMES lists them). When the first
valid instance is refused, the first accepted one is found on that constraint and walked cold on a fresh
compile of the schema (compile_ms stays the first compile's).

With `paired` (llguidance in the sweep), each schema is also compiled and walked under that strategy, right before
or after this one (alternately: the paired one first at odd files), and the row stores its compile, its cold
walk's masks and advances, the instance it walked and its fresh answer (`paired_*`): the report's paired table
compares walks seconds apart, not trials minutes apart on a host whose speed drifts. The paired strategy's own
trial walks alone.

One trial = one strategy over one shard of the corpus (`subset`, `sample`), as in the coverage experiment.
`python -m structbench.experiments.fresh [RESULTS_DIR]` prints the table (structbench.report.fresh).
"""

from __future__ import annotations

import time
from pathlib import Path

from structbench.experiments.coverage import (
    check_corpus_settings,
    classify_error,
    compile_limit,
    in_schema_order,
    named_error,
    read_corpus_file,
    spell,
    subset_of,
)
from structbench.experiments.speed import (
    paired_strategy,
    paired_walk_columns,
    prepare_paired,
    prepare_vocabulary,
)

from structbench.bench.strategies import compile_constraint
from structbench.bench.tasks import Task
from structbench.bench.walk import Walk, timed_walk
from structbench.errors import CompileTimeout, RefereeTimeout, SettingsError, TokenRejected
from structbench.masking import ENGINES

OUR_FRESH = ("lazy", "tabled")  # ours that the yardstick runs; the engines and your own strategies too


def accepts(constraint, token_ids) -> bool:
    """Whether the constraint takes every token before the end token and may end there (advances only: no mask
    is asked for)."""
    state = constraint.start()
    try:
        for tid in token_ids[:-1]:
            state = constraint.advance(state, tid)
    except TokenRejected:
        return False
    return bool(constraint.can_end(state))


def valid_instances(tests, schema, referee, vocab, whitespace: str) -> list[tuple[int, str, list[int]]]:
    """(index, text, token ids with the end token) of the test instances the referee calls valid, in order. An
    instance the referee cannot judge in time, or that cannot be spelled, is not a candidate."""
    out = []
    for i, test in enumerate(tests):
        try:
            text, ids = spell(vocab, in_schema_order(test["data"], schema, schema), whitespace)
            if referee(text):
                out.append((i, text, ids + [vocab.eos_id]))
        except RefereeTimeout:
            continue
        except Exception:  # noqa: BLE001 - an instance that cannot be spelled (no "data", a bad value) is skipped
            continue
    return out


def schema_row(path: Path, strategy: str, vocab, key_order: str, whitespace: str, timeout_s: float) -> dict:
    """The row of one corpus file under one strategy. Whatever the file does is its outcome (as in the coverage
    experiment) and the sweep goes on; only a strategy the experiment does not run stops it."""
    base = {"task": path.stem, "subset": subset_of(path), "schema_file": path.name, "whitespace": whitespace,
            "finished": True, "attempts": 1}
    try:
        return {**base, **_schema_row(path, strategy, vocab, key_order, whitespace, timeout_s)}
    except SettingsError:
        raise
    except Exception as e:  # noqa: BLE001 - MemoryError, RecursionError, ...: this file's outcome
        return {**base, "outcome": "error", "outcome_detail": named_error(e), "instance": -1}


def _schema_row(path: Path, strategy: str, vocab, key_order: str, whitespace: str, timeout_s: float) -> dict:
    file = read_corpus_file(path)
    if file.outcome != "ok":
        return {"outcome": file.outcome, "outcome_detail": file.detail, "instance": -1}
    task = Task(path.stem, "schema", file.schema, "{}")

    def compiled():
        with compile_limit(timeout_s):
            return compile_constraint(task, vocab, strategy, key_order, whitespace)

    t0 = time.perf_counter()
    try:
        constraint = compiled()
    except SettingsError:
        raise  # a strategy this experiment does not run: the trial's settings, not this schema's outcome
    except Exception as e:  # noqa: BLE001
        outcome, detail = classify_error(e)
        return {"outcome": outcome, "outcome_detail": detail, "compile_ms": (time.perf_counter() - t0) * 1000,
                "instance": -1}
    row = {"compile_ms": (time.perf_counter() - t0) * 1000, "compile_work_chars": constraint.work.chars,
           "compile_masks": constraint.work.masks_built, "instance": -1}
    candidates = valid_instances(file.tests, file.schema, file.referee, vocab, whitespace)
    if not candidates:
        detail = "no test instances" if not file.tests else f"none of its {len(file.tests)} test instances is valid"
        return {**row, "outcome": "no_instance", "outcome_detail": detail}
    try:
        return {**row, **_walks(constraint, candidates, compiled, vocab, timeout_s)}
    except CompileTimeout:
        return {**row, "outcome": "walk_timeout", "outcome_detail": f"a walk took longer than {timeout_s:g} s"}


def _walks(constraint, candidates, compiled, vocab, timeout_s: float) -> dict:
    """The cold walk of the first instance the constraint accepts, then the same walk warm."""
    index, text, ids = candidates[0]
    chars0, built0 = constraint.work.chars, constraint.work.masks_built
    with compile_limit(timeout_s):
        cold = timed_walk(constraint, ids, vocab)
    if cold.refused_at is not None:
        with compile_limit(timeout_s):
            found = next((c for c in candidates if accepts(constraint, c[2])), None)
        if found is None:
            return {"outcome": "no_instance",
                    "outcome_detail": f"the constraint accepts none of its {len(candidates)} valid test instances"}
        if found[0] == index:
            return _refused(index, text, ids, cold, vocab)
        index, text, ids = found
        constraint = compiled()  # cold again: the walks above built part of the first one's masks
        chars0, built0 = constraint.work.chars, constraint.work.masks_built
        with compile_limit(timeout_s):
            cold = timed_walk(constraint, ids, vocab)
        if cold.refused_at is not None:
            return _refused(index, text, ids, cold, vocab)
    chars, built = constraint.work.chars - chars0, constraint.work.masks_built - built0
    with compile_limit(timeout_s):
        warm = timed_walk(constraint, ids, vocab)
    row = {"instance": index, "sample": index, "text": text, "n_tokens": len(ids) - 1, "referee_valid": True,
           "accepted": True, "mask_us": cold.mask_us, "advance_us": cold.advance_us,
           "allowed_counts": cold.allowed_counts, "warm_mask_us": warm.mask_us, "warm_advance_us": warm.advance_us,
           "work_chars": chars, "masks_built": built}
    if warm.refused_at is not None or warm.allowed_counts != cold.allowed_counts:
        step = warm.refused_at if warm.refused_at is not None else next(
            k for k, (a, b) in enumerate(zip(warm.allowed_counts, cold.allowed_counts)) if a != b)
        return {**row, "outcome": "walk_refused", "outcome_detail": f"the warm walk's mask at step {step} differs "
                                                                    f"from the cold walk's"}
    return {**row, "outcome": "ok", "outcome_detail": ""}


def _refused(index: int, text: str, ids, walk: Walk, vocab) -> dict:
    step = walk.refused_at
    token = repr(vocab.tokens[ids[step]]) if ids[step] != vocab.eos_id else "the end token"
    return {"outcome": "walk_refused", "instance": index, "sample": index, "text": text, "n_tokens": len(ids) - 1,
            "outcome_detail": f"the mask at step {step} refuses {token}, which the constraint accepts"}


def check_settings(settings) -> dict:
    """The fresh keys (conf/sweep/fresh.yaml), checked before any corpus file is read (SettingsError naming the
    key); returns them with the trial's `files`."""
    strategy = settings.strategy
    if strategy.target is None and strategy.name not in OUR_FRESH + ENGINES:
        raise SettingsError(f"the fresh experiment runs strategy {', '.join(OUR_FRESH)}, an engine "
                            f"({', '.join(ENGINES)}) or your own, not {strategy.name!r}")
    return check_corpus_settings(settings)


def run(settings, trial, progress: bool = False) -> list[dict]:
    """settings: the trial's structbench.bench.settings.Settings."""
    from tqdm import tqdm

    strategy = settings.strategy.name
    keys = check_settings(settings)
    paired = paired_strategy(settings, strategy, "on each schema")

    def key_order(name: str) -> str:
        # The engines write properties in schema order only; ours take the setting (the sweep's: any, the coverage
        # experiment's checker). Instances are spelled in schema order, which both accept.
        return "schema" if name in ENGINES else settings.key_order

    if paired is not None:
        prepare_paired(paired, trial.vocab)
    prepare_vocabulary(strategy, trial.vocab)  # per-vocabulary setup, shared by every schema: never timed
    def one(path: Path, name: str) -> dict:
        return schema_row(path, name, trial.vocab, key_order(name), settings.whitespace, keys["compile_timeout_s"])

    rows = []
    for k, path in enumerate(tqdm(keys["files"], desc=f"fresh/{strategy}/{keys['subset']}", disable=not progress,
                                  leave=False)):
        if paired is None:
            rows.append(one(path, strategy))
        elif k % 2:  # the paired strategy first
            other = one(path, paired)
            rows.append({**one(path, strategy), **paired_columns(paired, other)})
        else:
            row = one(path, strategy)
            rows.append({**row, **paired_columns(paired, one(path, paired))})
    return rows


def paired_columns(paired: str, row: dict) -> dict:
    """The paired strategy's row on the same schema, as this row's paired_* columns (its walk's where it walked:
    outcome ok; else its compile alone, or nothing)."""
    walked = row.get("outcome") == "ok"
    out = {"paired_strategy": paired, "paired_compile_ms": row.get("compile_ms"),
           "paired_instance": row["instance"] if walked else -1}
    if walked:
        out.update(paired_walk_columns(row["compile_ms"], row["mask_us"], row["advance_us"]))
    return out


def main(argv=None) -> int:
    """python -m structbench.experiments.fresh [RESULTS_DIR] [--strategies A,B]: the stored fresh rows as markdown
    tables (structbench.report.fresh), of every strategy stored or of those named."""
    import argparse

    from structbench.bench.store import read_results
    from structbench.report.fresh import format_fresh

    # (the whole docstring as the description: its first line alone stopped mid-sentence)
    parser = argparse.ArgumentParser(prog="python -m structbench.experiments.fresh",
                                     description=" ".join(main.__doc__.split()))
    parser.add_argument("results_dir", nargs="?", default="results")
    parser.add_argument("--strategies", default=None,
                        help="comma-separated strategies to compare (default: every one stored)")
    args = parser.parse_args(argv)
    df = read_results(args.results_dir, "fresh")
    df = df[df["kind"] == "fresh"]
    if args.strategies:
        wanted = args.strategies.split(",")
        missing = sorted(set(wanted) - set(df["strategy"]))
        if missing:
            parser.error(f"no fresh rows of {', '.join(missing)} in {args.results_dir}/fresh "
                         f"(stored: {', '.join(sorted(set(df['strategy']))) or 'none'})")
        df = df[df["strategy"].isin(wanted)]
    if df.empty:
        print(f"no fresh rows in {args.results_dir}/fresh: run python -m structbench +sweep=fresh")
        return 1
    print(format_fresh(df))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
