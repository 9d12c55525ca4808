"""What the engine adapters share: the adapter base (the engine imported on demand, compile failures read
once into :class:`~structbench.errors.EngineRejected`), the constraint over a compiled matcher, and the
tokens withheld from the engines.

The engines' matchers are stateful, and all three fill the same int32 bitmask (token i at bit i % 32 of
word i // 32, structbench.masking.bitmask), so one :class:`EngineConstraint` serves them all: an adapter
only turns a task into a matcher with `reset / fill / accept / complete`.
"""

from __future__ import annotations

import importlib
import re

import numpy as np

from structbench.errors import (
    EngineRejected,
    EngineUnavailable,
    SettingsError,
    StructbenchError,
    TokenRejected,
)
from structbench.extras import install_line
from structbench.lm.vocab import Vocabulary
from structbench.masking.bitmask import unpack_bits
from structbench.masking.protocol import WorkCounter

# A log line's clock time, which xgrammar puts before its messages: a refusal's text must not change with the hour
# (the same schema gives the same row).
_CLOCK = re.compile(r"^\[\d{2}:\d{2}:\d{2}\] ")

# The engines' own words for input outside what they support (llguidance's "Unimplemented keys" and
# "Unknown format", outlines-core's "Unsupported JSON Schema structure", "... is not supported" in all three):
# such a failure is a declared limit of the engine, any other one is an error.
UNSUPPORTED_WORDS = ("unimplemented", "unsupported", "not supported", "unknown format")


class EngineAdapter:
    """One engine prepared for one vocabulary (its tokenizer info, built once). A subclass names the engine,
    its Python module, and turns a task into a matcher in `_compile`; every engine installs with the engines extra."""

    name: str = ""
    module: str = ""
    unsupported_words: tuple[str, ...] = UNSUPPORTED_WORDS

    @classmethod
    def require(cls):
        """The engine's module; EngineUnavailable, with the install line, when it is not installed."""
        try:
            return importlib.import_module(cls.module)
        except ImportError as e:
            raise EngineUnavailable(f"strategy {cls.name!r} needs the {cls.name} package ({e}); "
                                    f"{install_line('engines')}") from None

    def compile(self, kind: str, spec, whitespace: str = "lesson"):
        """The task compiled into a matcher; EngineRejected if the engine refuses it."""
        try:
            return self._compile(kind, spec, whitespace)
        except (StructbenchError, RecursionError):
            raise  # a compile timeout, or a schema too deep for Python itself: not the engine's verdict
        except Exception as e:  # noqa: BLE001 - whatever the engine raises is its refusal
            message = _CLOCK.sub("", str(e).splitlines()[0]) if str(e) else type(e).__name__
            raise EngineRejected(self.name, message, self.says_unsupported(message)) from e

    def says_unsupported(self, message: str) -> bool:
        low = message.lower()
        return any(w in low for w in self.unsupported_words)

    def _compile(self, kind: str, spec, whitespace: str):
        raise NotImplementedError


class NativeMatcher:
    """An engine's own matcher behind the four calls EngineConstraint makes: `reset()`, `fill(buffer)` (the next
    bitmask into int32 words), `accept(token_id)` and `complete()`. Each engine maps the last three onto its API."""

    def __init__(self, native):
        self.native = native

    def reset(self):
        self.native.reset()


class EngineConstraint:
    """One compiled grammar of an engine, as a :class:`~structbench.masking.protocol.Constraint`. `start()`
    resets the one matcher and returns it as the state, `advance` moves it; answers are walked one at a time."""

    def __init__(self, adapter: EngineAdapter, task, vocab: Vocabulary, whitespace: str = "lesson"):
        self.name, self.vocab = adapter.name, vocab
        self.work = WorkCounter()  # the engines do their own work; nothing of ours is counted
        self.buffer = np.zeros((len(vocab) + 31) // 32, dtype=np.int32)
        self.matcher = adapter.compile(task.kind, task.spec, whitespace)

    def start(self):
        self.matcher.reset()
        return self.matcher

    def mask_bits(self, state) -> np.ndarray:
        state.fill(self.buffer)
        return self.buffer

    def mask(self, state) -> np.ndarray:
        return unpack_bits(self.mask_bits(state), len(self.vocab))

    def advance(self, state, token_id: int):
        if token_id == self.vocab.eos_id or not state.accept(token_id):
            raise TokenRejected(f"{self.name} refused token id {token_id} ({self.vocab.token_bytes[token_id]!r})")
        return state

    def can_end(self, state) -> bool:
        return state.complete()


def check_key_order(engine: str, task, key_order: str) -> None:
    """The engines write properties in schema order: a comparison under any other order is refused."""
    if key_order != "schema" and task.kind == "schema" and _has_properties(task.spec):
        raise SettingsError(f"strategy {engine!r} writes properties in schema order; set key_order=schema "
                            f"to compare it with our checkers under the same policy")


def _has_properties(schema) -> bool:
    if isinstance(schema, dict):
        return bool(schema.get("properties")) or any(_has_properties(v) for v in schema.values())
    if isinstance(schema, list):
        return any(_has_properties(v) for v in schema)
    return False


def withheld_tokens(vocab: Vocabulary) -> set[int]:
    """Token ids that are not text and not the end token: special tokens and partial characters with no
    bytes of their own are withheld from the engines, as from our checkers. A vocabulary that declares its
    specials (SmolLM2's "<repo_name>" is no "<|...|>") is taken at its word."""
    if vocab.special_ids:
        return {i for i in vocab.special_ids if i != vocab.eos_id}
    return {i for i, t in enumerate(vocab.tokens) if t is None and i != vocab.eos_id and
            not _is_partial_text(vocab.token_bytes[i])}


def _is_partial_text(raw: bytes) -> bool:
    # A byte piece of a character is real text to a byte-level engine; a "<|...|>" special is not.
    return not (raw.startswith(b"<|") and raw.endswith(b"|>"))
