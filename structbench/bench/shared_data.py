"""Where the shared real inputs live: the MaskBench corpus and the official JSON-Schema-Test-Suite.

``$STRUCTBENCH_DATA`` when it is set (a clone elsewhere, a cluster's shared storage), else ``../shared/data``
beside the checkout, where the project keeps them. Tests that need them skip, saying so, when they are absent;
the corpus sweeps read ``corpus_dir``, whose default (null) is :func:`maskbench_dir` (``conf/sweep/fresh.yaml``):
null in the trial's id, so where the data lives does not change a trial's id or its part file.
"""

from __future__ import annotations

import os
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[2]
ENV_VAR = "STRUCTBENCH_DATA"


def data_dir() -> Path:
    """The folder holding ``maskbench/`` and ``json-schema-test-suite/``."""
    given = os.environ.get(ENV_VAR)
    return Path(given).expanduser() if given else CHECKOUT.parent / "shared" / "data"


def maskbench_dir() -> Path:
    return data_dir() / "maskbench"


def official_suite_dir() -> Path:
    """The suite's draft 2020-12 tests."""
    return data_dir() / "json-schema-test-suite" / "tests" / "draft2020-12"


def add_corpus_selection(parser) -> None:
    """The options that pick a command's corpus files (the A/B run's and the step breakdown's)."""
    parser.add_argument("--corpus", default=None, help="a MaskBench-format folder (default: the shared maskbench)")
    parser.add_argument("--every", type=int, default=10, help="every n-th corpus file, sorted by name (default 10)")
    parser.add_argument("--offset", type=int, default=0, help="the first file taken (default 0)")
    parser.add_argument("--limit", type=int, default=None, help="at most this many files")


def selected_corpus_files(parser, args) -> list[Path]:
    """The files `add_corpus_selection`'s options pick, sorted by name; the parser's error (it exits) where a number
    is out of range or no file is picked."""
    from structbench.experiments.coverage import corpus_files

    if args.every < 1 or args.offset < 0 or (args.limit is not None and args.limit < 1):
        parser.error("--every and --limit are at least 1, --offset at least 0")
    corpus = Path(args.corpus) if args.corpus else maskbench_dir()
    if not corpus.is_dir():
        parser.error(f"--corpus {corpus} is not a directory" if args.corpus else
                     f"the shared data's maskbench/ is not at {corpus}: set {ENV_VAR} to the folder holding it, or "
                     f"pass --corpus DIR (a MaskBench-format folder)")
    files = corpus_files(corpus)[args.offset::args.every][:args.limit]
    if not files:
        parser.error(f"no corpus file selected from {corpus}")
    return files


def corpus_command_inputs(parser, args) -> tuple:
    """(the files the corpus options pick, the `--vocab` named: the lesson's toy or a real one, a progress callback
    printing `done/total schemas, seconds` on one line of stderr): what the corpus commands (steps, random walks)
    start from. The parser's error where the selection is empty or out of range."""
    import sys
    import time

    from structbench.lm.real_vocab import real_vocabulary
    from structbench.lm.vocab import toy_vocabulary

    files = selected_corpus_files(parser, args)
    vocab = toy_vocabulary() if args.vocab == "toy" else real_vocabulary(args.vocab)
    t0 = time.time()

    def progress(done, total):
        print(f"\r{done}/{total} schemas, {time.time() - t0:.0f} s", end="", file=sys.stderr, flush=True)

    return files, vocab, progress
