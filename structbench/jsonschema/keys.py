"""Object keys in the checker: which keys may come next, reading one key's characters, and its end.

A key is tracked only as far as it matters: its text while it may still be a property name (or, when
minProperties counts distinct keys, whole), and its pattern / propertyNames DFA states. Once no property
name continues the text, the key is some other key (`OTHER`) and its text is forgotten.
A mixin of :class:`structbench.jsonschema.checker.SchemaChecker` (reads ``self.nodes``, ``self._ordered``).
"""

from __future__ import annotations

import bisect
import re
from functools import cache

import numpy as np

from structbench.jsonschema.frames import (
    AFTER_COMMA,
    COLON,
    KEY,
    OBJECT,
    OPEN,
    ROOT,
    UNION,
    VALUE,
    Frame,
    Stack,
    key_closed,
    key_opened,
    value_written,
    with_at,
    with_text_ks,
)
from structbench.jsonschema.key_patterns import KeyPatternDFA, KeyPatternStates
from structbench.jsonschema.key_trie import KeyTrie
from structbench.jsonschema.strings import (
    ANY_CHAR,
    END,
    SIMPLE_ESCAPES,
    Pending,
    collapsible,
    dfa_live_on,
    escape_candidates,
    free_read_candidates,
    in_intervals,
    read_char,
    string_step,
)

_FEW_PREFIXES = 128  # a key product's name prefixes up to which a context's live ones are found in Python
_FEW_NAMES = 256  # a strict object's names that continue a key's text, or may come below a value: at most this
# many are read into its mask key (_names_as_read, _seen_as_read), else the object's frame is kept whole
OTHER = "\x00\x01other"  # a key that is no prefix of any property name (its text no longer matters)
FRESH = "\x00\x02fresh"  # in a mask twin's object (mask_twin): a key that no property name nor used key continues
KEY_MARKERS = frozenset({OTHER, FRESH})  # no property or required name may be one (declared unsupported: containers)
TWIN_AT = -1  # an object frame's `at` in a mask twin (unused in any key order where keys must be distinct)
_BELOW = Frame(ROOT, -1, VALUE)  # _reads_of_openings' stand-in for the frames below an object
_TWIN_PHASES = frozenset({OPEN, KEY, AFTER_COMMA})  # an object's phases whose walks read a key's characters


class ObjectKeys:
    """The key rules of SchemaChecker."""

    def _names_from(self, node_id: int, text: str):
        """The node's property names that start with `text`, in code-point order: a bisection of the names
        sorted once per node, so a key's character costs O(log n), not a scan of every name."""
        names = self._key_index(node_id)[0]
        i = bisect.bisect_left(names, text)
        while i < len(names) and names[i].startswith(text):
            yield names[i]
            i += 1

    def _count_from(self, node_id: int, text: str) -> int:
        """How many of the node's property names start with `text` (a bisection each way; names past U+FFFF are
        read by no mask key, _beyond_bmp)."""
        names = self._key_index(node_id)[0]
        return bisect.bisect_left(names, text + "\U0010ffff") - bisect.bisect_left(names, text)

    def _key_index(self, node_id: int) -> tuple[list[str], dict[str, int]]:
        """A node's property names sorted, and the child of each (the first listed, as child_for_key reads)."""
        index = self._key_indexes.get(node_id)
        if index is None:
            children: dict[str, int] = {}
            for name, child in self.nodes[node_id].properties:
                children.setdefault(name, child)
            index = self._key_indexes[node_id] = (sorted(children), children)
        return index

    def _names_continuing(self, node_id: int, text: str, cands):
        """The node's property names that are `text` and then a character in `cands` (code-point intervals):
        one bisection per interval, so only those names are visited."""
        names = self._key_index(node_id)[0]
        for lo, hi in cands:
            i = bisect.bisect_left(names, text + chr(lo))
            while i < len(names) and names[i].startswith(text) and ord(names[i][len(text)]) <= hi:
                yield names[i]
                i += 1

    def _next_name_chars(self, node_id: int, text: str) -> str:
        """The characters that continue `text` into a longer property name (used or not), in order."""
        n = len(text)
        return "".join(sorted({name[n] for name in self._names_from(node_id, text) if len(name) > n}))

    def _property_continues(self, node_id: int, text: str, cands) -> bool:
        """Does some property name (used or not) continue `text` with a character in `cands`?"""
        return next(self._names_continuing(node_id, text, cands), None) is not None

    def _is_property(self, node_id: int, text: str) -> bool:
        return text in self._key_index(node_id)[1]

    def _is_available(self, frame: Frame, name: str) -> bool:
        """May property `name` come next? (Unordered keys: `_available` without listing every name.)"""
        node = self.nodes[frame.node]
        child = self._key_index(frame.node)[1].get(name)
        if child is None or name in frame.seen or not self.nodes[child].kinds:
            return False
        if node.max_props is not None and name not in node.required:
            if frame.count + 1 + len(node.required - frame.seen) > node.max_props:  # room for required keys only
                return False
        return node.key_dfa is None or node.key_dfa.accepts(name)

    def _available_from(self, frame: Frame, text: str):
        """The property names that may come next and start with `text`."""
        if self._ordered:
            return (name for name in self._available(frame) if name.startswith(text))
        return (name for name in self._names_from(frame.node, text) if self._is_available(frame, name))

    def _available(self, frame: Frame) -> list[str]:
        """The property names that may come next (whose value can be finished, with room left)."""
        node = self.nodes[frame.node]
        props = node.properties
        if self._ordered:
            # In schema order: any later property, up to and including the first required one.
            out = []
            for name, c in props[frame.at:]:
                if self.nodes[c].kinds:
                    out.append(name)
                if name in node.required:
                    break
            names = out
        else:
            names = [name for name, c in props if name not in frame.seen and self.nodes[c].kinds]
        if node.max_props is not None:
            missing = len(node.required - frame.seen) if not self._ordered else 0
            if frame.count + 1 + missing > node.max_props:  # room for required keys only
                names = [n for n in names if n in node.required]
        if node.key_dfa is not None:
            names = [n for n in names if node.key_dfa.accepts(n)]
        return names

    def _others_allowed(self, frame: Frame) -> bool:
        """May a key that is not a property name come next (additionalProperties or patternProperties)?"""
        node = self.nodes[frame.node]
        if node.additional is None and not node.patterns:
            return False
        if node.max_props is not None:
            missing = len(node.required - frame.seen)
            if frame.count + 1 + missing > node.max_props:
                return False
        return True

    def _may_add_key(self, frame: Frame) -> bool:
        node = self.nodes[frame.node]
        if node.max_props is not None and frame.count >= node.max_props:
            return False
        if self._others_allowed(frame):  # (first: most objects take other keys, and that needs no name looked at)
            return True
        if not self._ordered and node.max_props is None and node.key_dfa is None:
            # A property name is available where one that can be written is unused: not a scan past used names
            # (one a key: _available_from, from the first name, is quadratic in the names over an object).
            return not self._writable_names(frame.node) <= frame.seen
        return next(self._available_from(frame, ""), None) is not None

    def _writable_names(self, node_id: int) -> frozenset[str]:
        """The node's property names whose value can be written (`_is_available`'s test but `seen`)."""
        found = self._writable.get(node_id)
        if found is None:
            found = self._writable[node_id] = frozenset(
                name for name, child in self._key_index(node_id)[1].items() if self.nodes[child].kinds)
        return found

    def _may_close(self, frame: Frame) -> bool:
        node = self.nodes[frame.node]
        if frame.count < node.min_props:
            return False
        if self._ordered:  # no required property from its place on
            last = self._last_required.get(frame.node)
            if last is None:
                last = self._last_required[frame.node] = max(
                    (i for i, (name, _) in enumerate(node.properties) if name in node.required), default=-1)
            return frame.at > last
        return node.required <= frame.seen

    def _seen_may_be_read(self, frame: Frame) -> bool:
        """Whether `_seen_as_read` may settle this object's used keys (told by its node and key order alone: asked
        once per node)."""
        found = self._seen_readable.get(frame.node)
        if found is None:
            node = self.nodes[frame.node]
            found = self._seen_readable[frame.node] = not (self._ordered or node.max_props is not None
                                                           or node.distinct_keys)
        return found

    def _seen_as_read(self, frame: Frame, reach):
        """What a token can find out about an object's used keys (`seen`) from below a value of the object, or
        just after one: whether the object may close, whether a key may come, and what the key a token opens
        there reads of them (`reach.openings`: the texts tokens hold from a comma that opens a key). Where any
        key may be written, that is only which of the keys the openings close it refuses (`reach.opening_keys`,
        `_refused_openings`: a used property, or a key whose value cannot be written); every other text goes on.
        Where only property names may be written, it is which of those keys may come, and how far the names that
        may come go as texts the openings write (`reach.opening_texts`, as `_names_as_read` reads them). Else it is
        how far the object reads into each opening.
        None where that does not settle it: an object whose count or repeat rule reads `seen` in other ways
        (maxProperties, distinct keys), or an opening that reads on to a value. Equal answers: no token tells the
        two apart. In schema order, the object's place as read (`_place_as_read`)."""
        if self._ordered:
            return self._place_as_read(frame, reach)
        if not self._seen_may_be_read(frame):
            return None
        # Kept by the fields that outlast a value (the object's frame after it is those and AFTER_VALUE's defaults):
        # a key's every character asks again, with the same used keys
        reads = self._reads_for(reach)
        key = (frame.node, frame.at, frame.seen, frame.count, frame.alts)
        found = reads.get(key, False)
        if found is False:
            after = value_written(frame, frame.seen)
            node = self.nodes[after.node]
            if node.key_dfa is not None or reach.opening_keys is None or self._beyond_bmp(after.node):
                found = self._reads_of_openings(after, reach.openings)
            elif node.additional is not None:
                found = (self._may_close(after), self._may_add_key(after), self._refused_openings(after, reach, reads))
            elif not node.patterns and len(self._writable_names(after.node)) <= _FEW_NAMES:
                found = self._names_as_opened(after, self._writable_names(after.node) - after.seen, reach)
            else:
                found = self._reads_of_openings(after, reach.openings)
            reads[key] = found
        return found

    def _refused_openings(self, frame: Frame, reach, reads: dict) -> frozenset[str]:
        """Of the keys the openings close (`reach.opening_keys`), those this object refuses to close after its comma,
        where any key may be written and no key DFA checks them: a used property, or a key whose value cannot be
        written (a property's, or the patterns' or additionalProperties' node for another key), as `_key_end`
        refuses them. Every other text an opening writes goes on as some key (`_key_live`). So this, with whether
        the object may close and whether a key may come, is all a token reads of the object from below a value:
        told by the keys alone, not the node, it lets objects of different nodes share their masks (the mask key
        leaves their nodes out: `with_seen`). What `seen` does not move is kept per node, in `reads`."""
        got = reads.get(("refused", frame.node))
        if got is None:
            node, props = self.nodes[frame.node], self._key_index(frame.node)[1]
            refused, closable = set(), set()
            for key in reach.opening_keys:
                child = props.get(key)
                if child is not None:  # a property: refused once used, or where its value cannot be written
                    (closable if self.nodes[child].kinds else refused).add(key)
                    continue
                child = node.child_for_key(key, frozenset(i for i, (dfa, _) in enumerate(node.patterns)
                                                          if dfa.accepts(key)))
                if child is None or not self.nodes[child].kinds:
                    refused.add(key)
            got = reads[("refused", frame.node)] = (frozenset(refused), frozenset(closable))
        refused, closable = got
        return refused | (frame.seen & closable) if frame.seen else refused

    def _place_as_read(self, frame: Frame, reach):
        """In schema order, what a token can find out about a strict object (no count rule, names alone) from below
        a value of it or just after one: whether it may close, whether a key may come, and how far the openings
        read: where none reads past a key's closing quote (`reach.opening_keys`), which of the names that may come
        they close and how far they write each (as `_seen_as_read` reads a strict object's), else how far each
        opening is read (_reads_of_openings, which steps the checker itself). The object's node and place tell
        nothing more (its value's node is the frame's `child`), so the checker's mask key leaves them out: the
        nested task's levels, each a node of its own, share their masks so. None for other objects, or where an
        opening reads on to a value."""
        if not self._names_may_be_read(frame) or not self._place_shared(frame.node, frame.at):
            return None
        reads = self._reads_for(reach)
        key = (self._place(frame.node, frame.at), frame.alts)  # (no count rule; in schema order `seen` moves nothing)
        found = reads.get(key, False)
        if found is False:
            after = value_written(frame, frame.seen)
            names = self._available_here(after)
            if reach.opening_keys is None or len(names) > _FEW_NAMES:
                found = self._reads_of_openings(after, reach.openings)
            else:
                found = self._names_as_opened(after, names, reach)
            reads[key] = found
        return found

    def _names_as_opened(self, after: Frame, names: frozenset[str], reach) -> tuple:
        """A strict object after a value, where `names` may come, as the openings read it (no opening reads past a
        key's closing quote: `reach.opening_keys` known): whether it may close, whether a key may come, which of the
        names the openings close, and how far they write each (KeyTexts.as_far_as)."""
        return (self._may_close(after), self._may_add_key(after), names & reach.opening_keys,
                frozenset(reach.opening_texts.as_far_as(name) for name in names))

    def _reads_for(self, reach) -> dict:
        """This checker's kept reads of used keys for one TokenReach (what they read depends on it)."""
        kept = self._reads_by_reach.get(id(reach))
        if kept is None or kept[0] is not reach:  # (it is kept with them: its id stays its own)
            kept = self._reads_by_reach[id(reach)] = (reach, {})
        return kept[1]

    def _key_as_read(self, frame: Frame, reach):
        """What a token can find out about a key from inside it, where that is told by the key's names alone (no
        pattern or propertyNames, no count or repeat rule; `_names_as_read`). A token closes the key as one of
        `reach.closings` (what tokens hold before a quote); before that it reads the key's text on. So neither the
        key's text nor the object's node is read, only what each way on from the text makes: keys of objects of
        different nodes, with different texts, share masks so (JSON mode's objects at every depth, a free key's
        every character, a strict key's whatever keys are used). None where that does not settle it."""
        if frame.esc or frame.ks:
            return None
        return self._names_as_read(frame, reach, frame.text, reach.closings, None)

    def _after_comma_as_read(self, frame: Frame, reach):
        """The same after an object's comma, where a token opens the key (JSON whitespace, then a quote): it closes
        it as one of `reach.front_keys`, else writes one of `reach.front_texts`."""
        return self._names_as_read(frame, reach, "", reach.front_keys, reach.front_texts)

    def _names_as_read(self, frame: Frame, reach, text: str, closable, parts):
        """From a key's `text` (or before a key: ""), what a token reads of the object's names, node and used keys,
        where any key may be written (additionalProperties that can be written) or only property names, and
        nothing else tells keys apart (`_names_may_be_read`):
        * a name the token closes (`text` and one of `closable`): refused (used), or its value's node and the used
          keys after it, as a token that closes a key reads them (`_tails_as_read`); some other key: the additional
          node, the used keys as they are;
        * where only property names may be written, the text a token writes on: how far each name that may come
          continues `text` as some token's text, one of `parts` (KeyTexts.as_far_as), or whole where `parts` is
          None (every text a key's token may hold: more than is worth listing).
        Where any key may be written, every text goes on as some key. None where that does not settle it."""
        if not self._names_may_be_read(frame) or self._ordered and not self._place_shared(frame.node, frame.at):
            return None
        node = self.nodes[frame.node]
        free = node.additional is not None
        if free and not self.nodes[node.additional].kinds:
            return None  # (only property names may be written, after all)
        seen_reads = self._seen_as_read(frame, reach) if free else None
        if free and seen_reads is None:
            return None
        if seen_reads is not None and not reach.member_pops:
            seen_reads = _closing_unread(seen_reads)
        if text == OTHER:
            return (), (), node.additional, seen_reads, frozenset()
        entries = self._name_entries(frame.node, text, closable, parts, free)
        if entries is None:
            return None  # (read per key, the names would cost a wide object's answer time squared in its names)
        if self._ordered:  # in schema order a name that may not come at this place reads as a used one
            used_names = entries.names - self._available_here(frame)
        else:
            used_names = frame.seen & entries.names if frame.seen else frame.seen
        after = []
        if entries.closing:
            kept, pops = self._reads_for(reach), reach.member_pops
            for name, rest, child in entries.closing:
                if name not in used_names:
                    reads = self._tails_as_read(frame, name, reach, kept)
                    if reads is None:
                        return None
                    after.append((rest, child, reads if pops else _closing_unread(reads)))
        if not used_names:  # (most keys: none of the names read is used)
            return (), tuple(after), node.additional, seen_reads, entries.going
        # a strict key's text reads only the names that may come; a free key's, which of those a token closes are used
        used = tuple(rest for name, rest, _ in entries.closing if name in used_names) if free else ()
        going = frozenset() if free else entries.going_without(used_names)
        return used, tuple(after), node.additional, seen_reads, going

    def _name_entries(self, node_id: int, text: str, closable, parts, free: bool) -> NameEntries | None:
        """_names_as_read's names, whatever keys are used (NameEntries): those a token closes where any key may be
        written, else those that continue `text` and whose value can be written. Kept per node and text. None where
        only property names may be written and more than _FEW_NAMES continue `text` (kept too)."""
        if free:
            names = self._names_closed_by(node_id, text, closable)
            if not names:  # (most texts of a key any key may be: no name a token closes, nothing to keep per text)
                return _NO_ENTRIES
        key = (node_id, text, closable, parts)  # (frozensets keep their hashes once computed)
        found = self._name_entries_kept.get(key, False)
        if found is False:
            if not free and self._count_from(node_id, text) > _FEW_NAMES:
                self._name_entries_kept[key] = None
                return None
            n = len(text)
            children = self._key_index(node_id)[1]
            if not free:
                names = self._names_from(node_id, text)
            names = [name for name in names if free or self.nodes[children[name]].kinds]
            found = self._name_entries_kept[key] = NameEntries(
                [(name, name[n:], children[name]) for name in names if name[n:] in closable],
                None if free else [(name, name[n:] if parts is None else parts.as_far_as(name[n:])) for name in names],
                frozenset(names))
        return found

    def _tails_as_read(self, frame: Frame, name: str, reach, reads: dict):
        """What a token that closes a key as `name` can find out about the object's used keys (its frame's and the
        name) after the key's value: how far the object reads each of `reach.value_tails` after a value, whether it
        may close and whether a key may come (`_reads_of_openings`); () where no token reads on after a key's value.
        Only the tokens that close a key are read, not every token from a comma on (`_seen_as_read`): from a key,
        nothing else reaches past its value. Kept by the fields that outlast the value and the name, in `reads`
        (_reads_for's, for this reach)."""
        if not reach.value_tails:
            return ()
        if self._ordered:  # (_names_as_read asks only where no count rule is, and `seen` moves nothing)
            kept = (self._place(frame.node, frame.at), frame.alts, name)
        else:
            kept = (frame.node, frame.at, frame.seen, frame.count, frame.alts, name)
        found = reads.get(kept, False)
        if found is False:
            found = reads[kept] = self._tails_read(frame, frame.seen | {name}, reach, name)
        return found

    def _tails_read(self, frame: Frame, seen: frozenset, reach, name: str | None = None):
        """_tails_as_read, computed: `seen` the used keys after the value (in schema order, the object's place after
        `name`'s value, as _key_end moves it)."""
        after = value_written(frame, seen)
        if self._ordered:
            after = with_at(after, self._place_after(frame.node, name))
        if _comma_tails(reach.value_tails):
            # Tails of a comma, whitespace and at most a key's opening quote (Llama 3: `,\n` and `,"`): the steps
            # that read them ask only whether a key may come (the comma and the quote both), and the whitespace
            # policy. So they are read once per object node and answer, not once per set of used keys.
            may_add = self._may_add_key(after)
            key = (self._place(after.node, after.at) if self._ordered else after.node, may_add, reach.value_tails)
            found = self._tail_reads.get(key, False)
            if found is False:
                found = self._tail_reads[key] = self._reads_of_openings(after, reach.value_tails)[2]
            return self._may_close(after), may_add, found
        return self._reads_of_openings(after, reach.value_tails)  # (kept by _tails_as_read)

    def _names_may_be_read(self, frame: Frame) -> bool:
        """Whether `_names_as_read` may settle a key of this object: nothing but the names tells keys apart (no
        pattern or propertyNames, no required key that is no property, no name a surrogate pair spells), and the
        used keys only as `_seen_as_read` reads them."""
        found = self._names_readable.get(frame.node)  # (told by the node alone: asked once per node)
        if found is None:
            node = self.nodes[frame.node]
            found = self._names_readable[frame.node] = not (
                node.key_dfa is not None or node.patterns or self._beyond_bmp(frame.node)
                or not node.required <= self._key_index(frame.node)[1].keys()) and (
                # in schema order a strict object's place tells its keys (_available_here), where no count does
                not node.counts_keys and node.additional is None if self._ordered else self._seen_may_be_read(frame))
        return found

    def _place(self, node_id: int, at: int) -> int:
        """In schema order, a number for what a strict object's keys at place `at` are told by, whatever its node:
        each property from there on, whether it is required, whether its value can be written (equal places, one
        number). What a token reads after a comma (_reads_of_openings: the names that may come, whether the object
        may close; a text that only a name before `at` continues is refused as any other key is) and after a value
        (_tails_read) is told by it: objects of one shape at different nodes (the nested task's levels) read it
        once. A node's places are numbered at once, from its last: each is its property and the place after it."""
        found = self._places.get(node_id)
        if found is None:
            found = self._places[node_id] = self._numbered_places(node_id, self._place_numbers, False)
        return found[at]

    def _numbered_places(self, node_id: int, numbers: dict, to_required: bool) -> list[int]:
        """Each place of an object node numbered in `numbers` (equal places, one number), from its last: a place is
        its property (the name, whether required, whether its value can be written) and the place after it, or
        where `to_required` and the property is required, nothing after it (the names that may come there)."""
        node = self.nodes[node_id]
        places = [numbers.setdefault((), 0)]
        for name, c in reversed(node.properties):
            required = name in node.required
            after = 0 if to_required and required else places[-1]
            places.append(numbers.setdefault((name, required, bool(self.nodes[c].kinds), after), len(numbers)))
        places.reverse()
        return places

    def _place_shared(self, node_id: int, at: int) -> bool:
        """In schema order, whether another object node has a place where the same names may come (and then,
        the object may close or not alike): only then may this place's frames share a mask with another node's,
        and only then are they read by their place (else the frame is its own key, as one object's keys are: the
        nested task's levels have such places, the person task's object none, whose keys read by place cost it
        a tenth of its fresh answer and shared nothing). An object node met at several places of a stack shares
        its masks by its own frames (and the cuts below them) either way. Numbered as `_place` numbers places,
        each property and the place after it, but ending at the first required one (the names that may come)."""
        counts = self._place_counts
        if counts is None:
            counts, numbers = {}, {}
            for k, node in self.nodes.items():
                if node.properties and "object" in node.kinds:
                    places = self._shared_places[k] = self._numbered_places(k, numbers, True)
                    for number in set(places):
                        counts[number] = counts.get(number, 0) + 1
            self._place_counts = counts
        return counts[self._shared_places[node_id][at]] > 1

    def _available_here(self, frame: Frame) -> frozenset[str]:
        """In schema order, the property names that may come at this frame's place (`_available`; with no count
        rule, told by the node and the place alone: kept per both)."""
        key = (frame.node, frame.at)
        found = self._available_at.get(key)
        if found is None:
            found = self._available_at[key] = frozenset(self._available(frame))
        return found

    def _place_after(self, node_id: int, name: str) -> int:
        """In schema order, an object's place once its key `name` is written: after the first property so named."""
        return next(i for i, (n, _) in enumerate(self.nodes[node_id].properties) if n == name) + 1

    def _beyond_bmp(self, node_id: int) -> bool:
        """Does a property name hold a character JSON escapes as a surrogate pair (or a surrogate)? Closings are
        decoded by json.loads, whose pairing of surrogate escapes the key's own reading need not share."""
        found = self._names_beyond_bmp.get(node_id)
        if found is None:
            found = self._names_beyond_bmp[node_id] = any(ord(ch) > 0xFFFF or 0xD800 <= ord(ch) < 0xE000
                                                          for name in self._key_index(node_id)[0] for ch in name)
        return found

    def _names_closed_by(self, node_id: int, text: str, closings: frozenset[str]) -> list[str]:
        """The property names a token can finish from a key's `text`: `text` and then one of `closings`. Found
        per node and closings at once, by each name's ends that are a closing (no closing is longer than a
        token: a few characters), not per text by a scan of the names it starts."""
        key = (node_id, closings)  # (a frozenset keeps its hash once computed)
        found = self._closed_names.get(key)
        if found is None:
            longest = max(map(len, closings), default=0)
            found = self._closed_names[key] = {}
            for name in self._key_index(node_id)[0]:  # (sorted: so is each text's list)
                for k in range(max(0, len(name) - longest), len(name) + 1):
                    if name[k:] in closings:
                        found.setdefault(name[:k], []).append(name)
        return found.get(text, ())

    def _reads_of_openings(self, after: Frame, openings: tuple[str, ...]):
        """How far the object reads into each opening (sorted: one shares its first characters' steps with the
        one before), whether it may close and whether a key may come; None where an opening opens a value or
        closes the object."""
        # path[i]: the stack after prev's first i characters (read), the object above a stand-in for what is below
        # it (an opening that closes the object pops to it: the object has a parent to tell)
        reads, path, prev = [], [(_BELOW, after)], ""
        for text in openings:
            k = 0
            while k < len(path) - 1 and k < len(text) and text[k] == prev[k]:
                k += 1
            del path[k + 1:]
            stack = path[k]
            for ch in text[k:]:
                stack = self.step(stack, ch)
                if stack is None:
                    break
                if len(stack) != 2:  # a value opened (or the object closed): past what a key's text decides
                    return None
                path.append(stack)
            reads.append(len(path) - 1)
            prev = text
        return self._may_close(after), self._may_add_key(after), tuple(reads)

    def _key_dfas(self, node):
        return [node.key_dfa] if node.key_dfa is not None else [d for d, _ in node.patterns]

    def _key_live(self, frame: Frame, text: str, ks: tuple, cands) -> bool:
        """After a key's decoded `text` (and its DFA states `ks`), can the key still be completed?
        cands: the code points the next character may be (None: the key may also end here)."""
        node = self.nodes[frame.node]
        if text != OTHER and self._name_continues(frame, text, cands):
            return True
        if not self._others_allowed(frame):
            return False
        if node.key_dfa is not None:
            s = ks[0]
            return s is not None and (cands is None or dfa_live_on(node.key_dfa, s, cands))
        if node.additional is not None:
            return True
        # Strict, with patterns: some pattern can still match.
        return any(s is not None and (cands is None or dfa_live_on(node.patterns[i][0], s, cands))
                   for i, s in enumerate(ks))

    def _name_continues(self, frame: Frame, text: str, cands) -> bool:
        """Is some available property name `text` itself (cands None) or `text` and then a character in `cands`?
        Unordered keys bisect to each interval of `cands`, so only names that continue that way are visited."""
        if cands is None:
            return next(self._available_from(frame, text), None) is not None
        if self._ordered:
            return any(len(name) > len(text) and in_intervals(cands, ord(name[len(text)]))
                       for name in self._available_from(frame, text))
        return any(self._is_available(frame, name) for name in self._names_continuing(frame.node, text, cands))

    def _distinct(self, frame: Frame) -> bool:
        """Must this key be remembered whole? While minProperties still counts keys (a repeated key counts once
        for the referee, so a repeat is refused): where an earlier key may equal it, or a later one still counted
        may. Once enough keys are in and no maxProperties counts on, a repeat changes nothing the referee sees,
        and a key no property name continues is forgotten like any other (else every key text would be a state
        of its own: a cold mask at the key would make one per prefix of the vocabulary). So the first key of an
        object with minProperties 1 is never remembered."""
        node = self.nodes[frame.node]
        if not node.distinct_keys:
            return False
        if node.max_props is not None:
            return True
        if frame.count >= node.min_props:
            return False
        # A property name is never repeated (each comes once): only an earlier free key may equal this one.
        return frame.count + 1 < node.min_props or any(not self._is_property(frame.node, k) for k in frame.seen)

    def key_trie(self, top: Frame):
        """The DFA of a key's plain characters in this key context, or None where its state is more than that DFA's.
        Where other keys may come and no DFA checks keys, the tree of the object's names plus one state for any
        other key (structbench.jsonschema.key_trie), one for every key of the object. Where DFAs (patterns,
        propertyNames) check keys, or no other key may come, the object's names crossed with its DFAs (none, for
        the latter: structbench.jsonschema.key_patterns), one table per object whose contexts (the names that may
        still come) have rows of their own where they differ. None for distinct keys, an object that tracks no
        names and checks no key (its keys loop on one state already), and a product too big or whose other keys
        are live in some contexts only (DFAs, or maxProperties, where other keys may not come now)."""
        # Kept by the frame without its text and DFA states, which _key_trie never reads: asked at every new state of
        # a key (string_content, ...), whose frames differ by their text alone
        context = (top.node, top.phase, top.at, top.seen, top.esc, top.count, top.ws, top.child, top.alts)
        known = self._trie_of_top.get(context, False)
        if known is not False:
            return known
        found = self._trie_of_top[context] = self._key_trie(top)
        return found

    def _key_trie(self, top: Frame):
        node = self.nodes[top.node]
        if self._distinct(top):
            return None
        others = self._others_allowed(top)
        if not self._key_dfas(node):
            if not node.tracks_keys:
                return None
            if others:
                # One tree per set of names: objects with the same names share it, and string mode its table (a
                # union of such objects' keys reads it once for every branch: the checker's _union_content)
                found = self._name_trees.get(top.node)
                if found is None:
                    names = tuple(self._key_index(top.node)[0])
                    found = self._name_trees_alike.get(names)
                    if found is None:
                        found = self._name_trees_alike[names] = KeyTrie(list(names), OTHER)
                    self._name_trees[top.node] = found
                return found
        return self._key_product(top, others)

    def _key_product(self, top: Frame, others: bool):
        """The key DFA of a context from the object's product of names and key DFAs (KeyPatternStates, once per
        object): its live states told by the names that may still come (keys._key_live: a name prefix is live
        while some name that may come continues it, any state where the key can still be some other key). None
        where the product is too big or another key's liveness differs from the shared table's."""
        node = self.nodes[top.node]
        dfas = self._key_dfas(node)
        context = top._replace(text="", ks=tuple(d.start for d in dfas))
        found = self._key_tries.get(context, False)
        if found is not False:
            return found
        shared = self._key_states.get(top.node, False)
        if shared is False:
            # Objects whose keys are alike (the same names and key DFAs, the same other keys) share one: nested
            # objects of one shape at different nodes then share their key DFAs, and string mode their tables.
            alike = self._key_alike(top.node)
            shared = self._key_states_alike.get(alike, False)
            if shared is False:
                shared = self._key_states_alike[alike] = self._shared_key_dfa(top.node, dfas)
            self._key_states[top.node] = shared
        found = None
        if shared is not None:
            # Contexts with the same names to come have one DFA (schema order: a key's position; alike objects)
            names = tuple(self._available(top))
            by_names = (id(shared), others, names)
            found = self._key_by_names.get(by_names, False)
            if found is False:
                found = self._key_by_names[by_names] = self._context_dfa(shared, others, names)
        self._key_tries[context] = found
        return found

    def _context_dfa(self, shared, others: bool, names: tuple[str, ...]):
        """The key DFA of a context of the product `shared` where `names` may come (and other keys where `others`):
        the shared one where its live states are the same, else one per live set, whichever object it is in; None
        where another key's liveness differs from the shared table's."""
        states = shared.states
        n = len(states.texts)
        if n > _FEW_PREFIXES:
            live = _live_by_subtrees(shared, others, names)
            if (live == shared.live).all():
                return shared
            if not (live[n:] == shared.live[n:]).all():  # (a context's own rows are the parents of dead prefixes)
                return None
        else:  # (most objects: a few names, whose prefixes are walked up in Python, not a NumPy pass each)
            named, parent = set(), states.parent_list
            for name in names:  # each name that may come and its prefixes (its ancestors in the tree)
                d = states.name_end[name]
                while d >= 0 and d not in named:  # (a prefix met already has its ancestors in)
                    named.add(d)
                    d = parent[d]
            live_prefixes = named | shared.alive_prefixes if others else named
            same_tail = shared.same_tail(others)
            if same_tail and live_prefixes == shared.live_prefixes:
                return shared
            if not same_tail:
                return None
            live = shared.alive.copy() if others else np.zeros(states.n_states, dtype=bool)
            live[list(live_prefixes)] = True
        contexts, at = self._key_contexts.setdefault(id(shared), {}), live.tobytes()
        found = contexts.get(at)
        if found is None:
            found = contexts[at] = KeyPatternDFA(states, live, shared=shared)
        return found

    def _key_alike(self, node_id: int) -> tuple:
        """What _shared_key_dfa reads of an object node (its key DFAs are its key_dfa or its patterns'): objects
        with equal tuples get equal DFAs. DFAs by identity (nodes share theirs, and keep them alive with the
        checker): a DFA's own hash and == read every move."""
        node = self.nodes[node_id]
        names = tuple(self._key_index(node_id)[0]) if node.tracks_keys else ()
        return (names, node.tracks_keys, id(node.key_dfa), node.additional is not None,
                tuple(id(d) for d, _ in node.patterns))

    def _shared_key_dfa(self, node_id: int, dfas):
        """An object's KeyPatternDFA shared by its keys' contexts (every name prefix live), None where the product
        is too big. `alive` on it: the states where the key can still be some other key."""
        node = self.nodes[node_id]
        states = KeyPatternStates(self._key_index(node_id)[0] if node.tracks_keys else (), dfas,
                                  OTHER if node.tracks_keys else "")
        if not states.complete:
            return None
        ks = states.ks_array
        if node.key_dfa is not None:
            alive, ends = ks[:, 0] >= 0, states.accepted(0, node.key_dfa.accepting)
        elif node.additional is not None:
            alive = ends = np.ones(states.n_states, dtype=bool)
        else:
            alive = (ks >= 0).any(axis=1)
            ends = np.zeros(states.n_states, dtype=bool)
            for i, (dfa, _) in enumerate(node.patterns):
                ends |= states.accepted(i, dfa.accepting)
        live = alive.copy()
        live[:len(states.texts)] = True  # some name continues every prefix
        named = np.zeros(states.n_states, dtype=bool)
        named[list(states.name_end.values())] = True
        return KeyPatternDFA(states, live, may_end=live & (ends | named), alive=alive)

    def _key_open(self, top: Frame) -> Frame:
        """The frame after a key's opening quote."""
        ks = tuple(d.start for d in self._key_dfas(self.nodes[top.node]))
        return key_opened(top, ks)

    def _key_step(self, rest: Stack, top: Frame, ch: str) -> Stack | None:
        """One character inside a key's quotes."""
        if self._key_text_free(top):
            got = string_step(top.esc, 0, ch, None)
            if got is None:
                return None
            if got is END:
                return self._key_end(rest, top)
            return rest + (top,) if top.esc == got.esc else rest + (top._replace(esc=got.esc),)
        got = read_char(top.esc, ch, True)
        if got is None:
            return None
        if got is END:
            if top.esc:
                return None
            return self._key_end(rest, top)
        if isinstance(got, Pending):
            cands = escape_candidates(got.esc)
            if not self._key_live(top, top.text, top.ks, cands):
                return None
            if not top.ks and not self._distinct(top) and self._others_allowed(top) and top.text != OTHER and \
                    not self._property_continues(top.node, top.text, free_read_candidates(got.esc)):
                # No property name continues this way (a forbidden or used one included, which must still be
                # told apart): the key is some other key, its text no longer matters. (Asked of every character
                # the escape may spell once read freely, printable ASCII included: else "\\u006eame" was some
                # other key where a property "name" is, its value checked as another key's, 2026-12-07.)
                prog = collapsible(got.esc)
                esc = "=" + prog + ">-1" if prog is not None else got.esc
                return rest + (top._replace(text=OTHER, esc=esc),)
            return rest + (top._replace(esc=got.esc),)
        nxt = self._key_char(top._replace(esc=""), got.char)
        return None if nxt is None else rest + (nxt,)

    def _key_text_free(self, top: Frame) -> bool:
        """Whether a key's characters no longer matter, only the string syntax they make: nothing about the key's
        text is tracked (an untracked or other key, no pattern, counted or repeat rule to tell it by), or an
        escape collapsed to its syntax ("=..."). Its frame after a character is then a function of string_step's
        answer alone."""
        if top.esc.startswith("="):
            return True
        return not (self.nodes[top.node].tracks_keys and top.text != OTHER) and self._told_by_text_alone(top)

    def _told_by_text_alone(self, top: Frame) -> bool:
        """Whether nothing but its text tells this key from another: no pattern or propertyNames state, no count
        or repeat rule to remember it by, and other keys may come (a key no name continues is one of them)."""
        return not top.ks and not self._distinct(top) and self._others_allowed(top)

    def _tracked_escape_alike(self, top: Frame) -> dict[str, str] | None:
        """alike just after a tracked key's backslash (the checker's `alike`): the simple escapes whose character
        continues no property name make the key some other key, the same frame whichever it is (_key_char), where
        nothing else tells keys apart (no pattern, counted or repeat rule) and other keys may come."""
        if top.esc != "\\" or top.text == OTHER or not self.nodes[top.node].tracks_keys \
                or not self._told_by_text_alone(top):
            return None
        others = [ch for ch, c in SIMPLE_ESCAPES.items() if next(self._names_from(top.node, top.text + c), None) is None]
        return {ch: others[0] for ch in others} if len(others) > 1 else None

    def mask_twin(self, stack: Stack) -> Stack | None:
        """A stack whose mask is this one's but for tokens holding three or more quotes, and whose mask walk makes
        few states: where the top is an object whose keys must be remembered whole (`_distinct`), before a key or in
        one (or a union's branches, each so). The walk from such a stack would make a state per prefix of every
        token read into the key (each a key text to remember: a cold mask there took seconds and hundreds of MB);
        the twin's object (`at` TWIN_AT) keeps a key's text only while it is the prefix of a property name or of a
        key already used, else FRESH: any other key, new, whose text no token can repeat (a FRESH key closed is
        counted and not remembered). Only a later key closed in the same token could tell the two apart (a repeat
        of this one): a token with three or more quotes, which the caller checks by the stack itself. None where no
        twin is needed."""
        top = stack[-1]
        if top.kind == UNION:  # each branch by its twin, where it has one (a branch's tokens are its own)
            alts = tuple(self.mask_twin(alt) or alt for alt in top.alts)
            return None if alts == top.alts else stack[:-1] + (top._replace(alts=alts),)
        if top.kind != OBJECT or top.phase not in _TWIN_PHASES or top.at == TWIN_AT:
            return None
        if not self.nodes[top.node].distinct_keys or not self._distinct(top) or self._ordered:
            return None
        if next(self._names_from(top.node, FRESH[0]), None) is not None or top.text.startswith(FRESH[0]) or \
                any(k.startswith(FRESH[0]) for k in top.seen):
            return None  # (a name, the key or a used key that starts as FRESH does (`\u0000`): its text could be it)
        twin = top._replace(at=TWIN_AT)
        if top.phase == KEY and not self._twin_keeps(top, top.text):
            twin = twin._replace(text=FRESH)
        return stack[:-1] + (twin,)

    def _twin_keeps(self, top: Frame, text: str) -> bool:
        """Whether a mask twin's key keeps `text`: a prefix of a property name or of a key already used."""
        return next(self._names_from(top.node, text), None) is not None or any(k.startswith(text) for k in top.seen)

    def _key_char(self, top: Frame, c: str):
        """A decoded key character: the key frame after it, or None."""
        node = self.nodes[top.node]
        distinct = self._distinct(top)
        if not distinct and (top.text == OTHER or not node.tracks_keys):  # (a key remembered whole is kept whole,
            # even one that spells OTHER's text with `\u0000\u0001other`: it never collapses to OTHER)
            text = top.text
        elif top.at == TWIN_AT and distinct and (top.text == FRESH or not self._twin_keeps(top, top.text + c)):
            text = FRESH  # (a mask twin's other key: mask_twin)
        else:
            text = top.text + c
            if not distinct and next(self._names_from(top.node, text), None) is None:
                text = OTHER
        ks = tuple(None if s is None else d.step(s, c) for d, s in zip(self._key_dfas(node), top.ks))
        if not node.tracks_keys and not distinct and not ks and self._others_allowed(top):
            return top._replace(text=text)  # free keys: nothing to remember
        if not self._key_live(top, text, ks, ANY_CHAR) and not self._key_live(top, text, ks, None):
            return None
        return with_text_ks(top, text, ks)

    def _key_end(self, rest: Stack, top: Frame):
        """The key's closing quote: pick the value's node, or refuse."""
        node = self.nodes[top.node]
        text = top.text
        child = None
        if text != OTHER and (self._is_available(top, text) if not self._ordered else text in self._available(top)):
            child = self._key_index(top.node)[1][text]  # child_for_key's answer, without its scan
            if self._ordered:
                at = self._place_after(top.node, text)
                return rest + (top._replace(phase=COLON, at=at, child=child, text="", esc="", ks=(),
                                            count=top.count + 1),)
        elif self._others_allowed(top) and not (text != OTHER and self._is_property(top.node, text)):
            if node.key_dfa is not None:
                if top.ks[0] is None or top.ks[0] not in node.key_dfa.accepting:
                    return None
                child = node.additional
            else:
                matched = frozenset(i for i, s in enumerate(top.ks)
                                    if s is not None and s in node.patterns[i][0].accepting) if node.patterns else frozenset()
                child = node.combos.get(matched) if matched else node.additional
        if child is None or not self.nodes[child].kinds:
            return None
        seen = top.seen
        if self._distinct(top) and not (text == FRESH and top.at == TWIN_AT):  # (a mask twin's FRESH key is new and
            # not remembered: mask_twin; a real key spelt as FRESH is checked as any other)
            if text in seen:
                return None
            seen = seen | {text}
        elif node.required and text in node.required or not self._ordered and text != OTHER and self._is_property(top.node, text):
            seen = seen | {text}
        count = min(top.count + 1, max(node.min_props, node.max_props or 0)) if node.counts_keys else top.count
        return rest + (key_closed(top, child, seen, count),)


class NameEntries:
    """The names `_names_as_read` reads from one key text, whatever keys are used: `closing`, (name, its rest after
    the text, its value's node) of those a token closes, in name order; `going`, how far a token writes each (a strict
    key's: the frozenset of `_names_as_read`), where none is used; `names`, all of them. Where some are used, the
    rest's `going` is found once per set of used names among them (`going_without`): an object's every key asks
    again with the same used keys."""

    __slots__ = ("closing", "names", "going", "_goes", "_without")

    def __init__(self, closing: list, goes: list | None, names: frozenset):
        self.closing, self.names, self._goes = closing, names, goes
        self.going = frozenset() if goes is None else frozenset(g for _, g in goes)
        self._without: dict = {}

    def going_without(self, used: frozenset) -> frozenset:
        found = self._without.get(used)
        if found is None:
            found = self._without[used] = frozenset(g for name, g in self._goes if name not in used)
        return found


_NO_ENTRIES = NameEntries([], None, frozenset())


def _closing_unread(reads: tuple) -> tuple:
    """`reads` (what `_reads_of_openings` or `_seen_as_read` found: whether the object may close first) without
    whether it may close, where no token can reach its closing bracket from its key or after its comma (no token
    holds a quote, then a colon, then a closing bracket: TokenReach.member_pops): the key's quotes, its colon and a
    value come first. Two keys that differ only there share a mask (a key before the last required one and one
    after it): 2% fewer masks built over 434 corpus schemas, 4% of their time."""
    return reads[1:] if reads else reads


_COMMA_TAIL = re.compile(r',[ \t\n\r]*"?')


@cache
def _comma_tails(tails: tuple[str, ...]) -> bool:
    """Whether every tail (TokenReach.value_tails) is a comma, JSON whitespace and at most a quote after them."""
    return all(_COMMA_TAIL.fullmatch(text) for text in tails)


def _live_by_subtrees(shared, others: bool, names: tuple[str, ...]) -> np.ndarray:
    """The live states of a context of the product `shared` where `names` may come (and other keys where `others`):
    a name prefix is live where some name that may come ends in its subtree (preorder: a subtree is one run), any
    state where the key can still be some other key is (`others`)."""
    states = shared.states
    named = np.zeros(states.n_states, dtype=bool)  # the names that may come, where their text ends
    named[[states.name_end[name] for name in names]] = True
    n = len(states.texts)
    below = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(named[:n], out=below[1:])
    live = shared.alive.copy() if others else np.zeros(states.n_states, dtype=bool)
    live[:n] |= below[states.subtree_end] > below[:n]
    return live
