"""The masking strategies by name (the registry), and one answer generated under any of them.

none           unconstrained sampling
naive          every token checked against the automaton at every step
tabled         masks computed once per automaton state (vectorised) and read back
lazy           tabled with nothing computed ahead: each state's mask built when first met (fresh schemas)
retry          unconstrained whole answers judged by the referee, resampled up to max_attempts
smc            sequential Monte Carlo: particles proposing from the masked softmax, weighted by the kept mass
awrs           the same SMC, each token by adaptive weighted rejection sampling (per-token checks, no mask)
asap           grammar-aligned decoding: a trie of expected future validity, learned across one trial's answers
xgrammar, llguidance, outlines_core
               the real engines behind the same interface (optional extra: structbench.masking.engines)

smc, awrs and asap (structbench.samplers) sample from the model's law given validity, p*, rather than
masking's; their settings are the strategy's options (strategy.particles, strategy.ess_threshold,
strategy.resampling for smc and awrs; asap takes none) or generate()'s keyword arguments of the same names.
They run at temperature 1 only. asap learns across the answers drawn under one compiled constraint.

Your own strategy or engine: any callable named by its import path in the strategy's settings
(`_target_`, Hydra's convention), called as

    target(task, vocab, key_order=..., whitespace=..., **options)

and returning an object that meets :class:`structbench.masking.Constraint` (and keeps the `vocab` it was
built for). `options` are the strategy's other settings. A trial registers its strategy for its own
duration (:func:`using_strategy`), so everything that takes a strategy name takes it: the experiments,
:func:`compile_constraint`, :func:`generate`. The README's "Add a strategy or engine" shows the command line.
"""

from __future__ import annotations

import contextlib
import contextvars
import importlib
import inspect
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

from structbench.bench.referees import judge
from structbench.bench.tasks import Task
from structbench.errors import SettingsError
from structbench.lm.sampling import (
    Decoded,
    check_budget,
    check_temperature,
    sample_answer,
)
from structbench.lm.vocab import Vocabulary
from structbench.masking import (
    ENGINES,
    Constraint,
    NaiveConstraint,
    engine_constraint,
    lazy_constraint,
    pattern_constraint,
    schema_constraint,
)
from structbench.samplers import (
    DEFAULT_ESS_THRESHOLD,
    DEFAULT_PARTICLES,
    SAMPLERS,
    asap,
    awrs,
    smc,
)
from structbench.samplers.particles import check_settings as check_sampler_settings

OUR_STRATEGIES = ("none", "naive", "tabled", "lazy", "retry") + SAMPLERS
ENGINE_STRATEGIES = ENGINES
STRATEGIES = OUR_STRATEGIES + ENGINE_STRATEGIES
UNCONSTRAINED = ("none", "retry")  # strategies that sample without a mask
SAMPLER_OPTIONS = {"smc": ("particles", "ess_threshold", "resampling"),
                   "awrs": ("particles", "ess_threshold", "resampling"), "asap": ()}

# What the sampler and the experiments read from a constraint: the protocol, and the vocabulary it was built for.
_REQUIRED = ("start", "mask", "mask_bits", "advance", "can_end", "work", "vocab")


@dataclass(frozen=True)
class Strategy:
    """A trial's strategy: a built-in one by name, or your own (`target`, the import path of its factory,
    called with `options` as keyword arguments)."""

    name: str
    target: str | None = None
    options: dict = field(default_factory=dict)

    @classmethod
    def from_settings(cls, cfg: dict | None) -> Strategy:
        """From the strategy's settings ({"name": ...}, plus "_target_" and options for your own)."""
        cfg = dict(cfg or {})
        name, target = cfg.pop("name", None), cfg.pop("_target_", None)
        if target is None:
            if name not in STRATEGIES:
                raise SettingsError(f"unknown strategy {name!r}; choose one of: {', '.join(STRATEGIES)}")
            return cls(name, None, _sampler_options(name, cfg)) if name in SAMPLERS else cls(name)
        if not isinstance(target, str) or not target or target == "???":
            raise SettingsError("strategy._target_ must name your constraint's class by its import path, "
                                "e.g. strategy._target_=mypackage.mymodule.MyConstraint")
        if not isinstance(name, str) or not name or name == "???":
            raise SettingsError(f"strategy {target!r} needs a name for its rows, e.g. strategy.name=mine")
        if name in STRATEGIES:
            raise SettingsError(f"strategy.name={name!r} is a built-in strategy; name yours otherwise")
        reserved = sorted(k for k in cfg if k.startswith("_"))
        if reserved:
            raise SettingsError(f"strategy.{reserved[0]}: of Hydra's underscore keys only _target_ is read")
        strategy = cls(name, target, cfg)
        strategy._check_call()  # an import path that does not import is an error now, before anything runs
        return strategy

    @property
    def sampling(self) -> dict:
        """The keyword arguments generate() takes from this strategy: a sampler's options, else none."""
        return dict(self.options) if self.target is None and self.name in SAMPLERS else {}

    def _check_call(self) -> None:
        """That the factory takes what compile() gives it: (task, vocab, key_order=, whitespace=, **options)."""
        factory = self.factory()
        if not _has_signature(factory):  # some built-ins: found out when called (see compile)
            return
        signature = inspect.signature(factory)
        try:
            signature.bind(None, None, key_order=None, whitespace=None, **self.options)
        except TypeError as e:
            options = "".join(f", {k}=..." for k in self.options)
            raise SettingsError(f"strategy {self.name!r}: {self.target} cannot be called as "
                                f"(task, vocab, key_order=..., whitespace=...{options}): {e}") from None

    def factory(self):
        """The callable `target` names."""
        module_name, _, attribute = self.target.rpartition(".")
        try:
            found = getattr(importlib.import_module(module_name), attribute) if module_name else None
        except ImportError as e:
            raise SettingsError(f"strategy {self.name!r}: cannot import {module_name!r} for _target_ "
                                f"{self.target!r} ({e})") from None
        except AttributeError:
            found = None
        if not callable(found):
            raise SettingsError(f"strategy {self.name!r}: _target_ {self.target!r} names nothing callable")
        return found

    def compile(self, task: Task, vocab: Vocabulary, key_order: str, whitespace: str) -> Constraint:
        factory = self.factory()
        try:
            constraint = factory(task, vocab, key_order=key_order, whitespace=whitespace, **self.options)
        except TypeError as e:
            if _has_signature(factory):  # checked up front: the TypeError comes from inside the user's code
                raise
            raise SettingsError(f"strategy {self.name!r}: {self.target} cannot be called as "
                                f"(task, vocab, key_order=..., whitespace=...): {e}") from None
        missing = [a for a in _REQUIRED if not hasattr(constraint, a)]
        if missing:
            raise SettingsError(f"strategy {self.name!r}: {self.target} built a {type(constraint).__name__}, which "
                                f"lacks {', '.join(missing)} (see structbench.masking.Constraint)")
        return constraint


def _sampler_options(name: str, cfg: dict) -> dict:
    """A sampler's options, checked: smc and awrs take particles, ess_threshold and resampling; asap none."""
    known = SAMPLER_OPTIONS[name]
    unknown = sorted(set(cfg) - set(known))
    if unknown:
        takes = f"takes {', '.join(known)}" if known else "takes no options"
        raise SettingsError(f"unknown setting strategy.{unknown[0]}: strategy {name!r} {takes}")
    if known:
        check_sampler_settings(cfg.get("particles", DEFAULT_PARTICLES),
                               cfg.get("ess_threshold", DEFAULT_ESS_THRESHOLD), cfg.get("resampling", "systematic"))
    return cfg


def _has_signature(factory) -> bool:
    try:
        inspect.signature(factory)
    except (TypeError, ValueError):
        return False
    return True


# The strategies of your own the running trial registered, by name.
_REGISTERED: contextvars.ContextVar = contextvars.ContextVar("structbench_strategies", default=MappingProxyType({}))


@contextlib.contextmanager
def using_strategy(strategy: Strategy):
    """Run a block with `strategy` known by its name (a built-in one needs no registering)."""
    if strategy.target is None:
        yield strategy
        return
    token = _REGISTERED.set(MappingProxyType({**_REGISTERED.get(), strategy.name: strategy}))
    try:
        yield strategy
    finally:
        _REGISTERED.reset(token)


def strategy_names() -> tuple[str, ...]:
    """Every strategy name known here: the built-in ones, then any registered by the running trial."""
    return STRATEGIES + tuple(_REGISTERED.get())


def check_strategy(strategy: str) -> str:
    if strategy not in STRATEGIES and strategy not in _REGISTERED.get():
        raise ValueError(f"unknown strategy {strategy!r}; choose one of {', '.join(strategy_names())}")
    return strategy


def compile_constraint(task: Task, vocab: Vocabulary, strategy: str, key_order: str = "any",
                       whitespace: str = "lesson"):
    """The constraint a strategy samples under; None for the unconstrained ones (none, retry). smc and asap
    sample under the tabled constraint (they read masks); awrs under the naive one (it checks one token at a
    time and never builds a mask, so nothing is tabled).
    key_order: "any" (the lesson's checker) or "schema" (properties in schema order, as the engines write them).
    whitespace: the policy between JSON tokens (structbench.jsonschema.WHITESPACE_POLICIES), for ours and the engines alike."""
    check_strategy(strategy)
    if strategy in UNCONSTRAINED:
        return None
    if strategy in ENGINE_STRATEGIES:
        return engine_constraint(strategy, task, vocab, key_order, whitespace)
    if strategy not in OUR_STRATEGIES:
        return _REGISTERED.get()[strategy].compile(task, vocab, key_order, whitespace)
    machine = task.machine(key_order, whitespace)
    if strategy in ("naive", "awrs"):
        return NaiveConstraint(machine, vocab)
    if strategy == "lazy":
        return lazy_constraint(machine, vocab)
    if task.kind == "pattern":  # a finite machine: table every state before the first token
        return pattern_constraint(machine.dfa, vocab)
    return schema_constraint(machine, vocab)


def check_attempts(max_attempts: int) -> int:
    if isinstance(max_attempts, bool) or not isinstance(max_attempts, (int, np.integer)) or max_attempts < 1:
        raise ValueError(f"max_attempts must be an integer >= 1, got {max_attempts!r}")
    return int(max_attempts)


def generate(model, rng: np.random.Generator, strategy: str, constraint=None, referee=None,
             max_tokens: int = 40, max_attempts: int = 1, temperature: float = 1.0, *,
             particles: int = DEFAULT_PARTICLES, ess_threshold: float = DEFAULT_ESS_THRESHOLD,
             resampling: str = "systematic", guide=None) -> Decoded:
    """One answer. For retry, whole unconstrained answers are drawn one after another from
    the same generator until the referee accepts a finished one or max_attempts are used;
    the last answer is returned with the attempts it took.

    smc, awrs and asap return a structbench.samplers.SampledAnswer (a Decoded with log Ẑ, the ESS and
    their cost); `particles`, `ess_threshold` and `resampling` are smc's and awrs's settings, `guide` asap's
    (None: the one kept with the constraint). The other strategies ignore them.

    A model whose logits depend on its state alone (`deterministic`, a real model) writes the
    same answer every time at temperature 0: retry then stops after the first attempt, since
    any further one could only repeat it."""
    check_strategy(strategy)
    check_budget(max_tokens)
    temperature = check_temperature(temperature)
    if strategy in SAMPLERS:
        return _sample(model, rng, strategy, constraint, max_tokens, temperature, particles, ess_threshold,
                       resampling, guide)
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
        if answer.finished and judge(referee, answer.text):  # unjudged (the referee timed out): try again
            break
    return answer


def _sample(model, rng, strategy, constraint, max_tokens, temperature, particles, ess_threshold, resampling, guide):
    if temperature != 1.0:
        raise SettingsError(f"strategy {strategy!r} samples from the model's own law given validity, at "
                            f"temperature 1 only; got temperature={temperature}")
    if constraint is None:
        raise SettingsError(f"strategy {strategy!r} needs its constraint (compile_constraint(task, vocab, {strategy!r}))")
    if strategy == "asap":
        return asap(model, rng, constraint, guide, max_tokens)
    sampler = smc if strategy == "smc" else awrs
    return sampler(model, rng, constraint, particles, ess_threshold, resampling, max_tokens)
