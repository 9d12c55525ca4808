"""structbench: a harness for studying structured output from language models.

The algorithm package: vocabularies, the toy model, masked sampling, pattern ->
automaton, JSON Schema -> pushdown checker, masking strategies, referees and the
lesson's closed forms. It never imports Hydra outside its entry point.
"""

__version__ = "0.1.0"
