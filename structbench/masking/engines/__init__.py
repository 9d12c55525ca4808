"""The real engines as strategies: xgrammar, llguidance and outlines-core behind our Constraint protocol.

Each is built from the plain vocabulary (its token bytes and end token), compiles the task's pattern or
schema under one declared policy, and answers `mask_bits` with the int32 bitmask all three share.

The declared policy (the lesson's checker with key_order="schema"):
* whitespace: none anywhere but at most one space after ":" and ","; each adapter says how it gets there;
* properties in schema order (all three engines' convention);
* llguidance runs with `no_forcing` (otherwise forced positions allow one canonical token).

Differences that remain, inside string contents and numbers, are listed in docs/design.md. The engines are an
optional extra; a missing one raises EngineUnavailable with the exact install line, and a task an engine
refuses raises EngineRejected (its `unsupported` says whether the engine declared it out of its scope).
"""

from __future__ import annotations

import importlib.metadata

from structbench.errors import SettingsError
from structbench.lm.vocab import Vocabulary
from structbench.masking.engines.adapter import (
    EngineAdapter,
    EngineConstraint,
    check_key_order,
)
from structbench.masking.engines.llguidance import LLGuidanceAdapter
from structbench.masking.engines.outlines_core import OutlinesCoreAdapter
from structbench.masking.engines.xgrammar import XGrammarAdapter

_ADAPTERS: dict[str, type[EngineAdapter]] = {a.name: a for a in (XGrammarAdapter, LLGuidanceAdapter, OutlinesCoreAdapter)}
ENGINES = tuple(_ADAPTERS)  # the one list of engine names

_PREPARED: dict = {}


def prepare(engine: str, vocab: Vocabulary) -> EngineAdapter:
    """The engine's per-vocabulary adapter (its tokenizer info), built once per vocabulary and kept, as our
    tables keep the vocabulary's character codes: compile times then count the grammar alone."""
    key = (engine, id(vocab))
    impl = _PREPARED.get(key)
    if impl is None or impl[0] is not vocab:
        impl = _PREPARED[key] = (vocab, _ADAPTERS[engine](vocab))
    return impl[1]


def engine_version(engine: str) -> str | None:
    """The installed version of an engine's package (its distribution is named as its module, `_` or `-`), None
    where it is not installed: what a row that timed the engine records (a new release moves its times)."""
    module = _ADAPTERS[engine].module
    for name in (module, module.replace("_", "-")):
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


def engine_constraint(engine: str, task, vocab: Vocabulary, key_order: str = "schema",
                      whitespace: str = "lesson") -> EngineConstraint:
    if engine not in ENGINES:
        raise SettingsError(f"unknown engine {engine!r}; choose one of {', '.join(ENGINES)}")
    check_key_order(engine, task, key_order)
    return EngineConstraint(prepare(engine, vocab), task, vocab, whitespace)


__all__ = ["ENGINES", "EngineConstraint", "engine_constraint", "engine_version", "prepare"]
