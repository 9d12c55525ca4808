"""Distortion measured against the exact conditional: the toy model's exact next-token law (nexttoken),
the exact p*, Z and locally constrained decoding's q by dynamic programming (exact), and the distances
between answer distributions (metrics). A layer above bench (it reads tasks and constraints), below report."""
