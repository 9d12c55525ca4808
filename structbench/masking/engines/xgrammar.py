"""xgrammar behind our Constraint protocol. It has no "at most one space" option, so under the lesson's
whitespace its JSON grammar (one space after ":" and ",") is patched to make each space optional."""

from __future__ import annotations

import json

from structbench.lm.vocab import Vocabulary
from structbench.masking.engines.adapter import (
    EngineAdapter,
    NativeMatcher,
    withheld_tokens,
)


class XGrammarAdapter(EngineAdapter):
    name = module = "xgrammar"

    def __init__(self, vocab: Vocabulary):
        self.xgr = xgr = self.require()
        withheld = withheld_tokens(vocab)
        # Special tokens must be empty in a RAW vocabulary, or xgrammar reads "<|begin_of_text|>" as text.
        encoded = [b"" if i in withheld else raw for i, raw in enumerate(vocab.token_bytes)]
        info = xgr.TokenizerInfo(encoded, xgr.VocabType.RAW, vocab_size=len(vocab), stop_token_ids=[vocab.eos_id])
        self.compiler = xgr.GrammarCompiler(info, max_threads=1, cache_enabled=False)

    def _compile(self, kind: str, spec, whitespace: str):
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
        return _Matcher(xgr.GrammarMatcher(compiled))


class _Matcher(NativeMatcher):
    def fill(self, buffer):
        self.native.fill_next_token_bitmask(buffer.reshape(1, -1))

    def accept(self, token_id) -> bool:
        return self.native.accept_token(token_id)

    def complete(self) -> bool:
        return self.native.is_completed()
