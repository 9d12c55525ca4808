"""speed: walk the task's reference answer token by token under a masking strategy and time every mask and advance.

No model and no sampling: the same fixed, valid answer (spelled by the vocabulary's own
tokenizer where it has one) for every strategy, so
the per-step times compare like with like. Each step's mask is checked to
allow the answer's next token before anything is reported. A trial makes `cold_starts` compiles, each from what a
new process has after the vocabulary's setup (structbench.masking.cold_start), and walks each once, cold: its first
walk pays any lazy mask building (the fresh answer: compile + that walk's masks and advances; a single cold walk
moves by tens of percent between runs, so the summary takes the median over the starts). The first compile is
walked `n` times in all: the later walks show the warm cost. compile_ms counts compiling the task's grammar: the
per-vocabulary setup (our character codes, an engine's tokenizer info) is done once beforehand and not counted.

A strategy's fresh answer compared with another's across trials carries the host's drift between them (trials run
minutes apart; on a shared host a task's ratio moved 1.9x -> 3.2x between two sweeps of unchanged masks). With
`paired` (llguidance in the sweep), each cold start also compiles and walks the task cold under that strategy, right
before or after this one's (alternately: the paired one first at odd starts), and the cold row stores its fresh
answer (`paired_fresh_ms`), its compile and each step's mask and advance (`paired_*`): the summary's `vs_paired` is
the median of the starts' ratios, each between two walks seconds apart, and `--steps` compares the two step by step.
The paired strategy's own trial walks it alone.
"""

from __future__ import annotations

import gc
import time

import numpy as np

from tqdm import tqdm

from structbench.bench.strategies import SAMPLERS, UNCONSTRAINED, compile_constraint, strategy_names
from structbench.bench.walk import timed_walk
from structbench.errors import EngineUnavailable, SettingsError, WalkError
from structbench.limits import current as current_limits
from structbench.limits import exceeded
from structbench.masking import ENGINES, index_vocabulary, prepare
from structbench.masking.cold_start import cold_start


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
    cold_starts = settings.get("cold_starts", 1)
    if isinstance(cold_starts, bool) or not isinstance(cold_starts, int) or cold_starts < 1:
        raise SettingsError(f"cold_starts (compiles per trial, each walked once cold) must be an integer >= 1, "
                            f"got {cold_starts!r}")
    if settings.n + cold_starts - 1 > current_limits().max_answers:
        raise exceeded("max_answers", f"n={settings.n:,} walks and cold_starts={cold_starts:,} are more walks in one "
                                      f"trial than allowed")
    paired = paired_strategy(settings, strategy, "at each cold start")
    if paired is not None:
        prepare_paired(paired, vocab)
    prepare_vocabulary(strategy, vocab)  # per-vocabulary setup, shared by every grammar: not part of compile_ms
    rows = []
    bar = tqdm(total=settings.n + cold_starts - 1, desc=trial.label, disable=not progress, leave=False)
    for start in range(cold_starts):
        # Each start compiles anew (_cold_compile); the first start's compile is also walked n - 1 times more, warm.
        if paired is not None and start % 2:
            paired_walk = _paired_answer(task, vocab, paired, settings, token_ids)
        constraint, compile_ms = _cold_compile(task, vocab, strategy, settings)
        compile_work, compile_masks = constraint.work.chars, constraint.work.masks_built
        walks = []
        for walk in range(settings.n if start == 0 else 1):
            row = _walk(constraint, token_ids, vocab, strategy, task)
            row.update(sample=len(rows) + len(walks), text=answer, cold=walk == 0, compile_ms=compile_ms,
                       compile_work_chars=compile_work, compile_masks=compile_masks)
            walks.append(row)
            bar.update()
        if paired is not None:
            if not start % 2:
                paired_walk = _paired_answer(task, vocab, paired, settings, token_ids)
            walks[0].update(paired_strategy=paired, **paired_walk)  # the cold walk's row
        rows += walks
    bar.close()
    return rows


def paired_strategy(settings, strategy: str, where: str) -> str | None:
    """The `paired` setting (the speed and fresh experiments'): None, or a strategy that builds masks (checked before
    anything is run); None in the paired strategy's own trial, which has nothing to pair with. `where`: when it is
    walked beside this one, for the error."""
    paired = settings.get("paired")
    if paired is None:
        return None
    if not isinstance(paired, str) or paired not in strategy_names() or paired in UNCONSTRAINED + SAMPLERS:
        masking = [s for s in strategy_names() if s not in UNCONSTRAINED + SAMPLERS]
        raise SettingsError(f"paired (the strategy walked cold beside this one {where}) must be null or "
                            f"one that builds masks: {', '.join(masking)}; got {paired!r}")
    return None if paired == strategy else paired


def prepare_paired(paired: str, vocab) -> None:
    """prepare_vocabulary for the paired strategy; an engine that is not installed is named as the `paired`
    setting (the user asked for another strategy, and may not know the sweep pairs it)."""
    try:
        prepare_vocabulary(paired, vocab)
    except EngineUnavailable as e:
        raise EngineUnavailable(f"paired={paired} (walked beside this strategy; paired=null for none): {e}") from None


def _cold_compile(task, vocab, strategy: str, settings):
    """(the task's constraint under `strategy`, its compile in ms), compiled from what a new process has after the
    vocabulary's setup (cold_start: else a compile after the first would read the automata the first kept)."""
    cold_start(vocab)
    t0 = time.perf_counter()
    constraint = compile_constraint(task, vocab, strategy, settings.key_order, settings.whitespace)
    return constraint, (time.perf_counter() - t0) * 1000


def _paired_answer(task, vocab, paired: str, settings, token_ids: list[int]) -> dict:
    """The paired strategy's walk at one cold start (a compile after a cold start, and one walk), as the cold row's
    columns: its fresh answer in ms, and each step's mask and advance in µs (the summary's steps compare them with
    this strategy's, step by step: structbench.report.summary.cold_steps)."""
    constraint, compile_ms = _cold_compile(task, vocab, paired, settings)
    row = _walk(constraint, token_ids, vocab, paired, task)
    return paired_walk_columns(compile_ms, row["mask_us"], row["advance_us"])


def paired_walk_columns(compile_ms: float, mask_us, advance_us) -> dict:
    """A paired strategy's cold walk as this row's paired_* columns (the speed and fresh experiments' alike): its
    compile, each step's mask and advance, and its fresh answer."""
    return {"paired_compile_ms": compile_ms, "paired_mask_us": mask_us, "paired_advance_us": advance_us,
            "paired_fresh_ms": fresh_answer_ms(compile_ms, mask_us, advance_us)}


def fresh_answer_ms(compile_ms: float, mask_us, advance_us) -> float:
    """A fresh answer in ms: the compile, then every mask and advance of the cold walk (µs each)."""
    return compile_ms + (sum(mask_us) + sum(advance_us)) / 1000


def _walk(constraint, token_ids: list[int], vocab, strategy: str, task) -> dict:
    """One walk of the answer's tokens (structbench.bench.walk.timed_walk): every mask and advance timed, each mask
    checked to allow the next token; a refusal is an error naming the token and the step."""
    chars0, reads0, built0 = constraint.work.chars, constraint.work.reads, constraint.work.masks_built
    t_walk = time.perf_counter()
    walk = timed_walk(constraint, token_ids, vocab)
    wall_ms = (time.perf_counter() - t_walk) * 1000
    if walk.refused_at is not None:
        raise WalkError(f"strategy {strategy!r} refused token {vocab.tokens[token_ids[walk.refused_at]]!r} at step "
                        f"{walk.refused_at} of the reference answer {task.reference!r}")
    return {
        "finished": True,
        "category": "valid",
        "n_tokens": len(token_ids) - 1,
        "attempts": 1,
        "removed_mass": [],
        "mask_us": walk.mask_us,
        "advance_us": walk.advance_us,
        "allowed_counts": walk.allowed_counts,
        "work_chars": constraint.work.chars - chars0,
        "work_reads": constraint.work.reads - reads0,
        "masks_built": constraint.work.masks_built - built0,
        "wall_ms": wall_ms,
    }


def main(argv=None) -> int:
    """python -m structbench.experiments.speed [RESULTS_DIR] [--steps]: the stored speed rows' summary (the one the
    sweep prints at its end): the fresh answer per task and strategy, then mask time per step per strategy; with
    --steps, each cold walk step by step beside its paired strategy's (format_steps)."""
    import argparse

    from structbench.bench.store import read_results
    from structbench.report.summary import format_summary

    parser = argparse.ArgumentParser(
        prog="python -m structbench.experiments.speed",
        description="The stored speed rows' summary (the one the sweep prints at its end): the fresh answer per task "
                    "and strategy, then mask time per step per strategy; with --steps, each cold walk step by step "
                    "beside its paired strategy's.")
    parser.add_argument("results_dir", nargs="?", default="results",
                        help="the results store holding speed/ (default: results)")
    parser.add_argument("--steps", action="store_true",
                        help="each task's cold walk step by step: every strategy that walked a paired one beside it "
                             "(the median over the cold starts of each step's mask and advance, µs, both sides)")
    parser.add_argument("--task", default=None, help="with --steps: this task alone (age, person, nested, ...)")
    parser.add_argument("--strategy", default=None, help="with --steps: this strategy alone (lazy, tabled, ...)")
    args = parser.parse_args(argv)
    if not args.steps and (args.task or args.strategy):
        parser.error("--task and --strategy choose what --steps shows; add --steps")
    df = read_results(args.results_dir, "speed")
    df = df[df["kind"] == "speed"] if "kind" in df else df
    if df.empty:
        print(f"no speed rows in {args.results_dir}/speed: run python -m structbench +sweep=speed")
        return 1
    if not args.steps:
        print(format_summary(df, f"{args.results_dir}/speed"))
        return 0
    for name, value in (("task", args.task), ("strategy", args.strategy)):
        if value is not None and value not in set(df[name]):
            parser.error(f"no speed rows of {name} {value!r} in {args.results_dir}/speed; "
                         f"stored: {', '.join(sorted(set(df[name])))}")
    out = format_steps(df, task=args.task, strategy=args.strategy)
    if not out:
        print(f"no cold walk in {args.results_dir}/speed has its paired strategy's steps (speed parts written from "
              f"2026-12-07 store them): run python -m structbench +sweep=speed")
        return 1
    print(out)
    return 0


def format_steps(df, task: str | None = None, strategy: str | None = None, top: int = 5) -> str:
    """Per task and strategy with a paired strategy's steps (structbench.report.summary.cold_steps): a table of the
    cold walk step by step, each step's token (the answer spelled by the rows' vocabulary, where it can be loaded;
    else its number alone), this strategy's and the paired one's medians in µs and the median ratio; then how much
    longer it takes over the steps where it is slower, and how much of that the `top` steps it is slowest at hold."""
    from structbench.report.summary import cold_steps

    steps = cold_steps(df)
    if steps.empty or "paired_us" not in steps:
        return ""
    steps = steps[steps["paired_us"].notna()]
    if task is not None:
        steps = steps[steps["task"] == task]
    if strategy is not None:
        steps = steps[steps["strategy"] == strategy]
    blocks = []
    by = ["task", "strategy"] + (["vocab_size"] if "vocab_size" in steps else [])  # (cold_steps': where sizes vary)
    for key, group in steps.groupby(by, sort=True):
        task_name, strategy_name = key[0], key[1]
        rows = df[(df["task"] == task_name) & (df["strategy"] == strategy_name)]
        if len(key) > 2:
            rows = rows[rows["vocab_size"] == key[2]]
        tokens = _step_tokens(rows.iloc[0])

        def token(step: int) -> str:  # (the step's token where the answer's spelling reaches it, else nothing)
            return tokens[step] if tokens is not None and step < len(tokens) else ""

        paired = group["paired"].iloc[0]
        size = f" ({key[2]:,} tokens)" if len(key) > 2 else ""
        lines = [f"### {task_name}{size}: {strategy_name} beside {paired}, each cold step (mask + advance), median "
                 f"over {int(group['cold_starts'].iloc[0])} cold starts", "",
                 f"| step | token taken | {strategy_name} µs | {paired} µs | ratio |", "|---|---|---|---|---|"]
        for _, r in group.iterrows():
            lines.append(f"| {int(r['step'])} | {token(int(r['step']))} | {r['us']:.1f} | {r['paired_us']:.1f} | "
                         f"{r['vs_paired']:.2f} |")
        ours, theirs = group["us"].sum(), group["paired_us"].sum()
        lines += ["", f"sum of the step medians: {strategy_name} {ours:,.0f} µs, {paired} {theirs:,.0f} µs"]
        gap = (group["us"] - group["paired_us"]).to_numpy()
        lost, won = gap[gap > 0].sum(), abs(gap[gap < 0].sum())
        if lost > 0:
            order = [k for k in np.argsort(-gap)[:top] if gap[k] > 0]
            at = group["step"].to_numpy(dtype=int)
            named = ", ".join(f"{at[k]} ({token(at[k])}: +{gap[k]:,.0f} µs)" if token(at[k]) else
                              f"{at[k]} (+{gap[k]:,.0f} µs)" for k in order)
            lines.append(f"{strategy_name} takes {lost:,.0f} µs more than {paired} over the steps where it is slower, "
                         f"{won:,.0f} µs less over the others; the {len(order)} it is slowest at hold "
                         f"{gap[order].sum() / lost:.0%} of the former: {named}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _step_tokens(row) -> list[str] | None:
    """The walk's tokens, as the trial spelled its answer (`text`) with its vocabulary (`vocab`, `vocab_size`), and
    `end` for the end token; None where that vocabulary cannot be loaded here (a synthetic one, a missing package)."""
    from structbench.lm.real_vocab import REAL_VOCABS, real_vocabulary
    from structbench.lm.vocab import toy_vocabulary

    try:
        if row["vocab"] == "toy":
            vocab = toy_vocabulary()
        elif row["vocab"] in REAL_VOCABS:
            vocab = real_vocabulary(row["vocab"], int(row["vocab_size"]))
        else:
            return None
        ids = vocab.encode(row["text"])
    except (ImportError, OSError, ValueError):  # (labels only: the table reads the same without them)
        return None
    return [repr(vocab.text_of(t)).replace("|", "\\|") for t in ids] + ["end"]


if __name__ == "__main__":
    raise SystemExit(main())
