"""Reading stored rows back: summaries, the official-suite table and the figures."""
