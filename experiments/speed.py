"""speed: walk the task's reference answer token by token under a masking strategy and time every mask.

No model and no sampling: the same fixed, valid answer (spelled by the vocabulary's own
tokenizer where it has one) for every strategy, so
the per-step times compare like with like. Each step's mask is checked to
allow the answer's next token before anything is reported. `n` walks per
trial over one compiled constraint: walk 0 pays any lazy mask building,
later walks show the warm cost. compile_ms counts compiling the task's grammar: the per-vocabulary
setup (our character codes, an engine's tokenizer info) is done once beforehand and not counted.
"""

from __future__ import annotations

import gc
import time

import numpy as np
from tqdm import tqdm

from structbench.bench.strategies import SAMPLERS, UNCONSTRAINED, compile_constraint
from structbench.errors import WalkError
from structbench.masking import ENGINES, index_vocabulary, prepare, unpack_bits


def prepare_vocabulary(strategy: str, vocab) -> None:
    """The per-vocabulary setup every grammar shares (an engine's tokenizer info, our codes and prefix tree).
    What it leaves is then moved out of the garbage collector's passes (gc.freeze, as a server does after its
    warm-up): else each full pass walks it again (about 0.1 s on Llama 3), and lands inside whichever mask or
    compile is running, so the timed work's tails would show the collector, not the work."""
    if strategy in ENGINES:
        prepare(strategy, vocab)
    else:
        index_vocabulary(vocab)
    gc.collect()  # what is garbage now is not frozen
    gc.freeze()


def run(settings, trial, progress: bool = False) -> list[dict]:
    """settings: the trial's structbench.bench.settings.Settings."""
    strategy = settings.strategy.name
    if strategy in UNCONSTRAINED:
        raise ValueError(f"the speed experiment times masks; strategy {strategy!r} builds none "
                         f"(use naive, tabled or an engine)")
    if strategy in SAMPLERS:
        raise ValueError(f"the speed experiment times masks along one fixed answer; {strategy!r} is a sampler "
                         f"(its cost is model calls and constraint checks per answer: the distortion experiment "
                         f"measures it); time the constraint it builds on, tabled or naive")
    vocab, task = trial.vocab, trial.task
    answer = task.walk_answer or task.reference
    if not task.referee()(answer):
        raise WalkError(f"task {task.name!r}: the answer to walk is not valid under its own referee")
    token_ids = vocab.encode(answer) + [vocab.eos_id]
    if "".join(vocab.text_of(t) for t in token_ids) != answer:
        raise WalkError(f"vocabulary {vocab.name!r} does not spell {answer!r} token by token")
    prepare_vocabulary(strategy, vocab)  # per-vocabulary setup, shared by every grammar: not part of compile_ms
    t0 = time.perf_counter()
    constraint = compile_constraint(task, vocab, strategy, settings.key_order, settings.whitespace)
    compile_ms = (time.perf_counter() - t0) * 1000
    compile_work, compile_masks = constraint.work.chars, constraint.work.masks_built
    rows = []
    for sample in tqdm(range(settings.n), desc=trial.label, disable=not progress, leave=False):
        chars0, reads0, built0 = constraint.work.chars, constraint.work.reads, constraint.work.masks_built
        mask_us, advance_us, allowed_counts = [], [], []
        t_walk = time.perf_counter()
        state = constraint.start()
        for step, tid in enumerate(token_ids):
            t = time.perf_counter_ns()
            bits = constraint.mask_bits(state)  # every strategy answers in the engines' int32 bitmask layout
            mask_us.append((time.perf_counter_ns() - t) / 1000.0)
            allowed = unpack_bits(bits, len(vocab))
            allowed_counts.append(int(np.count_nonzero(allowed)))
            if not allowed[tid]:
                raise WalkError(f"strategy {strategy!r} refused token {vocab.tokens[tid]!r} at step {step} "
                                f"of the reference answer {task.reference!r}")
            if tid != vocab.eos_id:
                t = time.perf_counter_ns()
                state = constraint.advance(state, tid)
                advance_us.append((time.perf_counter_ns() - t) / 1000.0)
        rows.append({
            "sample": sample,
            "text": answer,
            "finished": True,
            "category": "valid",
            "n_tokens": len(token_ids) - 1,
            "attempts": 1,
            "removed_mass": [],
            "mask_us": mask_us,
            "advance_us": advance_us,
            "allowed_counts": allowed_counts,
            "compile_ms": compile_ms,
            "compile_work_chars": compile_work,
            "work_chars": constraint.work.chars - chars0,
            "work_reads": constraint.work.reads - reads0,
            "compile_masks": compile_masks,
            "masks_built": constraint.work.masks_built - built0,
            "wall_ms": (time.perf_counter() - t_walk) * 1000,
        })
    return rows


def main(argv=None) -> int:
    """python -m structbench.experiments.speed [RESULTS_DIR]: the stored speed rows' summary (the one the sweep
    prints at its end): the fresh answer per task and strategy, then mask time per step per strategy."""
    import argparse

    from structbench.bench.store import read_results
    from structbench.report.summary import format_summary

    parser = argparse.ArgumentParser(description=main.__doc__.splitlines()[0])
    parser.add_argument("results_dir", nargs="?", default="results")
    args = parser.parse_args(argv)
    df = read_results(args.results_dir, "speed")
    df = df[df["kind"] == "speed"] if "kind" in df else df
    if df.empty:
        print(f"no speed rows in {args.results_dir}/speed: run python -m structbench +sweep=speed")
        return 1
    print(format_summary(df, f"{args.results_dir}/speed"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
