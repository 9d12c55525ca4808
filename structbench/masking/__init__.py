"""Masking strategies behind one interface: naive, tabled, bitmasks, and the real engines' adapters."""
