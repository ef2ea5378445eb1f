"""No input crashes the interpreter: random TOML text and random builder
arguments through the Python API end in a result or a Python exception
(flexmb.Error, TypeError, ValueError), never in a Rust panic or an abort."""

import math
import os
import random

import pytest

import flexmb
from conftest import MODELS

ALLOWED = (flexmb.Error, TypeError, ValueError)
WEIRD = [0, -1, 1, 2, 3, 1e-300, 1e300, -1e300, float("nan"), float("inf"), 2**62, -(2**62),
         0.5, "", "x", "midpoint", "ground", True, False, [], [0.0], [1.0, 2.0], [0.0, 0.0, 0.0],
         [1.0, 2.0, 3.0, 4.0], [float("nan")] * 3, {}, {"ground": [0.0, 0.0]},
         {"body": "b1", "offset": [0.0, 0.0]}, {"body": "zz"}, "b1", "n1", None]


def short(model):
    """Runs `model` for at most a few steps (any error allowed)."""
    try:
        sim = flexmb.Simulation(model)
        for _ in range(3):
            sim.step()
        sim.energy(), sim.constraint_residuals(), sim.u, sim.lam
    except ALLOWED:
        pass


def mutate(text, rng):
    lines = text.splitlines()
    for _ in range(rng.randint(1, 4)):
        if not lines:
            break
        k = rng.randrange(len(lines))
        op = rng.randrange(6)
        if op == 0:
            del lines[k]
        elif op == 1:
            lines.insert(k, rng.choice(lines))
        elif op == 2 and "=" in lines[k]:
            key = lines[k].split("=", 1)[0]
            value = rng.choice(WEIRD)
            lines[k] = f"{key}= {fmt(value)}"
        elif op == 3:
            i = rng.randrange(len(lines[k]) + 1)
            lines[k] = lines[k][:i] + rng.choice(["[", "]", "\"", "=", "{", "}", ",", "0", "-", "\x00", "é"]) + lines[k][i:]
        elif op == 4:
            lines[k] = lines[k][: rng.randrange(len(lines[k]) + 1)]
        else:
            lines[k], lines[-1] = lines[-1], lines[k]
    return "\n".join(lines)


def fmt(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return '"' + v + '"'
    if isinstance(v, list):
        return "[" + ", ".join(fmt(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k} = {fmt(x)}" for k, x in v.items()) + "}"
    if v is None:
        return '""'
    return str(v)


SMALL = ["double_pendulum", "pendulum", "free_body", "heavy_top", "circle_track", "four_mass",
         "seed002_a", "seed003_spring", "slider_crank_rigid", "cantilever_line", "hanging_beam",
         "dumbbell", "rolling_disk", "thin_beam_fourbar", "axisymmetric_body"]


@pytest.mark.parametrize("seed", range(4))
def test_random_toml(seed):
    rng = random.Random(seed)
    texts = [open(os.path.join(MODELS, n + ".toml")).read() for n in SMALL]
    loaded = 0
    for _ in range(120):
        text = mutate(rng.choice(texts), rng)
        try:
            model = flexmb.loads(text, set={"integrator.t_end": 0.001} if rng.random() < 0.3 else None)
        except ALLOWED:
            continue
        loaded += 1
        short(model)
    assert loaded > 0


@pytest.mark.parametrize("seed", range(4))
def test_random_builder_arguments(seed):
    rng = random.Random(100 + seed)
    B = flexmb.ModelBuilder
    kinds = ([("element", k) for k in B.ELEMENT_TYPES] + [("joint", k) for k in B.JOINT_TYPES]
             + [("load", k) for k in B.LOAD_TYPES] + [("probe", k) for k in B.PROBE_TYPES])
    fields = ["a", "b", "point", "ground", "body", "node", "length", "stiffness", "damping",
              "mass", "inertia", "position", "velocity", "angle", "force", "torque", "dof",
              "direction", "offset", "ea", "ei", "rho_a", "area", "line", "axis", "radius",
              "time", "curve", "amplitude", "omega", "frame", "angular_velocity", "nodes"]
    for _ in range(150):
        b = B(rng.choice([2, 3]))
        try:
            if rng.random() < 0.8:
                b.gravity(rng.choice(WEIRD))
            for i in range(rng.randint(0, 3)):
                b.node(f"n{i}", position=rng.choice(WEIRD), mass=rng.choice(WEIRD))
            for i in range(rng.randint(0, 2)):
                b.body(f"b{i}", position=rng.choice(WEIRD), mass=rng.choice(WEIRD),
                       inertia=rng.choice(WEIRD), angle=rng.choice(WEIRD))
            for i in range(rng.randint(0, 3)):
                table, kind = rng.choice(kinds)
                kw = {f: rng.choice(WEIRD) for f in rng.sample(fields, rng.randint(0, 5))}
                getattr(b, table)(f"e{i}", kind, **kw)
            if rng.random() < 0.2:
                b.generator(rng.choice(["hanging_beam", "slider_crank_flexible", "rigid_chain", "x"]),
                            elements=rng.choice(WEIRD))
            if rng.random() < 0.3:
                b.integrator(**{rng.choice(["dt", "scheme", "method", "rtol", "t_end", "option"]):
                                rng.choice(WEIRD)})
            model = b.build()
        except ALLOWED:
            continue
        short(model)


def test_random_run_arguments(pendulum):
    rng = random.Random(7)
    keys = ["dt", "scheme", "method", "rtol", "atol", "option", "form", "max_iter", "tol",
            "step_control", "family", "rho1", "max_step", "tableau", "initialize", "bogus"]
    for _ in range(150):
        kw = {k: rng.choice(WEIRD) for k in rng.sample(keys, rng.randint(1, 3))}
        try:
            flexmb.run(pendulum, t_end=rng.choice([0.02, -1.0, 0.0, 1e-12]), **kw)
        except ALLOWED:
            pass
