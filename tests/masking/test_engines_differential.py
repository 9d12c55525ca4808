"""Differential test: at every step of the speed sweep's walks, our masks equal each engine's.

Same vocabulary (Llama 3), same answer, one declared policy (the lesson's whitespace, keys
in schema order, llguidance without forcing). Every token on which a mask differs must fall
in a documented category, all of them about what may go *inside* strings or numbers:

not_text   a byte piece of a UTF-8 character: the engines work on bytes and allow it inside
           strings; our checkers work on characters and never allow it
escape     a token with a backslash: JSON string escapes, which our checker's subset excludes
c1         a token with a character in U+007F..U+009F: outlines-core's string pattern excludes them
exponent   a number exponent (1e5), which the engines allow for "number" and our subset excludes
nesting    (outlines-core, schema {} only) a token opening a nested array or object: outlines-core turns
           JSON mode into a regex that nests at most `max_recursion_depth` (3) levels
"""

import re
from collections import Counter

import numpy as np
import pytest

from structbench.bench.strategies import compile_constraint
from structbench.bench.tasks import age_task, json_mode_task, nested_task, person_task
from structbench.extras import install_line
from structbench.masking import ENGINES

pytest.importorskip("tokenizers", reason=install_line("vocabs"))
EXPONENT = re.compile(r"[0-9][eE]|^[eE][+-]?[0-9]*$|^[+-][0-9]")


def category(text, engine: str = "", ours: bool = False, task: str = "") -> str:
    if engine == "outlines_core" and task == "json_mode" and ours and text and ("[" in text or "{" in text):
        return "nesting"
    if text is None:
        return "not_text"
    if "\\" in text:
        return "escape"
    if any(0x7F <= ord(c) <= 0x9F for c in text):
        return "c1"
    if EXPONENT.search(text):
        return "exponent"
    return "unexplained"


@pytest.fixture(scope="module")
def llama3():
    from structbench.lm.real_vocab import MissingVocabulary, real_vocabulary

    try:
        return real_vocabulary("llama3")
    except MissingVocabulary as e:
        pytest.skip(str(e))


@pytest.fixture(scope="module")
def walks(llama3):
    out = {}
    for task in (age_task(), person_task(), nested_task(5), json_mode_task()):
        answer = task.walk_answer or task.reference
        ids = llama3.encode(answer) + [llama3.eos_id]
        ours = compile_constraint(task, llama3, "tabled", "schema")
        masks, inside, state = [], [], ours.start()
        for tid in ids:
            masks.append(ours.mask(state).copy())
            stack = ours.dense.states[state]
            top = stack[-1] if isinstance(stack, tuple) else None
            inside.append(top is not None and (top.kind == "string" or (top.kind == "object" and top.phase == "key")))
            if tid != llama3.eos_id:
                state = ours.advance(state, tid)
        out[task.name] = (task, ids, masks, inside)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("task_name", ["age", "person", "nested", "json_mode"])
def test_masks_equal_the_engines(llama3, walks, engine, task_name):
    pytest.importorskip(engine, reason=install_line("engines"))
    task, ids, our_masks, inside = walks[task_name]
    theirs = compile_constraint(task, llama3, engine, "schema")
    state = theirs.start()
    found = Counter()
    for step, tid in enumerate(ids):
        their_mask = theirs.mask(state)
        assert their_mask[tid] and our_masks[step][tid], f"step {step}: the answer's own token was refused"
        assert their_mask[llama3.eos_id] == our_masks[step][llama3.eos_id], f"step {step}: the end token differs"
        for i in np.flatnonzero(their_mask != our_masks[step]):
            kind = category(llama3.tokens[i], engine, bool(our_masks[step][i]), task_name)
            found[kind] += 1
            assert kind != "unexplained", (
                f"{engine}, {task_name}, step {step} ({'inside' if inside[step] else 'outside'} a string): token {i} "
                f"{llama3.token_bytes[i]!r} is {'allowed' if their_mask[i] else 'refused'} by {engine} only")
        if task.kind == "pattern":
            assert (their_mask == our_masks[step]).all()
        if tid != llama3.eos_id:
            state = theirs.advance(state, tid)
    print(f"{engine} {task_name}: differing (step, token) pairs by category: {dict(found)}")
