"""The masking strategies by name, and one answer generated under any of them.

none           unconstrained sampling
naive          every token checked against the automaton at every step
tabled         masks computed once per automaton state (vectorised) and read back
retry          unconstrained whole answers judged by the referee, resampled up to max_attempts
xgrammar, llguidance, outlines_core
               the real engines behind the same interface (optional extra: structbench.masking.engines)
"""

from __future__ import annotations

import numpy as np

from structbench.bench.tasks import Task
from structbench.lm.sampling import Decoded, check_budget, check_temperature, sample_answer
from structbench.lm.vocab import Vocabulary
from structbench.masking.constraints import NaiveConstraint, pattern_constraint, schema_constraint

OUR_STRATEGIES = ("none", "naive", "tabled", "retry")
ENGINE_STRATEGIES = ("xgrammar", "llguidance", "outlines_core")
STRATEGIES = OUR_STRATEGIES + ENGINE_STRATEGIES


def check_strategy(strategy: str) -> str:
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}; choose one of {', '.join(STRATEGIES)}")
    return strategy


def compile_constraint(task: Task, vocab: Vocabulary, strategy: str, key_order: str = "any",
                       whitespace: str = "lesson"):
    """The constraint a strategy samples under; None for the unconstrained ones (none, retry).
    key_order: "any" (the lesson's checker) or "schema" (properties in schema order, as the engines write them).
    whitespace: the policy between JSON tokens (schema.WHITESPACE_POLICIES), for ours and the engines alike."""
    check_strategy(strategy)
    if strategy in ("none", "retry"):
        return None
    if strategy in ENGINE_STRATEGIES:
        from structbench.masking.engines import engine_constraint

        return engine_constraint(strategy, task, vocab, key_order, whitespace)
    machine = task.machine(key_order, whitespace)
    if strategy == "naive":
        return NaiveConstraint(machine, vocab)
    if task.kind == "pattern":  # a finite machine: table every state before the first token
        return pattern_constraint(machine.dfa, vocab)
    return schema_constraint(machine, vocab)


def check_attempts(max_attempts: int) -> int:
    if isinstance(max_attempts, bool) or not isinstance(max_attempts, (int, np.integer)) or max_attempts < 1:
        raise ValueError(f"max_attempts must be an integer >= 1, got {max_attempts!r}")
    return int(max_attempts)


def generate(model, rng: np.random.Generator, strategy: str, constraint=None, referee=None,
             max_tokens: int = 40, max_attempts: int = 1, temperature: float = 1.0) -> Decoded:
    """One answer. For retry, whole unconstrained answers are drawn one after another from
    the same generator until the referee accepts a finished one or max_attempts are used;
    the last answer is returned with the attempts it took.

    A model whose logits depend on its state alone (`deterministic`, a real model) writes the
    same answer every time at temperature 0: retry then stops after the first attempt, since
    any further one could only repeat it."""
    check_strategy(strategy)
    check_budget(max_tokens)
    temperature = check_temperature(temperature)
    if strategy != "retry":
        return sample_answer(model, rng, constraint, max_tokens, temperature)
    max_attempts = check_attempts(max_attempts)
    if referee is None:
        raise ValueError("the retry strategy needs a referee to judge each attempt")
    if temperature == 0.0 and getattr(model, "deterministic", False):
        max_attempts = 1
    for attempt in range(1, max_attempts + 1):
        answer = sample_answer(model, rng, None, max_tokens, temperature)
        answer.attempts = attempt
        if answer.finished and referee(answer.text):
            break
    return answer
