"""distortion: how far each strategy's answers are from the model's law given validity, p*, measured against
the exact p* of the toy model (structbench.distortion), with what each strategy spends to get there.

One trial = one case (task and noise, or the lesson's two-token example) x one strategy; its rows:

tabled, naive  one row, every value exact: locally constrained decoding's law q (naive and tabled mask alike,
               so their q is one law) against p*: KL both ways, total variation between texts, dead-end mass,
               valid share, and the expected model calls per answer. TV between texts does not decompose over
               steps: it is bounded by listing the texts (tv_error = half the width of the bounds) or, where they
               are too many, estimated by importance weights on `exact_draws` exact draws from q (tv_error = the
               standard error), in both cases within the listed bounds.
retry          one row, exact: its valid answers follow p* (KL 0); with m = max_attempts tries it fails with
               (1 - Z)^m, which is its whole TV, at E[runs] = (1 - (1 - Z)^m) / Z model runs (Wald's identity
               gives the model calls: E[runs] times the expected tokens of one run).
smc, awrs      one row per particle count N of `particle_grid` (when given; else the strategy's own
               strategy.particles): n independent runs, one answer each, give the empirical law over texts and
               its TV to p*, the valid share, Ẑ's mean, bias and standard deviation against the exact Z, the
               final ESS, resamples and the cost per answer (model calls, constraint checks, tokens, wall time).
asap           one row: n runs learning into one guide (built fresh for the trial), measured as smc's.

Every row also holds the exact Z, the noise floor (the TV of n exact draws from p* against p*, averaged over
`floor_repeats` simulations: what a sampled TV is from sampling alone), the exact solver's pruned mass (a
bound on the error of its masses), its node count and seconds. `values_from` says which values are exact.

The exact solve is cached per (case, max_tokens, vocabulary, prune, key order, whitespace) in this module,
so the trials of one sweep process share it; it and every draw are deterministic (the draws are seeded from
the trial's seed), so the same settings give the same rows apart from the timing columns.

Experiment keys (kind=distortion): `example` (null, or two_token: the lesson's model and pattern in place of
the trial's task, model, vocabulary and budget), `particle_grid`, `prune` (the exact solver's, default 1e-15),
`floor_repeats` (default 20), `exact_draws` (default 4000).
"""

from __future__ import annotations

import dataclasses
import json
import math
import time
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np
from tqdm import tqdm

from structbench.bench.strategies import compile_constraint, generate
from structbench.distortion.exact import PRUNE, ExactSolver, retry_law
from structbench.distortion.metrics import Bucket, empirical, tv_to_exact
from structbench.distortion.nexttoken import ToyLaw
from structbench.distortion.two_token import MAX_TOKENS as TWO_TOKEN_MAX_TOKENS
from structbench.distortion.two_token import two_token_example
from structbench.errors import SettingsError
from structbench.samplers import DEFAULT_PARTICLES, AsapGuide

EXACT_STRATEGIES = ("tabled", "naive", "retry")
PARTICLE_STRATEGIES = ("smc", "awrs")
STRATEGIES = EXACT_STRATEGIES + PARTICLE_STRATEGIES + ("asap",)
EXAMPLES = ("two_token",)
BOUND_THRESHOLDS = (1e-6, 1e-4)  # texts are listed down to this mass for TV's bounds (the finer first) ...
BOUND_VISITS = 50_000            # ... following at most this many prefixes
BOUND_WIDTH = 2e-3               # bounds narrower than this give TV; wider ones only clip the estimate
CACHED_SOLVES = 2                # a sweep runs a case's strategies one after another


@dataclass
class Case:
    """What a trial's strategy is measured on: the task, the model (as a law for the exact solver and as a
    model for the samplers), the budget, and the exact solve with its caches."""

    task: object
    law: object
    model: object
    vocab: object
    max_tokens: int
    solver: ExactSolver
    solve_seconds: float
    columns: dict  # what the rows say about the case (overriding the runner's for the two-token example)
    scores: dict = field(default_factory=dict)  # text -> TextScore
    floors: dict = field(default_factory=dict)  # (runs, repeats, seed) -> (mean, sd)

    def pstar(self, outcome) -> float:
        if isinstance(outcome, Bucket):
            return 0.0
        score = self.scores.get(outcome)
        if score is None:
            score = self.scores[outcome] = self.solver.score(outcome)
        return score.pstar


_SOLVES: OrderedDict = OrderedDict()


def _options(settings) -> dict:
    """The experiment's own keys, checked."""
    get = settings.get
    example = get("example")
    if example is not None and example not in EXAMPLES:
        raise SettingsError(f"unknown example {example!r}; choose one of: {', '.join(EXAMPLES)} (or null)")
    grid = get("particle_grid")
    if grid is not None:
        if (not isinstance(grid, (list, tuple)) or not grid
                or any(isinstance(n, bool) or not isinstance(n, int) or n < 1 for n in grid)):
            raise SettingsError(f"particle_grid must be a list of integers >= 1, got {grid!r}")
    prune = get("prune", PRUNE)
    if isinstance(prune, bool) or not isinstance(prune, (int, float)) or not 0 <= prune < 1:
        raise SettingsError(f"prune is a probability mass in [0, 1), got {prune!r}")
    out = {"example": example, "particle_grid": list(grid) if grid is not None else None, "prune": float(prune)}
    for key, default, least in (("floor_repeats", 20, 2), ("exact_draws", 4000, 2)):
        value = get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise SettingsError(f"{key} must be an integer >= {least}, got {value!r}")
        out[key] = value
    return out


def _case(settings, trial, options) -> Case:
    if options["example"] == "two_token":
        task, law, model = two_token_example()
        vocab, max_tokens = law.vocab, TWO_TOKEN_MAX_TOKENS
        columns = {"task": task.name, "schema_depth": 0, "noise": None, "skill": None, "chatter": None,
                   "vocab": vocab.name, "vocab_size": len(vocab), "max_tokens": max_tokens}
        key = ("two_token", options["prune"])
    else:
        task, model, vocab, max_tokens = trial.task, trial.model, trial.vocab, settings.max_tokens
        if not hasattr(model, "base_logits"):
            raise SettingsError("kind=distortion computes the exact p* of the toy model (model=toy); a real model's "
                                "conditional cannot be summed exactly")
        law, columns = None, {}
        key = (json.dumps(dataclasses.asdict(task), sort_keys=True, default=str), model.noise, model.skill, model.chatter, vocab.name,
               len(vocab), max_tokens, options["prune"], settings.key_order, settings.whitespace)
    found = _SOLVES.get(key)
    if found is None:
        t0 = time.perf_counter()
        law = law or ToyLaw(model)
        constraint = compile_constraint(task, vocab, "tabled", settings.key_order, settings.whitespace)
        solver = ExactSolver(law, constraint, max_tokens, options["prune"])
        found = Case(task, law, model, vocab, max_tokens, solver, time.perf_counter() - t0, columns)
        _SOLVES[key] = found
        while len(_SOLVES) > CACHED_SOLVES:
            _SOLVES.popitem(last=False)
    _SOLVES.move_to_end(key)
    return found


def _floor(case: Case, runs: int, repeats: int, seed: int) -> tuple[float, float]:
    key = (runs, repeats, seed)
    if key not in case.floors:
        rng = np.random.default_rng([seed, 2])
        floors = [tv_to_exact(empirical(case.solver.sample(rng, runs)), case.pstar) for _ in range(repeats)]
        case.floors[key] = (float(np.mean(floors)), float(np.std(floors, ddof=1)))
    return case.floors[key]


def _tabled_tv(case: Case, draws: int, seed: int) -> tuple[float, float]:
    """TV(q, p*) between texts and how far it may be off (see the module's docstring)."""
    bounds = None
    for threshold in BOUND_THRESHOLDS:
        bounds = case.solver.tv_bounds(threshold, BOUND_VISITS)
        if bounds is not None:
            break
    if bounds is not None and bounds[1] - bounds[0] <= BOUND_WIDTH:
        return (bounds[0] + bounds[1]) / 2, (bounds[1] - bounds[0]) / 2
    estimate, se = case.solver.tv_lcd(np.random.default_rng([seed, 3]), draws)
    if bounds is not None:
        estimate = min(max(estimate, bounds[0]), bounds[1])
    return estimate, se


def _exact_row(case: Case, strategy: str, settings, options) -> dict:
    s = case.solver.summary
    if strategy == "retry":
        success, runs = retry_law(s.z, settings.max_attempts)
        return {"values_from": "exact", "valid_share": success, "tv": 1.0 - success, "tv_error": 0.0,
                "kl_pstar_q": 0.0, "kl_q_pstar": 0.0, "dead_end_mass": 0.0,
                "model_calls": runs * s.p_expected_tokens, "tokens_drawn": runs * s.p_expected_tokens,
                "constraint_checks": 0.0}
    tv, error = _tabled_tv(case, options["exact_draws"], settings.seed)
    return {"values_from": "exact", "valid_share": s.q_valid_mass, "tv": tv, "tv_error": error,
            "kl_pstar_q": s.kl_pstar_q, "kl_q_pstar": s.kl_q_pstar,
            "kl_identity": math.log(s.z) - s.q_expected_log_kept, "dead_end_mass": s.q_dead_end_mass,
            "model_calls": s.q_expected_tokens, "tokens_drawn": s.q_expected_tokens,
            # one full mask per step, counted as the samplers count it: the whole vocabulary
            "constraint_checks": s.q_expected_tokens * len(case.vocab)}


def _outcome(case: Case, answer):
    """A run's answer as an outcome: its text when finished and valid, else a Bucket (p* gives those 0)."""
    if not answer.finished:
        return Bucket.UNFINISHED  # no particle ended validly: a dead end or the budget
    case.pstar(answer.text)
    return answer.text if case.scores[answer.text].valid else Bucket.INVALID


def _runs_row(case: Case, strategy: str, particles: int | None, settings, progress: bool, label: str) -> dict:
    """n independent runs of a sampler: its empirical law against p*, Ẑ against Z, and its cost."""
    sampling = dict(settings.strategy.sampling)
    if particles is not None:
        sampling["particles"] = particles
    constraint = compile_constraint(case.task, case.vocab, strategy, settings.key_order, settings.whitespace)
    if strategy == "asap":  # a guide of the trial's own: it learns from this trial's runs only
        sampling["guide"] = AsapGuide(case.model, constraint, case.max_tokens)
    rng = np.random.default_rng([settings.seed, 1, particles or 0])
    answers = [generate(case.model, rng, strategy, constraint, None, case.max_tokens, **sampling)
               for _ in tqdm(range(settings.n), desc=f"{label} N={particles}", disable=not progress, leave=False)]
    outcomes = [_outcome(case, a) for a in answers]
    z_hat = np.exp([a.log_z for a in answers])
    mean = lambda name: float(np.mean([getattr(a, name) for a in answers]))  # noqa: E731
    row = {"values_from": "runs", "runs": settings.n, "particles": particles,
           "tv": tv_to_exact(empirical(outcomes), case.pstar),
           "valid_share": sum(isinstance(y, str) for y in outcomes) / len(outcomes),
           "z_mean": float(z_hat.mean()), "z_bias": float(z_hat.mean()) - case.solver.summary.z,
           "z_sd": float(z_hat.std(ddof=1)) if len(z_hat) > 1 else None,
           "model_calls": mean("model_calls"), "constraint_checks": mean("constraint_checks"),
           "tokens_drawn": mean("tokens_drawn"), "wall_ms": mean("wall_ms")}
    if strategy in PARTICLE_STRATEGIES:
        row.update(final_ess=mean("final_ess"), resamples=mean("resamples"))
    return row


def run(settings, trial, progress: bool = False) -> list[dict]:
    """settings: the trial's structbench.bench.settings.Settings."""
    options = _options(settings)
    strategy = settings.strategy.name
    if strategy not in STRATEGIES:
        raise SettingsError(f"kind=distortion measures the strategies {', '.join(STRATEGIES)}, not {strategy!r}")
    case = _case(settings, trial, options)
    if strategy in EXACT_STRATEGIES:
        rows = [_exact_row(case, strategy, settings, options)]
    elif strategy in PARTICLE_STRATEGIES:
        grid = options["particle_grid"] or [settings.strategy.sampling.get("particles", DEFAULT_PARTICLES)]
        rows = [_runs_row(case, strategy, n, settings, progress, trial.label) for n in grid]
    else:
        rows = [_runs_row(case, strategy, None, settings, progress, trial.label)]
    s = case.solver.summary
    floor, floor_sd = _floor(case, settings.n, options["floor_repeats"], settings.seed)
    common = {**case.columns, "exact_z": s.z, "noise_floor": floor, "noise_floor_sd": floor_sd,
              "pruned_mass": s.pruned_mass, "exact_nodes": s.nodes, "exact_seconds": case.solve_seconds}
    return [{"sample": i, **common, **row} for i, row in enumerate(rows)]
