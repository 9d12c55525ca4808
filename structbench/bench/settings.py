"""Trial settings (a plain dict, as Hydra composes it) -> the objects a trial runs on.

Every check here fails with a message naming the setting that was wrong, before
anything is sampled or written.
"""

from __future__ import annotations

import hashlib
import json

from structbench.bench.strategies import STRATEGIES, check_attempts
from structbench.bench.tasks import (
    age_task,
    file_task,
    json_mode_task,
    nested_task,
    nullable_age_task,
    person_task,
    strict_no_age_task,
)
from structbench.errors import SettingsError
from structbench.jsonschema.checker import WHITESPACE_POLICIES
from structbench.limits import Limits
from structbench.lm.real_vocab import REAL_VOCABS, real_vocabulary
from structbench.lm.sampling import check_budget, check_temperature
from structbench.lm.toy_model import ToyModel
from structbench.lm.vocab import synthetic_vocabulary, toy_vocabulary

# Keys that say where and how to run a trial, not what it computes: left out of its identity.
RUN_KEYS = ("results_dir", "force", "progress", "experiment")
# Settings added after results were stored, left out of a trial's identity at their default value
# (what every earlier trial ran with), so that the trials stored before them keep their ids.
LATER_DEFAULTS = {"temperature": 1.0, "whitespace": "lesson"}

TASKS = {
    "age": lambda cfg: age_task(),
    "person": lambda cfg: person_task(),
    "nested": lambda cfg: nested_task(cfg.get("schema_depth", 1)),
    "json_mode": lambda cfg: json_mode_task(),
    "strict_no_age": lambda cfg: strict_no_age_task(),
    "nullable_age": lambda cfg: nullable_age_task(),
    "file": lambda cfg: file_task(cfg.get("path") or "", cfg.get("reference") or "", cfg.get("kind", "schema")),
}
VOCABS = ("toy", "synthetic") + REAL_VOCABS + ("smollm2",)
KEY_ORDERS = ("any", "schema")
MODELS = ("toy", "smollm2")
EXPERIMENT_KINDS = ("validity", "speed", "lesson", "coverage")
LESSON_PARTS = ("first_step", "mask_table", "distortion", "formulas", "length", "retry", "work")


def _choice(value, options, what: str) -> str:
    if value not in options:
        raise SettingsError(f"unknown {what} {value!r}; choose one of: {', '.join(options)}")
    return value


def trial_identity(settings: dict) -> dict:
    """What a trial computes: its settings without the run keys, without later settings at their defaults,
    and with only the limits set away from their defaults (none: no `limits` key at all)."""
    identity = {k: v for k, v in settings.items()
                if k not in RUN_KEYS and k != "limits" and not (k in LATER_DEFAULTS and v == LATER_DEFAULTS[k])}
    changed = Limits.from_settings(settings.get("limits")).changed()
    if changed:
        identity["limits"] = changed
    return identity


def trial_id(settings: dict) -> str:
    """A hash of the trial's settings only: same settings, same id, same part file."""
    canonical = json.dumps(trial_identity(settings), sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def build_task(cfg: dict):
    name = _choice(cfg.get("name"), tuple(TASKS), "task")
    try:
        return TASKS[name](cfg)
    except SettingsError:
        raise
    except ValueError as e:
        raise SettingsError(f"task {name!r}: {e}") from None


def build_vocab(cfg: dict):
    name = _choice(cfg.get("name"), VOCABS, "vocabulary")
    if name == "toy":
        if cfg.get("size") not in (None, 83):
            raise SettingsError("the toy vocabulary has 83 tokens; use vocab=synthetic to choose vocab.size")
        return toy_vocabulary()
    try:
        if name == "synthetic":
            return synthetic_vocabulary(cfg.get("size"), cfg.get("seed", 0))
        if name == "smollm2":
            from structbench.lm.real_model import smollm2_vocabulary

            vocab = smollm2_vocabulary()
            size = cfg.get("size")
            return vocab if size is None or size == len(vocab) else vocab.cut(size)
        return real_vocabulary(name, cfg.get("size"))
    except ValueError as e:
        raise SettingsError(f"vocabulary {name!r}: {e}") from None


def check_model(cfg: dict) -> str:
    """The model's name, and for a real model that its packages are installed (before anything is loaded)."""
    name = _choice(cfg.get("name"), MODELS, "model")
    if name == "smollm2":
        from structbench.lm.real_model import ModelUnavailable, require

        try:
            require("model")
        except ModelUnavailable as e:
            raise SettingsError(str(e)) from None
    return name


def build_model(cfg: dict, task, vocab, seed: int = 0):
    name = check_model(cfg)
    try:
        if name == "smollm2":
            from structbench.lm.real_model import SmolLM2Model, smollm2_vocabulary

            if vocab is not smollm2_vocabulary():
                raise SettingsError(f"model 'smollm2' writes its own vocabulary of 49,152 tokens; use vocab=smollm2 "
                                    f"(the default with model=smollm2), whole (size null), not {vocab!r}")
            return SmolLM2Model(task, dtype=cfg.get("dtype", "float32"), threads=cfg.get("threads", 1), seed=seed)
        return ToyModel(task.reference, vocab, skill=cfg.get("skill", 8.0), noise=cfg.get("noise", 1.0),
                        chatter=cfg.get("chatter", 6.0))
    except SettingsError:
        raise
    except ValueError as e:
        raise SettingsError(str(e)) from None


def check_settings(settings: dict) -> dict:
    """Validate the scalar settings; return them unchanged."""
    kind = _choice(settings.get("kind"), EXPERIMENT_KINDS, "experiment kind")
    Limits.from_settings(settings.get("limits"))
    if kind == "lesson":
        _choice(settings.get("part"), LESSON_PARTS, "lesson part")
    elif settings.get("part") is not None:
        raise SettingsError(f"part={settings['part']!r} is only used by kind=lesson, not kind={kind}")
    _choice((settings.get("strategy") or {}).get("name"), STRATEGIES, "strategy")
    _choice(settings.get("key_order"), KEY_ORDERS, "key_order")
    _choice(settings.get("whitespace", "lesson"), WHITESPACE_POLICIES, "whitespace policy")
    n = settings.get("n")
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise SettingsError(f"n (answers per trial) must be an integer >= 1, got {n!r}")
    seed = settings.get("seed")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise SettingsError(f"seed must be an integer >= 0, got {seed!r}")
    try:
        check_budget(settings.get("max_tokens"))
        check_attempts(settings.get("max_attempts"))
        check_temperature(settings.get("temperature", 1.0))
    except ValueError as e:
        raise SettingsError(str(e)) from None
    return settings
