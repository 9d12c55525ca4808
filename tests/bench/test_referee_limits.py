"""The referee judges under a time limit (Limits.referee_seconds): a backtracking `pattern` ends in RefereeTimeout
within the limit, never a hang, and an answer it could not judge is filed as its own category, never as invalid.

Issue 13's referee part. `^(a+)+$` against n a's and a '!' doubles in time with each a (0.56 s at 24 here):
at 41 it would run for about 20 hours."""

import signal
import threading
import time

import numpy as np
import pandas as pd
import pytest

from structbench.bench.referees import UNJUDGED, PatternReferee, SchemaReferee, categorize, judge
from structbench.bench.strategies import generate
from structbench.bench.tasks import age_task
from structbench.bench.time_limit import can_limit, time_limit
from structbench.errors import RefereeTimeout
from structbench.limits import Limits, using
from structbench.lm.toy_model import ToyModel
from structbench.lm.vocab import toy_vocabulary
from structbench.report.summary import validity_summary

BACKTRACKING = "^(a+)+$"
NEAR_MISS = "a" * 41 + "!"
SLACK_S = 1.5  # the limit plus this much: the signal's delivery and the interpreter's next check


class Outer(Exception):
    pass


class Inner(Exception):
    pass


def _timed(call):
    t = time.perf_counter()
    try:
        return call(), time.perf_counter() - t
    except RefereeTimeout as e:
        return e, time.perf_counter() - t


@pytest.mark.parametrize("make_referee, text", [
    (lambda: PatternReferee(BACKTRACKING), NEAR_MISS),
    (lambda: SchemaReferee({"type": "string", "pattern": BACKTRACKING}), f'"{NEAR_MISS}"'),
    (lambda: SchemaReferee({"patternProperties": {BACKTRACKING: {"type": "integer"}}}), f'{{"{NEAR_MISS}": 1}}'),
    (lambda: SchemaReferee({"patternProperties": {BACKTRACKING: {}}, "additionalProperties": False}),
     f'{{"{NEAR_MISS}": 1}}'),
], ids=["pattern_task", "schema_pattern", "patternProperties", "additionalProperties"])
def test_a_backtracking_pattern_ends_in_a_referee_timeout_within_the_limit(make_referee, text):
    referee, handler = make_referee(), signal.getsignal(signal.SIGALRM)
    with using(Limits(referee_seconds=1)):
        outcome, seconds = _timed(lambda: referee(text))
    assert isinstance(outcome, RefereeTimeout), outcome
    assert "limits.referee_seconds" in str(outcome) and "1 s" in str(outcome)
    assert 1.0 <= seconds < 1 + SLACK_S, seconds
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)  # nothing left armed
    assert signal.getsignal(signal.SIGALRM) is handler  # and the handler put back


def test_the_default_limit_is_two_seconds_and_judge_reads_a_timeout_as_unjudged():
    referee = PatternReferee(BACKTRACKING)
    verdict, seconds = _timed(lambda: judge(referee, NEAR_MISS))
    assert verdict is None and 2.0 <= seconds < 2 + SLACK_S
    assert judge(referee, "aaaa") is True and judge(referee, "aab") is False  # ordinary answers: as before


def test_an_unjudged_answer_is_its_own_category_when_finished_and_sorted_as_before_when_not():
    assert categorize('{"age": 1}', True, None, "{") == UNJUDGED
    assert categorize('{"age": 1', False, None, "{") == "cut_off"  # unfinished: never valid, judged or not
    assert categorize("Sure", False, None, "{") == "chatter"
    assert categorize('{"age": 1}', True, False, "{") == "broken"


def test_retry_treats_an_unjudged_answer_as_not_accepted_and_keeps_going():
    calls = []

    def slow_referee(text):
        calls.append(text)
        raise RefereeTimeout("the referee took more than 2 s")

    task = age_task()
    answer = generate(ToyModel(task.reference, toy_vocabulary()), np.random.default_rng(0), "retry", None,
                      slow_referee, max_tokens=20, max_attempts=3)
    assert answer.attempts == 3 and 1 <= len(calls) <= 3  # every finished attempt asked, none accepted


def test_the_validity_summary_counts_unjudged_answers_apart():
    rows = pd.DataFrame({"task": ["t"] * 4, "strategy": ["none"] * 4, "noise": [0.0] * 4, "attempts": [1] * 4,
                         "category": ["valid", UNJUDGED, "broken", UNJUDGED], "text": [""] * 4})
    table = validity_summary(rows)
    assert table[["answers", "valid", UNJUDGED]].values.tolist() == [[4, 1, 2]]
    assert UNJUDGED not in validity_summary(rows.assign(category="valid")).columns  # absent when none happened


def test_limits_nest_the_sooner_one_fires_and_the_outer_one_survives_an_inner_one():
    with pytest.raises(Inner):
        with time_limit(5, Outer):
            with time_limit(0.2, Inner):
                time.sleep(2)
    with pytest.raises(Outer):
        with time_limit(0.2, Outer):
            with time_limit(5, Inner):  # the outer limit comes first: its error, not the inner one's
                time.sleep(2)
    t = time.perf_counter()
    with pytest.raises(Outer):
        with time_limit(0.5, Outer):
            with time_limit(5, Inner):
                pass
            time.sleep(3)  # after the inner block the outer limit still holds
    assert time.perf_counter() - t < 0.5 + SLACK_S
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_off_the_main_thread_the_block_runs_without_a_limit():
    seen = {}

    def work():
        seen["can"] = can_limit()
        with time_limit(0.1, Inner):
            time.sleep(0.3)
        seen["done"] = True

    thread = threading.Thread(target=work)
    thread.start()
    thread.join(5)
    assert seen == {"can": False, "done": True}
    assert can_limit()  # here, on the main thread, it can
