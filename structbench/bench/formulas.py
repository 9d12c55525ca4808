"""The lesson's closed forms and small worked examples, as code.

The lesson experiment draws its formula curves (chance all tokens valid, expected retries, mask cost, the
two-step distortion example) from here, and tests/bench/test_lesson_numbers.py checks the lesson's printed
numbers against the same functions, so the text, the figures and the code cannot drift apart.
"""

from __future__ import annotations

from structbench.lm.vocab import EOS


def chance_all_valid(p, n):
    """P(all n independent tokens right) = p ** n."""
    return p**n


def expected_attempts(p):
    """Average tries until the first valid answer when each try is valid with chance p: 1 / p."""
    return 1 / p


def chance_still_failing(p, k):
    """Chance that k independent tries are all invalid: (1 - p) ** k."""
    return (1 - p) ** k


def mask_cost(n_steps: int, vocab_size: int, avg_len: float, n_states: int) -> dict[str, float]:
    """Character steps spent on masks for one answer: W_naive = n |V| L, W_table = S |V| L + n |V|."""
    naive = n_steps * vocab_size * avg_len
    table = n_states * vocab_size * avg_len + n_steps * vocab_size  # build once, then read one row per step
    return {"naive": naive, "table": table}


def forced_choice(probs: dict[str, float], allowed) -> tuple[dict[str, float], float]:
    """Renormalise a next-token belief over the allowed tokens; also return the share thrown away."""
    kept = sum(p for t, p in probs.items() if t in allowed)
    if kept <= 0:
        raise ValueError("no allowed token has any probability")
    return {t: p / kept for t, p in probs.items() if t in allowed}, 1 - kept


# A two-step model small enough to enumerate. Valid answers must end in "y".
TWO_STEP_FIRST = {"A": 0.9, "B": 0.1}
TWO_STEP_SECOND = {"A": {"x": 0.99, "y": 0.01}, "B": {"x": 0.1, "y": 0.9}}


def distortion_example(first=TWO_STEP_FIRST, second=TWO_STEP_SECOND, valid_last: str = "y") -> dict[str, dict[str, float]]:
    """Token-by-token masking versus the model's own odds among valid answers, enumerated exactly.

    conditional: P(answer) / P(any valid answer), what sampling whole answers and
    discarding invalid ones gives. masked: the product of the step-by-step masked,
    renormalised probabilities (step 1 masks nothing here, step 2 forces the ending)."""
    joint = {a + valid_last: first[a] * second[a][valid_last] for a in first}
    total = sum(joint.values())
    masked = {}
    for a in first:
        # Step 1: a first token is allowed iff some valid ending follows it.
        ok_first = {b for b in first if second[b].get(valid_last, 0) > 0}
        p1 = first[a] / sum(first[b] for b in ok_first) if a in ok_first else 0.0
        p2 = second[a][valid_last] / sum(p for t, p in second[a].items() if t == valid_last)
        masked[a + valid_last] = p1 * p2
    return {"masked": masked, "conditional": {k: v / total for k, v in joint.items()}}


def tokenizations(text: str, tokens) -> list[list[str]]:
    """Every way to spell `text` as a sequence of tokens (the end token, writing nothing, never used)."""
    pieces = [t for t in tokens if t and t != EOS]
    ways: dict[int, list[list[str]]] = {len(text): [[]]}
    for i in range(len(text) - 1, -1, -1):  # from the end backwards, so each suffix is solved once
        ways[i] = [[t] + rest for t in pieces if text.startswith(t, i) for rest in ways[i + len(t)]]
    return ways[0]
