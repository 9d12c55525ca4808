"""Masks shared between states no token can tell apart.

A mask is the set of tokens whose every character a state reads. Two states whose difference no token of
the vocabulary reaches allow the same tokens, so the second one's mask is the first one's, read back, not
walked. The machine says which differences a token cannot reach (its `mask_key`: equal keys, equal masks),
given what the vocabulary's tokens can hold (:class:`TokenReach`).

The first difference it drops is an object's used keys, which the checker remembers to refuse a key
written twice and to know when every required key is in. Below the value being written, a token reaches
them only after that value's end and the object's comma and quote, and no Llama 3 token holds more than four
characters after a comma and a quote (`","` and `",");\\n` are the longest); inside a key that any key may be,
only at the key's closing quote, and a token closes a key only as the text some token holds before a quote
(189 texts in Llama 3, none longer than five characters). So the states of one object's values and keys,
before and after a key is used, mostly have one mask: over 1,000 corpus schemas a cold walk builds 18.5% fewer.

The second is everything below an object whose key is being written or is next (after its opening brace's
comma): a token reaches those frames only by closing the object, after the key, its colon and a value, and no
Llama 3 token holds a quote, then a colon, then a closing bracket (`TokenReach.member_pops`). So the keys of an
array's objects, or of JSON mode's objects at every depth, share their masks with the first object's.

The third is a key's own text and object node, and the used keys after an object's comma: a token reads a key's
text on and closes it as one of the closings, and after a comma opens it as one of the texts tokens that start
with a quote write (`front_texts`, `front_keys`), so only what those make of the names tells keys apart
(the checker's `_names_as_read`, `KeyTexts.as_far_as`); 19% fewer masks over 475 corpus schemas.

The fourth is whether an object may close, read from its key or after its comma: a token reaches its closing
bracket from there only after a quote, a colon and a value (`TokenReach.member_pops`), so a key before the last
required key is written and one after it share a mask (the checker's `_closing_unread`; 2% fewer masks built over
434 corpus schemas, 4% of their time).

The fifth is everything below the innermost object or array where no token can close it and read on
(structbench.jsonschema.container_reach: asked of a checker of any JSON value, for the tokens with a closing
bracket before their last character, `TokenReach.close_texts`). On Llama 3 under the lesson's whitespace, an
object's value after its colon is such a place (` ""},\n` closes the object and reads `,\n`, which no parent
reads), as are an object after its key, an array after its comma and a literal's letters: there JSON mode's values
at every depth share one mask. Inside a string or a number, and in an object or array just opened or after a value,
a token does read on (`"},`, `1},`, `},`): those keep their depth.

The sixth is an object's node below a value of it or after one: what a token reads of the object there is
whether it may close, whether a key may come and what the keys the openings write make of its names and used keys
(the checker's `_seen_as_read`), and with keys in schema order which names may still come, as far as tokens write
them (`_place_as_read`, asked where another node has such a place: `_place_shared`; its place and count are left
out too). So objects of one shape at different nodes share their masks; and the frames below an object that may
not close once its value is written, a required key to come, are left out, since no token closes it
(`_unclosable_below`, where `member_pops` is false). In schema order the nested task's levels, each a node of its
own, build 44 masks where they built 102; in any order (2026-12-07) 45 where they built 59.

The seventh is everything below the container a token would have to close after more closing brackets than any
token holds with a character after them (`TokenReach.pops_read_on`: Llama 3's `}}},\n` closes three and reads on,
`string_pops_read_on`: from inside a string `"}},\n` closes two): the checker's `_depth_cut`, by counting alone,
where every frame down to there is an object or an array. One node met at every depth of a tree shares its masks
below that depth; with keys in schema order an object also forgets its value's node once the value has opened
(`value_opened`), so the nested task's pets at levels 5 to 2 have one key (38 masks built where 44 were).

The eighth is everything but the value's node and the whitespace read before it, at an object's value still to
open, where no token finishes such a value and then reads a comma, a closing brace or whitespace: only those read
the object again (its used keys and count, at the comma or the brace), and only through them the frames below
(the checker's `_value_reads_past`, by `value_texts` and `string_values`). No Llama 3 token finishes a number or a
literal and reads on, nor a string but an empty one or one of 8 one-character ones (` "",`, ` "/",`), nor a
container but an empty one (`[],`, `[]}`, `{},`): so the value of an integer, a boolean or a string of at least two
characters has one key wherever it is written, with whatever keys used (the nested task's innermost `age` shares
the outer levels' key).

The ninth is how many characters a string whose length alone is checked (minLength, maxLength) holds, where it is
further from both bounds than a token writes (`TokenReach.longest`, 128 on Llama 3, and one more as a margin): at
least minLength and that far below maxLength, or that far below minLength, every count allows the same tokens (the
checker's `_length_as_read`; not where minLength is above maxLength). A long text in a `maxLength: 255` property
walks one mask, not one per count.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cached_property

from structbench.jsonschema.frames import JSON_WHITESPACE
from structbench.jsonschema.strings import escape_candidates, in_intervals
from structbench.lm.vocab import Vocabulary

_AFTER_COMMA_QUOTE = re.compile(r',[ \t\n\r]*"')  # a comma, JSON whitespace, a quote: where a key opens
_MEMBER_POPS = re.compile(r'"[\s\S]*:[\s\S]*[}\]]')  # a quote, later a colon, later a closing bracket
_KEY_VALUE = re.compile(r'"[\s\S]*?:')  # a quote, later a colon: a key's end, then its value
_VALUE_END = re.compile(r'[,}\]]')  # where the value after it may end, and its object read on
_CLOSE_READ_ON = re.compile(r'[}\]][\s\S]')  # a closing bracket with a character after it
_OPENING_QUOTE = re.compile(r'[ \t\n\r]*"')  # JSON whitespace and a quote, at a token's start: a key opened
_VALUE_STARTS = frozenset("{[-0123456789tfn")  # the characters a JSON value other than a string may start with
_DECODER = json.JSONDecoder(parse_int=str, parse_float=str)  # (no number too long for Python's int is refused)
# An escape unfinished at a text's end: after escaped backslashes (kept), a backslash, then `u` and up to three hex
# digits, or not (dropped)
_UNFINISHED_ESCAPE = re.compile(r'(?<!\\)(?:\\\\)*(\\(?:u[0-9a-fA-F]{0,3})?)$')


@dataclass(frozen=True)
class KeyTexts:
    """Texts tokens write in a key and leave open (no closing quote), decoded: `whole`, those that end on a
    character; `escaped`, those an unfinished escape ends, each with the escape after its backslash ("" for a
    backslash alone, "u" for `\\u`, then its hex digits: `ab\\u00` is ("ab", "u00"))."""

    whole: frozenset[str] = frozenset()
    escaped: frozenset[tuple[str, str]] = frozenset()

    def as_far_as(self, rest: str):
        """What of `rest` (a key's text to come) a token writing one of these texts tells: its longest start that
        is one (a str), and after it the next character where an escape with digits ends that text (the digits are
        of that character); where an escape without digits ends it and `rest` goes on, that start and what the
        escape tells of the next character (a tuple, never equal to a str): whether an escape begun with a backslash
        may stand for it (`"`, `/`, a backslash, or what `\\u` may spell) and whether one begun with `\\u` may (no
        printable ASCII character: `escape_candidates`). Two names the same here: no such token tells them apart (a
        token that ends on a backslash is allowed where the name's next character may be escaped, not wherever the
        name goes on)."""
        found = self._far.get(rest)
        if found is None:  # (asked again for each set of used keys: a name's answer is its own)
            found = self._far[rest] = self._as_far_as(rest)
        return found

    def _as_far_as(self, rest: str):
        needs = self._needs
        for k in range(len(rest), -1, -1):
            need = needs.get(rest[:k])
            if need is not None:
                if need & _NEXT_CHAR:
                    return rest[:k + 1]
                if need and k < len(rest):  # a backslash, or `\u`, ends the text: may the next character follow?
                    code = ord(rest[k])
                    return (rest[:k], bool(need & _AFTER_BACKSLASH) and in_intervals(_BACKSLASH_STANDS_FOR, code),
                            bool(need & _AFTER_U) and in_intervals(_U_STANDS_FOR, code))
                return rest[:k]
        return ""

    @cached_property
    def _far(self) -> dict:
        return {}

    @cached_property
    def _needs(self) -> dict[str, int]:
        needs = dict.fromkeys(self.whole, 0)
        for text, esc in self.escaped:
            needs[text] = needs.get(text, 0) | (_AFTER_BACKSLASH if esc == "" else _AFTER_U if esc == "u"
                                                else _NEXT_CHAR)
        return needs


# KeyTexts._needs: what a text's unfinished escapes ask of the next character (bits; 0: a text that ends whole)
_AFTER_BACKSLASH, _AFTER_U, _NEXT_CHAR = 1, 2, 4
_BACKSLASH_STANDS_FOR = escape_candidates("\\")  # what a backslash alone may go on to stand for
_U_STANDS_FOR = escape_candidates("u")


@dataclass(frozen=True)
class TokenReach:
    """What a vocabulary's tokens can hold around a key (the machine's mask_key reads it).

    openings: per token, the rest of its text from each comma followed (after any JSON whitespace) by a quote,
    the distinct ones sorted: every text a token reads from a comma that opens a key.
    closings: per token with an unescaped quote, the text before its first one, decoded as JSON string
    content: every key ending a token can write, from wherever in the key it starts (tokens that cannot be
    read there, an invalid escape or a raw control character, are left out).
    opening_keys: the keys the openings close, decoded; None where an opening reads on to a colon after its
    key's closing quote (a value may follow: then these keys alone do not tell what it reads).
    member_pops: whether some token holds a quote, then a colon, then a closing bracket (`}` or `]`): only such a
    token, read from an object's key or from before one, can close that object and so read the frames below it
    (it must finish the key, its colon and a value first). No Llama 3 token does.
    front_keys, front_texts: per token that opens a key (JSON whitespace, then a quote: what is read after an
    object's comma), the key it writes, decoded: whole where the token closes it too (front_keys: `"id"`), else
    as far as it goes (front_texts, a KeyTexts: `"descr`, and `"a\\u00` as "a" and an escape's digits; tokens
    that are no string content there, an invalid escape or a raw control character, left out).
    value_tails: per token that holds a quote and later a colon (a key's end, then its value), the rest of its text
    from each comma or closing bracket after those, the distinct ones sorted: every text a token that closes a
    key can read after the key's value (Llama 3: `,\\n` and `,"`, of `":"",\\n` and `":"","`).
    opening_texts: the keys the openings write and do not close, decoded as front_texts are (Llama 3: "", "#",
    "%", ")", "+", ",", ";").
    close_texts: the tokens with a closing bracket (`}` or `]`) before their last character: only these can close
    an object or array and read on (structbench.jsonschema.container_reach; Llama 3: 972). None (a reach made by
    hand): not known, and no frame is left out for it.
    closes_read_on: container_reach's answers for this vocabulary, kept by whitespace policy and container.
    pops_read_on, string_pops_read_on: the most closing brackets (`}` or `]`) outside strings, each with a
    character after it, that one token holds, read from outside a string and from inside one (after a backslash
    or not): a token closes no more containers than that and reads on, so none reads a frame below the container
    that many more below the innermost (SchemaChecker._depth_cut; Llama 3: 3, as `}}},\\n`, and 2, as `"}},\\n`).
    None (a reach made by hand): not known, and no frame is left out for it.
    value_texts: per token that starts (after JSON whitespace) with a whole JSON value other than a string (as json
    reads one: the checker's numbers and literals are JSON's) followed by whitespace, a comma or a closing brace,
    and holds a comma or a closing brace after it, its text from the value up to its last comma or closing brace,
    the distinct ones sorted: only these can finish such a value read from its start and then reach the object it
    is a member of (SchemaChecker._value_reads_past; Llama 3: `[],`, `[]}`, `{},`, none of a number or a literal);
    value_tree, the same as a prefix tree.
    string_values: per token that starts (after JSON whitespace) with a string that it finishes and follows with a
    comma, a closing brace or JSON whitespace, that string's content, decoded, the distinct ones sorted (Llama 3:
    "", "'", ")", "*", ",", "-", ".", "/", "="). None (a reach made by hand): neither is known.
    longest: the most characters one token holds (so the most it adds to a string's length; Llama 3: 128). None (a
    reach made by hand): not known.
    """

    openings: tuple[str, ...]
    closings: frozenset[str]
    opening_keys: frozenset[str] | None = None
    member_pops: bool = True
    front_keys: frozenset[str] = frozenset()
    front_texts: KeyTexts = KeyTexts()
    value_tails: tuple[str, ...] = ()
    opening_texts: KeyTexts = KeyTexts()
    close_texts: tuple[str, ...] | None = None
    closes_read_on: dict = field(default_factory=dict, compare=False, hash=False, repr=False)
    pops_read_on: int | None = None
    string_pops_read_on: int | None = None
    value_texts: tuple[str, ...] | None = None
    value_tree: dict | None = field(default=None, compare=False, hash=False, repr=False)
    string_values: tuple[str, ...] | None = None
    longest: int | None = None


def token_reach(vocab: Vocabulary) -> TokenReach:
    """The vocabulary's TokenReach, built once and kept on it."""
    found = vocab.__dict__.get("_token_reach")
    if found is None:
        texts = [text for i, text in enumerate(vocab.tokens) if text and i != vocab.eos_id]
        openings = tuple(sorted({text[m.start():] for text in texts for m in _AFTER_COMMA_QUOTE.finditer(text)}))
        closings = {key for key in map(_closed_key, texts) if key is not None}
        pops = any(_MEMBER_POPS.search(text) for text in texts)
        front_keys, front_texts = _fronts(texts)
        tails = tuple(sorted({text[m.start():] for text in texts if (after := _KEY_VALUE.search(text))
                              for m in _VALUE_END.finditer(text, after.end())}))
        opened = _fronts(text[1:] for text in openings)[1]  # (after each opening's comma: a token opening a key)
        close_texts = tuple(sorted({text for text in texts if _CLOSE_READ_ON.search(text)}))
        outside = max((_closes_read_on(text, False, False) for text in close_texts), default=0)
        inside = max((_closes_read_on(text, True, escaped) for text in close_texts for escaped in (False, True)),
                     default=0)
        found = vocab.__dict__["_token_reach"] = TokenReach(openings, frozenset(closings), _opening_keys(openings),
                                                            pops, front_keys, front_texts, tails, opened,
                                                            close_texts, pops_read_on=outside,
                                                            string_pops_read_on=inside,
                                                            value_texts=(values := _value_texts(texts)),
                                                            value_tree=text_tree(values),
                                                            string_values=_string_values(texts),
                                                            longest=max(map(len, texts), default=0))
    return found


def _string_values(texts) -> tuple[str, ...]:
    """TokenReach.string_values of these token texts."""
    found = set()
    for text in texts:
        inside = text.lstrip(JSON_WHITESPACE)
        if not inside.startswith('"'):
            continue
        quote = _first_unescaped_quote(inside[1:])
        if quote is None or quote + 2 >= len(inside) or inside[quote + 2] not in ',}' + JSON_WHITESPACE:
            continue
        value = _closed_key(inside[1:])  # (the content before its closing quote, decoded; None: no string content)
        if value is not None:
            found.add(value)
    return tuple(sorted(found))  # ("" first: most strings take it, and are told by it alone)


def text_tree(texts) -> dict:
    """These texts as a prefix tree: {character: the tree of what follows it}."""
    tree: dict = {}
    for text in texts:
        node = tree
        for ch in text:
            node = node.setdefault(ch, {})
    return tree


def _value_texts(texts) -> tuple[str, ...]:
    """TokenReach.value_texts of these token texts: where the text holds a whole JSON value (as json reads one,
    which takes every value the checker does: its numbers, strings and literals are JSON's) and then whitespace, a
    comma or a closing brace, up to its last comma or closing brace."""
    found = set()
    for text in texts:
        start = len(text) - len(text.lstrip(JSON_WHITESPACE))
        if start == len(text) or text[start] not in _VALUE_STARTS:
            continue
        try:
            end = _DECODER.raw_decode(text, start)[1]
        except ValueError:
            continue
        last = max(text.rfind(","), text.rfind("}"))
        if last >= end and (text[end] in JSON_WHITESPACE or text[end] in ",}"):
            found.add(text[start:last + 1])
    return tuple(sorted(found))


def _closes_read_on(text: str, in_string: bool, escaped: bool) -> int:
    """How many closing brackets outside strings `text` holds with a character after them, read from outside a
    string or from inside one (`escaped`: just after its backslash). An upper bound on the containers a token
    closes and then reads on past: a bracket another of the token's brackets opened, or one the checker refuses
    there, is counted too. (Only close_texts have one: a text with none counts 0.)"""
    last, count = len(text) - 1, 0
    for k, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif (ch == "}" or ch == "]") and k < last:
            count += 1
    return count


def _fronts(texts) -> tuple[frozenset[str], KeyTexts]:
    """TokenReach.front_keys and front_texts of these token texts."""
    keys, whole, escaped = set(), set(), set()
    for text in texts:
        opened = _OPENING_QUOTE.match(text)
        if opened is None:
            continue
        inside = text[opened.end():]
        key = _closed_key(inside)
        if key is not None:
            keys.add(key)
        elif _first_unescaped_quote(inside) is None:
            part = _decoded_part(inside)
            if part is None:
                continue
            if part[1] is None:  # it ends on a character
                whole.add(part[0])
            else:  # an unfinished escape ends it: kept with what of it is written
                escaped.add(part)
    return frozenset(keys), KeyTexts(frozenset(whole), frozenset(escaped))


def _decoded_part(text: str) -> tuple[str, str | None] | None:
    """String content `text` holds, decoded, and the escape it leaves unfinished at its end, after its backslash
    (None for none; "" for a backslash alone, "u" for `\\u`: `ab\\u00` is ("ab", "u00")); None where it is no
    string content (an invalid escape, a raw control character)."""
    unfinished = _UNFINISHED_ESCAPE.search(text)
    esc = None
    if unfinished is not None:
        esc = unfinished.group(1)[1:]  # (after the backslash: a backslash alone, `\\u` and its digits told apart)
        text = text[:unfinished.start(1)]
    try:
        return json.loads('"' + text + '"'), esc
    except ValueError:
        return None


def _opening_keys(openings: tuple[str, ...]) -> frozenset[str] | None:
    """The keys the openings close (TokenReach.opening_keys)."""
    keys = set()
    for text in openings:
        inside = text[_AFTER_COMMA_QUOTE.match(text).end():]
        quote = _first_unescaped_quote(inside)
        if quote is not None and ":" in inside[quote + 1:]:
            return None
        key = _closed_key(inside)
        if key is not None:
            keys.add(key)
    return frozenset(keys)


def _closed_key(text: str) -> str | None:
    """What `text`, read from inside a key, writes before the key's closing quote, decoded; None where it has no
    unescaped quote or is no string content there (an invalid escape, a raw control character)."""
    quote = _first_unescaped_quote(text)
    if quote is None:
        return None
    try:
        return json.loads('"' + text[:quote] + '"')
    except ValueError:
        return None


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
