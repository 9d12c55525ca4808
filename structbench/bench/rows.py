"""What a stored row holds: every column once, with its Parquet type, its meaning and its kind.

The store's schema (structbench.bench.store.ROW_SCHEMA), its timing and provenance columns, and the
README's column table ("What a row holds") all come from :data:`COLUMNS`. Print the table with

    python -m structbench.bench.rows

A column's kind says whether it is a function of the trial's settings and seed (stable: a rerun gives
the same value), or of the machine and moment (timing), or of the run (provenance: code version, host,
time). Comparing two runs row for row means comparing their stable columns.

The order of COLUMNS is the Parquet schema's: the parts already stored were written with it.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import pyarrow as pa


class Kind(enum.Enum):
    STABLE = "stable"          # the same for the same settings and seed
    TIMING = "timing"          # depends on the machine and the moment
    PROVENANCE = "provenance"  # which code, where and when


@dataclass(frozen=True)
class Column:
    name: str
    type: pa.DataType
    description: str
    kind: Kind = Kind.STABLE


_STR, _INT, _FLOAT, _BOOL = pa.string(), pa.int64(), pa.float64(), pa.bool_()
_FLOATS, _INTS = pa.list_(pa.float64()), pa.list_(pa.int64())

COLUMNS: tuple[Column, ...] = (
    # --- the trial (every row) ---
    Column("experiment", _STR, "the results folder's name (each sweep names its own; `adhoc` for one trial)"),
    Column("kind", _STR, "experiment kind: validity, speed, lesson, coverage, fresh, distortion or realdistortion"),
    Column("trial_id", _STR, "hash of the trial's settings: the part file is `part-<trial_id>.parquet`"),
    Column("seed", _INT, "the trial's seed"),
    Column("sample", _INT, "answer (validity), walk (speed) or test instance (coverage) number within the trial"),
    Column("task", _STR, "task name (a schema file's name for task=file and coverage)"),
    Column("schema_depth", _INT, "nesting depth of the task's schema (0 for a pattern)"),
    Column("strategy", _STR, "masking strategy: none, naive, tabled, lazy, retry, a sampler (smc, awrs, asap), an engine's "
                               "name, or your own"),
    Column("model", _STR, "toy or smollm2"),
    Column("noise", _FLOAT, "toy model: standard deviation of the noise on every logit (null for a real model)"),
    Column("skill", _FLOAT, "toy model: logit bonus for the token that continues the reference answer"),
    Column("chatter", _FLOAT, 'toy model: logit bonus for "Sure" as the first token'),
    Column("vocab", _STR, "vocabulary name"),
    Column("vocab_size", _INT, "tokens in the vocabulary, the end token included"),
    Column("max_tokens", _INT, "token budget per answer"),
    Column("max_attempts", _INT, "retry: whole answers tried before giving up"),
    # --- one answer (validity, speed, the lesson's measured parts) ---
    Column("text", _STR, "the answer's text (coverage: the test instance as spelled)"),
    Column("finished", _BOOL, "the answer ended with the end token within the budget"),
    Column("category", _STR, "valid, chatter, cut_off or broken, decided in this order: valid (finished and "
                             "accepted by the referee), chatter (does not start where an answer starts), cut_off "
                             "(the budget ran out), broken; referee_timeout (finished, and the referee ran past "
                             "limits.referee_seconds); coverage: valid/invalid x accepted/rejected, referee_timeout, "
                             "timeout or error"),
    Column("n_tokens", _INT, "tokens in the answer, the end token not counted"),
    Column("attempts", _INT, "whole answers drawn (retry; 1 otherwise)"),
    Column("removed_mass", _FLOATS, "per step: the model's probability the mask threw away"),
    Column("mask_us", _FLOATS, "per step: microseconds to compute the mask (empty for unconstrained answers)", Kind.TIMING),
    Column("allowed_counts", _INTS, "per step: tokens the mask allowed"),
    Column("compile_ms", _FLOAT, "milliseconds to compile the constraint (coverage: one schema)", Kind.TIMING),
    Column("compile_work_chars", _INT, "machine steps spent building masks while compiling"),
    Column("work_chars", _INT, "machine steps spent building masks during this answer"),
    Column("work_reads", _INT, "mask table entries read back during this answer"),
    Column("compile_masks", _INT, "masks built while compiling"),
    Column("masks_built", _INT, "masks built during this answer"),
    Column("wall_ms", _FLOAT, "milliseconds for the whole answer (speed: the whole walk; coverage: one instance's "
                              "walk; distortion: the mean over the runs)", Kind.TIMING),
    # --- kind=coverage: one row per (schema file, test instance); instance -1 for a schema's compile alone ---
    Column("subset", _STR, "coverage: the corpus subset the schema belongs to"),
    Column("schema_file", _STR, "coverage: the schema's file name"),
    Column("whitespace", _STR, "whitespace policy between JSON tokens: lesson, compact or flexible (parts written "
                                 "before the setting read as lesson)"),
    Column("outcome", _STR, "coverage: the compile's outcome: ok, unsupported, error, timeout or no_referee"),
    Column("outcome_detail", _STR, "coverage: the unsupported keyword and its path, or the error's message"),
    Column("instance", _INT, "coverage: test instance number; -1 for a schema's compile alone"),
    Column("referee_valid", _BOOL, "coverage: the referee's verdict on the instance"),
    Column("dataset_valid", _BOOL, "coverage: the corpus's own verdict on the instance"),
    Column("accepted", _BOOL, "coverage: the constraint accepted the instance token by token"),
    Column("warm_mask_us", _FLOATS, "fresh: per step, the mask microseconds of the same walk again on the same "
                                    "constraint (warm; mask_us holds the cold first walk)", Kind.TIMING),
    Column("advance_us", _FLOATS, "fresh, speed: per step with a token to take (every step but the end token's): "
                                  "microseconds to advance the state by it; a step's time between masks is its mask "
                                  "and its advance, as MaskBench times compute_mask and commit_token (null in parts "
                                  "written before schema 5)", Kind.TIMING),
    Column("warm_advance_us", _FLOATS, "fresh: advance_us of the warm walk", Kind.TIMING),
    # --- added later (null in parts written before them) ---
    Column("temperature", _FLOAT, "sampling temperature (0 = greedy; parts written before the column read as 1.0)"),
    Column("prompt", _STR, "a real model's prompt for this answer, as its chat template wrote it "
                           "(null for the toy model)"),
    # --- kind=lesson: data points behind a figure ---
    Column("figure", _STR, "lesson: which figure the point belongs to"),
    Column("series", _STR, "lesson: which series of that figure"),
    Column("label", _STR, "lesson: the point's label (a token, an answer, a state)"),
    Column("x", _FLOAT, "lesson: the point's x"),
    Column("y", _FLOAT, "lesson: the point's y"),
    # --- kind=distortion: one row per strategy (and particle count) of a case; see experiments/distortion.py ---
    Column("values_from", _STR, "distortion: `exact` (every value from the exact solver) or `runs` (tv, valid_share, "
                                "z_mean/z_bias/z_sd, ESS and cost from `runs` independent runs; exact_z and the noise "
                                "floor from the solver)"),
    Column("particles", _INT, "distortion: particles N of smc and awrs (null for the other strategies)"),
    Column("runs", _INT, "distortion: independent runs behind the sampled values (null for exact rows)"),
    Column("exact_z", _FLOAT, "distortion: Z = P(valid) under the model, exact"),
    Column("tv", _FLOAT, "distortion: total variation between the strategy's answer texts and p*, the model's law "
                         "given validity (runs: the empirical law of the runs' answers)"),
    Column("tv_error", _FLOAT, "distortion, exact rows: how far tv may be off (half the width of its bounds from the "
                               "texts listed, or the importance estimate's standard error)"),
    Column("noise_floor", _FLOAT, "distortion: mean TV of `n` exact draws from p* against p* (sampling noise alone)"),
    Column("noise_floor_sd", _FLOAT, "distortion: its standard deviation over floor_repeats simulations"),
    Column("kl_pstar_q", _FLOAT, "distortion, exact rows: KL(p*‖q̃) in nats between token sequences, q̃ the "
                                 "strategy's law given a valid answer"),
    Column("kl_q_pstar", _FLOAT, "distortion, exact rows: KL(q̃‖p*) in nats"),
    Column("kl_identity", _FLOAT, "distortion, tabled/naive: log Z − E_q[Σ log Z_t] from the kept masses; equals "
                                  "kl_q_pstar only where the mask renormalises (noise 0, the two-token model) and "
                                  "nothing dead-ends"),
    Column("dead_end_mass", _FLOAT, "distortion, exact rows: the strategy's chance of a dead end (nothing allowed)"),
    Column("valid_share", _FLOAT, "distortion: chance of a valid answer (exact rows) or share of runs with one"),
    Column("z_mean", _FLOAT, "distortion, runs: mean of the runs' Ẑ (smc, awrs: unbiased; asap: its guide's "
                             "estimate)"),
    Column("z_bias", _FLOAT, "distortion, runs: z_mean − exact_z"),
    Column("z_sd", _FLOAT, "distortion, runs: standard deviation of Ẑ over the runs"),
    Column("final_ess", _FLOAT, "distortion, smc/awrs: mean effective sample size of the final weights"),
    Column("resamples", _FLOAT, "distortion, smc/awrs: mean resampling steps per run"),
    Column("model_calls", _FLOAT, "distortion: model calls per answer, all particles (exact rows: expected)"),
    Column("constraint_checks", _FLOAT, "distortion: tokens checked against the constraint per answer (a full "
                                        "mask counts the whole vocabulary; retry: 0, the referee judges)"),
    Column("tokens_drawn", _FLOAT, "distortion: tokens drawn per answer, all particles, the end token included"),
    Column("pruned_mass", _FLOAT, "distortion: mass the exact solver dropped unexpanded: a bound on the error of "
                                  "its masses"),
    Column("exact_nodes", _INT, "distortion: (model state, constraint state) nodes the exact solver expanded"),
    Column("exact_seconds", _FLOAT, "distortion: seconds the exact solve took (shared by the case's trials)",
           Kind.TIMING),
    Column("log_z_hat", _FLOAT, "realdistortion, smc/awrs: this run's log Ẑ (its Ẑ is unbiased for Z = P(valid, "
                                "ended within max_tokens)); −inf when every particle died; null for other strategies"),
    Column("cold", _BOOL, "speed: the walk is the first over a constraint compiled just before it, after a cold "
                          "start (what compiles kept for later schemas forgotten): its masks are built as met; the "
                          "trial's other walks reuse the first compile's (warm). Null in parts written before "
                          "schema 6, where walk 0 was the cold one"),
    Column("paired_strategy", _STR, "speed, a cold walk's row; fresh: the strategy walked cold beside this one at "
                                     "the same cold start, or on the same schema (the `paired` setting; null without "
                                     "one, and in the paired strategy's own trial)"),
    Column("paired_fresh_ms", _FLOAT, "speed, a cold walk's row; fresh: that strategy's fresh answer (compile + a cold "
                                      "walk's masks and advances, ms), walked seconds before or after this row's (null "
                                      "in parts written before schema 7, and where it walked nothing)", Kind.TIMING),
    Column("paired_compile_ms", _FLOAT, "speed, a cold walk's row; fresh: the paired strategy's compile of this task "
                                        "or schema, ms (null in parts written before schema 8, speed's before "
                                        "2026-12-07, and where it did not compile)", Kind.TIMING),
    Column("paired_mask_us", _FLOATS, "speed, a cold walk's row; fresh: the paired strategy's cold walk, per step: "
                                      "microseconds to compute the mask (null where it walked nothing, and in speed "
                                      "parts written before 2026-12-07)", Kind.TIMING),
    Column("paired_advance_us", _FLOATS, "speed, a cold walk's row; fresh: the paired strategy's cold walk, per step "
                                         "with a token to take: microseconds to advance by it (null where it walked "
                                         "nothing, and in speed parts written before 2026-12-07)", Kind.TIMING),
    Column("paired_instance", _INT, "fresh: the test instance the paired strategy walked (the same walk as this "
                                    "row's where it equals `instance`); -1 where it walked none"),
    # --- provenance ---
    Column("config_json", _STR, "the settings the trial_id hashes, as JSON"),
    Column("git_sha", _STR, "the commit the package ran from (`+dirty` for a changed work tree)", Kind.PROVENANCE),
    Column("structbench_version", _STR, "the package's version", Kind.PROVENANCE),
    Column("created_at", _STR, "when the part was written (UTC, ISO 8601)", Kind.PROVENANCE),
    Column("hostname", _STR, "the machine that wrote it", Kind.PROVENANCE),
    Column("engine_versions", _STR, "the engines the trial ran, its strategy's or the one walked beside it "
                                    "(`paired`), as JSON {engine: installed version}; null where it ran none (and "
                                    "in parts written before schema 9)", Kind.PROVENANCE),
    Column("runtime", _STR, "the interpreter and numeric libraries that ran the trial, as JSON {python, "
                            "implementation, build, compiler, numpy, numba (null where not installed)}: the same "
                            "code's Python-side times move by about a tenth between CPython builds of one version "
                            "(docs/running.md); null in parts written before schema 10", Kind.PROVENANCE),
)


def names_of(kind: Kind) -> tuple[str, ...]:
    return tuple(c.name for c in COLUMNS if c.kind is kind)


def _type_name(t: pa.DataType) -> str:
    if pa.types.is_list(t):
        return f"list of {_type_name(t.value_type)}"
    return {"string": "string", "int64": "int", "double": "float", "bool": "bool"}[str(t)]


def markdown_table() -> str:
    """The README's column table: one line per column, in the schema's order."""
    lines = ["| column | type | what it holds |", "|---|---|---|"]
    for c in COLUMNS:
        note = "" if c.kind is Kind.STABLE else f" *({c.kind.value})*"
        lines.append(f"| `{c.name}` | {_type_name(c.type)} | {c.description}{note} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown_table())
