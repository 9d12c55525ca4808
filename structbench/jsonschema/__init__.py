"""JSON Schema: rewrites, the compiler to typed nodes, and the pushdown checker.

keywords.py    the 2020-12 vocabulary: what is annotated, enforced, refused; the formats the referee asserts
nodes.py       Node (one compiled subschema) and JSON value helpers
refs.py        the one local `$ref` resolver
rewrites.py    pure schema -> schema rewrites (dependencies, not, allOf merge, oneOf by absent keys)
scalars.py     string and number keywords as DFAs
containers.py  object and array keywords (compiler mixin)
completion.py  which kinds of value each node can finish (compiler mixin)
exclusivity.py oneOf's exclusivity proofs (compiler mixin)
compiler.py    schema -> nodes: compile_schema, SchemaCompiler
frames.py      the checker's stack: Frame, Kind, Phase, whitespace places
strings.py     JSON string text: escapes, surrogate pairs, content DFA
keys.py        object keys (checker mixin)
key_trie.py    a key's plain characters as a DFA (the names it may become), for the lazy strategy's string mode
key_patterns.py the same where patterns or propertyNames check keys: the names crossed with those DFAs
checker.py     SchemaChecker, the pushdown automaton
"""

from structbench.jsonschema.checker import (
    KEY_ORDERS,
    WHITESPACE_POLICIES,
    SchemaChecker,
)
from structbench.jsonschema.compiler import compile_schema

__all__ = ["KEY_ORDERS", "WHITESPACE_POLICIES", "SchemaChecker", "compile_schema"]
