"""coverage: compile every schema of a MaskBench-format corpus under one strategy, and walk every test
instance through the constraint token by token on a real vocabulary.

Per schema: the compile outcome (ok / unsupported / error / timeout, with the keyword and path or the
message) and the compile milliseconds. Per test instance (serialised in the whitespace policy's style,
object keys in the schema's property order where the schema names them, whole floats as integers,
spelled by the vocabulary's own tokenizer): whether the constraint accepts it (every token allowed, then the end), against the
referee's verdict (jsonschema, Draft 2020-12, the formats in structbench.jsonschema.keywords.REFEREE_FORMATS asserted):
`valid_accepted`, `valid_rejected`, `invalid_accepted` (the soundness failure), `invalid_rejected`. Accepted by
`tabled`: its checker reads the instance's characters; by `lazy`: its own masks allow each token, then the end
token; by an engine: its matcher. For the first accepted instances of a schema (`mask_walks`) the masks of its first `mask_steps` steps
are timed (µs; ours are built lazily, state by state, so these include building them).

One trial = one strategy over one shard of the corpus: `subset` (a file-name prefix, or "all") and a
deterministic sample (`sample` files per subset, chosen by a hash of the file name; null = all). A file
that is not JSON, not in the format, or not a valid schema gets its outcome and the sweep goes on.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from structbench.bench.files import read_text_file
from structbench.bench.referees import UNJUDGED, SchemaReferee
from structbench.bench.shared_data import ENV_VAR as DATA_VARIABLE
from structbench.bench.shared_data import maskbench_dir
from structbench.bench.time_limit import time_limit
from structbench.errors import (
    CompileTimeout,
    EngineRejected,
    InputFileError,
    InvalidSchema,
    RefereeTimeout,
    SettingsError,
    UnsupportedSchema,
)
from structbench.jsonschema.refs import follow_refs
from structbench.limits import current as limits
from structbench.limits import exceeded
from structbench.masking import ENGINES
from structbench.masking.bitmask import allows
from structbench.report.summary import coverage_summary, same_schemas

SEPARATORS = {"lesson": (", ", ": "), "compact": (",", ":")}


def subset_of(path: Path) -> str:
    """MaskBench names its files <subset>---<id>.json; JME's are JME_<n>.json."""
    name = path.name
    if "---" in name:
        return name.split("---")[0]
    return name.split("_")[0] if "_" in name else "other"


def corpus_files(corpus_dir, subset: str = "all", sample: int | None = None) -> list[Path]:
    root = Path(corpus_dir)
    if not root.is_dir():
        raise ValueError(f"corpus_dir {str(root)!r} is not a directory")
    files = sorted(p for p in root.glob("*.json") if not p.name.startswith("."))
    if subset != "all":
        files = [p for p in files if subset_of(p) == subset]
    if sample is not None:
        by_subset: dict[str, list[Path]] = {}
        for p in files:
            by_subset.setdefault(subset_of(p), []).append(p)
        files = []
        for group in by_subset.values():
            group.sort(key=lambda p: hashlib.sha256(p.name.encode()).hexdigest())
            files += sorted(group[:sample])
    return files


def canonical_numbers(value):
    """The same JSON value with each whole float written as an integer (12345.0 -> 12345): JSON Schema
    reads both as one number, and our checkers (like the engines) write integers without a fraction."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: canonical_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [canonical_numbers(v) for v in value]
    return value


def serialise(value, whitespace: str) -> str:
    value = canonical_numbers(value)
    if whitespace == "flexible":
        return json.dumps(value, ensure_ascii=False, indent=2)
    return json.dumps(value, ensure_ascii=False, separators=SEPARATORS[whitespace])


def _properties(schema, root, seen=None) -> dict:
    """The properties a schema names, its allOf parts' included (the first naming of a key wins)."""
    schema = follow_refs(schema, root)
    seen = set() if seen is None else seen
    seen.add(id(schema))  # an allOf that leads back here adds nothing new
    props = dict(schema.get("properties", {})) if isinstance(schema.get("properties"), dict) else {}
    for part in schema.get("allOf", []) if isinstance(schema.get("allOf"), list) else []:
        if id(follow_refs(part, root)) not in seen:
            for k, v in _properties(part, root, seen).items():
                props.setdefault(k, v)
    return props


def in_schema_order(value, schema, root, depth=0):
    """The value with each object's keys in the order its schema lists them (the engines write properties
    in schema order); keys the schema does not name keep their place after them."""
    if depth > limits().max_key_order_depth:
        return value
    schema = follow_refs(schema, root)
    if isinstance(value, dict):
        for word in ("anyOf", "oneOf"):
            for branch in schema.get(word, []) if isinstance(schema.get(word), list) else []:
                if set(value) <= set(_properties(branch, root)) and _properties(branch, root):
                    schema = follow_refs(branch, root)
                    break
        props = _properties(schema, root)
        extra = schema.get("additionalProperties", {})
        keys = [k for k in props if k in value] + [k for k in value if k not in props]
        return {k: in_schema_order(value[k], props.get(k, extra), root, depth + 1) for k in keys}
    if isinstance(value, list):
        prefix = schema.get("prefixItems", []) if isinstance(schema.get("prefixItems"), list) else []
        items = schema.get("items", {})
        return [in_schema_order(v, prefix[i] if i < len(prefix) else items, root, depth + 1) for i, v in enumerate(value)]
    return value


def spell(vocab, value, whitespace: str) -> tuple[str, list[int]]:
    """The text and its tokens; non-ASCII characters are escaped when the vocabulary would need pieces of
    characters to write them (our checkers read characters; the engines would read such pieces too)."""
    text = serialise(value, whitespace)
    ids = vocab.encode(text)
    if any(vocab.tokens[i] is None for i in ids):
        text = json.dumps(canonical_numbers(value), ensure_ascii=True, **({"indent": 2} if whitespace == "flexible" else
                                                          {"separators": SEPARATORS[whitespace]}))
        ids = vocab.encode(text)
    return text, ids


def compile_limit(seconds):
    """A compile or walk that takes longer than `seconds` raises CompileTimeout (SIGALRM: the main thread only)."""
    return time_limit(seconds, CompileTimeout)


class _OurWalker:
    """Our checker: acceptance by stepping the checker through each token's characters; masks (for
    timing) from the vectorised tables, state by state."""

    def __init__(self, schema, vocab, whitespace: str):
        from structbench.jsonschema.checker import SchemaChecker
        from structbench.masking import LazyDense, machine_boundaries

        self.checker = SchemaChecker(schema, "any", whitespace)
        self.vocab = vocab
        self.dense = LazyDense(self.checker, machine_boundaries(self.checker.special_chars()), vocab)

    def accepts(self, ids) -> bool:
        state = self.checker.start()
        for tid in ids:
            text = self.vocab.tokens[tid]
            if text is None:
                return False
            state = self.checker.feed(state, text)
            if state is None:
                return False
        return self.checker.can_end(state)

    def mask_times(self, ids) -> list[float]:
        out, state = [], self.dense.start
        for tid in list(ids):
            t = time.perf_counter_ns()
            allowed, _ = self.dense.mask(state)
            out.append((time.perf_counter_ns() - t) / 1000.0)
            if not allowed[tid]:
                raise AssertionError("a mask refused a token the checker accepted")
            if tid != self.vocab.eos_id:
                for ch in self.vocab.tokens[tid]:
                    state = self.dense.step(state, ch)
        return out


class _EngineWalker:
    def __init__(self, engine: str, schema, vocab, whitespace: str):
        from structbench.bench.tasks import Task
        from structbench.masking import engine_constraint

        task = Task("coverage", "schema", schema, "{}")
        self.constraint = engine_constraint(engine, task, vocab, "schema", whitespace)
        self.vocab = vocab

    def accepts(self, ids) -> bool:
        state = self.constraint.start()
        for tid in ids:
            if not state.accept(tid):
                return False
        return bool(self.constraint.can_end(state))

    def mask_times(self, ids) -> list[float]:
        out, state = [], self.constraint.start()
        for tid in list(ids):
            t = time.perf_counter_ns()
            self.constraint.mask_bits(state)
            out.append((time.perf_counter_ns() - t) / 1000.0)
            if tid != self.vocab.eos_id and not state.accept(tid):
                raise AssertionError("the engine refused a token it accepted before")
        return out


class _MaskWalker:
    """The lazy strategy: acceptance by its own masks, built cold as an answer meets them (each token allowed by the
    mask at its state, then the end token by the last one), so every test instance judges its masks: one that
    refuses a token of a valid instance is a valid instance rejected; one that allows the end too early, an invalid
    one accepted; one that allows a token its checker refuses stops the walk at the advance (the checker's step),
    the instance's error (TokenRejected). Masks are timed on a second constraint, its masks built anew (what the
    first one's compile kept for later schemas serves it, as in the fresh sweep); that compile counts against the
    timing's time limit."""

    def __init__(self, strategy: str, schema, vocab, whitespace: str):
        from structbench.bench.tasks import Task

        self.task, self.strategy, self.vocab, self.whitespace = Task("coverage", "schema", schema, "{}"), strategy, \
            vocab, whitespace
        self.constraint = self._compiled()

    def _compiled(self):
        from structbench.bench.strategies import compile_constraint

        return compile_constraint(self.task, self.vocab, self.strategy, "any", self.whitespace)

    def accepts(self, ids) -> bool:
        constraint, state = self.constraint, self.constraint.start()
        for tid in list(ids) + [self.vocab.eos_id]:
            if not allows(constraint.mask_bits(state), tid):
                return False
            if tid != self.vocab.eos_id:
                state = constraint.advance(state, tid)
        return True

    def mask_times(self, ids) -> list[float]:
        constraint = self._compiled()  # (the accepting walk built these masks: timed cold, on a new one)
        out, state = [], constraint.start()
        for tid in list(ids):  # (the instance's tokens: no end token)
            t = time.perf_counter_ns()
            bits = constraint.mask_bits(state)
            out.append((time.perf_counter_ns() - t) / 1000.0)
            if not allows(bits, tid):
                raise AssertionError("a mask refused a token an equal mask allowed before")
            state = constraint.advance(state, tid)
        return out


# The strategies this experiment runs: ours (tabled: acceptance by the checker; lazy: by its masks) and the engines.
OURS = ("tabled", "lazy")


def build_walker(strategy: str, schema, vocab, whitespace: str):
    if strategy == "tabled":
        return _OurWalker(schema, vocab, whitespace)
    if strategy == "lazy":
        return _MaskWalker(strategy, schema, vocab, whitespace)
    if strategy in ENGINES:
        return _EngineWalker(strategy, schema, vocab, whitespace)
    raise SettingsError(f"the coverage experiment runs strategy tabled, lazy or an engine, not {strategy!r}")


def classify_error(e: Exception) -> tuple[str, str]:
    """A failed compile's outcome and detail, told apart by the error's type alone (an engine's refusal was
    read once, in its adapter: EngineRejected.unsupported)."""
    if isinstance(e, UnsupportedSchema):
        return "unsupported", f"{e.keyword} at {e.path}" + (f" ({e.detail})" if e.detail else "")
    if isinstance(e, CompileTimeout):
        return "timeout", ""
    if isinstance(e, InvalidSchema):
        return "error", f"invalid schema: {e}"
    if isinstance(e, RecursionError):
        return "error", "schema nested too deeply"
    if isinstance(e, EngineRejected):
        if e.unsupported:
            return "unsupported", e.message[:300]
        # Named by what the engine raised, as any other error is named by its type.
        return "error", f"{type(e.__cause__ or e).__name__}: {e.message[:300]}"
    return "error", named_error(e)


def named_error(e: BaseException) -> str:
    """An error as an outcome's detail: its type's name (what tells failures apart), then its first line."""
    msg = str(e).splitlines()[0] if str(e) else ""
    return f"{type(e).__name__}: {msg[:300]}" if msg else type(e).__name__


def schema_rows(path: Path, strategy: str, vocab, whitespace: str, timeout_s: float, mask_walks: int,
                mask_steps: int = 64) -> list[dict]:
    """The rows of one corpus file: one per test instance of a schema that compiled, else one (instance -1)
    with its outcome. Whatever the file does (nesting past Python's recursion limit, a 5,000-digit number,
    a bound no arithmetic reads, memory) is its `error` outcome, named by the exception's type, and the
    sweep goes on; only a strategy the experiment does not run (the trial's settings) stops it."""
    base = {"task": path.stem, "subset": subset_of(path), "schema_file": path.name, "whitespace": whitespace}
    try:
        return _schema_rows(path, dict(base), strategy, vocab, whitespace, timeout_s, mask_walks, mask_steps)
    except SettingsError:
        raise
    except Exception as e:  # noqa: BLE001 - MemoryError, RecursionError, ArithmeticError, ... : this file's outcome
        return [{**base, "outcome": "error", "outcome_detail": named_error(e), "instance": -1}]


@dataclass
class CorpusFile:
    """One corpus file read: its schema, test instances and referee, or why it could not be read as such
    (outcome `error`: not a file, not JSON, not in the format; `no_referee`: not a valid schema)."""

    schema: object = None
    tests: list = field(default_factory=list)
    referee: SchemaReferee | None = None
    outcome: str = "ok"
    detail: str = ""


def read_corpus_file(path: Path) -> CorpusFile:
    try:
        text = read_text_file(path, "corpus file")
    except InputFileError as e:
        return CorpusFile(outcome="error", detail=str(e)[:300])
    try:
        doc = json.loads(text)
        schema, tests = doc["schema"], doc.get("tests", [])
        if not isinstance(tests, list):
            raise KeyError("tests")
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError) as e:
        return CorpusFile(outcome="error", detail=f"not a MaskBench file: {type(e).__name__}: {e}"[:300])
    try:
        referee = SchemaReferee(schema)
    except InvalidSchema as e:
        return CorpusFile(outcome="no_referee", detail=str(e)[:300])
    except Exception as e:  # noqa: BLE001 - any failure is this file's outcome
        return CorpusFile(outcome="no_referee", detail=named_error(e))
    return CorpusFile(schema, tests, referee)


def _schema_rows(path: Path, base: dict, strategy: str, vocab, whitespace: str, timeout_s: float, mask_walks: int,
                 mask_steps: int) -> list[dict]:
    file = read_corpus_file(path)
    if file.outcome != "ok":
        return [{**base, "outcome": file.outcome, "outcome_detail": file.detail, "instance": -1}]
    schema, tests, referee = file.schema, file.tests, file.referee
    t0 = time.perf_counter()
    try:
        with compile_limit(timeout_s):
            walker = build_walker(strategy, schema, vocab, whitespace)
        outcome, detail = "ok", ""
    except SettingsError:
        raise  # a strategy this experiment does not run: the trial's settings, not this schema's outcome
    except Exception as e:  # noqa: BLE001
        outcome, detail = classify_error(e)
    compile_ms = (time.perf_counter() - t0) * 1000
    base.update(outcome=outcome, outcome_detail=detail, compile_ms=compile_ms)
    if not tests or outcome != "ok":
        return [{**base, "instance": -1}]
    rows, timed = [], 0
    for i, test in enumerate(tests):
        row = {**base, "instance": i, "sample": i}
        try:
            value = test["data"]
            text, ids = spell(vocab, in_schema_order(value, schema, schema), whitespace)
            try:
                valid = referee(text)
            except RefereeTimeout as e:  # unjudged: still walked, filed apart from the four verdicts
                valid, row["outcome_detail"] = None, str(e)
            row.update(text=text, n_tokens=len(ids), referee_valid=valid,
                       dataset_valid=bool(test.get("valid")) if "valid" in test else None)
            t = time.perf_counter()
            with compile_limit(timeout_s):
                accepted = walker.accepts(ids)
            row["wall_ms"] = (time.perf_counter() - t) * 1000
            row["accepted"] = accepted
            row["category"] = (UNJUDGED if valid is None else
                               f"{'valid' if valid else 'invalid'}_{'accepted' if accepted else 'rejected'}")
            if accepted and timed < mask_walks:
                try:
                    with compile_limit(timeout_s):
                        row["mask_us"] = walker.mask_times(ids[:mask_steps])
                except CompileTimeout:
                    row["outcome_detail"] = f"mask timing cut after {timeout_s} s"
                timed += 1
        except CompileTimeout:
            row["category"], row["outcome_detail"] = "timeout", "walk timed out"
        except Exception as e:  # noqa: BLE001 - one bad instance never stops the sweep
            row["category"], row["outcome_detail"] = "error", named_error(e)
        rows.append(row)
    return rows


def _integer(settings, key: str, default, least: int, allow_null: bool = False):
    value = settings.get(key, default)
    if value is None and allow_null:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise SettingsError(f"{key} must be an integer >= {least}" + (" or null" if allow_null else "")
                            + f", got {value!r}")
    return value


def check_settings(settings) -> dict:
    """The coverage keys (conf/sweep/coverage.yaml), checked before any corpus file is read: a SettingsError naming
    the key, and nothing stored. Returns them checked, defaults filled in, with the trial's `files`."""
    strategy = settings.strategy.name
    if strategy not in OURS and strategy not in ENGINES:
        raise SettingsError(f"the coverage experiment runs strategy tabled, lazy or an engine "
                            f"({', '.join(sorted(ENGINES))}), not {strategy!r}")
    return check_corpus_settings(settings, lambda: {"mask_walks": _integer(settings, "mask_walks", 1, 0),
                                                    "mask_steps": _integer(settings, "mask_steps", 64, 1)})


def check_corpus_settings(settings, own_keys=None) -> dict:
    """The keys every corpus experiment reads (corpus_dir, subset, sample, compile_timeout_s), checked, with the
    trial's `files`; `own_keys()` checks the experiment's own keys (after the timeout, before the subset)."""
    corpus_dir = settings.get("corpus_dir")
    if corpus_dir is None:  # the shared data's corpus, wherever it is (the trial's id names it so: null)
        corpus_dir = str(maskbench_dir())
        if not Path(corpus_dir).is_dir():
            raise SettingsError(f"corpus_dir null is the shared data's maskbench/, and {corpus_dir} is not a directory: "
                                f"set {DATA_VARIABLE} to the folder holding maskbench/, or corpus_dir=DIR")
    if not isinstance(corpus_dir, str) or not corpus_dir or not Path(corpus_dir).is_dir():
        raise SettingsError(f"corpus_dir {corpus_dir!r} is not a directory (from {os.getcwd()}; set corpus_dir=DIR, "
                            f"or null with {DATA_VARIABLE} set to the folder holding maskbench/)")
    sample = _integer(settings, "sample", None, 1, allow_null=True)
    seconds = settings.get("compile_timeout_s", 10)
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not math.isfinite(seconds) or seconds <= 0:
        raise SettingsError(f"compile_timeout_s must be a number of seconds > 0, got {seconds!r}")
    if seconds > limits().max_compile_seconds:
        raise exceeded("max_compile_seconds", f"compile_timeout_s={seconds:g} seconds is longer than allowed")
    checked = {"sample": sample, "compile_timeout_s": seconds, **(own_keys() if own_keys else {})}
    subset = settings.get("subset", "all")
    present = sorted({subset_of(p) for p in corpus_files(corpus_dir)})
    if subset != "all" and subset not in present:
        raise SettingsError(f"subset {subset!r} is not in corpus_dir {corpus_dir!r}; choose one of: all, "
                            + (", ".join(present) or "(none: it holds no .json file)"))
    return {**checked, "subset": subset, "files": corpus_files(corpus_dir, subset, sample)}


def run(settings, trial, progress: bool = False) -> list[dict]:
    """settings: the trial's structbench.bench.settings.Settings."""
    from tqdm import tqdm

    # The corpus keys are the coverage sweep's own (conf/sweep/coverage.yaml): read from the composed settings.
    strategy, whitespace = settings.strategy.name, settings.whitespace
    keys = check_settings(settings)
    rows = []
    for path in tqdm(keys["files"], desc=f"coverage/{strategy}/{keys['subset']}", disable=not progress, leave=False):
        rows += schema_rows(path, strategy, trial.vocab, whitespace, keys["compile_timeout_s"], keys["mask_walks"],
                            keys["mask_steps"])
    for row in rows:
        row.setdefault("finished", True)
        row.setdefault("attempts", 1)
    return rows


def main(argv=None) -> int:
    """python -m structbench.experiments.coverage [RESULTS_DIR]: the stored coverage rows as markdown tables, per
    strategy over everything it ran, then all strategies side by side on the schemas they all ran."""
    import argparse

    from structbench.bench.store import read_results

    # (the whole docstring as the description: its first line alone stopped mid-sentence)
    parser = argparse.ArgumentParser(prog="python -m structbench.experiments.coverage",
                                     description=" ".join(main.__doc__.split()))
    parser.add_argument("results_dir", nargs="?", default="results")
    args = parser.parse_args(argv)
    df = read_results(args.results_dir, "coverage")
    df = df[df["kind"] == "coverage"]
    if df.empty:
        print(f"no coverage rows in {args.results_dir}/coverage: run python -m structbench +sweep=coverage")
        return 1
    for title, rows in (("every schema each strategy ran", df), ("the schemas every strategy ran", same_schemas(df))):
        table = coverage_summary(rows)
        print(f"### {title} ({rows['schema_file'].nunique()} schemas)\n")
        print("| " + " | ".join(table.columns) + " |")
        print("|" + "---|" * len(table.columns))
        for r in table.itertuples(index=False):
            print("| " + " | ".join(f"{v:.1f}" if isinstance(v, float) else str(v) for v in r) + " |")
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
