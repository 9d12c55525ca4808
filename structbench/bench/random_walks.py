"""Random walks over corpus schemas: does any mask take long or any walk grow the process, on answers no model
meant to write? Each compiled schema is walked from its start `--walks` times, `--steps` tokens each, every token
drawn uniformly from its state's mask (the end token aside), among the tokens of at most 2 characters with
probability `--short` (so keys and strings run long and close often, as a noisy model's do).

    python -m structbench.bench.random_walks [--every 1] [--walks 2] [--steps 60] [--short 0.5] [--strategy lazy]

Why: the fresh experiment walks valid instances only, the paths a schema means; a budget (structbench.limits) is
a promise about every path. A random walk found the free keys of an object counting minProperties making a state
per token prefix (seconds and hundreds of MB a mask; structbench.jsonschema.keys mask_twin mends it).
Printed: the outcomes (ok; `unsupported`, `not read`: not walked; `timeout` past `--timeout` seconds a schema;
`limit`, a LimitExceeded; `error`), the slowest masks with the text before them, and how far one schema's compile
and walks raised the process's peak resident memory. A cold start comes before each schema; a walk of JSON mode,
before the first, is not counted.
"""

from __future__ import annotations

import argparse
import gc
import resource
import sys
import time

import numpy as np

from structbench.errors import CompileTimeout, LimitExceeded, SettingsError, StructbenchError, UnsupportedSchema

_OURS = ("lazy", "tabled")


def walk_schema(constraint, vocab, rng, walks: int, steps: int, short: float, lengths: np.ndarray) -> tuple:
    """(the slowest mask's ms, the text before it) over `walks` random walks of `constraint`."""
    worst, before = 0.0, ""
    for _ in range(walks):
        state, text = constraint.start(), ""
        for _ in range(steps):
            t0 = time.perf_counter()
            allowed = constraint.mask(state)
            took = (time.perf_counter() - t0) * 1000
            if took > worst:
                worst, before = took, text
            ids = np.flatnonzero(allowed)
            ids = ids[ids != vocab.eos_id]
            if not len(ids):
                break
            if rng.random() < short:
                few = ids[lengths[ids] <= 2]
                ids = few if len(few) else ids
            token = int(rng.choice(ids))
            state = constraint.advance(state, token)
            text += vocab.tokens[token]
    return worst, before


def peak_rss_mb() -> float:
    """The process's peak resident memory so far, in MB (getrusage: kilobytes on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 2**10


def corpus_random_walks(files, strategy: str, vocab, args, progress=None) -> list[dict]:
    """One row per corpus file: outcome, the slowest mask (ms) and the text before it, and how far its compile and
    walks raised the process's peak resident memory (MB)."""
    from structbench.bench.strategies import compile_constraint
    from structbench.bench.tasks import Task
    from structbench.experiments.coverage import compile_limit, read_corpus_file
    from structbench.masking.cold_start import cold_start

    lengths = np.array([len(t) if t is not None else 1 << 20 for t in vocab.tokens])
    # The vocabulary's setup and numba's kernels, loaded by a walk not counted (else the first schema pays them)
    warm_up = compile_constraint(Task(name="warm-up", kind="schema", spec={"type": "object"}, reference=""), vocab,
                                 strategy)
    walk_schema(warm_up, vocab, np.random.default_rng(args.seed), 1, args.steps, args.short, lengths)
    rows = []
    for k, path in enumerate(files):
        file = read_corpus_file(path)
        row = {"file": path.name, "outcome": "not read", "worst_mask_ms": 0.0, "before": "", "peak_raised_mb": 0.0}
        if file.schema is not None:
            cold_start(vocab)
            peak = peak_rss_mb()
            try:
                with compile_limit(args.timeout):
                    task = Task(name=path.stem, kind="schema", spec=file.schema, reference="")
                    constraint = compile_constraint(task, vocab, strategy)
                    row["worst_mask_ms"], row["before"] = walk_schema(
                        constraint, vocab, np.random.default_rng(args.seed), args.walks, args.steps, args.short,
                        lengths)
                row["outcome"] = "ok"
            except CompileTimeout:
                row["outcome"] = "timeout"
            except UnsupportedSchema:
                row["outcome"] = "unsupported"
            except LimitExceeded as e:
                row["outcome"], row["before"] = "limit", str(e)[:200]
            except StructbenchError as e:
                row["outcome"], row["before"] = "error", f"{type(e).__name__}: {str(e)[:200]}"
            constraint = None
            gc.collect()
            row["peak_raised_mb"] = peak_rss_mb() - peak
        rows.append(row)
        if progress is not None:
            progress(k + 1, len(files))
    return rows


def main(argv=None) -> int:
    import pandas as pd

    from structbench.bench.shared_data import add_corpus_selection, corpus_command_inputs

    parser = argparse.ArgumentParser(prog="python -m structbench.bench.random_walks",
                                     description=__doc__.splitlines()[0])
    add_corpus_selection(parser)
    parser.add_argument("--strategy", default="lazy", help=f"one of ours: {', '.join(_OURS)} (default lazy)")
    parser.add_argument("--vocab", default="llama3", help="gpt2, llama3, qwen, or the lesson's toy (default llama3)")
    parser.add_argument("--walks", type=int, default=2, help="walks per schema (default 2)")
    parser.add_argument("--steps", type=int, default=60, help="tokens per walk at most (default 60)")
    parser.add_argument("--short", type=float, default=0.5, help="chance a token is drawn among the short ones")
    parser.add_argument("--seed", type=int, default=0, help="the walks' seed, the same for every schema")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per schema, compile and walks")
    parser.add_argument("--rows", type=int, default=10, help="slowest schemas printed (default 10)")
    parser.add_argument("--out", default=None, help="a Parquet file for the per-schema rows")
    args = parser.parse_args(argv)
    if args.strategy not in _OURS:
        parser.error(f"--strategy is one of ours: {', '.join(_OURS)}")
    if args.walks < 1 or args.steps < 1 or args.rows < 1 or not 0 <= args.short <= 1 or args.timeout <= 0:
        parser.error("--walks, --steps and --rows are at least 1, --short from 0 to 1, --timeout above 0")
    try:
        files, vocab, progress = corpus_command_inputs(parser, args)
        rows = pd.DataFrame(corpus_random_walks(files, args.strategy, vocab, args, progress))
        print(file=sys.stderr)
    except (SettingsError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.out:
        rows.to_parquet(args.out)
    print(f"{args.strategy} on {args.vocab}: {len(files)} files; {args.walks} walks of {args.steps} tokens each, "
          f"seed {args.seed}; peak resident memory {peak_rss_mb():,.0f} MB")
    print("outcomes: " + ", ".join(f"{k} {v}" for k, v in rows.outcome.value_counts().items()))
    walked = rows[~rows.outcome.isin(["not read", "unsupported"])]
    if len(walked):
        print(f"slowest mask: p50 {walked.worst_mask_ms.median():.2f} ms over schemas, max "
              f"{walked.worst_mask_ms.max():.1f} ms; peak resident memory raised by one schema: max "
              f"{walked.peak_raised_mb.max():.1f} MB")
        shown = walked.sort_values("worst_mask_ms", ascending=False).head(args.rows)
        print(shown[["file", "outcome", "worst_mask_ms", "peak_raised_mb", "before"]].to_string(
            index=False, float_format=lambda v: f"{v:.2f}"))
        failed = walked[walked.outcome != "ok"]
        if len(failed):
            print(failed[["file", "outcome", "before"]].to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
