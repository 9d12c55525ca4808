"""The prefix-tree walk of a cold mask, compiled: every token prefix read once, a refused subtree dropped whole,
a subtree the state reads without leaving it taken whole.

A mask at a state is the set of tokens whose every character the machine reads from there. The walk goes
down the vocabulary's prefix tree (structbench.masking.token_index.TokenTrie, nodes in preorder) depth first,
one table lookup a node, as llguidance's toktrie does. It reads in one of two modes:

* **machine** (mode 0): the state is a LazyDense state, the lookup `trans[state, class]`;
* **string content** (mode 1): inside a string whose content a DFA checks, or a key (its DFA the prefix tree of
  property names), the state is a string-mode row (structbench.masking.string_mode.StringRows: one per DFA
  state per string) and the lookup `lex[lex_row[row], class]`: plain characters (neither the quote, the
  backslash nor a control character) move the DFA alone, to row `row_base[row]` + the DFA's next state, so no
  machine state is made for them (llguidance's lexer/parser split: the lexeme's automaton runs compiled, the
  parser is asked only where the lexeme ends). The closing quote (`CLOSE`) is read there too: the walk goes on
  in machine mode from `lex_close[row]`, the machine state after the string. The backslash (`EXIT`) hands the
  walk back to the machine: it goes on in machine mode from `lex_exit[row]`, the machine state after the
  backslash, which reads the escape (the string's own state at that row is never made). A number is read so too
  (structbench.jsonschema.lexemes): its DFA's characters move it alone, and a character that ends it (`END`)
  is read again in machine mode, from `lex_close[row]`, the machine state after the number.

A walk in machine mode that reaches a machine state inside such a string (`enter[state]`, its row; -1 for
none) goes on in string mode there: a string's inside costs no machine state wherever a token enters it.

Two shortcuts: a refused node drops its subtree (every token through it), and the following siblings of its class
(`run_end`: a lookup depends on the class alone); and a subtree whose characters the
state reads without fail is taken whole without looking at it: in machine mode where the state loops on every
class found below the node (`loops[state]`, known once its row is), in string mode where every class below is
plain and the DFA takes any plain character for at least as many steps as the subtree is deep (`lex_run`:
a maxLength counter, or a loop), or where the DFA state loops on every class below (`lex_loops`: a pattern's
`[a-z0-9_]+`; in a maxLength's product with a pattern or format, the pattern's loops, which count one more each,
while the subtree is no deeper than the count's room, `lex_room`).

Where the walk starts at a state that reads any run of plain characters (a free string, a free key), every
token made of plain characters only is allowed at once (TokenTrie.plain_bits) and no subtree of plain
characters is walked: only the tokens holding a quote, a backslash or a control character are (llguidance's
"slicer": a token set precomputed per vocabulary for string content).

Tables are filled lazily by Python, so the walk cannot finish alone: a node whose lookup is not known yet is
set aside ("pending", with what is missing: a machine cell, a DFA row, a machine state for a DFA state, or the
machine state after its closing quote); the caller computes those and resumes the walk from the pending nodes
until none is left. Each round reads only new ground.

Compiled with numba (a dependency; it installs from wheels). Without numba, masks take the vectorised token
walk (structbench.masking.tabled.LazyDense.mask), which the tests check gives the same masks.
"""

from __future__ import annotations

import importlib.util
from functools import cache
from typing import NamedTuple

import numpy as np

UNKNOWN = -2  # a lookup not computed yet (the tables' filler); -1 is a dead end
EXIT = -3     # string mode: the character leaves the DFA's hands and the machine reads it (the backslash)
CLOSE = -4    # string mode: the closing quote, read: the walk goes on from the machine state after it
END = -5      # string mode, a number: it ends before this character, which the machine reads after it (lex_close)
MACHINE, STRING = 0, 1  # the walk's modes
_FEW_PENDING = 64  # a round that sets aside at most this many nodes sorts them in Python lists, not NumPy
# What a pending node waits for.
NEED_CELL, NEED_ROW, NEED_EXIT, NEED_CLOSE = 0, 1, 2, 3


def _walk(trans, loops, loops_known, enter, lex, lex_run, lex_loops, lex_room, lex_row, row_base, lex_exit, lex_close,
          plain,
          node_classes,
          below, height, subtree, run_end, lo, hi, states, modes, token_at, allowed, cov_starts, cov_ends, n_cov,
          pend_nodes, pend_ends, pend_states, pend_kinds, stack_size, skip_plain, plain_jump, first_end, end_ids,
          dup_ids, dup_of):
    """Read the sibling ranges lo[r]:hi[r] from states[r] in modes[r], and their subtrees. Sets in `allowed` (bits) the
    token ending at each node read (token_at[node], -1 for none), and appends to cov_starts/cov_ends (after the
    n_cov ranges there) the node range of each subtree taken whole (its tokens are gathered at the last round);
    returns the pending ranges' count (written to pend_*), the nodes looked at, and the covered ranges' count.
    A round that leaves nothing pending is the walk's last: it allows the tokens of every covered range and the
    duplicates itself, not in two more compiled calls from Python (a call costs more than most of these loops).
    A lookup depends on the node's class alone, so a refused node drops the run of its siblings with its class
    (`run_end`: Llama 3's root has 3,970 non-ASCII children in the checker's three non-ASCII classes), and a
    pending one sets the run aside as one range. With skip_plain, siblings on a plain path whose subtrees hold
    nothing the walk must read are jumped over (`plain_jump`: trie_arrays' nonplain_next or exit_next; Llama 3's
    root has 3,990 plain-only children among 4,098)."""
    n_pend = 0
    steps = 0
    n_words = below.shape[1]
    st_pos = np.empty(stack_size, np.int64)
    st_end = np.empty(stack_size, np.int64)
    st_state = np.empty(stack_size, np.int64)
    st_mode = np.empty(stack_size, np.int64)
    for r in range(lo.shape[0]):
        top = 0
        # The current level's cursor, end, state and mode live in locals; the stack holds the levels above
        pos = lo[r]
        end = hi[r]
        cur_state = states[r]
        cur_mode = modes[r]
        while True:
            node = pos
            if skip_plain and node < end:  # the siblings whose tokens are plain only: allowed already
                node = plain_jump[node]
            if node >= end:
                if top == 0:
                    break
                top -= 1
                pos = st_pos[top]
                end = st_end[top]
                cur_state = st_state[top]
                cur_mode = st_mode[top]
                continue
            sub = subtree[node]
            pos = node + sub  # the next sibling
            state = cur_state
            mode = cur_mode
            c = node_classes[node]
            steps += 1
            if mode == STRING:
                nxt = lex[lex_row[state], c]
                if nxt >= 0:  # a plain character: the DFA's next state, as this string's row
                    nxt += row_base[state]
                elif nxt == UNKNOWN:
                    pend_nodes[n_pend] = node
                    pend_ends[n_pend] = run_end[node]
                    pos = run_end[node]
                    pend_states[n_pend] = state
                    pend_kinds[n_pend] = NEED_ROW
                    n_pend += 1
                    continue
                if nxt == CLOSE or nxt == END:  # the closing quote, read: on from the machine state after it; or
                    after = lex_close[state]  # a number ended before this character: the machine reads it after it
                    if after == UNKNOWN:
                        pend_nodes[n_pend] = node
                        pend_ends[n_pend] = run_end[node]
                        pos = run_end[node]
                        pend_states[n_pend] = state
                        pend_kinds[n_pend] = NEED_CLOSE
                        n_pend += 1
                        continue
                    if nxt == END and after >= 0:
                        state = after  # (a cell not known yet is set aside below, from there, in machine mode)
                        after = trans[after, c]
                    nxt = after
                    mode = MACHINE
                elif nxt == EXIT:  # the backslash, read: on from the machine state after it (inside the escape)
                    nxt = lex_exit[state]
                    if nxt == UNKNOWN:
                        pend_nodes[n_pend] = node
                        pend_ends[n_pend] = run_end[node]
                        pos = run_end[node]
                        pend_states[n_pend] = state
                        pend_kinds[n_pend] = NEED_EXIT
                        n_pend += 1
                        continue
                    mode = MACHINE
            else:
                nxt = trans[state, c]
            if nxt == UNKNOWN:  # a machine cell not computed yet
                pend_nodes[n_pend] = node
                pend_ends[n_pend] = run_end[node]
                pos = run_end[node]
                pend_states[n_pend] = state
                pend_kinds[n_pend] = NEED_CELL
                n_pend += 1
                continue
            if nxt < 0:  # refused: so are its siblings of its class
                pos = run_end[node]
                continue
            if mode == MACHINE and enter[nxt] >= 0:  # into a checked string or key: on in string mode
                nxt = enter[nxt]
                mode = STRING
            # The node is read: its token is allowed, and its subtree is taken whole or walked.
            t = token_at[node]
            if t >= 0:
                allowed[t >> 3] |= np.uint8(1 << (t & 7))
            if sub == 1:
                continue
            # Whole: in string mode, every class below is plain and the DFA takes that many plain characters in a
            # row, or the DFA state loops on every class below; in machine mode, the state loops on every class below.
            if mode == STRING:
                r = lex_row[nxt]
                whole = True
                if lex_run[r] >= height[node]:
                    bits = plain
                else:  # (a count's loops hold while it has room: lex_room, unbounded for a DFA's own loops)
                    bits = lex_loops[r]
                    whole = lex_room[r] >= height[node]
            else:
                whole, bits = loops_known[nxt], loops[nxt]
            if whole:
                for w in range(n_words):
                    if below[node, w] & ~bits[w]:
                        whole = False
                        break
            if whole:
                cov_starts[n_cov] = node + 1
                cov_ends[n_cov] = node + sub
                n_cov += 1
                continue
            # Down into the subtree: this level's cursor is kept on the stack, the child's are the locals
            st_pos[top] = pos
            st_end[top] = end
            st_state[top] = cur_state
            st_mode[top] = cur_mode
            top += 1
            pos = node + 1
            end = node + sub
            cur_state = nxt
            cur_mode = mode
    if n_pend:
        return n_pend, steps, n_cov
    # The last round: the tokens ending inside the covered node ranges (a range a:b's are
    # end_ids[first_end[a]:first_end[b]], first_end: per node, the first token end at or after it, so a range costs
    # its tokens alone, however far apart the ranges lie), then each token spelled like another (dup_ids[k]) where
    # that one (dup_of[k]) is allowed.
    for r in range(n_cov):
        for k in range(first_end[cov_starts[r]], first_end[cov_ends[r]]):
            t = end_ids[k]
            allowed[t >> 3] |= np.uint8(1 << (t & 7))
    for k in range(dup_ids.shape[0]):
        t = dup_of[k]
        if allowed[t >> 3] >> (t & 7) & 1:
            d = dup_ids[k]
            allowed[d >> 3] |= np.uint8(1 << (d & 7))
    return n_pend, steps, n_cov


def _next_kept(parent, subtree, skip, out):
    """Per node, the first of it and its following siblings not to skip (else the parent's end), written to out: one
    pass backwards, a next sibling comes after its node."""
    n = parent.shape[0]
    for i in range(n - 1, -1, -1):
        if not skip[i]:
            out[i] = i
            continue
        p = parent[i]
        end = n if p < 0 else p + subtree[p]
        nxt = i + subtree[i]
        out[i] = out[nxt] if nxt < end else nxt


def _exit_skips(parent, codes):
    """Per node: below a plain path (every character above it plain), whether its subtree holds no quote and no
    backslash below a plain path. From a state that loops on plain characters and refuses control ones, such a
    subtree's tokens are plain (allowed at once) or refused at their first control character."""
    n = parent.shape[0]
    path_plain = np.empty(n, np.bool_)  # every character from the root to the node is plain
    plain_above = np.empty(n, np.bool_)  # ... to its parent
    for i in range(n):  # parents first
        p = parent[i]
        above = True if p < 0 else path_plain[p]
        plain_above[i] = above
        c = codes[i]
        path_plain[i] = above and c >= 0x20 and c != 0x22 and c != 0x5C
    leads = np.zeros(n, np.bool_)  # the node is such an exit, or a plain one above one
    for i in range(n - 1, -1, -1):  # children first
        if not plain_above[i]:
            continue
        if codes[i] == 0x22 or codes[i] == 0x5C:
            leads[i] = True
        if leads[i] and parent[i] >= 0:
            leads[parent[i]] = True
    return plain_above & ~leads


def _classes_below(parent, node_classes, n_words):
    """Per node, the bits of the classes of its descendants, and the depth of its subtree below it (children come
    after their parent in preorder: one pass backwards)."""
    below = np.zeros((parent.shape[0], n_words), np.uint64)
    height = np.zeros(parent.shape[0], np.int32)
    for n in range(parent.shape[0] - 1, -1, -1):
        p = parent[n]
        if p >= 0:
            c = node_classes[n]
            below[p, c // 64] |= np.uint64(1) << np.uint64(c % 64)
            for w in range(n_words):
                below[p, w] |= below[n, w]
            if height[n] + 1 > height[p]:
                height[p] = height[n] + 1
    return below, height


def _non_ascii_below(ascii_below, parent, node_classes, non_ascii, n_words):
    """`below` (see _classes_below) for classes where every ASCII character is a class of its own (0-127, words 0
    and 1, as in `ascii_below`): the ASCII bits copied, each non-ASCII node's class bit set up its ancestors until
    one has it already (then all above it do)."""
    below = np.zeros((parent.shape[0], n_words), np.uint64)
    below[:, 0] = ascii_below[:, 0]
    below[:, 1] = ascii_below[:, 1]
    for k in range(non_ascii.shape[0]):
        n = non_ascii[k]
        c = node_classes[n]
        w = c // 64
        bit = np.uint64(1) << np.uint64(c % 64)
        p = parent[n]
        while p >= 0 and not below[p, w] & bit:
            below[p, w] |= bit
            p = parent[p]
    return below


def _class_runs(parent, subtree, node_classes, nodes, run_end):
    """Per node among `nodes` (ascending), where the run of its following siblings with its class ends (the first
    sibling of another class, or the parent's end), written to run_end, which holds each node's next sibling:
    children come in code-point order and a class is an interval, so a class's children are consecutive."""
    n = parent.shape[0]
    for k in range(nodes.shape[0] - 1, -1, -1):
        i = nodes[k]
        p = parent[i]
        end = n if p < 0 else p + subtree[p]
        nxt = i + subtree[i]  # the next sibling, if below `end`
        if nxt < end and node_classes[nxt] == node_classes[i]:
            run_end[i] = run_end[nxt]


def _loops_back(trans, i):
    """Whether row i of `trans` leads back to i on some class."""
    for c in range(trans.shape[1]):
        if trans[i, c] == i:
            return True
    return False


def _loop_bits(lex, targets, out):
    """out[d] |= the bit of every class c with lex[d, c] == targets[d] (d itself, or for a count's product the state
    one count on: string_mode.count_targets; class c at bit c % 64 of word c // 64); whether any row loops
    (string_mode._loop_bits, compiled: one pass, where the vectorised test compared and packed the whole table,
    about 40 µs a table inside a walk)."""
    found = False
    for d in range(lex.shape[0]):
        t = targets[d]
        for c in range(lex.shape[1]):
            if lex[d, c] == t:
                out[d, c >> 6] |= np.uint64(1) << np.uint64(c & 63)
                found = True
    return found


def _chain_steps(rows, counts, out):
    """A DFA's count steps found in its table, where no count recorded them (string_mode._find_chains): `rows` its
    states' rows over the plain classes, `counts` zeros, one per state (scratch, left zero). out[d]: d itself where
    it loops on some plain class (its own loops, read however deep), else the later state most of its plain classes
    lead to (the first, of equally many), where every one of those classes leads that state on by its own step too;
    -1 where neither. A pattern's `[0-9a-zA-Z_-]{1,255}` is such a chain: 255 states, each taking those classes to
    the next, so a token of them is read wherever the chain is longer than it (count_room), not walked a character
    at a time. The classes of a partition are characters for the DFA, so what is found holds for the code points,
    in every partition. Returns whether some state steps on to a later one."""
    n, width = rows.shape
    chained = False
    for d in range(n):
        loops = False
        for c in range(width):
            t = rows[d, c]
            if t == d:
                loops = True
                break
            if t > d:
                counts[t] += 1
        best, most = -1, 0
        for c in range(width):
            t = rows[d, c]
            if t > d:
                if not loops and (counts[t] > most or (counts[t] == most and t < best)):
                    best, most = t, counts[t]
                counts[t] = 0
        out[d] = d if loops else best
        if best >= 0 and not loops:
            chained = True
    # A chain holds where the classes that step a state on step its next state on too (or that one has no step: a
    # token of one such character still reads), against the steps as found (the next state is later: its step is not
    # changed yet when this one's is checked); a state whose next one then loses its step claims less, never more
    for d in range(n):
        t = out[d]
        if t > d and out[t] >= 0:
            for c in range(width):
                if rows[d, c] == t and rows[t, c] != out[t]:
                    out[d] = -1
                    break
    return chained


def chain_steps(rows: np.ndarray) -> np.ndarray | None:
    """_chain_steps over `rows` (a DFA's states' rows over the plain classes); None where no state steps on to a
    later one."""
    rows = np.ascontiguousarray(rows, dtype=np.int32)
    out = np.full(len(rows), -1, dtype=np.int64)
    found = (_kernels().chain_steps if compiled() else _chain_steps)(rows, np.zeros(len(rows), dtype=np.int64), out)
    return out if found else None


def _count_room(steps, unbounded, out):
    """out[d]: how many characters in a row state d reads by its count's loops (steps[d], the state one count on,
    always a later one; d itself where the count stays: `unbounded`; -1 none): 0 where none."""
    for d in range(steps.shape[0] - 1, -1, -1):
        t = steps[d]
        if t == d:
            out[d] = unbounded
        elif t >= 0:
            out[d] = min(out[t] + 1, unbounded)
        else:
            out[d] = 0


def _context_rows(shared_live, live, parent, lex, ds, rows):
    """A key context's rows where they differ from the shared table `lex` (key_patterns.KeyPatternDFA.overrides):
    at each live parent of a prefix live in the shared DFA but dead in the context (ds, ascending), its shared row
    with the moves to dead prefixes refused (rows). Returns how many."""
    n = live.shape[0]
    parents = np.zeros(n + 1, dtype=np.bool_)  # (at p + 1: the root's parent, -1, at 0)
    for s in range(n):
        if shared_live[s] and not live[s]:
            parents[parent[s] + 1] = True
    k = 0
    for d in range(n):
        if parents[d + 1] and live[d]:
            ds[k] = d
            for c in range(lex.shape[1]):
                t = lex[d, c]
                rows[k, c] = -1 if 0 <= t < n and shared_live[t] and not live[t] else t
            k += 1
    return k


def _key_trie_table(n_texts, other, src, chars, dst, escapable, codes, end, plain, quote, backslash, close, escape,
                    esc_moves, done, ascii_own, cap, lex, run, total):
    """KeyTrie.string_tables (which says what each part is) into lex, run and total, in one pass; False where a
    name's character has no class of its own."""
    n_states, n_cls = lex.shape
    for d in range(n_texts):
        for c in range(n_cls):
            lex[d, c] = other if plain[c] else -1
        if backslash >= 0:  # (-1: the partition gives it no class of its own)
            lex[d, backslash] = escape
        if quote >= 0:
            lex[d, quote] = close
        run[d] = cap + 1
        total[d] = True
    for d in range(n_texts, n_states):
        for c in range(n_cls):
            lex[d, c] = -1
        run[d] = 0
        total[d] = False
    for e in range(src.shape[0]):
        ch = chars[e]
        k = np.searchsorted(codes, ch, side="right") - 1
        if k < 0 or codes[k] != ch or (codes[k + 1] if k + 1 < n_cls else end) != ch + 1:
            return False
        if plain[k]:
            lex[src[e], k] = dst[e]
            run[src[e]] = 0
    if ascii_own:
        for j in range(esc_moves.shape[0]):
            for c in range(128):
                m = esc_moves[j, c]
                lex[n_texts + j, c] = other if m == done else (n_texts + m if m >= 0 else -1)
        reads = np.ones(n_texts, np.bool_)
        for e in range(src.shape[0]):
            if escapable[e]:
                reads[src[e]] = False
        for d in range(n_texts):
            if reads[d]:
                lex[d, backslash] = n_texts
    return True


def _checked_table(raw, moves, plain, accepting, quote, backslash, own, esc_starts, esc_ends, any_starts, any_ends,
                   simple_codes, simple_escaped, u_col, close, exit_, out, by_code):
    """string_mode._dfa_rows_vectorised (which says what each part is) into out (its n or 2n rows, every cell -1
    on entry) and by_code, in one pass; raw is the DFA's moves over the classes (_moves_table)."""
    n, n_codes = raw.shape
    for d in range(n):
        for c in range(n_codes):
            if plain[c]:
                out[d, c] = raw[d, c]
        if quote >= 0:
            out[d, quote] = close if accepting[d] else -1
    escapable = np.zeros(n, np.bool_)
    for m in range(moves.shape[0]):  # charsets.meets, move by move
        last = np.searchsorted(esc_starts, moves[m, 2], side="right") - 1
        if last >= 0 and esc_ends[last] >= moves[m, 1]:
            escapable[moves[m, 0]] = True
        if own:
            last = np.searchsorted(any_starts, moves[m, 2], side="right") - 1
            if last >= 0 and any_ends[last] >= moves[m, 1]:
                by_code[moves[m, 0]] = True
    for d in range(n):
        if not own:
            if backslash >= 0:
                out[d, backslash] = exit_ if escapable[d] else -1
            continue
        out[d, backslash] = n + d if escapable[d] else -1
        for k in range(simple_codes.shape[0]):
            out[n + d, simple_codes[k]] = raw[d, simple_escaped[k]]
        out[n + d, u_col] = exit_ if by_code[d] else -1


def _moves_table(moves, codes, out):
    """out[s, k] = t for every move (s, lo, hi, t) of `moves` (regular.dfa.moves_array) and every code codes[k] in
    lo..hi (regular.dfa.next_states, compiled: a table built inside a walk meets cold caches, where a NumPy call
    costs several times its work)."""
    n_codes = codes.shape[0]
    for m in range(moves.shape[0]):
        k = np.searchsorted(codes, moves[m, 1])
        hi, s, t = moves[m, 2], moves[m, 0], moves[m, 3]
        while k < n_codes and codes[k] <= hi:
            out[s, k] = t
            k += 1


def _plain_runs(lex, plain_cols, cap, run, total):
    """string_mode._plain_runs compiled (its _run_lengths and _reads_every_plain_run, which say what each computes),
    into run and total; plain_cols (the plain classes) is not empty."""
    n, n_plain = lex.shape[0], plain_cols.shape[0]
    first = np.empty(n, np.int64)
    bad = np.zeros(n, np.bool_)
    any_bad, all_bad = False, True
    for d in range(n):
        f = lex[d, plain_cols[0]]
        one = True
        for k in range(n_plain):
            v = lex[d, plain_cols[k]]
            if v != f:
                one = False
            if v < 0:
                bad[d] = True
        first[d] = f
        run[d] = -1 if one and f >= 0 else 0  # -1: a chain goes on from d, its length found below
        any_bad |= bad[d]
        all_bad &= bad[d]
    # Runs: along each chain (every plain class to one next state) to its first state that is not one, capped above
    # cap; a chain that comes back on itself is a loop, for ever.
    on_path = np.zeros(n, np.bool_)
    path = np.empty(n, np.int64)
    for d in range(n):
        if run[d] >= 0:
            continue
        m, e = 0, d
        while run[e] < 0 and not on_path[e]:
            on_path[e] = True
            path[m] = e
            m += 1
            e = first[e]
        t = cap + 1 if run[e] < 0 else run[e]
        for j in range(m - 1, -1, -1):
            if t <= cap:
                t += 1
            run[path[j]] = t
            on_path[path[j]] = False
    if cap <= 1 or all_bad or not any_bad:
        for d in range(n):
            total[d] = not bad[d]
        return
    # Reads every plain run: no run of fewer than cap plain characters reaches a state that refuses one; backwards,
    # breadth first from those states along the plain moves reversed, cap - 1 levels
    count = np.zeros(n + 1, np.int64)
    for d in range(n):
        last = -1
        for k in range(n_plain):
            v = lex[d, plain_cols[k]]
            if v >= 0 and v != last:
                count[v + 1] += 1
                last = v
    for d in range(n):
        count[d + 1] += count[d]
    into = np.empty(count[n], np.int64)
    fill = count[:n].copy()
    for d in range(n):
        last = -1
        for k in range(n_plain):
            v = lex[d, plain_cols[k]]
            if v >= 0 and v != last:
                into[fill[v]] = d
                fill[v] += 1
                last = v
    seen = bad.copy()
    frontier = np.empty(n, np.int64)
    found = np.empty(n, np.int64)
    n_front = 0
    for d in range(n):
        if bad[d]:
            frontier[n_front] = d
            n_front += 1
    for _ in range(cap - 1):
        n_found = 0
        for j in range(n_front):
            e = frontier[j]
            for k in range(count[e], count[e + 1]):
                d = into[k]
                if not seen[d]:
                    seen[d] = True
                    found[n_found] = d
                    n_found += 1
        if n_found == 0:
            break
        frontier, found = found, frontier
        n_front = n_found
    for d in range(n):
        total[d] = not seen[d]


class _Kernels(NamedTuple):
    walk: object  # the walk (_walk), which allows the covered ranges' tokens and the duplicates at its last round
    classes_below: object
    class_runs: object
    non_ascii_below: object
    next_kept: object  # the two skips of plain siblings: _next_kept over _exit_skips' or the plain subtrees
    exit_skips: object
    loops_back: object  # a row's test for a loop (a call costs a tenth of NumPy's `in` on a row)
    moves_table: object  # string mode's tables (string_mode: a DFA's, a key's names', their runs and loops), compiled
    plain_runs: object
    loop_bits: object
    count_room: object
    chain_steps: object
    context_rows: object
    key_trie_table: object
    checked_table: object  # (reads moves_table's table: a kernel here calls no other)


@cache
def _kernels() -> _Kernels:
    """The compiled kernels (numba imported on first need: it takes a while)."""
    from numba import njit

    def jit(f):
        return njit(cache=True, nogil=True)(f)

    return _Kernels(jit(_walk), jit(_classes_below), jit(_class_runs), jit(_non_ascii_below), jit(_next_kept),
                    jit(_exit_skips), jit(_loops_back), jit(_moves_table), jit(_plain_runs), jit(_loop_bits),
                    jit(_count_room), jit(_chain_steps), jit(_context_rows), jit(_key_trie_table), jit(_checked_table))


@cache
def compiled() -> bool:
    """Whether the compiled walk is available (numba installed)."""
    return importlib.util.find_spec("numba") is not None


def moves_table(moves: np.ndarray, n_states: int, codes: np.ndarray) -> np.ndarray:
    """regular.dfa.next_states (int32), compiled: `moves` is the DFA's moves_array, codes its classes' starts."""
    out = np.full((n_states, len(codes)), -1, dtype=np.int32)
    _kernels().moves_table(moves, _read_only(np.asarray(codes, dtype=np.int64)), out)
    return out


def loop_bits(lex: np.ndarray, targets: np.ndarray | None = None) -> np.ndarray | None:
    """Per row d of a string table, the classes c with lex[d, c] == targets[d] (d where not given) as bits
    (bool_bits_rows' layout); None where no row loops. Compiled: string_mode._loop_bits says what it is for."""
    out = np.zeros((len(lex), (lex.shape[1] + 63) // 64), dtype=np.uint64)
    if targets is None:
        targets = np.arange(len(lex), dtype=np.int64)
    return out if _kernels().loop_bits(np.ascontiguousarray(lex), targets, out) else None


UNBOUNDED_ROOM = 1 << 40  # a row's room where its loops are its own (as many characters as any token holds)


def count_room(steps: np.ndarray) -> np.ndarray:
    """Per state of a count's product, the characters it reads in a row by its count's loops (see _count_room)."""
    out = np.zeros(len(steps), dtype=np.int64)
    steps = np.ascontiguousarray(steps, dtype=np.int64)
    (_kernels().count_room if compiled() else _count_room)(steps, UNBOUNDED_ROOM, out)
    return out


def context_rows(shared_live: np.ndarray, live: np.ndarray, parent: np.ndarray,
                 lex: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """_context_rows (ds, rows) in one compiled pass (a key context is made inside a walk, where each of the dozen
    NumPy calls it took cost several times its work), or run in Python without numba."""
    n = len(live)
    ds = np.empty(n, dtype=np.int64)
    rows = np.empty((n, lex.shape[1]), dtype=lex.dtype)
    k = (_kernels().context_rows if compiled() else _context_rows)(shared_live, live, parent, lex, ds, rows)
    return ds[:k], rows[:k]


def key_trie_tables(parts: tuple, n_states: int, codes: np.ndarray, close: int, escape: int, cap: int) -> tuple:
    """jsonschema.key_trie.KeyTrie.string_tables (lex, run, total), compiled: `parts` its table_parts(), n_states its
    states. A table built inside a walk meets cold caches, where each of the dozen NumPy calls costs several times
    its work."""
    from structbench.jsonschema.free_text import ESCAPE_FINISHED, free_escapes
    from structbench.regular.charsets import MAX_CODE_POINT, ascii_own, json_classes

    n_texts, other, src, chars, dst, escapable = parts
    codes = _read_only(np.asarray(codes, dtype=np.int64))
    plain, quote, backslash, _ = json_classes(codes)
    lex = np.empty((n_states, len(codes)), dtype=np.int32)
    run = np.empty(n_states, dtype=np.int64)
    total = np.empty(n_states, dtype=bool)
    if not _kernels().key_trie_table(n_texts, other, src, chars, dst, escapable, codes, MAX_CODE_POINT + 1, plain,
                                     _column(quote), _column(backslash), close, escape, free_escapes()[0],
                                     ESCAPE_FINISHED, ascii_own(codes), cap, lex, run, total):
        raise ValueError("the boundaries do not give every character of a property name a class of its own")
    return lex, run, total


def checked_string_table(moves: np.ndarray, codes: np.ndarray, plain: np.ndarray, accepting: np.ndarray,
                         own: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """string_mode._dfa_rows_vectorised, compiled: `moves` is the DFA's moves_array, `accepting` per state, `own`
    whether every ASCII character is a class of its own (then the simple escapes' rows follow the DFA's)."""
    from structbench.jsonschema.free_text import (
        ANY_CHAR_BOUNDS,
        ESCAPABLE_BOUNDS,
        SIMPLE_ESCAPE_COLUMNS,
    )
    from structbench.regular.charsets import json_classes

    codes, plain = _read_only(np.asarray(codes, dtype=np.int64)), _read_only(np.asarray(plain, dtype=bool))
    n = len(accepting)
    _, quote, backslash, _ = json_classes(codes)
    out = np.full((2 * n if own else n, len(codes)), -1, dtype=np.int32)
    by_code = np.zeros(n, dtype=bool)
    _kernels().checked_table(moves_table(moves, n, codes), moves, plain, accepting, _column(quote),
                             _column(backslash), own, *ESCAPABLE_BOUNDS, *ANY_CHAR_BOUNDS, *SIMPLE_ESCAPE_COLUMNS,
                             ord("u"), CLOSE, EXIT, out, by_code)
    return out, by_code if own else None


def _column(mask: np.ndarray) -> int:
    """The class a character's mask over the classes (json_classes' quote, backslash) names; -1 where the partition
    gives it no class of its own."""
    found = np.flatnonzero(mask)
    return int(found[0]) if len(found) else -1


def _read_only(a: np.ndarray) -> np.ndarray:
    """A read-only view of `a`: numba compiles a kernel once per argument type, and a read-only array is a type of its
    own. The partitions' arrays are read-only where shared and not where a schema made its own, so the kernels that
    take them take them read-only always, as warm_up compiles them (else the first schema of the other kind compiles
    them again inside its walk: a second)."""
    if not a.flags.writeable:
        return a
    view = a.view()
    view.flags.writeable = False
    return view


def plain_runs(lex: np.ndarray, plain_cols: np.ndarray, cap: int) -> tuple[np.ndarray, np.ndarray]:
    """string_mode._plain_runs, compiled: (run, total) of a string table, plain_cols its plain classes (not none)."""
    run = np.empty(len(lex), dtype=np.int64)
    total = np.empty(len(lex), dtype=bool)
    _kernels().plain_runs(lex, plain_cols, cap, run, total)
    return run, total


def classes_below(parent: np.ndarray, node_classes: np.ndarray, n_words: int) -> tuple[np.ndarray, np.ndarray]:
    """Per node, the classes below it as bits, and how deep its subtree goes."""
    return _kernels().classes_below(parent, node_classes, n_words)


def non_ascii_below(ascii_below: np.ndarray, parent: np.ndarray, node_classes: np.ndarray, non_ascii: np.ndarray,
                    n_words: int) -> np.ndarray:
    """`below` from another partition's where both make every ASCII character a class of its own (see
    _non_ascii_below): only the non-ASCII nodes' ancestors are walked."""
    return _kernels().non_ascii_below(ascii_below, parent, node_classes, non_ascii, n_words)


def class_runs(trie, node_classes: np.ndarray, ascii_own: bool) -> np.ndarray:
    """Per node, the end of the run of its next siblings with its class (see _class_runs). Where every ASCII
    character is a class of its own, an ASCII node's run is itself, and only the non-ASCII nodes are looked at."""
    n = trie.size
    next_sibling = trie.__dict__.get("_next_sibling")
    if next_sibling is None:  # (int32, as the walk reads it: _narrow)
        next_sibling = trie.__dict__["_next_sibling"] = np.arange(n, dtype=np.int32) + _narrow(trie)[0]
    run_end = next_sibling.copy()
    nodes = trie.non_ascii if ascii_own else np.arange(n, dtype=np.int64)
    _kernels().class_runs(trie.parent, trie.subtree, node_classes, nodes, run_end)
    return run_end


def trie_arrays(trie) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(first_end, nonplain_next, exit_next) of the vocabulary's prefix tree, built once and kept on it: per node,
    the first token end at or after it (an index into trie.ends; one more entry for the tree's end); the first of it
    and its following siblings whose subtree holds a character that is not plain; and, below a plain path, the first
    whose subtree holds a quote or a backslash below one (see _exit_skips)."""
    found = trie.__dict__.get("_walk_arrays")
    if found is None:
        first_end = np.searchsorted(trie.ends, np.arange(trie.size + 1, dtype=np.int64)).astype(np.int64)
        nonplain_next, exit_next = np.empty(trie.size, dtype=np.int32), np.empty(trie.size, dtype=np.int32)
        kernels = _kernels()
        kernels.next_kept(trie.parent, trie.subtree, trie.plain_subtree, nonplain_next)
        kernels.next_kept(trie.parent, trie.subtree, kernels.exit_skips(trie.parent, trie.codes), exit_next)
        found = trie.__dict__["_walk_arrays"] = (first_end, nonplain_next, exit_next)
    return found


def _narrow(trie) -> tuple[np.ndarray, np.ndarray]:
    """The tree's subtree sizes and token ids as int32, kept on it. The walk reads a handful of arrays per node
    looked at (class, subtree, token, sibling jumps, runs, heights), all int32: at int64 a cold walk, whose tables
    and tree are out of the caches after a round of Python, cost a third more per node."""
    found = trie.__dict__.get("_narrow")
    if found is None:
        found = trie.__dict__["_narrow"] = (trie.subtree.astype(np.int32), trie.token_at.astype(np.int32))
    return found


def _first_round(trie) -> tuple[np.ndarray, ...]:
    """The first round's one range (the root's children: lo, hi) and its state and mode (set by each walk), kept on
    the tree: the kernel only reads them, and walks run one at a time (as walk_buffers)."""
    found = trie.__dict__.get("_first_round")
    if found is None:
        found = trie.__dict__["_first_round"] = (np.zeros(1, dtype=np.int64), np.full(1, trie.size, dtype=np.int64),
                                                  np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64))
    return found


def machine_modes(trie) -> np.ndarray:
    """MACHINE once a trie node (as many as a round may set aside), kept on the tree and never written (the kernel
    only reads modes; a read-only array would be another type to it, compiled again): a round of machine cells
    alone takes its modes as a slice of it, not a new array."""
    found = trie.__dict__.get("_machine_modes")
    if found is None:
        found = trie.__dict__["_machine_modes"] = np.full(trie.size, MACHINE, dtype=np.int64)
    return found


def class_bits(classes: np.ndarray, n_words: int) -> np.ndarray:
    """These classes as bits: class c at bit c % 64 of word c // 64."""
    on = np.zeros(n_words * 64, dtype=bool)
    on[np.asarray(classes, dtype=np.int64)] = True
    return bool_bits(on, n_words)


def bool_bits_rows(on: np.ndarray, n_words: int) -> np.ndarray:
    """bool_bits of each row of a 2-D boolean array, in one pass."""
    padded = np.zeros((len(on), n_words * 64), dtype=bool)
    padded[:, :on.shape[1]] = on
    return np.packbits(padded, axis=1, bitorder="little").view("<u8").astype(np.uint64)


def loops_back(trans: np.ndarray, i: int) -> bool:
    """Whether state i's row in `trans` leads back to i (compiled: see _loops_back)."""
    return _kernels().loops_back(trans, i)


def bool_bits(on: np.ndarray, n_words: int) -> np.ndarray:
    """A boolean row over the classes as bits (class c at bit c % 64 of word c // 64)."""
    return bool_bits_rows(np.asarray(on, dtype=bool)[None, :], n_words)[0]


def warm_up() -> None:
    """Compile the walk now (or load it from numba's cache), with the argument types masks use."""
    kernels = _kernels()
    one = np.zeros(1, dtype=np.int64)
    one32 = np.zeros(1, dtype=np.int32)  # (the tree's per-node arrays the walk reads: int32, see _narrow)
    unknown = np.full(1, UNKNOWN, dtype=np.int64)
    kernels.walk(np.full((1, 1), -1, dtype=np.int32), np.zeros((1, 1), np.uint64), np.zeros(1, bool), one - 1,
                 np.full((1, 1), -1, dtype=np.int32), one.copy(), np.zeros((1, 1), np.uint64), one.copy(), one.copy(),
                 one.copy(),
                 unknown, unknown.copy(),
                 np.zeros(1, np.uint64), np.zeros(1, np.int32), np.zeros((1, 1), np.uint64), one32.copy(),
                 np.ones(1, np.int32), one32 + 1, one, one + 1, one, one.copy(), np.full(1, -1, np.int32),
                 np.zeros(1, np.uint8), one.copy(), one.copy(), 0, one.copy(), one.copy(), one.copy(), one.copy(), 3,
                 False, one32.copy(), np.zeros(2, np.int64), np.zeros(1, np.int64), one.copy(), one.copy())
    kernels.classes_below(np.full(1, -1, dtype=np.int64), np.zeros(1, np.int32), 1)
    kernels.class_runs(np.full(1, -1, dtype=np.int64), np.ones(1, np.int64), np.zeros(1, np.int32), one.copy(), one32 + 1)
    kernels.non_ascii_below(np.zeros((1, 3), np.uint64), np.full(1, -1, dtype=np.int64), np.zeros(1, np.int32),
                            one.copy(), 3)
    kernels.next_kept(np.full(1, -1, dtype=np.int64), np.ones(1, np.int64), np.zeros(1, bool), one32.copy())
    kernels.exit_skips(np.full(1, -1, dtype=np.int64), one.copy())
    kernels.loops_back(np.full((1, 1), -1, dtype=np.int32), 0)
    moves_table(np.zeros((1, 4), np.int64), 1, np.zeros(1, np.int64))
    kernels.plain_runs(np.full((1, 1), -1, dtype=np.int32), np.zeros(1, np.int64), 3, np.zeros(1, np.int64),
                       np.zeros(1, bool))
    kernels.loop_bits(np.full((1, 1), -1, dtype=np.int32), np.zeros(1, np.int64), np.zeros((1, 1), np.uint64))
    kernels.count_room(np.full(1, -1, dtype=np.int64), UNBOUNDED_ROOM, np.zeros(1, np.int64))
    kernels.chain_steps(np.full((1, 1), -1, dtype=np.int32), np.zeros(1, np.int64), np.zeros(1, np.int64))
    context_rows(np.ones(1, bool), np.zeros(1, bool), np.full(1, -1, np.int64), np.zeros((1, 1), np.int32))
    from structbench.jsonschema.key_trie import KeyTrie

    checked_string_table(np.array([[0, 97, 97, 0]], dtype=np.int64), np.arange(129, dtype=np.int64),
                         np.arange(129) >= 32, np.ones(1, dtype=bool), True)
    trie = KeyTrie(["a"], "\x00other")
    key_trie_tables(trie.table_parts(), trie.n_states, np.arange(129, dtype=np.int64), CLOSE, EXIT, 3)


def walk(index, start: int, mode: int, tables, fill, strings, allowed: np.ndarray, skip_plain: bool = False,
         refuses_controls: bool = False) -> int:
    """Set in `allowed` (the vocabulary's bits, uint8: token t at bit t % 8 of byte t // 8, the bitmask layout
    of structbench.masking.bitmask) the tokens read from `start` in `mode`; returns the node lookups made.
    skip_plain: `allowed` holds every token of plain characters only already (the start reads any run of them),
    so subtrees of plain characters are not walked; and where the start refuses every control character too,
    neither are those whose tokens leave the plain run only by one (they are refused there).

    tables() -> the current (transition table, loop bits, loop bits known, string-mode row of each state) (they
    grow as states are met); fill(states, classes) computes machine cells a round left pending; `strings`
    (string mode's tables, a StringRows: rows(rows), exits_for(rows), closes_for(rows)) computes the rest."""
    (node_classes, below, height, subtree, run_end, token_at, stack_size, first_end, end_ids, dup_ids, dup_of,
     cov_starts, cov_ends, pend_this, pend_other, all_machine, (lo, hi, states, modes),
     plain_jumps) = walk_constants(index)
    plain_jump = plain_jumps[1 if refuses_controls else 0]
    states[0], modes[0] = start, mode
    kernel = _kernels().walk
    n_cov, total = 0, 0
    while True:
        pend_nodes, pend_ends, pend_states, pend_kinds = pend_this
        trans, loops, known, enter = tables()
        n_pend, steps, n_cov = kernel(trans, loops, known, enter, strings.lex, strings.run, strings.loops,
                                      strings.room, strings.lex_row, strings.base, strings.exits, strings.closes,
                                      strings.plain, node_classes, below, height, subtree, run_end, lo, hi, states,
                                      modes, token_at, allowed, cov_starts, cov_ends, n_cov, pend_nodes, pend_ends,
                                      pend_states, pend_kinds, stack_size, skip_plain, plain_jump, first_end, end_ids,
                                      dup_ids, dup_of)
        total += steps
        if not n_pend:
            return total
        # What the round set aside, computed in Python; the next round walks those runs again, from the same states,
        # and sets aside into the other buffers. (Kinds absent from a round cost it nothing.)
        lo, hi, states, kinds = pend_nodes[:n_pend], pend_ends[:n_pend], pend_states[:n_pend], pend_kinds[:n_pend]
        pend_this, pend_other = pend_other, pend_this
        if not np.count_nonzero(kinds):  # machine cells alone (NEED_CELL is 0: most rounds)
            fill(states, node_classes[lo])
            modes = all_machine[:n_pend]
        elif n_pend <= _FEW_PENDING:  # in Python lists: on a few nodes, NumPy's cost per call is most of the work
            kind_list = kinds.tolist()
            cells = [k for k, kind in enumerate(kind_list) if kind == NEED_CELL]
            if cells:
                fill(states[cells], node_classes[lo[cells]])
            state_list = states.tolist()
            for kind, compute in ((NEED_ROW, strings.rows), (NEED_EXIT, strings.exits_for),
                                  (NEED_CLOSE, strings.closes_for)):
                rows = {state for state, k in zip(state_list, kind_list) if k == kind}
                if rows:
                    compute(sorted(rows))
            modes = np.array([MACHINE if kind == NEED_CELL else STRING for kind in kind_list], dtype=np.int64)
        else:
            counts = np.bincount(kinds, minlength=4)
            cell = kinds == NEED_CELL
            if counts[NEED_CELL]:
                fill(states[cell], node_classes[lo[cell]])
            for kind, compute in ((NEED_ROW, strings.rows), (NEED_EXIT, strings.exits_for),
                                  (NEED_CLOSE, strings.closes_for)):
                if counts[kind]:
                    compute(sorted(set(states[kinds == kind].tolist())))
            modes = np.where(cell, MACHINE, STRING).astype(np.int64)
        total -= n_pend  # looked at again next round: count each node once


def walk_constants(index) -> tuple:
    """What every walk over this index passes the kernel unchanged (the index's arrays, the tree's, the scratch
    buffers, the first round's range), and the two sibling jumps (trie_arrays: plain-only subtrees, and those
    too where control characters are refused), gathered once: a mask costs a few microseconds outside the
    kernel, and a dozen lookups on the tree each were a good part of them."""
    found = index.__dict__.get("_walk_constants")
    if found is None:
        trie = index.trie
        first_end, nonplain_next, exit_next = trie_arrays(trie)
        buffers = index.walk_buffers()
        subtree, token_at = _narrow(trie)
        found = index.__dict__["_walk_constants"] = (
            index.node_classes, index.below, index.height, subtree, index.run_end, token_at, trie.depth + 2,
            first_end, trie.end_ids, trie.dup_ids, trie.dup_of, *buffers[:2], buffers[2:6], buffers[6:10],
            machine_modes(trie),
            _first_round(trie), (nonplain_next, exit_next))
    return found
