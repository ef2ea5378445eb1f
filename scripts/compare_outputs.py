#!/usr/bin/env python3
"""Bitwise before/after comparison of flexmb runs (issue #24's acceptance test).

Runs every shipped model (models/*.toml, not the sweeps) with every method
that may accept it (the integrator as shipped, GSSSS presets and options,
dopri5, rk4, heun, epm, tcg, tdg, alpha-kappa, bdf full/cs/cm) on a short
`--t-end` (10 steps of the model's dt, or a twentieth of its t_end without
one), and compares two sets of results:

  * every HDF5 dataset and attribute, bit for bit (f64 compared as uint64),
    except wall-clock timings (names ending in `seconds`);
  * the exit status and the printed text (stdout and stderr, with the
    timings and the free disk space of size warnings masked): runs that fail
    must fail identically.

Usage:
  python3 scripts/compare_outputs.py BASE NEW [--subset] [--work DIR] [--jobs N]
      BASE and NEW: each a flexmb binary (run into WORK/base, WORK/new) or a
      folder written by an earlier `run` (reused as it is).
  python3 scripts/compare_outputs.py run BIN DIR [--subset] [--jobs N]
      Only run BIN into DIR (e.g. a baseline to keep).

`--subset`: 6 small models with every method (240 runs, about 30 s on 2
cores), for CI (.ci/run). Needs h5py and numpy (`pip install h5py numpy`). Exit status 0 when everything is identical, 1 otherwise; one line per
differing case.
"""

import argparse
import concurrent.futures
import glob
import json
import os
import re
import subprocess
import sys
import tomllib

import h5py
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (name, arguments): the methods and options compared.
METHODS = [
    ("shipped", []),
    ("newmark", ["--method", "gssss", "--scheme", "newmark"]),
    ("midpoint-endpoint", ["--method", "gssss", "--scheme", "midpoint-endpoint"]),
    ("midpoint", ["--method", "gssss", "--scheme", "midpoint"]),
    ("genalpha", ["--method", "gssss", "--scheme", "generalized-alpha(0.8)"]),
    ("hht", ["--method", "gssss", "--scheme", "hht(0.9)"]),
    ("wbz", ["--method", "gssss", "--scheme", "wbz(0.8)"]),
    ("u0v0opt", ["--method", "gssss", "--scheme", "u0v0-optimal(0.5)"]),
    ("u0-family", ["--method", "gssss", "--family", "u0", "--rho1", "0.6",
                   "--rho2", "0.5", "--rho3", "0.4"]),
    ("option1", ["--method", "gssss", "--option", "1"]),
    ("option3", ["--method", "gssss", "--option", "3"]),
    ("option4", ["--method", "gssss", "--option", "4"]),
    ("dg", ["--method", "gssss", "--scheme", "midpoint", "--option", "dg"]),
    ("form-v", ["--method", "gssss", "--form", "v"]),
    ("form-d", ["--method", "gssss", "--form", "d"]),
    ("two-field", ["--method", "gssss", "--scheme", "midpoint", "--form", "two-field"]),
    ("jacobian-seed", ["--method", "gssss", "--jacobian", "seed"]),
    ("increment", ["--method", "gssss", "--convergence", "increment"]),
    ("rate", ["--method", "gssss", "--convergence", "rate"]),
    ("scaled", ["--method", "gssss", "--convergence", "scaled"]),
    ("modified", ["--method", "gssss", "--convergence", "scaled", "--refactor", "step"]),
    ("modified-rate", ["--method", "gssss", "--convergence", "rate", "--refactor", "step"]),
    ("line-search", ["--method", "gssss", "--convergence", "scaled",
                     "--line-search", "backtracking"]),
    ("line-search-modified", ["--method", "gssss", "--convergence", "scaled",
                              "--refactor", "step", "--line-search", "backtracking"]),
    ("cutback", ["--method", "gssss", "--step-control", "cutback"]),
    ("dopri5", ["--method", "dopri5"]),
    ("rk4", ["--method", "rk4"]),
    ("heun", ["--method", "heun"]),
    ("rk4-pstab", ["--method", "rk4", "--stabilization", "pstab"]),
    ("epm-rk4", ["--method", "epm", "--tableau", "rk4"]),
    ("epm-dopri5", ["--method", "epm", "--tableau", "dopri5"]),
    ("epm-heun", ["--method", "epm", "--tableau", "heun"]),
    ("tcg", ["--method", "tcg"]),
    ("tdg", ["--method", "tdg"]),
    ("tdg-0.5", ["--method", "tdg", "--alpha", "0.5"]),
    ("alpha-kappa", ["--method", "alpha-kappa"]),
    ("alpha-kappa-1", ["--method", "alpha-kappa", "--alpha", "0.5", "--kappa", "1"]),
    ("bdf-full", ["--method", "bdf", "--newton", "full"]),
    ("bdf-cs", ["--method", "bdf", "--newton", "cs"]),
    ("bdf-cm", ["--method", "bdf", "--newton", "cm"]),
]

SUBSET_MODELS = ["double_pendulum", "seed002_a", "seed003_spring", "rolling_disk",
                 "hanging_beam", "heavy_top"]

# Wall-clock timings (`wall_seconds`, PStab's `stab_seconds`, ...): attributes,
# datasets and printed values whose name ends in `seconds`.
WALL = re.compile(r"(wall|\w*seconds) [0-9.eE+-]+( s)?")
# The free space an output-size warning names changes from run to run.
FREE = re.compile(r"than the [0-9.eE+-]+ bytes free")


def timing(name):
    return name.split("/")[-1].split(".")[-1].endswith("seconds")
RUN_TIMEOUT = 120


def models(subset):
    paths = sorted(glob.glob(os.path.join(ROOT, "models", "*.toml")))
    names = [os.path.splitext(os.path.basename(p))[0] for p in paths]
    if subset:
        names = [n for n in names if n in SUBSET_MODELS]
    return names


def short_t_end(model):
    with open(os.path.join(ROOT, "models", model + ".toml"), "rb") as f:
        integ = tomllib.load(f).get("integrator", {})
    t_end = float(integ.get("t_end", 1.0))
    dt = integ.get("dt")
    return min(t_end, 10 * float(dt)) if dt is not None else t_end / 20


def cases(subset):
    for model in models(subset):
        t_end = short_t_end(model)
        for name, args in METHODS:
            yield f"{model}__{name}", model, args + ["--t-end", repr(t_end)]


def run_one(binary, folder, case):
    key, model, args = case
    cmd = [binary, "run", os.path.join(ROOT, "models", model + ".toml"), "-q",
           "-o", key + ".h5"] + args
    try:
        p = subprocess.run(cmd, cwd=folder, capture_output=True, text=True,
                           timeout=RUN_TIMEOUT)
        rc, text = p.returncode, p.stdout + "\n--- stderr ---\n" + p.stderr
    except subprocess.TimeoutExpired:
        rc, text = "timeout", ""
    with open(os.path.join(folder, key + ".txt"), "w") as f:
        f.write(f"rc {rc}\n" + text)


def run_all(binary, folder, subset, jobs):
    binary = os.path.abspath(binary)
    os.makedirs(folder, exist_ok=True)
    todo = list(cases(subset))
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        list(pool.map(lambda c: run_one(binary, folder, c), todo))
    with open(os.path.join(folder, "manifest.json"), "w") as f:
        json.dump({"binary": binary, "subset": subset,
                   "cases": [c[0] for c in todo]}, f, indent=1)


def h5_items(path):
    """Every group/dataset of a file: name -> (attrs, data or None)."""
    out = {}
    with h5py.File(path, "r") as f:
        def attrs(obj):
            return {k: v for k, v in obj.attrs.items() if not timing(k)}
        out["/"] = (attrs(f), None)

        def visit(name, obj):
            data = None
            if timing(name):
                return
            if isinstance(obj, h5py.Dataset):
                data = obj[()]
            out[name] = (attrs(obj), data)
        f.visititems(visit)
    return out


def same_value(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        if a.dtype != b.dtype or a.shape != b.shape:
            return False
        if a.dtype.kind == "O":
            return a.tolist() == b.tolist()
        return a.tobytes() == b.tobytes()
    if isinstance(a, (float, np.floating)) and isinstance(b, (float, np.floating)):
        return np.float64(a).tobytes() == np.float64(b).tobytes()
    return type(a) is type(b) and a == b


def compare_h5(pa, pb):
    """The first difference between two HDF5 files, or None."""
    a, b = h5_items(pa), h5_items(pb)
    if a.keys() != b.keys():
        return f"objects differ: {sorted(a.keys() ^ b.keys())[:5]}"
    for name in a:
        (aa, da), (ab, db) = a[name], b[name]
        if aa.keys() != ab.keys():
            return f"{name}: attributes differ: {sorted(aa.keys() ^ ab.keys())}"
        for k in aa:
            if not same_value(aa[k], ab[k]):
                return f"{name}: attribute {k}: {aa[k]!r} != {ab[k]!r}"
        if (da is None) != (db is None) or (da is not None and not same_value(da, db)):
            return f"dataset {name} differs"
    return None


def compare_case(base, new, key):
    texts = []
    for folder in (base, new):
        try:
            with open(os.path.join(folder, key + ".txt")) as f:
                texts.append(FREE.sub("than the * bytes free", WALL.sub(r"\1 *", f.read())))
        except FileNotFoundError:
            return "not run"
    if texts[0] != texts[1]:
        return "printed text or status differs:\n  " + "\n  ".join(
            f"{w}: {t.strip()[:400]!r}" for w, t in zip(("base", "new"), texts))
    h5 = [os.path.join(folder, key + ".h5") for folder in (base, new)]
    exists = [os.path.exists(p) for p in h5]
    if exists[0] != exists[1]:
        return f"HDF5 file present only in {'base' if exists[0] else 'new'}"
    if exists[0]:
        return compare_h5(*h5)
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("args", nargs="+")
    ap.add_argument("--subset", action="store_true")
    ap.add_argument("--work", default="/tmp/flexmb-compare")
    ap.add_argument("--jobs", type=int, default=2)
    o = ap.parse_args()
    if o.args[0] == "run":
        _, binary, folder = o.args
        run_all(binary, folder, o.subset, o.jobs)
        return 0
    base, new = o.args
    folders = []
    for tag, src in (("base", base), ("new", new)):
        if os.path.isdir(src):
            folders.append(src)
        else:
            folder = os.path.join(o.work, tag)
            run_all(src, folder, o.subset, o.jobs)
            folders.append(folder)
    keys = [c[0] for c in cases(o.subset)]
    bad, statuses = 0, {}
    for key in keys:
        diff = compare_case(folders[0], folders[1], key)
        with open(os.path.join(folders[1], key + ".txt")) as f:
            rc = f.readline().split()[1] if diff != "not run" else "?"
        statuses[rc] = statuses.get(rc, 0) + 1
        if diff:
            bad += 1
            print(f"DIFFERENT {key}: {diff}")
    n_models = len({k.split("__")[0] for k in keys})
    print(f"{len(keys)} runs ({n_models} models x {len(METHODS)} methods), exit statuses "
          f"{dict(sorted(statuses.items()))}: {len(keys) - bad} identical, {bad} different")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
