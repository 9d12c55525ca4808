"""Regular languages: pattern syntax -> NFA -> DFA, automaton operations, numeric languages."""
