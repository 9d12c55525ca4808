"""Speed benchmarks (pytest-benchmark). In the normal test run they execute once, as smoke tests
(benchmarks are disabled in pytest's addopts); CI runs them with --benchmark-enable and
.ci/speed_gate.py checks ratios measured in that same run (never absolute times)."""

import numpy as np
import pytest

from structbench.bench.strategies import compile_constraint
from structbench.bench.tasks import age_task, person_task
from structbench.extras import install_line
from structbench.lm.vocab import synthetic_vocabulary


@pytest.fixture(scope="module")
def vocab():
    from structbench.lm.real_vocab import MissingVocabulary, real_vocabulary

    try:
        return real_vocabulary("llama3")
    except MissingVocabulary:
        return synthetic_vocabulary(32_000)  # the same code paths, without the optional vocabulary


def walk(constraint, ids, eos_id):
    state = constraint.start()
    for tid in ids:
        bits = constraint.mask_bits(state)
        if tid != eos_id:
            state = constraint.advance(state, tid)
    return bits


def answer_ids(vocab, task):
    return vocab.encode(task.walk_answer or task.reference) + [vocab.eos_id]


TASKS = {"age": age_task, "person": person_task}


@pytest.mark.parametrize("task_name", ["age", "person"])
@pytest.mark.parametrize("strategy", ["tabled", "xgrammar", "llguidance", "outlines_core"])
def test_walk(benchmark, vocab, strategy, task_name):
    """One walk of the task's answer: a mask (int32 bitmask) and an advance per token."""
    if strategy != "tabled":
        pytest.importorskip(strategy, reason=install_line("engines"))
    task = TASKS[task_name]()
    constraint = compile_constraint(task, vocab, strategy, "schema")
    ids = answer_ids(vocab, task)
    walk(constraint, ids, vocab.eos_id)  # correctness first: the walk must go through, and warms tables
    benchmark.group = f"walk-{task_name}"
    benchmark.extra_info.update(strategy=strategy, task=task_name, steps=len(ids))
    benchmark(walk, constraint, ids, vocab.eos_id)


@pytest.mark.parametrize("task_name", ["age", "person"])
def test_walk_naive(benchmark, vocab, task_name):
    task = TASKS[task_name]()
    constraint = compile_constraint(task, vocab, "naive", "schema")
    ids = answer_ids(vocab, task)[:3]  # a few steps: each walks the whole vocabulary in Python
    benchmark.group = f"naive-{task_name}"
    benchmark.extra_info.update(strategy="naive", task=task_name, steps=len(ids))
    benchmark.pedantic(walk, args=(constraint, ids, -1), rounds=3, iterations=1)


@pytest.mark.parametrize("task_name", ["age", "person"])
@pytest.mark.parametrize("strategy", ["tabled", "outlines_core", "xgrammar"])
def test_build(benchmark, vocab, strategy, task_name):
    """Compiling the constraint, tables included (outlines-core builds its whole index up front)."""
    if strategy != "tabled":
        pytest.importorskip(strategy, reason=install_line("engines"))
    task = TASKS[task_name]()
    benchmark.group = f"build-{task_name}"
    benchmark.extra_info.update(strategy=strategy, task=task_name)
    constraint = benchmark.pedantic(compile_constraint, args=(task, vocab, strategy, "schema"), rounds=3, iterations=1)
    assert walk(constraint, answer_ids(vocab, task), vocab.eos_id) is not None


def test_mask_bits_layout(vocab):
    """Our bitmask is the engines' layout: token i at bit i % 32 of word i // 32."""
    from structbench.masking import pack_bits, unpack_bits

    mask = np.zeros(len(vocab), dtype=bool)
    mask[[0, 31, 32, len(vocab) - 1]] = True
    words = pack_bits(mask)
    assert words.dtype == np.int32 and len(words) == (len(vocab) + 31) // 32
    assert words[0] == np.int32(-2147483647) and words[1] == 1  # bits 0 and 31; bit 0 of word 1
    assert (unpack_bits(words, len(vocab)) == mask).all()
