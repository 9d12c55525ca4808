"""outlines-core behind our Constraint protocol: a task becomes one regex; under the lesson's whitespace
its whitespace slots are marked and rewritten to one optional space after ":" and "," only."""

from __future__ import annotations

import json

from structbench.lm.vocab import Vocabulary
from structbench.masking.engines.adapter import (
    EngineAdapter,
    NativeMatcher,
    withheld_tokens,
)


class OutlinesCoreAdapter(EngineAdapter):
    name = module = "outlines_core"

    def __init__(self, vocab: Vocabulary):
        self.oc = oc = self.require()
        withheld = withheld_tokens(vocab)
        by_bytes: dict[bytes, list[int]] = {}
        for i, raw in enumerate(vocab.token_bytes):
            if i != vocab.eos_id and i not in withheld:  # the end token must not be in the map
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

    def _compile(self, kind: str, spec, whitespace: str):
        index = self.oc.Index(self.regex(kind, spec, whitespace), self.vocabulary)
        return _Matcher(self.oc.Guide(index))


class _Matcher(NativeMatcher):
    def fill(self, buffer):
        self.native.write_mask_into(buffer.ctypes.data, buffer.size, 4)

    def accept(self, token_id) -> bool:
        try:
            self.native.advance(token_id, return_tokens=False)
        except ValueError:
            return False
        return True

    def complete(self) -> bool:
        return self.native.is_finished()
