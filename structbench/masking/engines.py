"""The real engines as strategies: xgrammar, llguidance and outlines-core behind our masking interface.

Each is built from the plain vocabulary (its token bytes and end token), compiles the
task's pattern or schema under one declared policy, and answers `mask_bits` with the
int32 bitmask all three share (token i at bit i % 32 of word i // 32).

The declared policy (the lesson's checker with key_order="schema"):
* whitespace: none anywhere but at most one space after ":" and ","; xgrammar has no
  such option, so its grammar text is patched; llguidance takes regex separators
  (`x-guidance`); outlines-core's whitespace slots are marked and rewritten;
* properties in schema order (all three engines' convention);
* llguidance runs with `no_forcing` (otherwise forced positions allow one canonical token).

Differences that remain, inside string contents and numbers, are listed in the README.
The engines are an optional extra; a missing one raises :class:`EngineUnavailable` with
the exact install line.
"""

from __future__ import annotations

import json

import numpy as np

from structbench.errors import EngineUnavailable
from structbench.lm.vocab import Vocabulary
from structbench.masking.constraints import TokenRejected, WorkCounter
from structbench.masking.dense import unpack_bits

ENGINES = ("xgrammar", "llguidance", "outlines_core")
INSTALL = {
    "xgrammar": "pip install torch==2.13.0 && pip install --no-deps xgrammar && "
                "pip install apache-tvm-ffi pydantic transformers",
    "llguidance": "pip install llguidance",
    "outlines_core": "pip install outlines-core",
}


def _require(engine: str):
    import importlib

    module = {"xgrammar": "xgrammar", "llguidance": "llguidance", "outlines_core": "outlines_core"}[engine]
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise EngineUnavailable(f"strategy {engine!r} needs the {engine} package ({e}); install it with: "
                                f"{INSTALL[engine]}") from None


def _specials(vocab: Vocabulary) -> set[int]:
    """Token ids that are not text and not the end token: special tokens and partial characters
    with no bytes of their own are withheld from the engines, as from our checkers. A vocabulary
    that declares its specials (SmolLM2's "<repo_name>" is no "<|...|>") is taken at its word."""
    if vocab.special_ids:
        return {i for i in vocab.special_ids if i != vocab.eos_id}
    return {i for i, t in enumerate(vocab.tokens) if t is None and i != vocab.eos_id and
            not _is_partial_text(vocab.token_bytes[i])}


def _is_partial_text(raw: bytes) -> bool:
    # A byte piece of a character is real text to a byte-level engine; a "<|...|>" special is not.
    return not (raw.startswith(b"<|") and raw.endswith(b"|>"))


class EngineConstraint:
    """One compiled grammar of an engine. The engines' matchers are stateful: `start()` resets the one
    matcher and returns it as the state, `advance` moves it; answers are walked one at a time."""

    def __init__(self, engine: str, task, vocab: Vocabulary, key_order: str = "schema", whitespace: str = "lesson"):
        if key_order != "schema" and task.kind == "schema" and _has_properties(task.spec):
            raise ValueError(f"strategy {engine!r} writes properties in schema order; set key_order=schema "
                             f"to compare it with our checkers under the same policy")
        self.name, self.task, self.vocab = engine, task, vocab
        self.work = WorkCounter()  # the engines do their own work; nothing of ours is counted
        self.n_words = (len(vocab) + 31) // 32
        self.buffer = np.zeros(self.n_words, dtype=np.int32)
        self.impl = prepare(engine, vocab)
        self.matcher = self.impl.compile(task.kind, task.spec, whitespace)

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


def _has_properties(schema) -> bool:
    if isinstance(schema, dict):
        return bool(schema.get("properties")) or any(_has_properties(v) for v in schema.values())
    if isinstance(schema, list):
        return any(_has_properties(v) for v in schema)
    return False


# --- xgrammar --------------------------------------------------------------------------------


class _XGrammar:
    def __init__(self, vocab: Vocabulary):
        self.xgr = xgr = _require("xgrammar")
        specials = _specials(vocab)
        # Special tokens must be empty in a RAW vocabulary, or xgrammar reads "<|begin_of_text|>" as text.
        encoded = [b"" if i in specials else raw for i, raw in enumerate(vocab.token_bytes)]
        info = xgr.TokenizerInfo(encoded, xgr.VocabType.RAW, vocab_size=len(vocab), stop_token_ids=[vocab.eos_id])
        self.compiler = xgr.GrammarCompiler(info, max_threads=1, cache_enabled=False)

    def compile(self, kind: str, spec, whitespace: str = "lesson"):
        xgr = self.xgr
        if kind == "pattern":
            compiled = self.compiler.compile_regex(spec)
        elif whitespace != "lesson":
            flexible = whitespace == "flexible"
            grammar = xgr.Grammar.from_json_schema(json.dumps(spec), any_whitespace=flexible,
                                                   separators=None if flexible else (",", ":"))
            compiled = self.compiler.compile_grammar(grammar)
        else:
            # No "at most one space" option: take the one-space grammar and make each space optional.
            ebnf = str(xgr.Grammar.from_json_schema(json.dumps(spec), any_whitespace=False, separators=(", ", ": ")))
            ebnf = ebnf.replace('", "', '"," " "?').replace('": "', '":" " "?')
            compiled = self.compiler.compile_grammar(xgr.Grammar.from_ebnf(ebnf))
        return _XGrammarMatcher(xgr.GrammarMatcher(compiled))


class _XGrammarMatcher:
    def __init__(self, matcher):
        self.m = matcher

    def reset(self):
        self.m.reset()

    def fill(self, buffer):
        self.m.fill_next_token_bitmask(buffer.reshape(1, -1))

    def accept(self, token_id) -> bool:
        return self.m.accept_token(token_id)

    def complete(self) -> bool:
        return self.m.is_completed()


# --- llguidance ------------------------------------------------------------------------------


class _ByteTokenizer:
    """What llguidance.TokenizerWrapper reads: token bytes, end and special ids, and a tokenize call."""

    def __init__(self, vocab: Vocabulary, specials: set[int]):
        self.tokens = list(vocab.token_bytes)
        self.eos_token_id = vocab.eos_id
        self.bos_token_id = None
        self.special_token_ids = sorted(specials | {vocab.eos_id})
        self._lookup = {t: i for i, t in enumerate(self.tokens) if i not in specials and i != vocab.eos_id}
        self._longest = max(len(t) for t in self.tokens)

    def __call__(self, text):
        raw = text.encode() if isinstance(text, str) else bytes(text)
        out, i = [], 0
        while i < len(raw):  # longest match; llguidance only uses it for its own helpers
            for j in range(min(len(raw), i + self._longest), i, -1):
                tid = self._lookup.get(raw[i:j])
                if tid is not None:
                    out.append(tid)
                    i = j
                    break
            else:
                raise ValueError(f"cannot tokenize {raw[i:]!r}")
        return out


class _LLGuidance:
    def __init__(self, vocab: Vocabulary):
        self.llg = llg = _require("llguidance")
        self.tokenizer = llg.LLTokenizer(llg.TokenizerWrapper(_ByteTokenizer(vocab, _specials(vocab))),
                                         eos_token=[vocab.eos_id])

    def compile(self, kind: str, spec, whitespace: str = "lesson"):
        llg = self.llg
        if kind == "pattern":
            body = f"/{llg.regex_to_lark(spec)}/"
        else:
            policy = {"lesson": {"whitespace_flexible": False, "item_separator": ", ?", "key_separator": ": ?"},
                      "compact": {"whitespace_flexible": False, "item_separator": ",", "key_separator": ":"},
                      "flexible": {"whitespace_flexible": True}}[whitespace]
            spec = {**spec, "x-guidance": policy} if isinstance(spec, dict) else spec
            body = "%json " + json.dumps(spec)
        # no_forcing only takes effect as a grammar directive.
        grammar = '%llguidance {"no_forcing": true}\nstart: ' + body + "\n"
        matcher = llg.LLMatcher(self.tokenizer, grammar, log_level=0)
        if matcher.is_error():
            raise ValueError(f"llguidance cannot compile the task: {matcher.get_error()}")
        return _LLGuidanceMatcher(matcher)


class _LLGuidanceMatcher:
    def __init__(self, matcher):
        self.m = matcher

    def reset(self):
        self.m.reset()

    def fill(self, buffer):
        self.m.unsafe_compute_mask_ptr(buffer.ctypes.data, buffer.nbytes)

    def accept(self, token_id) -> bool:
        return self.m.consume_token(token_id) and not self.m.is_error()

    def complete(self) -> bool:
        return self.m.is_accepting()


# --- outlines-core ---------------------------------------------------------------------------


class _OutlinesCore:
    def __init__(self, vocab: Vocabulary):
        self.oc = oc = _require("outlines_core")
        specials = _specials(vocab)
        by_bytes: dict[bytes, list[int]] = {}
        for i, raw in enumerate(vocab.token_bytes):
            if i != vocab.eos_id and i not in specials:  # the end token must not be in the map
                by_bytes.setdefault(raw, []).append(i)
        self.vocabulary = oc.Vocabulary(vocab.eos_id, by_bytes)

    def regex(self, kind: str, spec, whitespace: str = "lesson") -> str:
        if kind == "pattern":
            return spec
        from outlines_core.json_schema import build_regex_from_schema

        if whitespace != "lesson":
            return build_regex_from_schema(json.dumps(spec), whitespace_pattern="" if whitespace == "compact"
                                           else r"[ \t\n\r]*")

        # Mark every whitespace slot, then keep one optional space after ':' and ',' only.
        mark = "(?:\\x{1F}\\x{1E}\\x{1F})"
        regex = build_regex_from_schema(json.dumps(spec), whitespace_pattern=mark)
        return regex.replace(":" + mark, ": ?").replace("," + mark, ", ?").replace(mark, "")

    def compile(self, kind: str, spec, whitespace: str = "lesson"):
        index = self.oc.Index(self.regex(kind, spec, whitespace), self.vocabulary)
        return _OutlinesMatcher(self.oc.Guide(index))


class _OutlinesMatcher:
    def __init__(self, guide):
        self.g = guide

    def reset(self):
        self.g.reset()

    def fill(self, buffer):
        self.g.write_mask_into(buffer.ctypes.data, buffer.size, 4)

    def accept(self, token_id) -> bool:
        try:
            self.g.advance(token_id, return_tokens=False)
        except ValueError:
            return False
        return True

    def complete(self) -> bool:
        return self.g.is_finished()


_IMPLEMENTATIONS = {"xgrammar": _XGrammar, "llguidance": _LLGuidance, "outlines_core": _OutlinesCore}


_PREPARED: dict = {}


def prepare(engine: str, vocab: Vocabulary):
    """The engine's per-vocabulary object (its tokenizer info), built once per vocabulary and kept, as
    our tables keep the vocabulary's character codes: compile times then count the grammar alone."""
    key = (engine, id(vocab))
    impl = _PREPARED.get(key)
    if impl is None or impl[0] is not vocab:
        impl = _PREPARED[key] = (vocab, _IMPLEMENTATIONS[engine](vocab))
    return impl[1]


def engine_constraint(engine: str, task, vocab: Vocabulary, key_order: str = "schema",
                      whitespace: str = "lesson") -> EngineConstraint:
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}; choose one of {', '.join(ENGINES)}")
    return EngineConstraint(engine, task, vocab, key_order, whitespace)
