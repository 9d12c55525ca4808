"""Masks shared between states no token can tell apart.

A mask is the set of tokens whose every character a state reads. Two states whose difference no token of
the vocabulary reaches allow the same tokens, so the second one's mask is the first one's, read back, not
walked. The machine says which differences a token cannot reach (its `mask_key`: equal keys, equal masks),
given what the vocabulary's tokens can hold.

The one difference it drops so far is an object's used keys, which the checker remembers to refuse a key
written twice and to know when every required key is in. Below the value being written, a token reaches
them only after that value's end and the object's comma and quote: and no Llama 3 token holds more than four
characters after a comma and a quote (`","` and `",");\\n` are the longest). So the states of one object's
values, before and after a key is used, mostly have one mask: 8.8% of the masks a cold walk built over 300
corpus schemas were such repeats.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from structbench.lm.vocab import Vocabulary

_AFTER_COMMA_QUOTE = re.compile(r',[ \t\n\r]*"')  # a comma, JSON whitespace, a quote: where a key opens


@dataclass(frozen=True)
class TokenReach:
    """What a vocabulary's tokens can hold around a key (the machine's mask_key reads it).

    openings: per token, the rest of its text from each comma followed (after any JSON whitespace) by a quote,
    the distinct ones sorted: every text a token reads from a comma that opens a key.
    closings: per token with an unescaped quote, the text before its first one, decoded as JSON string
    content: every key ending a token can write, from wherever in the key it starts (tokens that cannot be
    read there, an invalid escape or a raw control character, are left out).
    opening_keys: the keys the openings close."""

    openings: tuple[str, ...]
    closings: frozenset[str]
    opening_keys: frozenset[str] | None = None  # the keys openings close (decoded), None where one reads on
    # to a colon after its key (then no key is told by these alone)


def token_reach(vocab: Vocabulary) -> TokenReach:
    """The vocabulary's TokenReach, built once and kept on it."""
    found = vocab.__dict__.get("_token_reach")
    if found is None:
        texts = [text for i, text in enumerate(vocab.tokens) if text and i != vocab.eos_id]
        openings = tuple(sorted({text[m.start():] for text in texts for m in _AFTER_COMMA_QUOTE.finditer(text)}))
        closings = set()
        for text in texts:
            quote = _first_unescaped_quote(text)
            if quote is not None:
                try:
                    closings.add(json.loads('"' + text[:quote] + '"'))
                except ValueError:
                    pass  # not string content: a token no key reads
        found = vocab.__dict__["_token_reach"] = TokenReach(openings, frozenset(closings), _opening_keys(openings))
    return found


def _opening_keys(openings: tuple[str, ...]) -> frozenset[str] | None:
    """The keys the openings close, decoded (an opening that closes none, or closes it by an invalid escape,
    adds none); None where an opening reads a colon after its key's closing quote (a value may follow)."""
    keys = set()
    for text in openings:
        rest = _AFTER_COMMA_QUOTE.match(text)
        inside = text[rest.end():]
        quote = _first_unescaped_quote(inside)
        if quote is None:
            continue
        if ":" in inside[quote + 1:]:
            return None
        try:
            keys.add(json.loads('"' + inside[:quote] + '"'))
        except ValueError:
            pass
    return frozenset(keys)


def _first_unescaped_quote(text: str) -> int | None:
    i = 0
    while i < len(text):
        if text[i] == "\\":
            i += 2  # the escaped character (a \u escape's hex digits are no quote)
        elif text[i] == '"':
            return i
        else:
            i += 1
    return None
