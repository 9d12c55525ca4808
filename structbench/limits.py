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
import inspect
import re
from dataclasses import dataclass, fields

from structbench.errors import LimitExceeded, SettingsError

# The largest value any limit may be set to: every limit still means what its comment says there (a count a
# C int holds; seconds the interval timer takes), and no setting overflows a machine integer on the way.
LIMIT_CEILING = 2**31 - 1


@dataclass(frozen=True)
class Limits:
    # --- patterns and automata (structbench/regular) ---
    max_repeat: int = 1000                 # a counted repeat {m,n} is expanded by copying: n at most this
    max_nfa_states: int = 200_000          # states of one pattern's NFA (nested counted repeats multiply)
    max_dfa_states: int = 20_000           # states of one automaton construction (product, search, ...)
    pattern_steps: int = 5_000_000         # NFA states visited building one pattern's DFA (its subsets' sizes summed)
    max_bound_digits: int = 40             # digits of an integer or decimal bound written as a language
    max_multiple_of: int = 1000            # a whole multipleOf up to this is a language of multiples
    max_literal_states: int = 1_000_000    # states of the trie of an enum's strings (one per distinct prefix)
    max_nesting: int = 128                 # groups nested in a pattern; objects and arrays nested in a schema
    # --- schemas (structbench/jsonschema) ---
    max_schema_bytes: int = 2_000_000      # an input file read from disk: task=file, a coverage corpus file
    max_schema_nodes: int = 20_000         # compiled nodes of one schema
    max_branches: int = 64                 # branches of one anyOf / oneOf after rewriting
    max_pattern_properties: int = 4        # patternProperties beside one another in one object
    max_string_length: int = 100_000       # maxLength above this is enforced as this (a restriction)
    max_items: int = 1000                  # minItems / maxItems counted exactly up to this
    max_ref_depth: int = 100               # subschemas nested (items, properties, $ref, ...), $ref-only chains
    max_proof_depth: int = 8               # nesting an exclusivity proof (oneOf) looks through
    max_flexible_whitespace: int = 64      # whitespace=flexible: characters of one run of whitespace
    max_key_order_depth: int = 60          # coverage: an instance's keys put in schema order to this nesting
    # --- referee (structbench/bench/referees.py) ---
    referee_seconds: int = 2               # wall-clock seconds to judge one answer (a backtracking `pattern`)
    # --- tabled masks (structbench/masking) ---
    max_eager_states: int = 5000           # machine states tabled up front; beyond, each when first met
    split_depth: int = 4                   # context split: stacks this deep are explored at compile time
    split_stacks: int = 20_000             # ... and at most this many of them
    precompute_steps: int = 250_000        # checker steps tabling ahead may take; beyond, each state when first met
    precompute_token_chars: int = 200_000_000  # token characters the masks tabled ahead may walk; beyond, likewise
    mask_steps: int = 2_000_000            # checker steps one mask may take (a union steps each alternative)
    max_table_cells: int = 268_435_456     # one constraint's table: machine states x character classes (4 B each: 1 GiB)
    max_stored_masks: int = 2048           # lazy: masks kept across schemas by their keys (16 KB each on Llama 3)
    max_stored_nodes: int = 200_000        # nodes numbered by structure, kept across schemas; beyond, they start over
    max_schema_dfa_states: int = 4096      # lazy: a regular schema (keys in schema order) as one DFA up to this; 0: never
    # --- vocabularies (structbench/lm) ---
    max_vocab_size: int = 262_144          # tokens of a synthetic vocabulary (the largest real ones: Gemma's 262,144)
    # --- tasks ---
    max_nested_depth: int = 32             # task=nested: schema_depth at most this
    # --- samplers (structbench/samplers) ---
    max_particles: int = 4096              # smc / awrs: particles per answer
    # --- trial settings (structbench/bench/settings.py, checked before a trial runs) ---
    max_answers: int = 100_000             # n: answers (or walks) one trial draws
    max_answer_tokens: int = 10_000        # max_tokens: tokens one answer may take (the sweeps use at most 400)
    max_retry_attempts: int = 1_000_000    # max_attempts: whole answers retry may draw for one (distortion's: 100,000)
    max_compile_seconds: int = 3600        # coverage: compile_timeout_s, seconds one compile or walk may take

    @classmethod
    def from_settings(cls, overrides: dict | None) -> "Limits":
        """Limits with the given fields changed; an unknown field or a value that is not an integer from 1 to
        LIMIT_CEILING is a SettingsError naming it."""
        overrides = dict(overrides or {})
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(overrides) - names)
        if unknown:
            raise SettingsError(f"unknown limit {unknown[0]!r}; the limits are: {', '.join(sorted(names))}")
        for name, value in overrides.items():
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= LIMIT_CEILING:
                raise SettingsError(f"limits.{name} must be an integer from 1 to {LIMIT_CEILING:,} (2**31 - 1), "
                                    f"got {value!r}")
        return dataclasses.replace(cls(), **overrides)

    def changed(self) -> dict:
        """The fields set away from their defaults (what a trial's identity includes)."""
        default = Limits()
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) != getattr(default, f.name)}


DEFAULT = Limits()
_ACTIVE: contextvars.ContextVar[Limits] = contextvars.ContextVar("structbench_limits", default=DEFAULT)


def exceeded(name: str, what: str, error=None):
    """The error for work or size past ``limits.<name>``: says what went past it, the limit's value and how to
    raise it. `error` is the LimitExceeded subclass to raise (LimitExceeded itself by default)."""
    return (error or LimitExceeded)(f"{what} {limit_note(name)}")


def limit_note(name: str) -> str:
    """``(limits.<name> = <value>; raise it with +limits.<name>=N)``, for errors that quote a limit."""
    return f"(limits.{name} = {getattr(current(), name):,}; raise it with +limits.{name}=N)"


class Fuel:
    """The work one operation may do, counted in steps against ``limits.<name>``: every loop that grows with
    the input draws from it with :meth:`spend`, and the step past the limit raises LimitExceeded naming it."""

    def __init__(self, name: str, what: str):
        self.name, self.what = name, what
        self.limit = getattr(current(), name)
        self.left = self.limit

    def spend(self, steps: int = 1) -> None:
        self.left -= steps
        if self.left < 0:
            raise exceeded(self.name, f"{self.what} took more than {self.limit:,} steps")


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


def documented() -> list[tuple[str, str, int, str]]:
    """(section, name, default, what it bounds) for every limit, read from this class's source: the comment on
    each field's line is its documentation, and the `# --- section ---` lines group them."""
    out, section = [], ""
    for line in inspect.getsource(Limits).splitlines():
        heading = re.match(r"\s*# --- (.+?) ---", line)
        if heading:
            section = heading.group(1)
            continue
        field = re.match(r"\s*(\w+): int = [\d_]+\s*# (.+)", line)
        if field:
            out.append((section, field.group(1), getattr(DEFAULT, field.group(1)), field.group(2).strip()))
    return out


def markdown_table() -> str:
    """The README's Limits table: one line per limit, in the class's order."""
    lines, previous = ["| limit | default | what it bounds |", "|---|---|---|"], None
    for section, name, default, doc in documented():
        if section != previous:
            lines.append(f"| *{section}* | | |")
            previous = section
        lines.append(f"| `{name}` | {default:,} | {doc} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown_table())
