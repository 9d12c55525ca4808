"""Reading stored rows back: summaries (printed after a trial, and after a sweep by the Hydra callback in
sweep_summary.py), the official-suite table and the figures."""
