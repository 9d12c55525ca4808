"""Can a token close the innermost open object or array and read on? Where none can, the frames below that
container are read by no token, and a mask key leaves them out (SchemaChecker.mask_key; the fifth difference of
structbench.masking.shared_masks).

Why it is sound. A token's characters are read by the top frame, and by a frame below only once every frame above
it is closed. The innermost container (object or array) closes only by reading its own `}` or `]`; its parent (the
root, an object's value or an array's item, never a union, whose branches are held inside its frame) is then told
that a value ended, which refuses nothing (SchemaChecker._close). So a token that closes the container with its last
character is accepted whatever lies below, one that does not close it never reads below, and only a token that
closes it and has characters left can tell two stacks apart that differ below it. Whether such a token exists is
asked of a checker of any JSON value under the same whitespace policy, with JSON's number syntax (the *twin*): it
accepts every text the schema's checker accepts from the same kinds and phases, and more (its whitespace runs under
the flexible policy are unbounded, so that holds under any limit), so its answer "none" holds for the schema's
checker too. The twin starts from the container's kind, phase and whitespace count, with the open
leaf above it where there is one (a string outside an escape, a number at any state of the twin's number syntax, a
literal at the same letter); only tokens with a `}` or `]` before their last character can close it and read on,
and those are walked (`TokenReach.close_texts`). A token whose rest after the close no parent reads (the root
done, an object or an array after a value, the twin's, each reading more than a schema's) is refused whatever lies
below, and tells nothing.
"""

from __future__ import annotations

from structbench.jsonschema.frames import (
    AFTER_COMMA,
    AFTER_VALUE,
    ARRAY,
    COLON,
    LITERAL,
    NUMBER,
    OBJECT,
    OPEN,
    ROOT,
    STRING,
    VALUE,
    WHITESPACE_POLICIES,
    Frame,
    Phase,
)

NONE = Phase.NONE

# A container's kind and phase -> the text that leaves the twin's container in it, from the root
_OPENERS = {
    (OBJECT, OPEN): "{", (OBJECT, COLON): '{"a"', (OBJECT, VALUE): '{"a":', (OBJECT, AFTER_VALUE): '{"a":""',
    (ARRAY, OPEN): "[", (ARRAY, VALUE): "[", (ARRAY, AFTER_VALUE): '[""', (ARRAY, AFTER_COMMA): '["",',
}
_LEAF_OPENERS = {STRING: '"', NUMBER: "1"}
_STRING_LEAF, _NUMBER_LEAF = (STRING,), (NUMBER,)
_NEVER, _BY_FIRST = "never cut", "texts by first character"  # kept's own entries
# The twin's longest whitespace run under the flexible policy: unbounded, so that its answers (kept for the process)
# hold under whatever limit a trial sets (limits.max_flexible_whitespace: each checker reads it when it is made)
_UNBOUNDED_RUN = 1 << 62
_twins: dict = {}  # whitespace policy -> the twin checker


def container_config(stack) -> tuple[int, tuple] | None:
    """(the index of the stack's innermost container, what the twin is started from), or None where the question
    is not asked: no container below a leaf, a union or a key at the top, a string inside an escape, a parent that
    is none of the root, an object or an array. The container's whitespace count is kept as 0 or 1 (more: 1, whose
    twin may read as much whitespace as it, or more). (Asked at every mask key: plain comparisons.)"""
    n = len(stack)
    top = stack[-1]
    kind = top.kind
    if kind == OBJECT or kind == ARRAY:
        c, leaf = n - 1, None
    elif kind == STRING:
        if top.esc:
            return None
        c, leaf = n - 2, _STRING_LEAF
    elif kind == NUMBER:
        c, leaf = n - 2, _NUMBER_LEAF
    elif kind == LITERAL:
        c, leaf = n - 2, (LITERAL, top.text, top.at)
    else:
        return None
    if c < 1:
        return None
    container = stack[c]
    phase = container.phase
    if leaf is None:
        if (container.kind, phase) not in _OPENERS:
            return None  # (an object's key, or after its comma: the checker's member_pops rule, or read as it is)
    elif phase != VALUE or (container.kind != OBJECT and container.kind != ARRAY):
        return None
    parent = stack[c - 1].kind
    if parent != ROOT and parent != OBJECT and parent != ARRAY:
        return None
    return c, (container.kind, phase, 1 if container.ws else 0, leaf)


def never_cut(whitespace: str, kept: dict) -> frozenset:
    """The tops at which no container is cut under this policy, as learnt (`learn`): a mask key does not ask
    further there (on Llama 3: a string or a number in a value, an object or array just opened or after a value).
    A container by its (kind, phase); a leaf (string, number, literal) by its kind alone, which a mask key tests
    first (a string's and a number's are most keys). Empty where not learnt."""
    return kept.get((whitespace, _NEVER), frozenset())


def learn(texts: tuple[str, ...], kept: dict) -> None:
    """Every config's answer under every whitespace policy, kept (the vocabulary's setup: none is then computed
    inside a timed mask), and per policy the tops where none is cut (never_cut)."""
    for whitespace in WHITESPACE_POLICIES:
        if (whitespace, _NEVER) in kept:
            continue
        cut_somewhere = set()
        for top, config in _all_configs():
            if not closes_and_reads_on(whitespace, config, texts, kept):
                cut_somewhere.add(top)
        never = {top for top, _ in _all_configs()} - cut_somewhere
        kept[whitespace, _NEVER] = frozenset(never | {kind for kind, phase in never if phase == NONE})


def _all_configs():
    """(the top's (kind, phase), a config) for every config container_config can make, and a few it never does
    (a container below a leaf has whitespace 0; an array in phase VALUE is never the top): harmless to answer."""
    for kind, phase in _OPENERS:
        for ws in (0, 1):
            yield (kind, phase), (kind, phase, ws, None)
    leaves = [(STRING, _STRING_LEAF), (NUMBER, _NUMBER_LEAF)]
    leaves += [(LITERAL, (LITERAL, word, at)) for word in ("true", "false", "null") for at in range(1, len(word))]
    for kind in (OBJECT, ARRAY):
        for ws in (0, 1):
            for leaf_kind, leaf in leaves:
                yield (leaf_kind, NONE), (kind, VALUE, ws, leaf)


def closes_and_reads_on(whitespace: str, config: tuple, texts: tuple[str, ...], kept: dict) -> bool:
    """Can one of `texts` (TokenReach.close_texts), read from the container and leaf `config` describes (as
    container_config makes it), close that container and have characters left that some parent reads? Kept in
    `kept` by policy and config (the answer depends on the vocabulary, the whitespace policy and the config
    alone: the twin's whitespace runs are unbounded, whatever limit is set). Only texts whose first character the
    twin reads there are walked."""
    key = (whitespace, config)
    found = kept.get(key)
    if found is None:
        by_first = kept.get(_BY_FIRST)
        if by_first is None:
            by_first = kept[_BY_FIRST] = {}
            for text in texts:
                by_first.setdefault(text[0], []).append(text)
        found = False
        for twin, stack in _twin_stacks(whitespace, config):
            for first, group in by_first.items():
                if twin.step(stack, first) is not None and any(_reads_on(twin, stack, text) for text in group):
                    found = True
                    break
            if found:
                break
        kept[key] = found
    return found


def _reads_on(twin, stack, text: str) -> bool:
    last = len(text) - 1
    for k, ch in enumerate(text):
        stack = twin.step(stack, ch)
        if stack is None:
            return False
        if len(stack) == 1:  # the container is closed: the twin's root is all that is left
            return k < last and _parent_reads(twin, text[k + 1:])
    return False


def _parent_reads(twin, rest: str) -> bool:
    """Could a parent just told that its value ended read `rest` (the root done, an object or an array after a
    value, as the twin has them: each reads more than a schema's)? Where the twin's object or array closes too and
    characters are left, the frames below it are unknown: it may. A text no parent reads refuses the token
    whatever lies below, and tells nothing."""
    parents = twin.__dict__.get("_closed_parents")
    if parents is None:
        parents = twin.__dict__["_closed_parents"] = [twin.feed(twin.start(), text) for text in ('""', '{"a":""', '[""')]
    last = len(rest) - 1
    for parent in parents:
        stack = parent
        for k, ch in enumerate(rest):
            stack = twin.step(stack, ch)
            if stack is None:
                break
            if len(stack) == 1 and len(parent) > 1 and k < last:
                return True
        else:
            return True
    return False


def _twin_stacks(whitespace: str, config: tuple) -> list:
    """(the twin, a stack) pairs where the twin stands as `config` says: one, or one per number state."""
    from structbench.jsonschema.checker import SchemaChecker

    twin = _twins.get(whitespace)
    if twin is None:
        twin = _twins[whitespace] = SchemaChecker({}, whitespace=whitespace, numbers="json")
        if whitespace == "flexible":  # runs of any length: a superset under every limits.max_flexible_whitespace
            twin._ws_max = _UNBOUNDED_RUN
    kind, phase, ws, leaf = config
    stack = twin.feed(twin.start(), _OPENERS[kind, phase])
    stack = stack[:-1] + (stack[-1]._replace(ws=ws),)
    if leaf is None:
        return [(twin, stack)]
    if leaf[0] == LITERAL:
        text, at = leaf[1], leaf[2]
        stack = twin.feed(stack, text[0])
        return [(twin, stack[:-1] + (stack[-1]._replace(at=at),))]
    opened = twin.feed(stack, _LEAF_OPENERS[leaf[0]])
    if leaf[0] == STRING:
        return [(twin, opened)]
    number = opened[-1]
    dfa = twin.nodes[number.node].number_dfa
    return [(twin, opened[:-1] + (Frame(NUMBER, number.node, at=s),)) for s in range(dfa.n_states)]
