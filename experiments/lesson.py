"""lesson: the data behind the lesson's figures, stored as rows so figures never recompute.

One trial per `part`:

first_step   the toy model's first-step probabilities before and after the age mask
mask_table   the age pattern's mask table, state x token
distortion   the two-step model: its own odds among valid answers vs what masking produces
formulas     the closed forms drawn in the lesson: p^n curves, 1/p, the mask_cost lines
length       measured: the toy model copying digit strings of growing length, unconstrained,
             so the valid share can be set against p^n (chatter off: one failure kind only)
retry        measured: attempts the retry strategy needs, against 1/p from unconstrained answers
work         measured: mask work (the work counter) against the lesson's mask_cost formula

Analytic parts store data points in the `figure / series / label / x / y` columns;
measured parts store one row per generated answer, like the validity experiment.
"""

from __future__ import annotations

import numpy as np
from structbench.experiments.validity import answer_rows

from structbench.bench.formulas import chance_all_valid, distortion_example, expected_attempts, mask_cost
from structbench.bench.strategies import compile_constraint
from structbench.bench.tasks import AGE_PATTERN, AGE_REFERENCE, Task, age_task, person_task
from structbench.lm.sampling import masked_softmax
from structbench.lm.toy_model import ToyModel
from structbench.lm.vocab import synthetic_vocabulary, toy_vocabulary
from structbench.masking import mask_table
from structbench.regular import compile_pattern

DIGITS = "31415926535897932384626433832795"  # spelled one digit per toy token (no "42", "17" or "20" in it)
LENGTHS = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32)
LESSON_CURVES = (0.999, 0.99, 0.98, 0.95)
RETRY_GRID = {"age": (0.5, 1.0, 1.5, 2.0), "person": (0.25, 0.5, 0.75, 1.0, 1.25)}
RETRY_MAX_ATTEMPTS = 60
WORK_VOCAB_SIZES = (83, 1000, 4000)


def _point(figure, series, label, x, y, **extra) -> dict:
    return {"figure": figure, "series": series, "label": label, "x": float(x), "y": float(y), "sample": 0,
            "task": extra.pop("task", "lesson"), "strategy": extra.pop("strategy", "none"), **extra}


def _state_labels(dfa, reference: str) -> dict[int, str]:
    """Name each state by the shortest prefix of the reference that reaches it."""
    labels: dict[int, str] = {}
    for i in range(len(reference) + 1):
        labels.setdefault(dfa.walk(dfa.start, reference[:i]), reference[:i] or "(start)")
    return labels


def first_step(settings):
    vocab = toy_vocabulary()
    model = ToyModel(AGE_REFERENCE, vocab)
    logits = model.logits("", np.random.default_rng(0))
    before = masked_softmax(logits, np.ones(len(vocab), dtype=bool))
    after = masked_softmax(logits, compile_constraint(age_task(), vocab, "tabled").mask(0))
    rows = []
    for series, probs in (("before", before), ("after", after)):
        rows += [_point("masked_step", series, tok, i, p, task="age", strategy="tabled")
                 for i, (tok, p) in enumerate(zip(vocab.tokens, probs))]
    return rows


def mask_table_part(settings):
    vocab = toy_vocabulary()
    dfa = compile_pattern(AGE_PATTERN)
    table = mask_table(dfa, vocab)
    labels = _state_labels(dfa, AGE_REFERENCE)
    return [{**_point("mask_table", labels[s], vocab.tokens[j], j, table[s, j], task="age", strategy="tabled"), "sample": s}
            for s in range(dfa.n_states) for j in range(len(vocab))]


def distortion(settings):
    d = distortion_example()
    return [_point("distortion", series, answer, i, p) for series in ("conditional", "masked")
            for i, (answer, p) in enumerate(sorted(d[series].items()))]


def formulas(settings):
    rows = [_point("validity_vs_length", f"p={p}", f"{p:.1%} per token", n, chance_all_valid(p, n))
            for p in LESSON_CURVES for n in range(1, 201)]
    rows += [_point("retry", "1/p", "", p, expected_attempts(p)) for p in np.linspace(0.05, 1.0, 200)]
    per_answer = mask_cost(n_steps=200, vocab_size=128_000, avg_len=4, n_states=50)
    build = 50 * 128_000 * 4
    for answers in range(11):
        rows.append(_point("mask_cost", "naive", "check every token at every step", answers, answers * per_answer["naive"]))
        rows.append(_point("mask_cost", "table", "build a table once, read a row per step", answers,
                           build + answers * (per_answer["table"] - build)))
    return rows


def length(settings):
    vocab = toy_vocabulary()
    rows = []
    for n_digits in LENGTHS:
        reference = DIGITS[:n_digits]
        task = Task(f"copy{n_digits}", "pattern", reference, reference, opening=reference[0])
        model = ToyModel(reference, vocab, noise=settings.model.noise, skill=settings.model.skill, chatter=0.0)
        for row in answer_rows(task, vocab, model, "none", settings.n, settings.seed, 2 * n_digits + 8, 1):
            # The answer has n_digits tokens plus the end token: n choices, each a chance to break it.
            rows.append({**row, "figure": "validity_vs_length", "series": "measured", "x": float(n_digits + 1),
                         "task": task.name, "strategy": "none", "chatter": 0.0, "noise": model.noise})
    return rows


def retry(settings):
    vocab = toy_vocabulary()
    rows = []
    for task in (age_task(), person_task()):
        for noise in RETRY_GRID[task.name]:
            model = ToyModel(task.reference, vocab, noise=noise)
            for strategy in ("none", "retry"):
                for row in answer_rows(task, vocab, model, strategy, settings.n, settings.seed,
                                       settings.max_tokens, RETRY_MAX_ATTEMPTS):
                    rows.append({**row, "figure": "retry", "series": "measured", "x": noise, "task": task.name,
                                 "strategy": strategy, "noise": noise, "max_attempts": RETRY_MAX_ATTEMPTS})
    return rows


def work(settings):
    """Per task x strategy x vocabulary: the answers' rows, and one point setting the work counter's
    total (machine steps plus table reads) against mask_cost for the same steps, |V|, mean token
    length and number of masks built (S)."""
    rows = []
    for size in WORK_VOCAB_SIZES:
        vocab = toy_vocabulary() if size == 83 else synthetic_vocabulary(size, 0)
        avg_len = float(vocab.lengths[vocab.lengths > 0].mean())
        for task in (age_task(), person_task()):
            model = ToyModel(task.reference, vocab)
            for strategy in ("naive", "tabled"):
                n = min(settings.n, 50)  # naive at 4,000 tokens walks the whole vocabulary every step
                answers = answer_rows(task, vocab, model, strategy, n, settings.seed, settings.max_tokens, 1)
                common = {"task": task.name, "strategy": strategy, "vocab": vocab.name, "vocab_size": len(vocab),
                          "max_attempts": 1}
                rows += [{**row, **common} for row in answers]
                steps = sum(len(r["mask_us"]) for r in answers)
                states = answers[0]["compile_masks"] + sum(r["masks_built"] for r in answers)
                measured = answers[0]["compile_work_chars"] + sum(r["work_chars"] + r["work_reads"] for r in answers)
                predicted = mask_cost(steps, len(vocab), avg_len, states)["naive" if strategy == "naive" else "table"]
                rows.append({**_point("work", f"{task.name}/{strategy}", f"|V|={len(vocab)}", predicted, measured),
                             **common, "n_tokens": steps, "masks_built": states})
    return rows


PARTS = {"first_step": first_step, "mask_table": mask_table_part, "distortion": distortion, "formulas": formulas,
         "length": length, "retry": retry, "work": work}


def run(settings, trial, progress: bool = False) -> list[dict]:
    """settings: the trial's structbench.bench.settings.Settings."""
    return PARTS[settings.part](settings)
