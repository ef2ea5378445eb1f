"""The double pendulum of Hoitink's thesis (§4.1.1) from its model file:
10 s with the midpoint rule, energy conserved to round-off, constraints
held; then the same with DOPRI5 (index-1 form), for comparison."""

import os

import flexmb

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = os.path.join(HERE, "..", "..", "models", "double_pendulum.toml")

model = flexmb.load(MODEL)
print(model)
r = flexmb.run(model)  # the file's [integrator]: midpoint rule, dt = 0.01, 10 s
drift = abs(r.energy["total"] - r.energy["total"][0]).max()
print(f"midpoint: {r.steps} steps, max |E - E0| = {drift:.2e}, "
      f"max |Phi| = {r.constraints['position'].max():.2e}")
assert r.status == "completed" and drift < 1e-10

d = flexmb.run(model, method="dopri5", rtol=1e-8, atol=1e-10)
print(f"dopri5:   {d.steps} steps, {d.stats['nreject']} rejected, "
      f"x2(10) = {d.dof('pendulum2.x')[-1]:+.6f} vs {r.dof('pendulum2.x')[-1]:+.6f}")
