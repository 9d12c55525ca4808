"""How far masking moves a real model's answers: the realdistortion rows summarised, per task.

    python -m structbench.report.real_distortion [--results-dir results] [--experiment realdistortion]

prints two markdown tables from stored rows only (experiments/realdistortion.py writes them).

**KL(q̃‖p*), estimated.** For locally constrained decoding (LCD: tabled or naive) at temperature 1, with
logits fixed by the prefix, q(y) = p(y) / W(y), W(y) = Π_t Z_t(y) the product of the kept masses along y
(Z_t = 1 - removed_mass). With Q = q's chance of finishing within the budget and q̃ = q given that,

    KL(q̃‖p*) = log Z - log Q - E_q̃[log W]

Each term has its estimate and standard error, from independent runs:

    log Z       log of the mean of the SMC (or AWRS) runs' Ẑ (unbiased for Z); s.e. by the delta method,
                se(Ẑ) / Ẑ. The log of a mean is biased low (Jensen): by about se(log Ẑ)²/2, small when
                se(log Ẑ) is.
    log Q       the share of LCD runs that finished; s.e. √((1 - Q) / (R·Q)) (0 when every run finished)
    E_q̃[log W]  the mean of Σ_t log Z_t over the finished LCD runs; s.e. sd / √k

and the estimate's 95% interval is ± 1.96 √(sum of the squared s.e.), a normal approximation. KL is ≥ 0
in truth: an estimate below 0 is noise. The LCD runs also give a second unbiased Ẑ, the mean of W·[finished]
(SMC with one particle), shown as a cross-check of SMC's.

**How far the answers move.** The answers of each strategy, as an empirical law over a value: the answer's
`age` (the field every task here asks for; "no valid answer" for an answer that is not valid), or its whole
text. SMC's answers approach p* as particles grow (with few particles they lean toward q). The total
variation between LCD's and SMC's laws is compared with its permutation null: the TV between the two
strategies' answers pooled and split at random (PERMUTATIONS times, seeded), whose mean is what sampling alone
gives and whose tail gives the p-value.

KL is between token sequences: two spellings of one text (e.g. `{"age": 42}` as 7 or 8 tokens) are two
outcomes, so the KL can be large where the texts barely move; the tables give both.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import Counter
from dataclasses import dataclass

import numpy as np
import pandas as pd

from structbench.bench.referees import parse_json
from structbench.bench.store import read_results
from structbench.errors import MissingRows
from structbench.report.summary import Z95

LCD = ("tabled", "naive")
Z_SAMPLERS = ("smc", "awrs")
FIELD = "age"
NO_ANSWER = "no valid answer"
NO_FIELD = f"(no {FIELD})"
PERMUTATIONS = 2000
PERMUTATION_SEED = 0
TOP = 3  # answers listed per strategy in the table
TASK_RANK = {"age": 0, "person": 1}  # then the others (nested by depth) by name


# --- the estimate of KL(q̃‖p*) -------------------------------------------------------------------------


def log_kept(removed_mass) -> float:
    """Σ_t log Z_t along one answer, Z_t = 1 - removed mass (-inf when a kept mass rounded to 0)."""
    removed = np.asarray(removed_mass, dtype=float)
    with np.errstate(divide="ignore"):
        return float(np.log1p(-removed).sum())


@dataclass(frozen=True)
class Term:
    """An estimate, its standard error, and the runs behind it."""

    value: float
    se: float
    runs: int


def z_from_runs(log_z_hats) -> tuple[Term, Term]:
    """(Ẑ, log Ẑ) from the runs' log Ẑ: the mean of Ẑ (computed shifted, so e^-700 does not underflow) with
    its standard error, and its log with the delta method's."""
    logs = np.asarray(log_z_hats, dtype=float)
    n = len(logs)
    if n == 0 or not np.isfinite(logs).any():
        return Term(0.0 if n else math.nan, math.nan, n), Term(-math.inf if n else math.nan, math.nan, n)
    top = logs[np.isfinite(logs)].max()
    w = np.exp(logs - top)  # a dead run (-inf) weighs 0
    mean = float(w.mean())
    sd = float(w.std(ddof=1)) if n > 1 else math.nan
    z = Term(math.exp(top) * mean, math.exp(top) * sd / math.sqrt(n), n)
    return z, Term(float(top + math.log(mean)), sd / math.sqrt(n) / mean, n)


@dataclass(frozen=True)
class KlEstimate:
    """KL(q̃‖p*) = log Z - log Q - E_q̃[log W] and its parts (see the module's docstring)."""

    z: Term             # SMC's mean Ẑ
    log_z: Term
    finished: Term      # Q: the share of LCD runs that finished (value), over `runs` runs
    log_q: Term
    mean_log_w: Term    # E_q̃[Σ log Z_t] over the finished LCD runs
    z_from_lcd: Term    # the LCD runs' own Ẑ: mean of W·[finished]
    kl: float
    kl_se: float

    @property
    def interval(self) -> tuple[float, float]:
        return self.kl - Z95 * self.kl_se, self.kl + Z95 * self.kl_se


def estimate_kl(lcd: pd.DataFrame, samplers: pd.DataFrame) -> KlEstimate:
    """The estimate from LCD rows (finished, removed_mass) and sampler rows (log_z_hat)."""
    z, log_z = z_from_runs(samplers["log_z_hat"].to_numpy(float))
    r = len(lcd)
    finished = lcd["finished"].to_numpy(bool)
    k = int(finished.sum())
    q = k / r if r else math.nan
    log_w = np.array([log_kept(m) for m in lcd["removed_mass"]], dtype=float)
    kept = log_w[finished]
    mean = float(kept.mean()) if k else math.nan
    mean_se = float(kept.std(ddof=1)) / math.sqrt(k) if k > 1 else math.nan
    log_q_se = math.sqrt((1 - q) / (r * q)) if k else math.nan
    weights = np.where(finished, np.exp(log_w), 0.0)
    z_lcd = Term(float(weights.mean()) if r else math.nan,
                 float(weights.std(ddof=1)) / math.sqrt(r) if r > 1 else math.nan, r)
    kl = log_z.value - math.log(q) - mean if k else math.nan
    kl_se = math.sqrt(log_z.se ** 2 + log_q_se ** 2 + mean_se ** 2)
    return KlEstimate(z, log_z, Term(q, math.nan, r), Term(math.log(q) if k else math.nan, log_q_se, r),
                      Term(mean, mean_se, k), z_lcd, kl, kl_se)


# --- the answers' laws ------------------------------------------------------------------------------------


def answer_value(text: str, category: str, by: str = FIELD) -> str:
    """What an answer is compared by: its `by` field (an object's top-level key; `text`: the whole text), or
    NO_ANSWER for an answer that is not valid."""
    if category != "valid":
        return NO_ANSWER
    if by == "text":
        return text
    try:
        value = parse_json(text)
    except ValueError:
        return NO_ANSWER
    if not isinstance(value, dict) or by not in value:
        return f"(no {by})"
    return json.dumps(value[by])


def law(values) -> dict:
    """The empirical law of a list of values: value -> share, largest first (ties by value)."""
    counts = Counter(values)
    n = sum(counts.values())
    return {v: c / n for v, c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))}


def total_variation(a: dict, b: dict) -> float:
    return 0.5 * sum(abs(a.get(v, 0.0) - b.get(v, 0.0)) for v in set(a) | set(b))


def tv_of_laws(a: list, b: list) -> float:
    return total_variation(law(a), law(b))


def mean_gap(a: list, b: list) -> float:
    return abs(float(np.mean(a)) - float(np.mean(b)))


@dataclass(frozen=True)
class Shift:
    """A distance between two strategies' answers, and what splitting their pooled answers at random gives."""

    value: float
    null_mean: float
    p_value: float


NO_SHIFT = Shift(math.nan, math.nan, math.nan)


def shift(a: list, b: list, distance=tv_of_laws, permutations: int = PERMUTATIONS,
          seed: int = PERMUTATION_SEED) -> Shift:
    """distance(a, b) against its permutation null (the pooled answers split at random, seeded)."""
    if not a or not b:
        return NO_SHIFT
    observed = distance(a, b)
    pooled = np.array(list(a) + list(b), dtype=object)
    rng = np.random.default_rng(seed)
    null = np.empty(permutations)
    for i in range(permutations):
        order = rng.permutation(len(pooled))
        null[i] = distance(pooled[order[:len(a)]].tolist(), pooled[order[len(a):]].tolist())
    p = (1 + int((null >= observed - 1e-12).sum())) / (1 + permutations)
    return Shift(observed, float(null.mean()), p)


# --- per task ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TaskSummary:
    label: str            # the task (nested tasks with their depth), and the model when the rows hold several
    model: str
    estimate: KlEstimate | None  # None without both LCD and sampler rows
    values: dict          # strategy -> its answers' FIELD values
    texts: dict           # strategy -> its answers' texts (NO_ANSWER for invalid ones)
    valid_share: dict     # strategy -> (valid answers, answers)
    tokens: dict          # strategy -> mean tokens per answer
    model_calls: dict     # strategy -> mean model calls per answer
    particles: int | None
    field_shift: Shift    # TV between LCD's and SMC's FIELD values
    text_shift: Shift     # TV between their texts
    token_shift: Shift    # |difference| of their mean tokens per answer


def task_label(task: str, depth) -> str:
    return f"nested {int(depth)}" if task == "nested" else task


def _key_order(config_json: str) -> str:
    try:
        return json.loads(config_json).get("key_order", "any")
    except (TypeError, ValueError):
        return "any"


def realdistortion_rows(df: pd.DataFrame) -> pd.DataFrame:
    rows = df[df["kind"] == "realdistortion"] if "kind" in df else df
    if rows.empty:
        raise MissingRows("no realdistortion rows (run: python -m structbench +sweep=realdistortion)")
    return rows


def summarize(df: pd.DataFrame) -> list[TaskSummary]:
    """One summary per case (model, task, budget, key order, whitespace), every seed's runs pooled."""
    rows = realdistortion_rows(df).copy()
    rows["key_order"] = rows["config_json"].map(_key_order)
    case_keys = ["model", "task", "schema_depth", "max_tokens", "key_order", "whitespace"]
    several_models = rows["model"].nunique() > 1
    out = []
    for key, case in rows.groupby(case_keys, sort=False, dropna=False):
        model, task, depth = key[0], key[1], key[2]
        by = {s: g for s, g in case.groupby("strategy", sort=False)}
        lcd = pd.concat([by[s] for s in LCD if s in by]) if any(s in by for s in LCD) else None
        samplers = pd.concat([by[s] for s in Z_SAMPLERS if s in by]) if any(s in by for s in Z_SAMPLERS) else None
        estimate = estimate_kl(lcd, samplers) if lcd is not None and samplers is not None else None
        values = {s: [answer_value(t, c) for t, c in zip(g["text"], g["category"])] for s, g in by.items()}
        texts = {s: [answer_value(t, c, "text") for t, c in zip(g["text"], g["category"])] for s, g in by.items()}
        pair = [s for s in LCD if s in by][:1] + [s for s in Z_SAMPLERS if s in by][:1]
        tokens = {s: [int(n) for n in g["n_tokens"]] for s, g in by.items()}
        shifts = [shift(v[pair[0]], v[pair[1]], distance) if len(pair) == 2 else NO_SHIFT
                  for v, distance in ((values, tv_of_laws), (texts, tv_of_laws), (tokens, mean_gap))]
        particles = samplers["particles"].dropna() if samplers is not None else pd.Series(dtype=float)
        label = task_label(task, depth) + (f" ({model})" if several_models else "")
        out.append(TaskSummary(
            label, model, estimate, values, texts,
            {s: (int((g["category"] == "valid").sum()), len(g)) for s, g in by.items()},
            {s: float(np.mean(n)) for s, n in tokens.items()},
            {s: float(g["model_calls"].mean()) for s, g in by.items()},
            int(particles.iloc[0]) if particles.nunique() == 1 else None, *shifts))
    return sorted(out, key=lambda s: (s.model, TASK_RANK.get(s.label, len(TASK_RANK)), s.label))


# --- the tables -------------------------------------------------------------------------------------------


def _num(x: float, digits: int = 2) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    return f"{x:.{digits}f}"


def _sci(x: float) -> str:
    return "—" if math.isnan(x) else f"{x:.3g}"


def _top(values: list, k: int = TOP) -> str:
    shares = law(values)
    return ", ".join(f"{v} {s:.0%}" if s >= 0.095 else f"{v} {s:.1%}" for v, s in list(shares.items())[:k])


def estimate_table(summaries: list[TaskSummary]) -> str:
    lines = [("| task | Ẑ (SMC runs) | log Ẑ | Q: LCD runs finished | E_q̃[Σ log Z_t] | **KL(q̃‖p\\*)** [95%] | "
              "Ẑ from LCD weights | none valid |"),
             "|---|---|---|---|---|---|---|---|"]
    for s in summaries:
        e = s.estimate
        none = s.valid_share.get("none")
        none_text = f"{none[0]}/{none[1]}" if none else "—"
        if e is None:
            lines.append(f"| {s.label} | — | — | — | — | — | — | {none_text} |")
            continue
        lo, hi = e.interval
        lines.append(
            f"| {s.label} | {_sci(e.z.value)} ± {_sci(e.z.se)} ({e.z.runs}) | {_num(e.log_z.value)} ± "
            f"{_num(e.log_z.se)} | {e.mean_log_w.runs}/{e.finished.runs} | {_num(e.mean_log_w.value)} ± "
            f"{_num(e.mean_log_w.se)} | **{_num(e.kl)}** [{_num(lo)}, {_num(hi)}] | "
            f"{_sci(e.z_from_lcd.value)} ± {_sci(e.z_from_lcd.se)} | {none_text} |")
    return "\n".join(lines)


def shift_table(summaries: list[TaskSummary]) -> str:
    lines = [(f"| task | TV of the {FIELD}: LCD vs SMC (null, p) | TV of the text (null, p) | "
              f"top {FIELD}s under LCD | top {FIELD}s under SMC | tokens per answer: LCD / SMC (p) |"),
             "|---|---|---|---|---|---|"]
    for s in summaries:
        lcd = next((x for x in LCD if x in s.values), None)
        smc = next((x for x in Z_SAMPLERS if x in s.values), None)
        f, t = s.field_shift, s.text_shift
        lines.append(
            f"| {s.label} | {_num(f.value)} ({_num(f.null_mean)}, {_num(f.p_value, 3)}) | {_num(t.value)} "
            f"({_num(t.null_mean)}, {_num(t.p_value, 3)}) | {_top(s.values[lcd]) if lcd else '—'} | "
            f"{_top(s.values[smc]) if smc else '—'} | {_num(s.tokens.get(lcd, math.nan), 1)} / "
            f"{_num(s.tokens.get(smc, math.nan), 1)} ({_num(s.token_shift.p_value, 3)}) |")
    return "\n".join(lines)


def report(df: pd.DataFrame) -> str:
    summaries = summarize(df)
    particles = sorted({s.particles for s in summaries if s.particles})
    with_particles = f" with {'/'.join(map(str, particles))} particles" if particles else ""
    return "\n\n".join([
        f"KL(q̃‖p*) = log Z − log Q − E_q̃[Σ log Z_t], Z estimated by SMC{with_particles} (mean ± s.e.):",
        estimate_table(summaries),
        (f"How far masking moves the answers: LCD's against SMC's; null = the mean TV of the pooled answers split at "
         f"random ({PERMUTATIONS} splits), p = the share of splits at least as far apart (for the tokens per answer: "
         f"as far apart in mean):"),
        shift_table(summaries)])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m structbench.report.real_distortion",
                                     description="Distortion on the real model, from stored realdistortion rows.")
    parser.add_argument("--results-dir", default="results")
    parser.add_argument("--experiment", default="realdistortion")
    args = parser.parse_args(argv)
    try:
        print(report(read_results(args.results_dir, args.experiment)))
    except MissingRows as e:
        print(f"error: {e} in {args.results_dir}/{args.experiment}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
