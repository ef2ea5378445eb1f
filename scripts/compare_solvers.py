#!/usr/bin/env python3
"""Side-by-side sparse factorization of exported Newton matrices.

Factors each Matrix Market file (from `flexmb bench --export-matrix DIR`)
with `flexmb factor` and with PARDISO (MKL, LU and LDL^T), UMFPACK, KLU and
SuperLU, on one thread each (or --threads T: flexmb factor --threads T with
RAYON_NUM_THREADS=T, and T threads for MKL, OpenMP and OpenBLAS, so PARDISO
and the BLAS under UMFPACK; KLU and SuperLU are sequential), interleaved:
every round runs each solver once
(analysis, factorization, solve) and the table reports the medians over the
rounds, the factor nonzeros where the solver tells them, the memory, the
normwise backward error |b - A x|inf / (|A|inf |x|inf + |b|inf) against the
exported matrix, and the ratio of each factorization time to the best exact
peer's (backward error <= 1e-10) and to PARDISO LDL^T's.

PARDISO LDL^T is given the upper triangle of the symmetric part (A + A^T)/2:
on a matrix that is not exactly symmetric it solves a nearby system, which
its backward error against A shows.

    python3 -m venv venv && venv/bin/pip install -r scripts/requirements.txt
    venv/bin/python scripts/compare_solvers.py bench-mtx/*.mtx \
        --flexmb target/release/flexmb --rounds 5 --out table.md

With --csv FILE it also writes one row per matrix and solver (the medians,
and log10 of rows and factorization time, for `flexmb plot --x log10_rows
--y log10_factor_s --group series`), and with three or more sizes of one
problem (the file stem before the last '-', e.g. l2 in l2-223.mtx) it prints
the exponent k of factor time ~ rows^k fitted by least squares on the logs.
"""

import os
import sys


def threads_arg(argv):
    """The value of --threads (read before numpy and MKL are loaded)."""
    for i, a in enumerate(argv):
        if a == "--threads" and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith("--threads="):
            return a.split("=", 1)[1]
    return "1"


THREADS = threads_arg(sys.argv[1:])
for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "RAYON_NUM_THREADS"):
    os.environ[var] = THREADS

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import scipy.io  # noqa: E402
import scipy.sparse as sp  # noqa: E402
import scipy.sparse.linalg as spla  # noqa: E402


def backward_error(a, x, b):
    r = b - a @ x
    a_inf = abs(a).sum(axis=1).max()
    return float(np.abs(r).max() / (a_inf * np.abs(x).max() + np.abs(b).max()))


def load(path):
    a = scipy.io.mmread(str(path)).tocsr()
    a.sum_duplicates()
    a.sort_indices()
    rhs = Path(str(path)[: -len(".mtx")] + ".rhs.mtx")
    b = np.asarray(scipy.io.mmread(str(rhs))).ravel() if rhs.exists() else a @ np.ones(a.shape[0])
    return a, b


def run_pardiso(a, b, mtype):
    from pypardiso import PyPardisoSolver

    if mtype == 11:
        m = a
    else:
        # PARDISO's symmetric modes need every diagonal entry stored (zeros too).
        u = sp.triu((a + a.T) * 0.5).tocoo()
        n = a.shape[0]
        idx = np.arange(n)
        m = sp.csr_matrix((np.concatenate([u.data, np.zeros(n)]),
                           (np.concatenate([u.row, idx]), np.concatenate([u.col, idx]))),
                          shape=a.shape)
    m.sort_indices()
    s = PyPardisoSolver(mtype=mtype)
    s._check_A(m)
    t0 = time.perf_counter()
    s.set_phase(11)
    s._call_pardiso(m, np.zeros((m.shape[0], 1)))
    t1 = time.perf_counter()
    s.set_phase(22)
    s._call_pardiso(m, np.zeros((m.shape[0], 1)))
    t2 = time.perf_counter()
    s.set_phase(33)
    x = s._call_pardiso(m, np.asfortranarray(b.reshape(-1, 1))).ravel()
    t3 = time.perf_counter()
    fill = int(s.iparm[17])
    mem_kib = max(int(s.iparm[14]), int(s.iparm[15]) + int(s.iparm[16]))
    s.free_memory(everything=True)
    return dict(analysis_s=t1 - t0, factor_s=t2 - t1, solve_s=t3 - t2, fill=fill,
                memory_mib=mem_kib / 1024.0, x=x)


def to_kvx(a):
    from kvxopt import spmatrix

    c = a.tocoo()
    return spmatrix(c.data.tolist(), c.row.tolist(), c.col.tolist(), c.shape)


def run_kvx(a, b, module, ka):
    from kvxopt import matrix

    t0 = time.perf_counter()
    fs = module.symbolic(ka)
    t1 = time.perf_counter()
    fn = module.numeric(ka, fs)
    t2 = time.perf_counter()
    x = matrix(b.tolist())
    if module.__name__.endswith("klu"):
        module.solve(ka, fs, fn, x)
    else:
        module.solve(ka, fn, x)
    t3 = time.perf_counter()
    return dict(analysis_s=t1 - t0, factor_s=t2 - t1, solve_s=t3 - t2, fill=None,
                memory_mib=None, x=np.array(x).ravel())


def run_superlu(a, b):
    c = a.tocsc()
    t0 = time.perf_counter()
    lu = spla.splu(c, permc_spec="COLAMD")
    t1 = time.perf_counter()
    x = lu.solve(b)
    t2 = time.perf_counter()
    return dict(analysis_s=None, factor_s=t1 - t0, solve_s=t2 - t1,
                fill=int(lu.L.nnz + lu.U.nnz), memory_mib=None, x=x)


def run_flexmb(exe, path, ordering):
    out = subprocess.run([exe, "factor", str(path), "--repeat", "1", "--threads", THREADS,
                          "--ordering", ordering, "--json"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("matrices", nargs="+", type=Path)
    ap.add_argument("--flexmb", default="target/release/flexmb")
    ap.add_argument("--ordering", default="auto", help="flexmb factor --ordering")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1,
                    help="threads of every solver (flexmb, MKL PARDISO, BLAS), default 1")
    ap.add_argument("--skip", default="", help="comma-separated peers to skip, e.g. superlu,klu")
    ap.add_argument("--out", type=Path, help="also write the table (Markdown) here")
    ap.add_argument("--csv", type=Path, help="also write the medians as CSV here")
    args = ap.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    csv_rows = []
    lines = ["| matrix | rows | nnz | solver | analysis s | factor s | solve s | fill | memory MiB "
             "| backward error | factor / best exact peer | factor / PARDISO LDLT |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for path in args.matrices:
        a, b = load(path)
        import kvxopt.klu as klu
        import kvxopt.umfpack as umfpack

        ka = to_kvx(a) if not {"umfpack", "klu"} <= skip else None
        peers = {
            "PARDISO LU": lambda: run_pardiso(a, b, 11),
            "PARDISO LDLT": lambda: run_pardiso(a, b, -2),
            "UMFPACK": lambda: run_kvx(a, b, umfpack, ka),
            "KLU": lambda: run_kvx(a, b, klu, ka),
            "SuperLU": lambda: run_superlu(a, b),
        }
        peers = {k: f for k, f in peers.items() if k.lower().replace(" ", "-") not in skip
                 and k.split()[0].lower() not in skip}
        runs = {k: [] for k in ["flexmb", *peers]}
        for _ in range(args.rounds):
            runs["flexmb"].append(run_flexmb(args.flexmb, path, args.ordering))
            for name, f in peers.items():
                r = f()
                r["backward_error"] = backward_error(a, r.pop("x"), b)
                runs[name].append(r)
            print(f"{path.name}: round done", file=sys.stderr)
        med = {}
        for name, rs in runs.items():
            m = {}
            for key in ("analysis_s", "factor_s", "solve_s"):
                vals = [r[key] for r in rs if r.get(key) is not None]
                m[key] = statistics.median(vals) if vals else None
            for key in ("fill", "memory_mib", "backward_error"):
                m[key] = rs[-1].get(key)
            m["solver"] = rs[-1].get("solver", name)
            med[name] = m
        # Best peer: the fastest factorization among the peers whose solve is
        # exact (backward error <= 1e-10 against the exported matrix).
        best = min((m["factor_s"] for k, m in med.items()
                    if k != "flexmb" and m["backward_error"] <= 1e-10), default=None)
        ldlt = med.get("PARDISO LDLT", {}).get("factor_s")
        for name, m in med.items():
            csv_rows.append(dict(matrix=path.stem, problem=path.stem.rsplit("-", 1)[0],
                                 rows=a.shape[0], nnz=a.nnz, peer=name,
                                 series=f"{path.stem.rsplit('-', 1)[0]} {name}", solver=m["solver"],
                                 analysis_s=m["analysis_s"], factor_s=m["factor_s"],
                                 solve_s=m["solve_s"], fill=m["fill"], memory_mib=m["memory_mib"],
                                 backward_error=m["backward_error"],
                                 log10_rows=float(np.log10(a.shape[0])),
                                 log10_factor_s=float(np.log10(m["factor_s"]))))
            f = lambda v, p=4: "-" if v is None else (f"{v:.{p}f}" if isinstance(v, float) else str(v))
            ratio = m["factor_s"] / best if best else None
            ratio_ldlt = m["factor_s"] / ldlt if ldlt else None
            lines.append(
                f"| {path.stem} | {a.shape[0]} | {a.nnz} | {m['solver']} | {f(m['analysis_s'])} "
                f"| {f(m['factor_s'])} | {f(m['solve_s'])} | {f(m['fill'])} | {f(m['memory_mib'], 1)} "
                f"| {'-' if m['backward_error'] is None else format(m['backward_error'], '.1e')} "
                f"| {f(ratio, 2)} | {f(ratio_ldlt, 2)} |")
        print(json.dumps({"matrix": str(path), "medians": med}), file=sys.stderr)
    # Fitted exponents: factor time ~ rows^k per problem and solver.
    fits = {}
    for r in csv_rows:
        fits.setdefault((r["problem"], r["peer"]), []).append((r["log10_rows"], r["log10_factor_s"]))
    for (problem, peer), pts in sorted(fits.items()):
        if len(pts) >= 3:
            x, y = np.array(pts).T
            k = np.polyfit(x, y, 1)[0]
            lines.append(f"\n{problem}, {peer}: factor time ~ rows^{k:.2f} "
                         f"({len(pts)} sizes, {10 ** x.min():.0f} to {10 ** x.max():.0f} rows)")
    if args.csv:
        import csv

        with open(args.csv, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(csv_rows[0]))
            w.writeheader()
            w.writerows(csv_rows)
    table = "\n".join(lines) + "\n"
    print(table)
    if args.out:
        args.out.write_text(table)


if __name__ == "__main__":
    main()
