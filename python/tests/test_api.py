"""Every item of the Python API (issue #27): load, Model, run/Result,
read_hdf5, Simulation, static, sweep, ModelBuilder."""

import math
import os

import numpy as np
import pytest

import flexmb
from conftest import MODELS, model_path


def test_load_and_model(pendulum):
    assert pendulum.dof_names == ["pendulum1.x", "pendulum1.y", "pendulum1.theta",
                                  "pendulum2.x", "pendulum2.y", "pendulum2.theta"]
    assert pendulum.n_dofs == 6
    assert pendulum.n_constraints == 4
    assert pendulum.multiplier_names == ["pin[0]", "pin[1]", "hinge[0]", "hinge[1]"]
    assert pendulum.dimension == 2 and pendulum.t_end == 10.0
    assert pendulum.title.startswith("Rigid double pendulum")
    np.testing.assert_array_equal(pendulum.u0, [1.0, 0.0, math.pi / 2, 1.0, -1.0, 0.0])
    assert "double_pendulum" in repr(pendulum)


def test_load_with_set_overrides():
    coarse = flexmb.load(model_path("hanging_beam"))
    fine = flexmb.load(model_path("hanging_beam"), set={"generator.elements": 16,
                                                        "probe.0.dof": "b16.y"})
    assert coarse.n_dofs != fine.n_dofs
    assert "b16.y" in fine.dof_names and "b17.y" not in fine.dof_names
    assert fine.probe_names == ["tip_y"]
    # The overrides are in the model text (as --set writes it).
    assert "elements = 16" in fine.text


def test_loads_from_text():
    m = flexmb.loads('dimension = 2\n[[node]]\nid = "p"\nposition = [0.0, 0.0]\nmass = 1.0\n')
    assert m.dof_names == ["p.x", "p.y"] and m.n_constraints == 0 and m.file == "<string>"


def test_run_result_fields(pendulum):
    r = flexmb.run(pendulum, t_end=0.1)
    assert r.status == "completed" and r.reason is None
    assert len(r) == 11 and r.time.shape == (11,)
    np.testing.assert_allclose(r.time, np.arange(11) * 0.01, rtol=0, atol=1e-15)
    assert r.u.shape == (11, 6) and r.v.shape == (11, 6) and r.a.shape == (11, 6)
    assert r.lam.shape == (11, 4)
    assert r.u.dtype == np.float64 and r.u.flags["C_CONTIGUOUS"]
    assert r.dof_names == pendulum.dof_names
    assert r.multiplier_names == pendulum.multiplier_names
    assert set(r.energy) == {"kinetic", "potential", "total", "external_work"}
    # The midpoint rule conserves the energy of the double pendulum.
    assert abs(r.energy["total"][-1] - r.energy["total"][0]) < 1e-10
    assert set(r.constraints) == {"position", "velocity", "acceleration"}
    assert r.constraints["position"].max() < 1e-10
    assert r.stats["newton_iterations"] == int(r.newton_iterations.sum())
    assert r.steps == 10 and r.t_end_reached == pytest.approx(0.1)
    np.testing.assert_array_equal(r.dof("pendulum1.x"), r.u[:, 0])
    np.testing.assert_array_equal(r.multiplier("hinge[1]"), r.lam[:, 3])
    with pytest.raises(ValueError, match="no DOF named 'nope'"):
        r.dof("nope")
    assert "completed" in r.summary


def test_run_probes_and_settings():
    beam = flexmb.load(model_path("hanging_beam"))
    r = flexmb.run(beam, t_end=0.005)
    assert list(r.probes) == ["tip_y"]
    np.testing.assert_array_equal(r.probes["tip_y"], r.dof("b40.y"))
    # Settings with the model file's [integrator] names override the file's.
    r2 = flexmb.run(beam, t_end=0.005, dt=5e-4)
    assert len(r2.time) == 11 and len(r.time) == 6
    r3 = flexmb.run(beam, t_end=0.005, method="dopri5", rtol=1e-6)
    assert r3.status == "completed" and "nreject" in r3.stats
    assert r3.integrator != r.integrator


def test_run_without_states(pendulum):
    full, light = flexmb.run(pendulum, t_end=0.1), flexmb.run(pendulum, t_end=0.1, record=False)
    assert light.u.shape == (0, 6) and light.lam.shape == (0, 4)
    assert light.time.tobytes() == full.time.tobytes()
    assert light.energy["total"].tobytes() == full.energy["total"].tobytes()
    assert light.stats == full.stats


def test_run_accepts_a_path():
    r = flexmb.run(model_path("double_pendulum"), t_end=0.02)
    assert r.u.shape == (3, 6)


def test_run_output_and_read_hdf5(pendulum, tmp_path):
    out = tmp_path / "dp.h5"
    r = flexmb.run(pendulum, t_end=0.1, output=out)
    mem = flexmb.run(pendulum, t_end=0.1)
    back = flexmb.read_hdf5(out)
    assert back.status == "completed"
    for name in ("time", "u", "v", "a", "lam"):
        a, b, c = getattr(r, name), getattr(back, name), getattr(mem, name)
        assert a.tobytes() == b.tobytes() == c.tobytes(), name
    assert back.stats == r.stats == mem.stats
    assert back.dof_names == r.dof_names
    for k in back.energy:
        assert back.energy[k].tobytes() == mem.energy[k].tobytes()


def test_simulation_stepping(pendulum):
    sim = flexmb.Simulation(pendulum, scheme="midpoint", dt=1e-3)
    assert sim.t == 0.0
    e0 = sim.energy()["total"]
    sim.advance_to(0.05)
    assert sim.t == pytest.approx(0.05) and sim.steps == 50
    t = sim.step()
    assert t == pytest.approx(0.051) and sim.t == t and sim.steps == 51
    assert sim.step(0.0515) == pytest.approx(0.0515)  # never past t_stop
    u, v, a, lam = sim.u, sim.v, sim.a, sim.lam
    assert u.shape == (6,) and v.shape == (6,) and a.shape == (6,) and lam.shape == (4,)
    assert sim.position("pendulum1.x") == u[0]
    assert sim.velocity("pendulum2.y") == v[4]
    e = sim.energy()
    assert set(e) == {"kinetic", "potential", "total", "external_work"}
    assert abs(e["total"] - e0) < 1e-9  # the midpoint rule conserves it
    c = sim.constraint_residuals()
    assert c["position"] < 1e-10 and set(c) == {"position", "velocity", "acceleration"}
    assert sim.stats["newton_iterations"] > 0
    assert "midpoint" in sim.method.lower() or "V0" in sim.method
    assert sim.model.n_dofs == 6
    with pytest.raises(ValueError, match="name"):
        sim.position("nope")
    with pytest.raises(ValueError, match="back in time"):
        sim.advance_to(0.0)
    with pytest.raises(ValueError):
        sim.advance_to(float("nan"))


def test_simulation_probe_and_record():
    beam = flexmb.load(model_path("hanging_beam"))
    sim = flexmb.Simulation(beam, record=True)
    sim.advance_to(0.005)
    assert sim.probe("tip_y") == sim.position("b40.y")
    rec = sim.results()
    run = flexmb.run(beam, t_end=0.005)
    # The recording stepper keeps what the run records, bit for bit.
    for name in ("time", "u", "v", "a", "lam"):
        assert getattr(rec, name).tobytes() == getattr(run, name).tobytes(), name
    assert rec.probes["tip_y"].tobytes() == run.probes["tip_y"].tobytes()
    assert flexmb.Simulation(beam).results() is None


def test_simulation_adaptive_method(pendulum):
    sim = flexmb.Simulation(pendulum, method="dopri5", rtol=1e-8)
    sim.advance_to(0.1)
    assert sim.t == pytest.approx(0.1)
    assert "nreject" in sim.stats
    t0 = sim.t
    assert sim.step() > t0


def test_static_equilibrium():
    b = flexmb.ModelBuilder(2)
    b.gravity([0.0, -9.81])
    b.node("mass", position=[0.0, -1.0], mass=2.0)
    b.spring_damper("spring", a={"ground": [0.0, 0.0]}, b="mass", stiffness=400.0, free_length=1.0)
    b.slider("guide", point="mass", line={"ground": [0.0, 0.0]}, normal=[1.0, 0.0])
    eq = flexmb.static(b.build(), steps=5)
    # The spring stretches by m g / k.
    assert eq["u"][1] == pytest.approx(-1.0 - 2.0 * 9.81 / 400.0, abs=1e-12)
    assert len(eq["iterations"]) == 5 and eq["residual"] < 1e-10
    with pytest.raises(ValueError, match="steps"):
        flexmb.static(b.build(), steps=0)


def test_sweep_file_and_dict(tmp_path):
    cols = flexmb.sweep(os.path.join(MODELS, "sweeps", "slider_crank_smoke.toml"),
                        tmp_path / "smoke", jobs=2)
    assert cols["status"] == ["completed"] * 4
    assert cols["generator.elements"].tolist() == [2.0, 2.0, 4.0, 4.0]
    assert cols["steps"].tolist() == [200.0] * 4
    assert len(cols["case"]) == 4
    assert len([f for f in os.listdir(tmp_path / "smoke") if f.endswith(".h5")]) >= 4
    d = {
        "base": os.path.join(MODELS, "double_pendulum.toml"),
        "set": {"integrator": {"t_end": 0.05}},
        "parameters": {"integrator": {"dt": [0.01, 0.005]}},
    }
    cols = flexmb.sweep(d, tmp_path / "dict")
    assert cols["steps"].tolist() == [5.0, 10.0]


def test_builder_double_pendulum_equals_the_file(pendulum):
    b = flexmb.ModelBuilder(dimension=2, title="built")
    b.gravity([0.0, -10.0])
    b.body("pendulum1", position=[1.0, 0.0], angle=math.pi / 2, mass=1.0, inertia=0.0)
    b.body("pendulum2", position=[1.0, -1.0], angle=0.0, mass=1.0, inertia=0.0)
    b.ground_pin("pin", point={"body": "pendulum1", "offset": [0.0, 1.0]}, ground=[0.0, 0.0])
    b.revolute("hinge", a={"body": "pendulum1", "offset": [0.0, 0.0]},
               b={"body": "pendulum2", "offset": [0.0, 1.0]})
    b.integrator(scheme="midpoint", option=2, form="a", dt=0.01, tol=1e-8,
                 convergence="increment", max_iter=100)
    m = b.build()
    assert m.dof_names == pendulum.dof_names and m.file == "<builder>"
    assert "[[joint]]" in b.to_toml()
    r1, r2 = flexmb.run(m, t_end=0.2), flexmb.run(pendulum, t_end=0.2)
    assert r1.u.tobytes() == r2.u.tobytes() and r1.lam.tobytes() == r2.lam.tobytes()


def test_builder_3d_generator_probe_and_loads():
    b = flexmb.ModelBuilder(3)
    b.gravity([0.0, 0.0, -9.81])
    b.body("top", position=[0.0, 0.0, 1.0], mass=1.0, inertia=[0.1, 0.1, 0.05],
           angular_velocity=[0.0, 0.0, 10.0])
    b.spherical("tip", a={"body": "top", "offset": [0.0, 0.0, -1.0]}, b={"ground": [0.0, 0.0, 0.0]})
    b.torque("spin", body="top", torque=[0.0, 0.0, 0.1])
    b.probe("z", "coordinate", dof="top.z")
    m = b.build()
    assert m.dimension == 3 and m.probe_names == ["z"]
    r = flexmb.run(m, t_end=0.01, dt=1e-3)
    assert r.probes["z"].shape == (11,)

    g = flexmb.ModelBuilder(2).generator("hanging_beam", elements=4)
    g.probe("tip", "coordinate", dof="b4.y")
    assert flexmb.run(g.build(), t_end=0.002, dt=1e-3).probes["tip"].shape == (3,)


def test_every_shipped_model_loads():
    for name in sorted(os.listdir(MODELS)):
        if name.endswith(".toml"):
            m = flexmb.load(os.path.join(MODELS, name))
            assert m.n_dofs > 0, name
