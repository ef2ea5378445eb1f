#!/usr/bin/env python3
"""Side-by-side time steps of the L1 hanging beam in flexmb and Exudyn.

Builds the model of `flexmb::model::hanging_beam` in Exudyn 1.13.6: a planar
beam of length 10 along +x made of N ANCF cable elements (ObjectANCFCable2D,
nodes with position and slope, NodePoint2DSlope1), EA = 1e3, EI = 1e-3,
rho A = 0.1, straight and at rest at t = 0, gravity 9.81 along -y (a
mass-proportional load on every element), the node at x = 0 pinned to the
ground (position pinned, slope free: coordinate constraints on x and y).
Both codes integrate with generalized-alpha, spectral radius 0.8, index 3,
at the same dt (default 1e-3) for the same number of steps (default 20),
one thread each, and the runs are interleaved: each round runs, per size,
`flexmb bench l1 --sizes N` (with `--flexmb-args`, e.g. "--refactor step")
and then Exudyn.

Exudyn's Newton: its default modified Newton (the Jacobian kept while it
converges), with the relative tolerance of flexmb's scaled test (1e-6) and
an absolute tolerance of 1e-8, and fixed steps (`adaptiveStep = False`). With
its defaults (relative tolerance 1e-8, adaptive steps) it does not converge
at dt = 1e-3 from 1,000 elements and halves the step down to 1.6e-5 (1,276
steps instead of 20 at 1,000 elements), which is no longer the same
computation.

Times per step:
- flexmb: `total_ms_per_step` of its bench CSV, the wall time of the time
  loop (consistent initialization included) over the steps;
- Exudyn: the wall time of `SolveSteps` of its implicit second-order solver
  over the steps (its initialization, which computes the initial
  accelerations, is not counted: the comparison leans towards Exudyn).
The CPU time of each run (the flexmb process's user + system time, Exudyn's
process time around SolveSteps) is reported next to the wall time, as the
machine may be shared.

Same motion: for every size, one more (untimed) flexmb run writes its HDF5
file (`--output`) and the tip node's y after the last step is compared with
Exudyn's and with free fall, -g t^2 / 2 (the beam is released horizontally;
over 20 steps of 1e-3 the tip falls freely).

    python3 -m venv venv && venv/bin/pip install -r scripts/requirements-exudyn.txt
    cargo build --release
    venv/bin/python scripts/compare_exudyn.py --sizes 1000,10000,100000,250000 \
        --flexmb target/release/flexmb --rounds 1
"""

import os
import sys

# Exudyn's fastest module (no range checks, AVX2), as its docs advise for timing.
sys.exudynFast = True

for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "RAYON_NUM_THREADS"):
    os.environ[var] = "1"

import argparse
import csv
import resource
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

LENGTH = 10.0
EA, EI, RHO_A = 1e3, 1e-3, 0.1
G = 9.81
SPECTRAL_RADIUS = 0.8


def run_flexmb(exe, size, steps, dt, extra):
    """One `flexmb bench l1` case; returns (ms per step, iterations per step,
    CPU seconds of the process, peak MiB)."""
    with tempfile.TemporaryDirectory() as tmp:
        table = Path(tmp) / "bench.csv"
        cmd = [exe, "bench", "l1", "--sizes", str(size), "--steps", str(steps),
               "--dt", repr(dt), "--csv", str(table), "-q"] + extra
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        with open(table, newline="") as f:
            row = next(csv.DictReader(f))
    return (float(row["total_ms_per_step"]), float(row["iterations_per_step"]), cpu,
            float(row["peak_mib"]))


def flexmb_tip(exe, size, steps, dt, extra):
    """The tip's y after the last step of an untimed flexmb run with output."""
    import h5py

    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([exe, "bench", "l1", "--sizes", str(size), "--steps", str(steps),
                        "--dt", repr(dt), "--output", tmp, "-q"] + extra,
                       check=True, stdout=subprocess.DEVNULL)
        with h5py.File(Path(tmp) / f"l1-{size}.h5", "r") as f:
            names = list(f["dofs/names"].asstr()[:])
            col = names.index(f"b{size}.y")
            return float(f["time"][-1]), float(f["u"][-1, col])


def build_exudyn(size, steps, dt):
    """The hanging beam in Exudyn; returns (mbs, settings, tip node)."""
    import exudyn as exu
    from exudyn.itemInterface import ObjectANCFCable2D
    from exudyn.beams import GenerateBeamElementsAlongLine

    sc = exu.SystemContainer()
    mbs = sc.AddSystem()
    template = ObjectANCFCable2D(physicsMassPerLength=RHO_A,
                                 physicsBendingStiffness=EI,
                                 physicsAxialStiffness=EA)
    beam = GenerateBeamElementsAlongLine(mbs, [0, 0, 0], [LENGTH, 0, 0], size, template,
                                         gravity=[0, -G, 0],
                                         groundConstraintsStart=[1, 1, 0, 0])
    mbs.Assemble()
    s = exu.SimulationSettings()
    s.timeIntegration.numberOfSteps = steps
    s.timeIntegration.endTime = steps * dt
    s.timeIntegration.generalizedAlpha.spectralRadius = SPECTRAL_RADIUS
    s.timeIntegration.generalizedAlpha.useIndex2Constraints = False
    s.timeIntegration.generalizedAlpha.useNewmark = False
    s.timeIntegration.verboseMode = 0
    s.timeIntegration.adaptiveStep = False
    s.timeIntegration.newton.relativeTolerance = 1e-6
    s.timeIntegration.newton.absoluteTolerance = 1e-8
    s.linearSolver.solverType = exu.LinearSolverType.EigenSparse
    s.parallel.numberOfThreads = 1
    s.solution.file.write = False
    s.solution.sensors.writePeriod = 1e10
    return sc, mbs, s, beam["nodes"][-1]


def run_exudyn(size, steps, dt):
    """Exudyn's time steps; returns (ms per step, CPU s, tip y, t end), or
    (None, CPU s, the failed step, None) when its Newton fails."""
    import exudyn as exu

    sc, mbs, s, tip = build_exudyn(size, steps, dt)
    solver = exu.MainSolverImplicitSecondOrder()
    if not solver.InitializeSolver(mbs, s):
        raise RuntimeError(f"Exudyn: initialization failed at {size} elements")
    wall, cpu = time.perf_counter(), time.process_time()
    ok = solver.SolveSteps(mbs, s)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    done = solver.it.currentStepIndex - 1
    solver.FinalizeSolver(mbs, s)
    if not ok:
        # Newton did not converge: the step it stopped in, instead of a time.
        return None, cpu, done + 1, None
    y = mbs.GetNodeOutput(tip, exu.OutputVariableType.Position)[1]
    t = mbs.systemData.GetTime()
    return wall * 1e3 / steps, cpu, float(y), float(t)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sizes", default="1000,10000,100000,250000",
                   help="beam elements, comma separated")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--dt", type=float, default=1e-3)
    p.add_argument("--rounds", type=int, default=1, help="interleaved rounds (medians)")
    p.add_argument("--flexmb", default="target/release/flexmb")
    p.add_argument("--flexmb-args", default="",
                   help="more `flexmb bench` options, e.g. \"--refactor step\"")
    p.add_argument("--no-check", action="store_true",
                   help="skip the tip comparison (one more flexmb run per size)")
    a = p.parse_args()
    sizes = [int(x) for x in a.sizes.split(",")]
    extra = a.flexmb_args.split()
    res = {n: {"f": [], "fcpu": [], "fit": [], "e": [], "ecpu": []} for n in sizes}
    tips = {}
    failed = {}
    for r in range(a.rounds):
        for n in sizes:
            ms, it, cpu, _ = run_flexmb(a.flexmb, n, a.steps, a.dt, extra)
            res[n]["f"].append(ms)
            res[n]["fcpu"].append(cpu)
            res[n]["fit"].append(it)
            ems, ecpu, ey, et = run_exudyn(n, a.steps, a.dt)
            if ems is None:
                failed[n] = ey
                print(f"round {r + 1} size {n}: flexmb {ms:.2f} ms/step ({it:.2f} it), "
                      f"Exudyn failed in step {ey}", file=sys.stderr, flush=True)
                continue
            res[n]["e"].append(ems)
            res[n]["ecpu"].append(ecpu)
            tips[n] = (et, ey)
            print(f"round {r + 1} size {n}: flexmb {ms:.2f} ms/step ({it:.2f} it), "
                  f"Exudyn {ems:.2f} ms/step", file=sys.stderr, flush=True)
    print(f"L1 hanging beam, generalized-alpha({SPECTRAL_RADIUS}), dt {a.dt:g}, "
          f"{a.steps} steps, 1 thread each, {a.rounds} interleaved round(s), medians; "
          f"flexmb bench {a.flexmb_args or '(defaults)'}\n")
    head = ["elements", "DOFs", "flexmb ms/step", "flexmb CPU s (process)",
            "flexmb Newton it/step", "Exudyn ms/step", "Exudyn CPU s (steps)",
            "Exudyn / flexmb per step"]
    if not a.no_check:
        head += ["tip y flexmb", "tip y Exudyn", "-g t^2/2"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for n in sizes:
        med = {k: statistics.median(v) for k, v in res[n].items() if v}
        row = [f"{n:,}", f"{4 * (n + 1):,}", f"{med['f']:.2f}", f"{med['fcpu']:.2f}",
               f"{med['fit']:.2f}"]
        if n in failed:
            row += [f"Newton failed in step {failed[n]}", "-", "-"]
            if not a.no_check:
                row += ["-", "-", "-"]
            print("| " + " | ".join(row) + " |", flush=True)
            continue
        row += [f"{med['e']:.2f}", f"{med['ecpu']:.2f}", f"{med['e'] / med['f']:.2f}"]
        if not a.no_check:
            ft, fy = flexmb_tip(a.flexmb, n, a.steps, a.dt, extra)
            et, ey = tips[n]
            free = -0.5 * G * ft * ft
            row += [f"{fy:.9e}", f"{ey:.9e}", f"{free:.9e}"]
            if abs(et - ft) > 1e-12 or abs(fy - free) > 1e-6 or abs(ey - free) > 1e-6:
                print(f"size {n}: the tips differ: t {ft} / {et}, y flexmb {fy}, "
                      f"Exudyn {ey}, free fall {free}", file=sys.stderr)
                sys.exit(1)
        print("| " + " | ".join(row) + " |", flush=True)


if __name__ == "__main__":
    main()
