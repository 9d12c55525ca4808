"""Trial settings: the dict Hydra composes -> one typed, validated :class:`Settings`, and the objects a trial runs on.

:meth:`Settings.from_dict` is the one place settings are read and checked; every check fails with a
message naming the setting that was wrong, before anything is sampled or written. A trial's identity
(its part file's hash) is the composed dict itself, by the rules of :func:`trial_identity`.
"""

from __future__ import annotations

import copy
import difflib
import hashlib
import json
import pkgutil
from collections.abc import Mapping
from dataclasses import dataclass, fields

from structbench.bench.strategies import SAMPLERS, Strategy, check_attempts
from structbench.bench.tasks import (
    age_task,
    file_task,
    json_mode_task,
    nested_task,
    nullable_age_task,
    person_task,
    strict_no_age_task,
)
from structbench.errors import ModelUnavailable, SettingsError
from structbench.jsonschema.checker import KEY_ORDERS, WHITESPACE_POLICIES
from structbench.limits import Limits, exceeded, using
from structbench.limits import current as current_limits
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
    "nested": lambda cfg: nested_task(cfg.schema_depth),
    "json_mode": lambda cfg: json_mode_task(),
    "strict_no_age": lambda cfg: strict_no_age_task(),
    "nullable_age": lambda cfg: nullable_age_task(),
    "file": lambda cfg: file_task(cfg.path, cfg.reference, cfg.kind),
}
VOCABS = ("toy", "synthetic") + REAL_VOCABS + ("smollm2",)
MODELS = ("toy", "smollm2")
MAX_SEED = 2**63 - 1  # the largest seed a row's int64 `seed` column holds
LESSON_PARTS = ("first_step", "mask_table", "distortion", "formulas", "length", "retry", "work")

# The keys each choice reads besides `name`. Any other key (a misspelling added with `+`, as Hydra's own hint
# for an unknown key suggests) is an error naming it, never a setting silently ignored.
TASK_KEYS = {"nested": ("schema_depth",), "file": ("path", "reference", "kind")}
VOCAB_KEYS = {"synthetic": ("size", "seed")}  # every other vocabulary: size only
MODEL_KEYS = {"toy": ("skill", "noise", "chatter"), "smollm2": ("dtype", "threads")}
# Top-level keys of one experiment kind's own, read from the composed settings (set by its sweep file).
EXPERIMENT_KEYS = {"speed": ("cold_starts", "paired"),
                   "fresh": ("corpus_dir", "subset", "sample", "compile_timeout_s", "paired"),
                   "coverage": ("corpus_dir", "subset", "sample", "compile_timeout_s", "mask_walks", "mask_steps"),
                   "distortion": ("example", "particle_grid", "prune", "floor_repeats", "exact_draws")}


def experiment_kinds() -> tuple[str, ...]:
    """The experiment kinds: the modules of structbench.experiments (listed, not imported; the runner loads a
    trial's kind by name), so adding an experiment is one module there and one sweep file."""
    import structbench.experiments as package

    return tuple(sorted(m.name for m in pkgutil.iter_modules(package.__path__) if not m.name.startswith("_")))


def _choice(value, options, what: str) -> str:
    if value not in options:
        raise SettingsError(f"unknown {what} {value!r}; choose one of: {', '.join(options)}")
    return value


def _check_keys(cfg: Mapping, known, prefix: str, reader: str) -> None:
    """That every key of `cfg` is one `reader` reads; else a SettingsError naming the key and the closest or
    all known ones. `prefix` is the keys' path ("task." for task.*, "" at the top)."""
    unknown = sorted(set(cfg) - set(known), key=str)
    if unknown:
        key = str(unknown[0])
        raise SettingsError(f"unknown setting {prefix}{key} for {reader}{_closest(key, known, prefix)}")


def _closest(key: str, known, prefix: str, owners: Mapping | None = None) -> str:
    """' (did you mean X?)' for the closest known key (`owners`: whose key it is, when not every trial's), else
    the list of them all."""
    close = difflib.get_close_matches(key, [str(k) for k in known], n=1)
    if close:
        owner = (owners or {}).get(close[0])
        return f" (did you mean {prefix}{close[0]}" + (f", a setting of {owner}" if owner else "") + "?)"
    return f"; it reads: {', '.join(prefix + str(k) for k in sorted(known, key=str))}"


def _at_most(value: int, limit: str, what: str) -> None:
    """A count setting past `limits.<limit>` (the limits in force): LimitExceeded naming both."""
    if value > getattr(current_limits(), limit):
        raise exceeded(limit, f"{what} is more than allowed")


def _boolean(key: str, value) -> bool:
    """true or false, nothing else: Hydra reads `progress=maybe` as a string and `force=2` as an integer."""
    if not isinstance(value, bool):
        raise SettingsError(f"{key} must be true or false, got {value!r}")
    return value


def _plain_name(key: str, value) -> str:
    """A setting used as one component of a path (results go to <results_dir>/<experiment>/): a plain name, so
    that nothing is written outside results_dir."""
    if (not isinstance(value, str) or value in ("", ".", "..") or any(c in value for c in "/\\\0")
            or value != value.strip()):
        raise SettingsError(f"{key} must be a plain name (no '/', '\\', '..', nor empty): it names a folder "
                            f"under results_dir, got {value!r}")
    return value


def top_level_keys() -> tuple[str, ...]:
    """The keys every trial reads at the top of its settings (the typed Settings' fields)."""
    return tuple(f.name for f in fields(Settings) if f.name != "composed")


def unknown_setting(dotted: str) -> str | None:
    """For a key on the command line that the composed config lacks (Hydra: "Could not override"): a message when
    no choice of experiment, task, vocabulary or model reads it, or None when some does (adding it with `+`
    is then right, as Hydra says). The key's path decides; strategy options and limits are checked later."""
    head, _, rest = dotted.partition(".")
    owners = {k: f"kind={kind}" for kind, keys in EXPERIMENT_KEYS.items() for k in keys}
    tops = top_level_keys() + tuple(owners)
    if head not in tops:
        return f"unknown setting {head}{_closest(head, tops, '', owners)}"
    nested = {"task": TASK_KEYS, "vocab": VOCAB_KEYS, "model": MODEL_KEYS}.get(head)
    if not rest or nested is None:
        return None
    known = ("name", "size") + tuple(k for keys in nested.values() for k in keys)
    key = rest.partition(".")[0]
    return None if key in known else f"unknown setting {head}.{key}{_closest(key, set(known), head + '.')}"


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


@dataclass(frozen=True)
class TaskSettings:
    name: str
    schema_depth: object = 1  # task=nested (checked by nested_schema)
    path: object = ""         # task=file: the schema or pattern file
    reference: object = ""    # task=file: the answer the toy model copies
    kind: object = "schema"   # task=file: schema or pattern

    @classmethod
    def from_dict(cls, cfg: Mapping) -> TaskSettings:
        name = _choice(cfg.get("name"), tuple(TASKS), "task")
        _check_keys(cfg, ("name",) + TASK_KEYS.get(name, ()), "task.", f"task={name}")
        return cls(name, cfg.get("schema_depth", 1),
                   cfg.get("path") or "", cfg.get("reference") or "", cfg.get("kind", "schema"))


@dataclass(frozen=True)
class VocabSettings:
    name: str
    size: object = None  # null: the whole vocabulary
    seed: object = 0     # vocab=synthetic

    @classmethod
    def from_dict(cls, cfg: Mapping) -> VocabSettings:
        name = _choice(cfg.get("name"), VOCABS, "vocabulary")
        _check_keys(cfg, VOCAB_KEYS.get(name, ("size",)) + ("name",), "vocab.", f"vocab={name}")
        return cls(name, cfg.get("size"), cfg.get("seed", 0))


@dataclass(frozen=True)
class ModelSettings:
    name: str
    skill: object = 8.0      # the toy model's (checked by ToyModel)
    noise: object = 1.0
    chatter: object = 6.0
    dtype: object = "float32"  # the real model's
    threads: object = 1

    @classmethod
    def from_dict(cls, cfg: Mapping) -> ModelSettings:
        name = _choice(cfg.get("name"), MODELS, "model")
        _check_keys(cfg, ("name",) + MODEL_KEYS[name], "model.", f"model={name}")
        defaults = cls("")
        return cls(name, **{k: cfg.get(k, getattr(defaults, k))
                            for k in ("skill", "noise", "chatter", "dtype", "threads")})


@dataclass(frozen=True)
class Settings(Mapping):
    """One trial's settings, validated and typed. Read as a Mapping it is the dict it was built from: that is
    how an experiment reads keys of its own (coverage's `corpus_dir`), and what the trial's id hashes."""

    composed: dict
    kind: str
    part: str | None
    experiment: str
    n: int
    seed: int
    max_tokens: int
    max_attempts: int
    temperature: float
    key_order: str
    whitespace: str
    task: TaskSettings
    vocab: VocabSettings
    model: ModelSettings
    strategy: Strategy
    limits: Limits
    results_dir: str
    force: bool
    progress: bool

    @classmethod
    def from_dict(cls, settings: Mapping) -> Settings:
        if isinstance(settings, Settings):
            return settings
        composed = copy.deepcopy(dict(settings))  # the identity never changes under the caller's feet
        get = composed.get
        kind = _choice(get("kind"), experiment_kinds(), "experiment kind")
        _check_keys(composed, top_level_keys() + EXPERIMENT_KEYS.get(kind, ()), "", f"kind={kind}")
        limits = Limits.from_settings(get("limits"))
        if kind == "lesson":
            _choice(get("part"), LESSON_PARTS, "lesson part")
        elif get("part") is not None:
            raise SettingsError(f"part={get('part')!r} is only used by kind=lesson, not kind={kind}")
        strategy_cfg = get("strategy") or {}
        options = sorted(set(strategy_cfg) - {"name", "_target_"}) if isinstance(strategy_cfg, Mapping) else []
        if options and strategy_cfg.get("_target_") is None and strategy_cfg.get("name") not in SAMPLERS:
            # options are passed to your own strategy's factory (or are a sampler's, checked by Strategy)
            raise SettingsError(f"unknown setting strategy.{options[0]}: the built-in strategy "
                                f"{strategy_cfg.get('name')!r} takes no options (they are for your own, "
                                f"strategy._target_)")
        strategy = Strategy.from_settings(strategy_cfg)
        key_order = _choice(get("key_order"), KEY_ORDERS, "key_order")
        whitespace = _choice(get("whitespace", "lesson"), WHITESPACE_POLICIES, "whitespace policy")
        n = get("n")
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise SettingsError(f"n (answers per trial) must be an integer >= 1, got {n!r}")
        seed = get("seed")
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
            raise SettingsError(f"seed must be an integer from 0 to 2**63 - 1 (rows store it as int64), got {seed!r}")
        try:
            max_tokens = check_budget(get("max_tokens"))
            max_attempts = check_attempts(get("max_attempts"))
            temperature = check_temperature(get("temperature", 1.0))
        except ValueError as e:
            raise SettingsError(str(e)) from None
        with using(limits):  # the trial's own limits bound its counts (and name themselves in the error)
            _at_most(n, "max_answers", f"n={n:,} answers in one trial")
            _at_most(max_tokens, "max_answer_tokens", f"max_tokens={max_tokens:,} tokens for one answer")
            _at_most(max_attempts, "max_retry_attempts", f"max_attempts={max_attempts:,} tries for one answer")
        experiment = "adhoc" if get("experiment") is None else _plain_name("experiment", get("experiment"))
        results_dir = get("results_dir", "results")
        if not isinstance(results_dir, str) or not results_dir:
            raise SettingsError(f"results_dir must be a folder's path, got {results_dir!r}")
        return cls(composed, kind, get("part"), experiment, n, seed, max_tokens, max_attempts,
                   temperature, key_order, whitespace, TaskSettings.from_dict(get("task") or {}),
                   VocabSettings.from_dict(get("vocab") or {}), ModelSettings.from_dict(get("model") or {}),
                   strategy, limits, results_dir, _boolean("force", get("force", False)),
                   _boolean("progress", get("progress", False)))

    @property
    def trial_id(self) -> str:
        return trial_id(self.composed)

    def identity(self) -> dict:
        return trial_identity(self.composed)

    def __getitem__(self, key):
        return self.composed[key]

    def __iter__(self):
        return iter(self.composed)

    def __len__(self) -> int:
        return len(self.composed)


def build_task(cfg: TaskSettings):
    try:
        return TASKS[cfg.name](cfg)
    except SettingsError:
        raise
    except ValueError as e:
        raise SettingsError(f"task {cfg.name!r}: {e}") from None


def build_vocab(cfg: VocabSettings):
    if cfg.name == "toy":
        if cfg.size not in (None, 83):
            raise SettingsError("the toy vocabulary has 83 tokens; use vocab=synthetic to choose vocab.size")
        return toy_vocabulary()
    try:
        if cfg.name == "synthetic":
            return synthetic_vocabulary(cfg.size, cfg.seed)
        if cfg.name == "smollm2":
            from structbench.lm.real_model import smollm2_vocabulary

            vocab = smollm2_vocabulary()
            return vocab if cfg.size is None or cfg.size == len(vocab) else vocab.cut(cfg.size)
        return real_vocabulary(cfg.name, cfg.size)
    except ValueError as e:
        raise SettingsError(f"vocabulary {cfg.name!r}: {e}") from None


def check_model(cfg: ModelSettings) -> str:
    """For a real model, that its packages are installed (before anything is loaded)."""
    if cfg.name == "smollm2":
        from structbench.lm.real_model import require

        try:
            require("model")
        except ModelUnavailable as e:
            raise SettingsError(str(e)) from None
    return cfg.name


def build_model(cfg: ModelSettings, task, vocab, seed: int = 0):
    name = check_model(cfg)
    try:
        if name == "smollm2":
            from structbench.bench.prompts import Prompts
            from structbench.lm.real_model import SmolLM2Model, smollm2_vocabulary

            if vocab is not smollm2_vocabulary():
                raise SettingsError(f"model 'smollm2' writes its own vocabulary of 49,152 tokens; use vocab=smollm2 "
                                    f"(the default with model=smollm2), whole (size null), not {vocab!r}")
            return SmolLM2Model(Prompts(task, seed), dtype=cfg.dtype, threads=cfg.threads)
        return ToyModel(task.reference, vocab, skill=cfg.skill, noise=cfg.noise, chatter=cfg.chatter)
    except SettingsError:
        raise
    except ValueError as e:
        raise SettingsError(str(e)) from None
