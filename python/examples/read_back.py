"""A run written to HDF5 (the same file as `flexmb run -o`) and read back:
the arrays, the energies, a probe, the status and the method's statistics."""

import os

import flexmb

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = os.path.join(HERE, "..", "..", "models", "hanging_beam.toml")

model = flexmb.load(MODEL, set={"generator.elements": 20, "probe.0.dof": "b20.y"})
live = flexmb.run(model, t_end=0.05, output="hanging_beam.h5")
back = flexmb.read_hdf5("hanging_beam.h5")
print(back)
print("status:", back.status, "| integrator:", back.integrator)
print("stats:", back.stats)
print("tip y at the end:", back.probes["tip_y"][-1], "| max |Phi|:", back.constraints["position"].max())
assert back.u.tobytes() == live.u.tobytes() and back.lam.tobytes() == live.lam.tobytes()
assert back.stats == live.stats
