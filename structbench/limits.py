"""Every cap and budget in one place.

:class:`Limits` is frozen; the code reads the active one with :func:`current`, and a trial runs under the
limits of its settings (``limits.<field>=...`` on the command line, the ``limits:`` block of
``conf/config.yaml``) through :func:`using`. Nothing else in the package defines a cap.

Limits change what a trial computes only where an input reaches them, so a trial's identity (its part
file's hash) includes just the fields set away from their defaults.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
from dataclasses import dataclass, fields

from structbench.errors import SettingsError


@dataclass(frozen=True)
class Limits:
    # --- patterns and automata (structbench/regular) ---
    max_repeat: int = 1000                 # a counted repeat {m,n} is expanded by copying: n at most this
    max_dfa_states: int = 20_000           # states of one automaton construction (product, search, ...)
    max_bound_digits: int = 40             # digits of an integer or decimal bound written as a language
    max_multiple_of: int = 1000            # a whole multipleOf up to this is a language of multiples
    # --- schemas (structbench/jsonschema) ---
    max_schema_bytes: int = 2_000_000      # an input file read from disk: task=file, a coverage corpus file
    max_schema_nodes: int = 20_000         # compiled nodes of one schema
    max_branches: int = 64                 # branches of one anyOf / oneOf after rewriting
    max_pattern_properties: int = 4        # patternProperties beside one another in one object
    max_string_length: int = 100_000       # maxLength above this is enforced as this (a restriction)
    max_items: int = 1000                  # minItems / maxItems counted exactly up to this
    max_ref_depth: int = 200               # $ref expansions through allOf / anyOf without an end
    max_proof_depth: int = 8               # nesting an exclusivity proof (oneOf) looks through
    max_flexible_whitespace: int = 64      # whitespace=flexible: characters of one run of whitespace
    max_key_order_depth: int = 60          # coverage: an instance's keys put in schema order to this nesting
    # --- tabled masks (structbench/masking) ---
    max_eager_states: int = 5000           # machine states tabled up front; beyond, each when first met
    split_depth: int = 4                   # context split: stacks this deep are explored at compile time
    split_stacks: int = 20_000             # ... and at most this many of them
    # --- tasks ---
    max_nested_depth: int = 32             # task=nested: schema_depth at most this

    @classmethod
    def from_settings(cls, overrides: dict | None) -> "Limits":
        """Limits with the given fields changed; an unknown field or a value that is not a positive integer is a
        SettingsError naming it."""
        overrides = dict(overrides or {})
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(overrides) - names)
        if unknown:
            raise SettingsError(f"unknown limit {unknown[0]!r}; the limits are: {', '.join(sorted(names))}")
        for name, value in overrides.items():
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise SettingsError(f"limits.{name} must be an integer >= 1, got {value!r}")
        return dataclasses.replace(cls(), **overrides)

    def changed(self) -> dict:
        """The fields set away from their defaults (what a trial's identity includes)."""
        default = Limits()
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) != getattr(default, f.name)}


DEFAULT = Limits()
_ACTIVE: contextvars.ContextVar[Limits] = contextvars.ContextVar("structbench_limits", default=DEFAULT)


def current() -> Limits:
    """The limits in force (the defaults unless a caller chose others with :func:`using`)."""
    return _ACTIVE.get()


@contextlib.contextmanager
def using(limits: Limits):
    """Run a block under `limits`."""
    token = _ACTIVE.set(limits)
    try:
        yield limits
    finally:
        _ACTIVE.reset(token)
