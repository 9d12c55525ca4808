"""JSON Schema: rewrites, the compiler to typed nodes, and the pushdown checker."""
