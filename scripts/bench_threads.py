#!/usr/bin/env python3
"""Speed-up against threads of `flexmb bench` (issue 23's scaling report).

Runs every case at every thread count, the thread counts interleaved inside
each round (so that drift of the machine's load hits all of them alike), and
reports the median over the rounds of the time per step of the assembly, the
factorization, the solves and the whole step, with the speed-up over the
first thread count. Each run is its own process with RAYON_NUM_THREADS set
(flexmb's pool honours it), so nothing is shared between thread counts.

    python3 scripts/bench_threads.py --flexmb new=target/release/flexmb \
        --flexmb old=/tmp/flexmb-old \
        --case l1:25000 --case l4:14300 --case l2:447 --case l3:25 \
        --threads 1,2 --rounds 3 --steps 10 --csv docs/bench-threads.csv

Standard library only.
"""
import argparse
import csv
import io
import os
import statistics
import subprocess
import sys

PARTS = [
    ("assembly", "assembly_ms_per_step"),
    ("factorization", "factorization_ms_per_step"),
    ("solve", "solve_ms_per_step"),
    ("total", "total_ms_per_step"),
]


def run(flexmb, problem, size, steps, threads, extra):
    env = dict(os.environ, RAYON_NUM_THREADS=str(threads))
    out = f"/tmp/bench-threads-{os.getpid()}.csv"
    cmd = [flexmb, "bench", problem, "--sizes", str(size), "--steps", str(steps),
           "--csv", out, "--quiet", *extra]
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
    with open(out) as f:
        rows = list(csv.DictReader(f))
    os.remove(out)
    assert len(rows) == 1, rows
    return rows[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flexmb", action="append",
                    help="LABEL=PATH of a flexmb binary (repeatable: binaries are "
                         "interleaved too); default new=target/release/flexmb")
    ap.add_argument("--case", action="append", required=True,
                    help="PROBLEM:SIZE, e.g. l2:447 (repeatable)")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--csv", help="write one row per case and thread count")
    ap.add_argument("extra", nargs="*", help="more `flexmb bench` options, after --")
    a = ap.parse_args()
    threads = [int(t) for t in a.threads.split(",")]
    cases = [(c.split(":")[0], int(c.split(":")[1])) for c in a.case]
    bins = [b.split("=", 1) for b in (a.flexmb or ["new=target/release/flexmb"])]
    samples = {}  # (binary, problem, size, threads) -> list of rows
    for r in range(a.rounds):
        for problem, size in cases:
            for t in threads:
                for label, path in bins:
                    row = run(path, problem, size, a.steps, t, a.extra)
                    samples.setdefault((label, problem, size, t), []).append(row)
                    print(f"round {r + 1}: {label} {problem} {size} threads {t}: "
                          f"total {float(row['total_ms_per_step']):.2f} ms/step",
                          file=sys.stderr, flush=True)
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(["binary", "problem", "size", "dofs", "threads", "rounds", "steps"]
               + [f"{p}_ms_per_step" for p, _ in PARTS]
               + [f"{p}_speedup" for p, _ in PARTS]
               + ["solve_over_factorization", "iterations_per_step",
                  "factorizations_per_step", "peak_mib"])
    print("| binary | problem | size | DOFs | threads | assembly ms | factor ms | solve ms | step ms "
          "| speed-up asm / fact / solve / step | solve/factor |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for (label, _), (problem, size) in ((b, c) for c in cases for b in bins):
        base = None
        for t in threads:
            rows = samples[(label, problem, size, t)]
            med = {p: statistics.median(float(r[c]) for r in rows) for p, c in PARTS}
            if base is None:
                base = med
            sp = {p: (base[p] / med[p] if med[p] > 0 else float("nan")) for p, _ in PARTS}
            ratio = med["solve"] / med["factorization"] if med["factorization"] > 0 else float("nan")
            last = rows[-1]
            w.writerow([label, problem, size, last["dofs"], t, a.rounds, a.steps]
                       + [f"{med[p]:.4f}" for p, _ in PARTS]
                       + [f"{sp[p]:.3f}" for p, _ in PARTS]
                       + [f"{ratio:.3f}", last["iterations_per_step"],
                          last["factorizations_per_step"], last["peak_mib"]])
            print(f"| {label} | {problem} | {size} | {last['dofs']} | {t} | {med['assembly']:.2f} | "
                  f"{med['factorization']:.2f} | {med['solve']:.2f} | {med['total']:.2f} | "
                  f"{sp['assembly']:.2f} / {sp['factorization']:.2f} / {sp['solve']:.2f} / "
                  f"{sp['total']:.2f} | {ratio:.2f} |")
    if a.csv:
        with open(a.csv, "w") as f:
            f.write(out.getvalue())


if __name__ == "__main__":
    main()
