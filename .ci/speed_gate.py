"""CI's speed gate: ratios of medians measured in one pytest-benchmark run, with wide margins.

Absolute times on a shared machine mean little; a ratio between two strategies measured
minutes apart on the same machine is stable enough to catch a regression of the fast path.
"""

import json
import sys

# (numerator, denominator, the largest ratio allowed, what was measured when the gate was set)
GATES = [
    ("test_walk[tabled-person]", "test_walk_naive[person]", 0.01, "2e-6"),
    ("test_walk[tabled-age]", "test_walk[xgrammar-age]", 1.0, "0.08"),
    ("test_walk[tabled-person]", "test_walk[xgrammar-person]", 1.0, "0.06"),
    ("test_build[tabled-person]", "test_build[outlines_core-person]", 1.0, "0.08"),
]


def main(path: str) -> int:
    data = json.load(open(path))
    medians = {b["name"]: b["stats"]["median"] for b in data["benchmarks"]}
    steps = {b["name"]: b.get("extra_info", {}).get("steps", 1) for b in data["benchmarks"]}
    failed = 0
    for num, den, limit, note in GATES:
        if num not in medians or den not in medians:
            print(f"speed gate: skipped {num} / {den} (not measured: optional engine or vocabulary missing)")
            continue
        # Walks differ in length between the naive and the full benchmarks: compare per step.
        ratio = (medians[num] / steps[num]) / (medians[den] / steps[den])
        ok = ratio <= limit
        failed += not ok
        print(f"speed gate: {'ok  ' if ok else 'FAIL'} {num} / {den} per step = {ratio:.4g} (limit {limit}; set at {note})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
