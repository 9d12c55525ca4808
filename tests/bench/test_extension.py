"""Bring your own strategy: a constraint class from outside the package, chosen on the command line by its import
path (Hydra's `_target_`) or by a strategy file in the user's own config folder, runs a sweep unedited."""

import json
import textwrap

import pytest
from helpers import run_cli

from structbench.bench.settings import Settings
from structbench.bench.store import read_results
from structbench.bench.strategies import STRATEGIES, Strategy, check_strategy, compile_constraint, using_strategy
from structbench.bench.tasks import person_task
from structbench.errors import SettingsError
from structbench.lm.vocab import toy_vocabulary

# A strategy of the user's own, outside structbench: it allows only the tokens that continue the task's
# reference answer (without its spaces, if asked), and the end token once the answer is complete.
REFERENCE_ONLY = textwrap.dedent('''
    import numpy as np

    from structbench.errors import TokenRejected
    from structbench.masking import WorkCounter, pack_bits


    class ReferenceOnly:
        def __init__(self, task, vocab, key_order="any", whitespace="lesson", spaces=True):
            self.vocab = vocab
            self.answer = task.reference if spaces else task.reference.replace(" ", "")
            self.work = WorkCounter()

        def start(self):
            return ""

        def mask(self, state):
            rest = self.answer[len(state):]
            allowed = np.array([bool(t) and rest.startswith(t) for t in self.vocab.tokens])
            allowed[self.vocab.eos_id] = rest == ""
            self.work.masks_built += 1
            return allowed

        def mask_bits(self, state):
            return pack_bits(self.mask(state))

        def advance(self, state, token_id):
            if not self.mask(state)[token_id]:
                raise TokenRejected(f"token {token_id} does not continue the reference")
            return state + self.vocab.tokens[token_id]

        def can_end(self, state):
            return state == self.answer
''')


@pytest.fixture
def user_package(tmp_path):
    """A folder outside the repository with the user's module, on PYTHONPATH for the CLI."""
    folder = tmp_path / "userpkg"
    folder.mkdir()
    (folder / "myconstraints.py").write_text(REFERENCE_ONLY)
    return folder


def test_an_outside_strategy_runs_a_sweep_from_the_command_line(tmp_path, user_package):
    results = tmp_path / "results"
    out = run_cli("+sweep=validity", "task=age,person", "model.noise=1.0", "n=10", "progress=false",
                  "strategy=external", "strategy._target_=myconstraints.ReferenceOnly", "strategy.name=reference_only",
                  f"results_dir={results}", cwd=tmp_path, env={"PYTHONPATH": str(user_package)})
    assert out.returncode == 0, out.stderr
    assert "valid share" in out.stdout
    df = read_results(results, "validity")
    assert len(df) == 20 and df["trial_id"].nunique() == 2
    assert (df["strategy"] == "reference_only").all() and (df["category"] == "valid").all()
    assert set(df["text"]) == {'{"age": 42}', person_task().reference}
    assert (df["n_tokens"] == df["mask_us"].map(len) - 1).all()  # a mask at every step, the end token's too
    identity = json.loads(df["config_json"][0])
    assert identity["strategy"] == {"name": "reference_only", "_target_": "myconstraints.ReferenceOnly"}


def test_an_outside_strategy_from_the_users_own_config_folder(tmp_path, user_package):
    """strategy=NAME from a config folder of the user's (hydra.searchpath), with an option for the constructor."""
    conf = tmp_path / "myconf" / "strategy"
    conf.mkdir(parents=True)
    (conf / "compact_reference.yaml").write_text(
        "name: compact_reference\n_target_: myconstraints.ReferenceOnly\nspaces: false\n")
    results = tmp_path / "results"
    out = run_cli(f"hydra.searchpath=[file://{tmp_path / 'myconf'}]", "strategy=compact_reference", "task=person",
                  "n=5", "progress=false", f"results_dir={results}", cwd=tmp_path,
                  env={"PYTHONPATH": str(user_package)})
    assert out.returncode == 0, out.stderr
    df = read_results(results, "adhoc")
    assert len(df) == 5 and (df["category"] == "valid").all()
    assert set(df["text"]) == {person_task().reference.replace(" ", "")}


def test_an_outside_strategy_that_cannot_be_used_fails_in_one_line(tmp_path, user_package):
    env = {"PYTHONPATH": str(user_package)}
    cases = [
        (["strategy._target_=myconstraints.Missing", "strategy.name=mine"], "names nothing callable"),
        (["strategy._target_=nomodule.X", "strategy.name=mine"], "cannot import 'nomodule'"),
        (["strategy._target_=myconstraints.ReferenceOnly"], "needs a name"),
        (["strategy._target_=myconstraints.ReferenceOnly", "strategy.name=tabled"], "is a built-in strategy"),
        (["strategy._target_=myconstraints.ReferenceOnly", "strategy.name=mine", "+strategy.colour=red"],
         "unexpected keyword argument 'colour'"),
        # a class whose signature cannot be read up front: found out when the trial builds it, still one line
        (["strategy._target_=collections.OrderedDict", "strategy.name=mine"], "cannot be called as"),
    ]
    for args, message in cases:
        out = run_cli("strategy=external", *args, "n=2", f"results_dir={tmp_path / 'r'}", cwd=tmp_path, env=env)
        assert out.returncode == 2, out.stderr
        assert out.stderr.startswith("structbench: error: ") and out.stderr.count("\n") == 1, out.stderr
        assert message in out.stderr
    assert not (tmp_path / "r").exists()


def test_a_registered_strategy_is_known_only_inside_its_trial(monkeypatch, tmp_path):
    (tmp_path / "myconstraints.py").write_text(REFERENCE_ONLY)
    monkeypatch.syspath_prepend(str(tmp_path))
    strategy = Strategy.from_settings({"name": "mine", "_target_": "myconstraints.ReferenceOnly"})
    vocab = toy_vocabulary()
    with pytest.raises(ValueError, match="unknown strategy 'mine'"):
        compile_constraint(person_task(), vocab, "mine")
    with using_strategy(strategy):
        assert check_strategy("mine") == "mine"
        constraint = compile_constraint(person_task(), vocab, "mine")
        assert constraint.can_end(constraint.advance(constraint.start(), vocab.encode('{')[0])) is False
    with pytest.raises(ValueError):
        check_strategy("mine")
    assert "mine" not in STRATEGIES


def test_built_in_strategies_take_no_target():
    assert Strategy.from_settings({"name": "tabled"}) == Strategy("tabled")
    with pytest.raises(SettingsError, match="unknown strategy 'fastest'"):
        Strategy.from_settings({"name": "fastest"})


def test_a_constraint_without_the_protocol_is_refused(monkeypatch, tmp_path):
    (tmp_path / "halfway.py").write_text("class Half:\n    def __init__(self, task, vocab, **settings):\n"
                                         "        self.vocab = vocab\n    def start(self):\n        return 0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    strategy = Strategy.from_settings({"name": "half", "_target_": "halfway.Half"})
    with using_strategy(strategy), pytest.raises(SettingsError, match="lacks mask, mask_bits, advance, can_end, work"):
        compile_constraint(person_task(), toy_vocabulary(), "half")


def test_settings_carry_the_strategy(compose):
    from helpers import settings_of

    settings = Settings.from_dict(settings_of(compose(["strategy=naive"])))
    assert settings.strategy == Strategy("naive") and settings["strategy"] == {"name": "naive"}
