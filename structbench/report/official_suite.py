"""The official JSON-Schema-Test-Suite (draft 2020-12) against the schema checker, the referee judging.

For every test case whose schema compiles, the checker's verdict on the instance (written with the
lesson's separators) is compared with jsonschema's. Per keyword file: tests, compiled, agree, and the
unsound cases (accepted by the checker, rejected by the referee), which must be none.

    python -m structbench.report.official_suite [--suite DIR] [--out results/official_suite.csv]

writes the per-keyword table that `tests/jsonschema/test_coverage.py` holds the checker to (no keyword may agree
on fewer cases than recorded there).
"""

from __future__ import annotations

import argparse
import csv
import json
from collections import Counter
from pathlib import Path

from structbench.bench.referees import SchemaReferee
from structbench.bench.shared_data import official_suite_dir
from structbench.jsonschema.checker import SchemaChecker

REPO = Path(__file__).resolve().parents[2]  # the checkout this runs from (its results/)
DEFAULT_SUITE = official_suite_dir()  # $STRUCTBENCH_DATA, else ../shared/data beside the checkout
DEFAULT_TABLE = REPO / "results" / "official_suite.csv"
COLUMNS = ("keyword", "tests", "compiled", "agree")


def suite_cases(suite_dir: Path = DEFAULT_SUITE):
    """(keyword file, schema, instance, group description, test description) for every case."""
    for f in sorted(Path(suite_dir).glob("*.json")):
        for group in json.loads(f.read_text(encoding="utf-8")):
            for test in group["tests"]:
                yield f.stem, group["schema"], test["data"], group["description"], test["description"]


def run_suite(suite_dir: Path = DEFAULT_SUITE) -> tuple[list[dict], list[tuple]]:
    """(per-keyword rows, unsound cases)."""
    if not Path(suite_dir).is_dir():
        raise FileNotFoundError(f"no JSON-Schema-Test-Suite at {suite_dir}")
    compiled, agree, total = Counter(), Counter(), Counter()
    unsound, checkers = [], {}
    for keyword, schema, data, gdesc, tdesc in suite_cases(suite_dir):
        total[keyword] += 1
        key = json.dumps(schema, sort_keys=True)
        if key not in checkers:
            try:
                checkers[key] = SchemaChecker(schema)
            except Exception:  # noqa: BLE001 - unsupported, invalid or unsatisfiable: not compiled
                checkers[key] = None
        checker = checkers[key]
        if checker is None:
            continue
        try:
            referee = SchemaReferee(schema)
        except ValueError:
            continue
        compiled[keyword] += 1
        text = json.dumps(data, separators=(", ", ": "))
        truth, ours = referee(text), checker.status(text) == "complete"
        agree[keyword] += ours == truth
        if ours and not truth:
            unsound.append((keyword, gdesc, tdesc, text))
    rows = [{"keyword": k, "tests": total[k], "compiled": compiled[k], "agree": agree[k]} for k in sorted(total)]
    return rows, unsound


def read_table(path: Path = DEFAULT_TABLE) -> dict[str, dict]:
    with open(path, newline="", encoding="utf-8") as f:
        return {r["keyword"]: {c: int(r[c]) for c in COLUMNS[1:]} for r in csv.DictReader(f)}


def format_rows(rows: list[dict]) -> str:
    lines = [f"{'keyword':28s} {'tests':>5s} {'compiled':>8s} {'agree':>5s}"]
    lines += [f"{r['keyword']:28s} {r['tests']:5d} {r['compiled']:8d} {r['agree']:5d}" for r in rows]
    lines.append(f"{'TOTAL':28s} {sum(r['tests'] for r in rows):5d} {sum(r['compiled'] for r in rows):8d} "
                 f"{sum(r['agree'] for r in rows):5d}")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", type=Path, default=DEFAULT_SUITE, help="the suite's tests/draft2020-12 folder")
    parser.add_argument("--out", type=Path, default=DEFAULT_TABLE, help="where the per-keyword CSV goes")
    args = parser.parse_args(argv)
    try:
        rows, unsound = run_suite(args.suite)
    except FileNotFoundError as e:
        print(f"error: {e}")
        return 2
    print(format_rows(rows))
    if unsound:
        print(f"UNSOUND: {len(unsound)} instance(s) accepted that the referee rejects, e.g. {unsound[0]}")
        return 1
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_name("." + args.out.name + ".tmp")
    with open(tmp, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    tmp.replace(args.out)
    print(f"-> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
