"""One side of an A/B run (structbench.bench.ab): a process that imports structbench from one checkout and walks the
schemas it is sent, one at a time, as the fresh experiment walks them (experiments/fresh.py `schema_row`).

It is run by path from a copy outside any checkout, so that it imports neither side's files but the one named:
  python ab_worker.py '{"root": ..., "strategy": ..., "vocab": ..., "timeout_s": ..., "cold_start": ...,
                        "key_order": ..., "whitespace": ...}'
Protocol: one JSON line out when ready, then per JSON line in ({"path": ...}) one JSON line out: the row's outcome,
times and allowed counts, and a digest of every mask's bits (so two codes' masks are compared bit for bit, not by
their counts alone). Anything the code prints goes to stderr: stdout carries the protocol only.

It uses only what the fresh experiment has had since it was added (schema_row, prepare_vocabulary, cold_start,
timed_walk's untimed check of each mask: allows, unpack_bits before it), so a revision from before this file still
runs under it.
"""

import hashlib
import json
import os
import sys

FIELDS = ("outcome", "outcome_detail", "compile_ms", "mask_us", "advance_us", "warm_mask_us", "warm_advance_us",
          "allowed_counts", "instance")


def main(config: dict) -> None:
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # what the code prints goes to stderr
    sys.path.insert(0, config["root"])
    if config.get("cpu") is not None and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {config["cpu"]})

    from pathlib import Path

    import numpy as np

    import structbench
    import structbench.bench.walk as walk_module

    _experiments_of(Path(config["root"]))
    from structbench.experiments.fresh import schema_row
    from structbench.experiments.speed import prepare_vocabulary
    from structbench.lm.real_vocab import real_vocabulary
    from structbench.lm.vocab import toy_vocabulary
    from structbench.masking.cold_start import cold_start

    imported = Path(structbench.__file__).resolve()
    for module in (structbench, sys.modules["structbench.experiments.fresh"]):
        found = Path(module.__file__).resolve()
        if not found.is_relative_to(Path(config["root"]).resolve()):
            raise SystemExit(f"ab_worker: {module.__name__} was imported from {found}, not from {config['root']}")

    digests = []
    # timed_walk's untimed check, called once per mask before anything else reads it, the mask that refuses the walk
    # included: allows since the walk reads the words themselves, unpack_bits before (a revision from then still
    # runs under this worker)
    name = "allows" if hasattr(walk_module, "allows") else "unpack_bits"
    check = getattr(walk_module, name)

    def recording(bits, arg):  # (the token for allows, the vocabulary's size for unpack_bits)
        digests.append(hashlib.blake2b(np.ascontiguousarray(bits).tobytes(), digest_size=8).digest())
        return check(bits, arg)

    setattr(walk_module, name, recording)
    vocab = toy_vocabulary() if config["vocab"] == "toy" else real_vocabulary(config["vocab"])
    prepare_vocabulary(config["strategy"], vocab)
    out.write(json.dumps({"ready": True, "structbench": str(imported.parent)}) + "\n")
    for line in sys.stdin:
        path = Path(json.loads(line)["path"])
        if config["cold_start"]:
            cold_start(vocab)
        digests.clear()
        row = schema_row(path, config["strategy"], vocab, config["key_order"], config["whitespace"],
                         config["timeout_s"])
        result = {k: row.get(k) for k in FIELDS}
        result["masks"] = hashlib.blake2b(b"".join(digests), digest_size=16).hexdigest()
        result["n_masks"] = len(digests)
        out.write(json.dumps(result) + "\n")


def _experiments_of(root) -> None:
    """structbench.experiments from the checkout's own experiments/ folder (the wheel ships it inside the package;
    an editable install maps it to the working tree's, whichever checkout structbench itself came from)."""
    import importlib.util

    folder = root / "experiments"
    if not (folder / "__init__.py").is_file():  # (a copy of the installed package: it is inside structbench)
        return
    spec = importlib.util.spec_from_file_location("structbench.experiments", folder / "__init__.py",
                                                  submodule_search_locations=[str(folder)])
    module = importlib.util.module_from_spec(spec)
    sys.modules["structbench.experiments"] = module
    spec.loader.exec_module(module)


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
