"""Helpers shared by the test modules (no test module imports another): paths, the CLI as a user runs
it, Hydra settings as plain dicts, and hypothesis strategies for random schemas with valid documents."""

from __future__ import annotations

import os
import string
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import strategies as st
from omegaconf import OmegaConf

from structbench.bench.shared_data import maskbench_dir, official_suite_dir
from structbench.extras import install_line

ROOT = Path(__file__).resolve().parent.parent
CONF_DIR = ROOT / "conf"
SWEEPS = sorted(p.stem for p in (CONF_DIR / "sweep").glob("*.yaml"))
SUITE = official_suite_dir()  # $STRUCTBENCH_DATA, else ../shared/data beside the checkout
CORPUS = maskbench_dir()



def require_llama3(vocab=None) -> None:
    """Skip, quoting the vocabs install line, where Llama 3's vocabulary is not installed: `vocab` is the test's (a
    synthetic stand-in cannot spell the test's texts, nor has its tree's shape), else the package is looked for."""
    if vocab is None:
        from structbench.lm.real_vocab import MissingVocabulary, real_vocabulary

        try:
            vocab = real_vocabulary("llama3")
        except MissingVocabulary:
            vocab = None
    if vocab is None or vocab.name != "llama3":
        pytest.skip(f"needs Llama 3's vocabulary: {install_line('vocabs')}")


def corpus_schemas(step: int, limit: int):
    """(file, schema, checker, [(value, text)]) of every `step`-th MaskBench file (sorted by name), at most `limit`
    files: a checker with keys in any order and the lesson's whitespace, and the valid test values it accepts with
    their text as the lesson writes them. Files the checker refuses to compile are passed over (unsupported schemas
    are the coverage experiment's business), as are files with no value it accepts."""
    import json

    from structbench.jsonschema.checker import SchemaChecker

    for path in sorted(CORPUS.glob("*.json"))[::step][:limit]:
        doc = json.loads(path.read_text())
        try:
            checker = SchemaChecker(doc["schema"], "any", "lesson")
        except Exception:  # noqa: BLE001 - see the docstring
            continue
        valid = [(t["data"], json.dumps(t["data"], ensure_ascii=False, separators=(", ", ": ")))
                 for t in doc.get("tests", []) if t.get("valid", True)]
        valid = [(value, text) for value, text in valid if checker.can_end(checker.feed(checker.start(), text))]
        if valid:
            yield path, doc["schema"], checker, valid


def run_cli(*args, timeout=600, env=None, cwd=ROOT):
    """Run `python -m structbench ARGS` from the repository root, as a user would."""
    full_env = {**os.environ, "HYDRA_FULL_ERROR": "0", **(env or {})}
    return subprocess.run([sys.executable, "-m", "structbench", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=full_env)


def settings_of(cfg) -> dict:
    """A composed config as the plain dict a trial receives."""
    return OmegaConf.to_container(cfg, resolve=True)


# --- random schemas of the lesson's subset, and documents valid against them ---

SCALAR_TYPES = ["string", "integer", "number", "boolean", "null"]
ALL_TYPES = SCALAR_TYPES + ["object", "array"]
ANNOTATIONS = {"title": "t", "description": "a schema", "$comment": "c"}

# Names and enum values: general ones (non-ASCII, spaces, prefixes of one another, the empty
# string), and ones the toy vocabulary can spell one character at a time.
GENERAL_NAMES = st.text(alphabet="abé x-😀", max_size=4)
TOY_NAMES = st.text(alphabet="abcxyz -!'", max_size=4)
TOY_CHARS = set("abcxyz -!'")
TOY_FREE_CHAR = st.sampled_from("abcxyzADE -.!'0123456789:,{}[]")  # string content the toy vocabulary spells

# Free string content: anything JSON writes without an escape (no quote, no backslash, no control
# character), non-ASCII included; no lone surrogates, which are no text.
FREE_CHAR = st.characters(min_codepoint=32, blacklist_characters='"\\', blacklist_categories=("Cs",))


def _maybe_annotate(draw, schema: dict) -> dict:
    if draw(st.integers(0, 9)) == 0:
        schema = {**schema, **ANNOTATIONS}
    return schema


@st.composite
def leaf_schemas(draw, names=GENERAL_NAMES):
    kind = draw(st.sampled_from(["any", "true", "type", "enum", "typed_enum", "type_list"]))
    if kind == "any":
        return {}
    if kind == "true":
        return True
    if kind == "type":
        return _maybe_annotate(draw, {"type": draw(st.sampled_from(SCALAR_TYPES))})
    if kind in ("enum", "typed_enum"):
        values = draw(st.lists(names, min_size=1, max_size=4, unique=True))
        schema = {"enum": values}
        if kind == "typed_enum":
            schema["type"] = draw(st.sampled_from(["string", ["string", "null"], ["integer", "string"]]))
        return schema
    return {"type": draw(st.lists(st.sampled_from(ALL_TYPES), min_size=1, max_size=3, unique=True))}


@st.composite
def schemas(draw, depth=3, names=GENERAL_NAMES):
    """A random schema of the lesson's subset, every object in it satisfiable."""
    if depth == 0 or draw(st.integers(0, 2)) == 0:
        return draw(leaf_schemas(names))
    if draw(st.booleans()):
        props = draw(st.dictionaries(names, schemas(depth - 1, names), max_size=3))
        schema = {}
        if draw(st.integers(0, 3)):
            schema["type"] = draw(st.sampled_from(["object", "object", ["object", "null"], ["object", "array"]]))
        if props or draw(st.booleans()):
            schema["properties"] = props
        extra = draw(st.sampled_from(["absent", "false", "true", "schema"]))
        if extra == "false":
            schema["additionalProperties"] = False
        elif extra == "true":
            schema["additionalProperties"] = True
        elif extra == "schema":
            schema["additionalProperties"] = draw(schemas(depth - 1, names))
        candidates = sorted(props)
        if extra != "false":  # required keys outside the properties need room for other keys
            candidates += draw(st.lists(names.filter(lambda n: n not in props), max_size=2, unique=True))
        if candidates:
            required = draw(st.lists(st.sampled_from(candidates), max_size=len(candidates), unique=True))
            if required or draw(st.booleans()):
                schema["required"] = required
        return _maybe_annotate(draw, schema)
    schema = {"type": draw(st.sampled_from(["array", "array", ["array", "null"]]))}
    items = draw(st.sampled_from(["absent", "false", "schema", "schema"]))
    if items == "false":
        schema["items"] = False
    elif items == "schema":
        schema["items"] = draw(schemas(depth - 1, names))
    return _maybe_annotate(draw, schema)


# --- valid documents, written the checker's way -----------------------------------------


def _sep(draw) -> str:
    return draw(st.sampled_from(["", " "]))


def _string(draw, chars) -> str:
    return '"' + draw(st.text(chars, max_size=5)) + '"'


def _integer(draw) -> str:
    return str(draw(st.integers(-10**6, 10**6)))


def _number(draw) -> str:
    whole = _integer(draw)
    if draw(st.booleans()):
        return whole
    frac = draw(st.text(alphabet=string.digits, min_size=1, max_size=3))
    if whole == "0" and draw(st.booleans()):
        whole = "-0"
    return f"{whole}.{frac}"


def _any_value(draw, depth: int, chars) -> str:
    kinds = SCALAR_TYPES + (["object", "array"] if depth < 3 else [])
    return _value_of_type(draw, draw(st.sampled_from(kinds)), True, depth, chars)


def _container(draw, open_: str, close: str, parts: list[str]) -> str:
    out = open_
    for i, part in enumerate(parts):
        if i:
            out += "," + _sep(draw)
        out += part
    return out + close


def _object(draw, schema, depth: int, chars) -> str:
    schema = schema if isinstance(schema, dict) else {}
    props = schema.get("properties", {})
    extra = schema.get("additionalProperties", True)
    keys = list(schema.get("required", []))
    keys += [k for k in props if k not in keys and draw(st.booleans())]
    if extra is not False and depth < 3:
        others = draw(st.lists(st.text(chars, max_size=3), max_size=2, unique=True))
        keys += [k for k in others if k not in props and k not in keys]
    keys = draw(st.permutations(keys))
    parts = []
    for key in keys:
        sub = props.get(key, extra)
        parts.append(f'"{key}":' + _sep(draw) + _value(draw, sub, depth + 1, chars))
    return _container(draw, "{", "}", parts)


def _array(draw, schema, depth: int, chars) -> str:
    items = schema.get("items", True) if isinstance(schema, dict) else True
    if items is False or depth >= 3:
        return "[]"
    n = draw(st.integers(0, 3))
    return _container(draw, "[", "]", [_value(draw, items, depth + 1, chars) for _ in range(n)])


def _value_of_type(draw, t: str, schema, depth: int, chars) -> str:
    if t == "string":
        return _string(draw, chars)
    if t == "integer":
        return _integer(draw)
    if t == "number":
        return _number(draw)
    if t == "boolean":
        return draw(st.sampled_from(["true", "false"]))
    if t == "null":
        return "null"
    if t == "object":
        return _object(draw, schema, depth, chars)
    return _array(draw, schema, depth, chars)


def _value(draw, schema, depth: int = 0, chars=FREE_CHAR) -> str:
    if schema is True or schema == {} or (isinstance(schema, dict) and set(schema) <= set(ANNOTATIONS)):
        return _any_value(draw, depth, chars)
    if "enum" in schema:
        return '"' + draw(st.sampled_from(schema["enum"])) + '"'
    t = schema.get("type", ALL_TYPES)
    types = [t] if isinstance(t, str) else list(t)
    if depth >= 3:  # keep documents small: containers only where required
        types = [x for x in types if x not in ("object", "array")] or types
    return _value_of_type(draw, draw(st.sampled_from(types)), schema, depth, chars)


@st.composite
def documents(draw, schema, chars=FREE_CHAR):
    """The text of a JSON document valid under `schema` (one of `schemas()`), in the lesson's whitespace;
    free strings and keys drawn from `chars`."""
    return _value(draw, schema, 0, chars)


@st.composite
def schema_and_document(draw, names=GENERAL_NAMES, chars=FREE_CHAR):
    schema = draw(schemas(names=names))
    return schema, draw(documents(schema, chars))


# --- helpers --------------------------------------------------------------------------


def one_line_error(out, *said) -> str:
    """The CLI failed as every error should: exit 2, one line `structbench: error: ...` (Hydra's launch lines of a
    sweep aside) holding each of `said`; that line."""
    assert out.returncode == 2, out.stderr
    errors = [line for line in out.stderr.splitlines() if not line.startswith("[")]
    assert len(errors) == 1 and errors[0].startswith("structbench: error: "), out.stderr
    for s in said:
        assert s in errors[0], errors[0]
    return errors[0]


def checker_verdicts(checker, stack, vocab) -> list[bool]:
    """Per token of `vocab`, whether the checker's own steps take it from `stack` (the end token: whether the
    output may end there): what a sound and complete mask at that state holds."""
    return [checker.can_end(stack) if i == vocab.eos_id else checker.feed(stack, text) is not None
            for i, text in enumerate(vocab.tokens)]


def walk_against_checker(constraint, checker, vocab, rng, walks: int, steps: int, prefer) -> int:
    """`walks` random walks of up to `steps` tokens through `constraint`, each mask compared bit for bit with
    `checker_verdicts` at its state; each token drawn from the mask, 60% of the time among those `prefer` (a
    boolean per token) marks. The masks checked."""
    import numpy as np

    checked = 0
    for _ in range(walks):
        state = constraint.start()
        for _ in range(steps):
            stack, mask = constraint.dense.states[state], constraint.mask(state)
            assert mask.tolist() == checker_verdicts(checker, stack, vocab), (checker.schema, stack)
            checked += 1
            allowed = np.flatnonzero(mask)
            allowed = allowed[allowed != vocab.eos_id]
            if not len(allowed):
                break
            pool = allowed[prefer[allowed]] if rng.random() < 0.6 else allowed
            state = constraint.advance(state, int(rng.choice(pool if len(pool) else allowed)))
    return checked
