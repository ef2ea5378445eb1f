#!/usr/bin/env python3
"""flexmb and Exudyn side by side, both through their Python APIs (issue #27).

Two models, written out in both APIs with the same physics, steps and method:

  L1  the hanging beam of docs/bench.md: a 10 m beam (EA = 1e3, EI = 1e-3,
      rho A = 0.1) of N planar Euler-Bernoulli (ANCF cable) elements, pinned
      at x = 0, released horizontally under gravity; generalized-alpha with
      spectral radius 0.8, dt = 1e-3.
  SC  the flexible slider-crank of Chin Ch. 5 (models/slider_crank_flexible.toml):
      a rigid crank (J = 1) at 60 rad/s driven by sin(t) with a rotational
      damper c = 1, an elastic rod of N elements pinned to the crank tip and
      ending in a slider on y = 0; midpoint rule (flexmb) / generalized-alpha
      with spectral radius 1 (Exudyn's undamped trapezoidal member), dt = 1e-5.

Exudyn's Newton runs with relative tolerance 1e-6 (flexmb's default scaled
test): with its default 1e-8 the residual of L1 stalls at 1.4e-8 from 1000
elements on, and Exudyn halves the step down to 1.6e-5 (190 steps for 3);
at 10,000 elements it then fails ("DYNAMIC SOLVER FAILED").

Reported per model and API: lines of user code (the model-building and run
function below, without comments, blank lines and docstrings), wall time per
step of the time loop (medians of interleaved repeats), and a result to check
that both computed the same motion. For L1 also the command line
(`flexmb run`, its summary line's wall time) against flexmb through Python:
the issue asks for Python within 5 % of the command line at 10,000 elements.

Usage (from the repository root, after `cargo build --release` and
`pip install ./python exudyn`):
    python3 scripts/compare_exudyn_python.py [--l1-elements 10000] [--l1-steps 20]
        [--sc-elements 8] [--sc-steps 2000] [--repeats 3] [--no-exudyn]
"""

import argparse
import inspect
import math
import os
import re
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLI = os.environ.get("FLEXMB_CLI", os.path.join(ROOT, "target", "release", "flexmb"))


# ---------------------------------------------------------------- flexmb ---

def l1_flexmb(n, steps, dt=1e-3):
    import flexmb
    b = flexmb.ModelBuilder(2)
    b.gravity([0.0, -9.81])
    for k in range(n + 1):
        b.node(f"b{k}", position=[10.0 * k / n, 0.0], slope=[1.0, 0.0])
    for k in range(1, n + 1):
        b.beam(f"e{k}", nodes=[f"b{k - 1}", f"b{k}"], ea=1e3, ei=1e-3, rho_a=0.1)
    b.ground_pin("pin", point="b0", ground=[0.0, 0.0])
    r = flexmb.run(b.build(), t_end=steps * dt, scheme="generalized-alpha(0.8)", dt=dt)
    return r.wall_seconds, r.dof(f"b{n}.y")[-1]


def sc_flexmb(n, steps, dt=1e-5):
    import flexmb
    r0, l, w0 = 6.0, 12.0, 60.0
    area, inertia, e, rho = math.pi * 0.25**2 / 4, math.pi * 0.25**4 / 64, 30e6, 0.0007331
    b = flexmb.ModelBuilder(2)
    b.body("crank", position=[0.0, 0.0], mass=1.0, inertia=1.0, angular_velocity=w0)
    b.ground_pin("pivot", point="crank", ground=[0.0, 0.0])
    b.rotational_spring_damper("crank_damping", b="crank", damping=1.0)
    b.torque("crank_torque", body="crank", torque=1.0, time={"type": "sine", "omega": 1.0})
    w_rod = -r0 * w0 / l
    for k in range(n + 1):
        x = r0 + l * k / n
        b.node(f"rod{k}", position=[x, 0.0], slope=[1.0, 0.0],
               velocity=[0.0, -w_rod * (r0 + l - x)], slope_velocity=[0.0, w_rod])
    for k in range(1, n + 1):
        b.beam(f"rod_e{k}", nodes=[f"rod{k - 1}", f"rod{k}"], ea=e * area, ei=e * inertia,
               rho_a=rho * area)
    b.revolute("crank_pin", a={"body": "crank", "offset": [r0, 0.0]}, b="rod0")
    b.slider("slider", point=f"rod{n}", line={"ground": [0.0, 0.0]}, normal=[0.0, 1.0])
    r = flexmb.run(b.build(), t_end=steps * dt, scheme="midpoint", option=2, dt=dt)
    return r.wall_seconds, deflection([r.u[-1, 4 * k:4 * k + 2] for k in (0, n // 2, n)])


# ---------------------------------------------------------------- Exudyn ---

def l1_exudyn(n, steps, dt=1e-3):
    import exudyn as exu
    from exudyn.beams import GenerateBeamElementsAlongLine
    from exudyn.itemInterface import ObjectANCFCable2D
    mbs = exu.SystemContainer().AddSystem()
    cable = ObjectANCFCable2D(massPerLength=0.1, bendingStiffness=1e-3, axialStiffness=1e3)
    nodes = GenerateBeamElementsAlongLine(mbs, [0, 0, 0], [10, 0, 0], n, cable, gravity=[0, -9.81, 0],
                                          groundConstraintsStart=[1, 1, 0, 0])["nodes"]
    mbs.Assemble()
    s = exu.SimulationSettings()
    s.timeIntegration.numberOfSteps, s.timeIntegration.endTime = steps, steps * dt
    s.timeIntegration.generalizedAlpha.spectralRadius = 0.8
    s.linearSolver.solverType = exu.LinearSolverType.EigenSparse
    s.solution.file.write = False
    s.timeIntegration.verboseMode = 0
    s.timeIntegration.newton.relativeTolerance = 1e-6  # flexmb's default; Exudyn's 1e-8 stalls (see docstring)
    t0 = time.perf_counter()
    exu.SolveDynamic(mbs, s)
    wall = time.perf_counter() - t0
    return wall, mbs.GetNodeOutput(nodes[-1], exu.OutputVariableType.Position)[1]


def sc_exudyn(n, steps, dt=1e-5):
    import exudyn as exu
    from exudyn.itemInterface import (CoordinateConstraint, CoordinateSpringDamper, LoadCoordinate,
                                      MarkerBodyPosition, MarkerNodeCoordinate, MarkerNodePosition,
                                      NodePoint2DSlope1, NodePointGround, NodeRigidBody2D,
                                      ObjectANCFCable2D, ObjectRigidBody2D, RevoluteJoint2D)
    r0, l, w0 = 6.0, 12.0, 60.0
    area, inertia, e, rho = math.pi * 0.25**2 / 4, math.pi * 0.25**4 / 64, 30e6, 0.0007331
    mbs = exu.SystemContainer().AddSystem()
    ground = mbs.AddNode(NodePointGround())
    gx, gy = (mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=ground, coordinate=i)) for i in (0, 1))
    node = mbs.AddNode(NodeRigidBody2D(referenceCoordinates=[0, 0, 0], initialVelocities=[0, 0, w0]))
    crank = mbs.AddObject(ObjectRigidBody2D(nodeNumber=node, mass=1.0, inertia=1.0))
    cx, cy, ct = (mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=node, coordinate=i)) for i in range(3))
    mbs.AddObject(CoordinateConstraint(markerNumbers=[gx, cx]))
    mbs.AddObject(CoordinateConstraint(markerNumbers=[gy, cy]))
    mbs.AddObject(CoordinateSpringDamper(markerNumbers=[gx, ct], stiffness=0.0, damping=1.0))
    mbs.AddLoad(LoadCoordinate(markerNumber=ct, load=0.0,
                               loadUserFunction=lambda mbs, t, load: math.sin(t)))
    w_rod = -r0 * w0 / l
    rod = []
    for k in range(n + 1):
        x = r0 + l * k / n
        rod.append(mbs.AddNode(NodePoint2DSlope1(referenceCoordinates=[x, 0, 1, 0],
                                                 initialVelocities=[0, -w_rod * (r0 + l - x), 0, w_rod])))
    for k in range(1, n + 1):
        mbs.AddObject(ObjectANCFCable2D(nodeNumbers=[rod[k - 1], rod[k]], length=l / n,
                                        massPerLength=rho * area, bendingStiffness=e * inertia,
                                        axialStiffness=e * area))
    tip = mbs.AddMarker(MarkerBodyPosition(bodyNumber=crank, localPosition=[r0, 0, 0]))
    mbs.AddObject(RevoluteJoint2D(markerNumbers=[tip, mbs.AddMarker(MarkerNodePosition(nodeNumber=rod[0]))]))
    mbs.AddObject(CoordinateConstraint(markerNumbers=[gy, mbs.AddMarker(
        MarkerNodeCoordinate(nodeNumber=rod[n], coordinate=1))]))
    mbs.Assemble()
    s = exu.SimulationSettings()
    s.timeIntegration.numberOfSteps, s.timeIntegration.endTime = steps, steps * dt
    s.timeIntegration.generalizedAlpha.spectralRadius = 1.0
    s.linearSolver.solverType = exu.LinearSolverType.EigenSparse
    s.solution.file.write = False
    s.timeIntegration.verboseMode = 0
    s.timeIntegration.newton.relativeTolerance = 1e-6  # flexmb's default; Exudyn's 1e-8 stalls (see docstring)
    t0 = time.perf_counter()
    exu.SolveDynamic(mbs, s)
    wall = time.perf_counter() - t0
    pos = [mbs.GetNodeOutput(rod[k], exu.OutputVariableType.Position)[:2] for k in (0, n // 2, n)]
    return wall, deflection(pos)


# ---------------------------------------------------------------- helpers ---

def deflection(points):
    """Distance of the middle point from the chord of the two others (signed)."""
    (x0, y0), (xm, ym), (x1, y1) = points
    cx, cy = x1 - x0, y1 - y0
    return (cx * (ym - y0) - cy * (xm - x0)) / math.hypot(cx, cy)


def user_lines(func):
    """Lines of user code of `func`: without the def line, blank lines and comments."""
    lines = inspect.getsource(func).splitlines()[1:]
    return sum(1 for ln in lines if ln.strip() and not ln.strip().startswith("#"))


def cli_l1(n, steps, dt=1e-3):
    """Wall time of the command line's time loop (its summary line) on L1."""
    out = subprocess.run(
        [CLI, "run", os.path.join(ROOT, "models", "hanging_beam.toml"), "-q",
         "--set", f"generator.elements={n}", "--set", f"probe.0.dof=b{n}.y",
         "--dt", repr(dt), "--t-end", repr(steps * dt)],
        capture_output=True, text=True, check=True).stdout
    return float(re.search(r"wall ([0-9.]+) s", out).group(1))


def python_l1_file(n, steps, dt=1e-3):
    """flexmb through Python on the same model file as the command line."""
    import flexmb
    model = flexmb.load(os.path.join(ROOT, "models", "hanging_beam.toml"),
                        set={"generator.elements": n, "probe.0.dof": f"b{n}.y"})
    # record=False: like the command line without -o, no states kept.
    return flexmb.run(model, t_end=steps * dt, dt=dt, record=False).wall_seconds


def median_per_step(samples, steps):
    return statistics.median(samples) / steps


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--l1-elements", type=int, default=10000)
    ap.add_argument("--l1-steps", type=int, default=20)
    ap.add_argument("--sc-elements", type=int, default=8)
    ap.add_argument("--sc-steps", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-exudyn", action="store_true")
    ap.add_argument("--cli-only", action="store_true",
                    help="only the command line against flexmb through Python on L1")
    args = ap.parse_args()
    have_exudyn = not args.no_exudyn
    if have_exudyn:
        try:
            import exudyn  # noqa: F401
        except ImportError:
            print("exudyn is not installed (pip install exudyn): flexmb only")
            have_exudyn = False
    import flexmb  # noqa: F401

    n1, s1, n2, s2 = args.l1_elements, args.l1_steps, args.sc_elements, args.sc_steps
    rows = []
    # L1: the command line and flexmb through Python on the same file,
    # interleaved, then the models written out in each API.
    cli, py = [], []
    for _ in range(args.repeats):
        cli.append(cli_l1(n1, s1))
        py.append(python_l1_file(n1, s1))
    cli_ms, py_ms = 1e3 * median_per_step(cli, s1), 1e3 * median_per_step(py, s1)
    print(f"L1 N = {n1}, {s1} steps: command line {cli_ms:.3f} ms/step, flexmb through Python "
          f"{py_ms:.3f} ms/step ({100 * (py_ms / cli_ms - 1) if cli_ms > 0 else math.nan:+.1f} %); samples (s): cli {cli}, python {py}")

    if args.cli_only:
        return 0
    for label, fx, ex, n, steps in (("L1 hanging beam", l1_flexmb, l1_exudyn, n1, s1),
                                    ("slider-crank", sc_flexmb, sc_exudyn, n2, s2)):
        f_samples, e_samples, f_check, e_check = [], [], None, None
        for _ in range(args.repeats):
            w, f_check = fx(n, steps)
            f_samples.append(w)
            if have_exudyn:
                w, e_check = ex(n, steps)
                e_samples.append(w)
        rows.append((label, n, steps, "flexmb", user_lines(fx),
                     1e3 * median_per_step(f_samples, steps), f_check))
        if have_exudyn:
            rows.append((label, n, steps, "Exudyn", user_lines(ex),
                         1e3 * median_per_step(e_samples, steps), e_check))
    print()
    print("| model | elements | steps | API | lines of user code | ms per step | check |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for label, n, steps, api, lines, ms, check in rows:
        print(f"| {label} | {n} | {steps} | {api} | {lines} | {ms:.3f} | {check:.6e} |")
    print("\ncheck: L1 the tip's y at the end (m); slider-crank the rod's midpoint deflection at the end (in)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
