"""Every error structbench raises, under one root.

Catch :class:`StructbenchError` to handle anything the package refuses; the command line prints it as
one line (``structbench: error: ...``) and exits with status 2. Code that must tell failures apart
branches on these types, never on message text.

Each class also derives from the built-in exception it used to be (``ValueError``, ``OSError``, ...), so
``except ValueError`` around a bad setting keeps working.
"""

from __future__ import annotations


class StructbenchError(Exception):
    """The root of every error structbench raises on purpose."""


# --- settings and inputs -------------------------------------------------------------------------------

class SettingsError(StructbenchError, ValueError):
    """A trial's settings are malformed, unknown or inconsistent; the message names the setting."""


class InputFileError(StructbenchError, ValueError):
    """A file given as input (a schema, a pattern, a corpus file) that cannot be read as asked: missing, not a
    regular file, over the size limit, unreadable or not UTF-8 text. The message names the file."""


class StoreError(StructbenchError, OSError):
    """The results directory cannot be used."""


class MissingRows(StructbenchError, LookupError):
    """The experiment is stored, but not the rows a figure or table needs."""


# --- limits ----------------------------------------------------------------------------------------------

class LimitExceeded(StructbenchError):
    """Work or size past one of the caps in :class:`structbench.limits.Limits`; the message names it."""


class TooComplex(LimitExceeded, ValueError):
    """An automaton construction would pass its state cap (``Limits.max_dfa_states``)."""


class TooManyStates(LimitExceeded, RuntimeError):
    """A machine has more reachable states than can be tabled up front (``Limits.max_eager_states``)."""


# --- patterns and schemas --------------------------------------------------------------------------------

class PatternError(StructbenchError, ValueError):
    """A pattern that is malformed or uses syntax outside the supported subset."""

    def __init__(self, pattern: str, position: int, problem: str):
        self.pattern, self.position, self.problem = pattern, position, problem
        super().__init__(f"{problem} at position {position} of pattern {pattern!r}")


class InvalidAutomaton(StructbenchError, ValueError):
    """A DFA built from moves that are not a well-formed machine (a target past the last state, intervals out of
    order or overlapping, ...): a bug in the construction, caught where the DFA is made."""


class UnsupportedSchema(StructbenchError, ValueError):
    """The schema uses a keyword or form outside the supported subset; `keyword` and `path` say where."""

    def __init__(self, keyword: str, path: str, detail: str = ""):
        self.keyword, self.path, self.detail = keyword, path, detail
        super().__init__(f"unsupported: {keyword} at {path}" + (f" ({detail})" if detail else ""))


class NotExclusive(UnsupportedSchema):
    """oneOf branches the compiler cannot prove exclusive (`pairs`: branch indices -> the kinds of value not
    proved apart): the compiler retries with those pairs told apart by absent keys, and declares the schema
    unsupported if that fails."""

    def __init__(self, keyword: str, path: str, detail: str, pairs: dict):
        super().__init__(keyword, path, detail)
        self.pairs = pairs


class InvalidSchema(StructbenchError, ValueError):
    """The schema is not a valid schema, or no JSON value satisfies it."""


# --- masking and models ----------------------------------------------------------------------------------

class TokenRejected(StructbenchError, ValueError):
    """A token the constraint does not allow in this state was forced on it."""


class VocabularyError(StructbenchError, ValueError):
    """A vocabulary that cannot be built or used as asked."""


class Unavailable(StructbenchError, ImportError):
    """An optional package is not installed; the message holds the exact install line."""


class MissingVocabulary(Unavailable, VocabularyError):
    """A real vocabulary's package is not installed."""


class ModelUnavailable(Unavailable, VocabularyError):
    """The real model's packages are not installed."""


class EngineUnavailable(Unavailable):
    """An engine's package is not installed."""


class EngineRejected(StructbenchError):
    """A real engine refused to compile a task. `unsupported` is True where the engine said the input is outside
    what it supports (its own words, read once, in the adapter), False for any other failure. `message` is the
    engine's first line; the exception the engine raised is the `__cause__`."""

    def __init__(self, engine: str, message: str, unsupported: bool):
        self.engine, self.message, self.unsupported = engine, message, unsupported
        super().__init__(f"{engine}: {message}")


# --- experiments -----------------------------------------------------------------------------------------

class CompileTimeout(StructbenchError, TimeoutError):
    """A compile ran past the coverage sweep's per-schema time limit."""


class RefereeTimeout(LimitExceeded, TimeoutError):
    """The referee ran past ``Limits.referee_seconds`` judging one answer (Python's `re` backtracking on a
    schema's `pattern`, say): the answer is unjudged, neither valid nor invalid."""


class WalkError(StructbenchError, RuntimeError):
    """A strategy refused a token of the task's own valid reference answer."""


class QuadratureError(StructbenchError, ArithmeticError):
    """An exact next-token law (structbench.distortion) whose quadrature missed its stated precision: its
    probabilities do not sum to 1 within the tolerance."""
