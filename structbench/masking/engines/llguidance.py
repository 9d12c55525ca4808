"""llguidance behind our Constraint protocol: the lesson's whitespace as its regex separators
(`x-guidance`), and `no_forcing` (otherwise a forced position allows one canonical token only)."""

from __future__ import annotations

import json

from structbench.lm.vocab import Vocabulary
from structbench.masking.engines.adapter import (
    EngineAdapter,
    NativeMatcher,
    withheld_tokens,
)

POLICIES = {"lesson": {"whitespace_flexible": False, "item_separator": ", ?", "key_separator": ": ?"},
            "compact": {"whitespace_flexible": False, "item_separator": ",", "key_separator": ":"},
            "flexible": {"whitespace_flexible": True}}


class LLGuidanceAdapter(EngineAdapter):
    name = module = "llguidance"

    def __init__(self, vocab: Vocabulary):
        self.llg = llg = self.require()
        self.tokenizer = llg.LLTokenizer(llg.TokenizerWrapper(ByteTokenizer(vocab, withheld_tokens(vocab))),
                                         eos_token=[vocab.eos_id])

    def _compile(self, kind: str, spec, whitespace: str):
        llg = self.llg
        if kind == "pattern":
            body = f"/{llg.regex_to_lark(spec)}/"
        else:
            spec = {**spec, "x-guidance": POLICIES[whitespace]} if isinstance(spec, dict) else spec
            body = "%json " + json.dumps(spec)
        # no_forcing only takes effect as a grammar directive.
        grammar = '%llguidance {"no_forcing": true}\nstart: ' + body + "\n"
        matcher = llg.LLMatcher(self.tokenizer, grammar, log_level=0)
        if matcher.is_error():
            # llguidance reports a refusal on the matcher, not by raising: raised here as the others raise theirs.
            raise ValueError(f"llguidance cannot compile the task: {matcher.get_error()}")
        return _Matcher(matcher)


class ByteTokenizer:
    """What llguidance.TokenizerWrapper reads: token bytes, end and special ids, and a tokenize call."""

    def __init__(self, vocab: Vocabulary, withheld: set[int]):
        self.tokens = list(vocab.token_bytes)
        self.eos_token_id = vocab.eos_id
        self.bos_token_id = None
        self.special_token_ids = sorted(withheld | {vocab.eos_id})
        self._lookup = {t: i for i, t in enumerate(self.tokens) if i not in withheld and i != vocab.eos_id}
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


class _Matcher(NativeMatcher):
    def fill(self, buffer):
        self.native.unsafe_compute_mask_ptr(buffer.ctypes.data, buffer.nbytes)

    def accept(self, token_id) -> bool:
        return self.native.consume_token(token_id) and not self.native.is_error()

    def complete(self) -> bool:
        return self.native.is_accepting()
