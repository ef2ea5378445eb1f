#!/usr/bin/env python3
"""Print selected columns of a flexmb batch summary.csv as a Markdown table.

    python3 scripts/summary_table.py SUMMARY.csv COLUMN [COLUMN ...]

Numbers are printed with 6 significant digits; rows keep the file's order.
"""
import csv
import sys


def fmt(v):
    try:
        x = float(v)
    except ValueError:
        return v
    return v if v.lstrip("-").isdigit() else f"{x:.6g}"


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    rows = list(csv.DictReader(open(sys.argv[1], newline="")))
    cols = sys.argv[2:]
    missing = [c for c in cols if rows and c not in rows[0]]
    if missing:
        sys.exit(f"no column(s) {missing} in {sys.argv[1]}")
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for r in rows:
        print("| " + " | ".join(fmt(r[c]) for c in cols) + " |")


if __name__ == "__main__":
    main()
