"""Every exception type, with its attributes, and argument checks."""

import pytest

import flexmb
from conftest import model_path


def test_hierarchy():
    for cls in (flexmb.ModelError, flexmb.ConvergenceError, flexmb.SingularSystemError,
                flexmb.OutputError):
        assert issubclass(cls, flexmb.Error)
    assert issubclass(flexmb.Error, Exception)


def test_model_error_location():
    text = 'dimension = 2\n[[node]]\nid = "p"\nposition = [0.0, 0.0]\nmas = 1.0\n'
    with pytest.raises(flexmb.ModelError) as e:
        flexmb.loads(text, name="bad.toml")
    assert e.value.file == "bad.toml"
    assert e.value.line == 2 or e.value.line == 5
    assert e.value.field == "mas"
    with pytest.raises(flexmb.ModelError) as e:
        flexmb.loads('dimension = 2\n[[node]]\nid = "p"\nposition = [0.0]\nmass = 1.0\n')
    assert e.value.line == 4 and e.value.field == "position" and "node 'p'" in str(e.value)


def test_model_error_missing_file():
    with pytest.raises(flexmb.ModelError) as e:
        flexmb.load("/nonexistent/model.toml")
    assert e.value.file == "/nonexistent/model.toml" and e.value.line is None


def test_model_error_bad_setting(pendulum):
    # A key for another method is refused by the engine, naming the key.
    with pytest.raises(flexmb.ModelError) as e:
        flexmb.run(pendulum, t_end=0.1, rtol_typo=1.0)
    assert e.value.field == "rtol_typo"
    with pytest.raises(flexmb.ModelError) as e:
        flexmb.Simulation(pendulum, method="dopri5", rho1=0.5)
    assert "rho1" in str(e.value)
    with pytest.raises(flexmb.ModelError) as e:
        flexmb.run(pendulum, dt=-1.0)
    assert e.value.field == "dt"


def test_convergence_error(pendulum):
    with pytest.raises(flexmb.ConvergenceError) as e:
        flexmb.run(pendulum, t_end=0.1, max_iter=1)
    assert e.value.step == 1 and e.value.time == pytest.approx(0.01)
    # The run up to the failure comes with it.
    r = e.value.result
    assert r.status == "failed" and len(r.time) == 1 and "Newton" in r.reason
    sim = flexmb.Simulation(pendulum, max_iter=1)
    with pytest.raises(flexmb.ConvergenceError):
        sim.step()


def test_singular_system_error():
    # Two identical pins: the constraint Jacobian has dependent rows.
    b = flexmb.ModelBuilder(2)
    b.body("bar", position=[1.0, 0.0], angle=0.0, mass=1.0, inertia=0.1)
    b.ground_pin("pin1", point={"body": "bar", "offset": [-1.0, 0.0]}, ground=[0.0, 0.0])
    b.ground_pin("pin2", point={"body": "bar", "offset": [-1.0, 0.0]}, ground=[0.0, 0.0])
    with pytest.raises(flexmb.SingularSystemError) as e:
        flexmb.run(b.build(), t_end=0.1, dt=0.01)
    assert e.value.step == 0 and e.value.time == 0.0


def test_output_error(pendulum):
    with pytest.raises(flexmb.OutputError):
        flexmb.run(pendulum, t_end=0.1, output="/nonexistent/folder/run.h5")
    with pytest.raises(flexmb.OutputError):
        flexmb.read_hdf5("/nonexistent/run.h5")


def test_panic_becomes_error():
    with pytest.raises(flexmb.Error, match="internal error"):
        flexmb._flexmb._panic_for_tests()


def test_wrong_types_and_values_name_the_argument(pendulum):
    with pytest.raises(TypeError, match="t_end"):
        flexmb.run(pendulum, t_end="long")
    with pytest.raises(ValueError, match="t_end"):
        flexmb.run(pendulum, t_end=float("nan"))
    with pytest.raises(TypeError, match="model"):
        flexmb.run(42)
    with pytest.raises(TypeError, match="set"):
        flexmb.load(model_path("double_pendulum"), set=["generator.elements=3"])
    with pytest.raises(TypeError, match="dt"):
        flexmb.run(pendulum, dt=object())
    with pytest.raises(TypeError, match="progress"):
        flexmb.run(pendulum, t_end=0.1, progress="yes")
    with pytest.raises(ValueError, match="dimension"):
        flexmb.ModelBuilder(4)
    with pytest.raises(TypeError, match="out_dir"):
        flexmb.sweep(model_path("double_pendulum"), 3.5)
    with pytest.raises(ValueError, match="steps"):
        flexmb.static(pendulum, steps=-2)
