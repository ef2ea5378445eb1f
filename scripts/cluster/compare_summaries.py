#!/usr/bin/env python3
"""Compares a sweep summary (summary.csv) against a reference run's, case by case.

    compare_summaries.py REFERENCE.csv SUMMARY.csv [--cases N] [--missing ID ...]

Every case of SUMMARY must be in REFERENCE (matched by case id) with the same
result columns: numbers bit for bit (the 64-bit floats parsed from the cells),
text cells equal. The parameter columns may differ between the two sweeps
(a sweep with an extra key), so only the result columns are compared: those
from `status` on, except `wall_seconds`, the case's measured wall-clock time,
which differs from run to run. --cases N: SUMMARY must hold exactly N cases;
--missing ID...: those ids must not be in SUMMARY. Used by slurm-ci.sh.
"""
import argparse
import csv
import struct
import sys

EXCLUDED = {"wall_seconds"}


def load(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        sys.exit(f"{path}: no cases")
    header = list(rows[0].keys())
    results = header[header.index("status"):]
    return {r["case"]: r for r in rows}, [c for c in results if c not in EXCLUDED]


def bits(cell):
    try:
        return struct.pack("<d", float(cell))
    except ValueError:
        return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("reference")
    ap.add_argument("summary")
    ap.add_argument("--cases", type=int)
    ap.add_argument("--missing", nargs="*", default=[])
    a = ap.parse_args()
    ref, ref_cols = load(a.reference)
    got, got_cols = load(a.summary)
    if ref_cols != got_cols:
        sys.exit(f"result columns differ:\n  {ref_cols}\n  {got_cols}")
    errors = []
    if a.cases is not None and len(got) != a.cases:
        errors.append(f"{a.summary}: {len(got)} cases, expected {a.cases}")
    for case in a.missing:
        if case in got:
            errors.append(f"{case}: expected missing, but in {a.summary}")
    compared = 0
    for case, row in got.items():
        if case not in ref:
            errors.append(f"{case}: not in the reference {a.reference}")
            continue
        for col in got_cols:
            x, y = ref[case][col], row[col]
            bx, by = bits(x), bits(y)
            same = bx == by if bx is not None and by is not None else x == y
            if not same:
                errors.append(f"{case}, {col}: reference {x!r}, got {y!r}")
            compared += 1
    if errors:
        print("\n".join(errors[:40]), file=sys.stderr)
        sys.exit(f"{len(errors)} differences between {a.reference} and {a.summary}")
    print(f"{a.summary}: {len(got)} cases, {compared} result cells equal to the reference bit for bit "
          f"(columns {got_cols[0]}..{got_cols[-1]}, without {', '.join(sorted(EXCLUDED))})")


if __name__ == "__main__":
    main()
