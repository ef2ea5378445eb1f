"""A model built in code: a planar four-bar of rigid bodies with a
spring-damper and a driving torque, with the model file's field names;
run, stepped, and the static equilibrium of a hanging mass."""

import math

import flexmb

b = flexmb.ModelBuilder(dimension=2, title="four-bar in code")
b.gravity([0.0, -9.81])
b.body("crank", position=[0.0, 0.5], angle=0.0, mass=1.0, inertia=1.0 / 12)
b.body("coupler", position=[1.0, 1.0], angle=0.0, mass=2.0, inertia=8.0 / 12)
b.body("rocker", position=[2.0, 0.5], angle=0.0, mass=1.0, inertia=1.0 / 12)
b.ground_pin("A", point={"body": "crank", "offset": [0.0, -0.5]}, ground=[0.0, 0.0])
b.revolute("B", a={"body": "crank", "offset": [0.0, 0.5]}, b={"body": "coupler", "offset": [-1.0, 0.0]})
b.revolute("C", a={"body": "coupler", "offset": [1.0, 0.0]}, b={"body": "rocker", "offset": [0.0, 0.5]})
b.ground_pin("D", point={"body": "rocker", "offset": [0.0, -0.5]}, ground=[2.0, 0.0])
b.torque("drive", body="crank", torque=2.0)
b.probe("rocker_angle", "coordinate", dof="rocker.theta")
b.integrator(scheme="generalized-alpha(0.8)", dt=1e-3, t_end=1.0)
model = b.build()
print(model, model.multiplier_names[:4], "...")

r = flexmb.run(model)
print(f"{r.status}: rocker angle {r.probes['rocker_angle'][-1]:+.4f} rad at t = {r.time[-1]}, "
      f"work of the torque {r.energy['external_work'][-1]:.4f} J, "
      f"max |Phi| {r.constraints['position'].max():.1e}")
assert r.status == "completed" and r.constraints["position"].max() < 1e-8

# The same model stepped: look between steps.
sim = flexmb.Simulation(model, scheme="midpoint", dt=1e-3)
while sim.t < 0.5 - 1e-12:
    sim.advance_to(round(sim.t + 0.1, 10))
    print(f"t = {sim.t:.1f}: crank angle {sim.position('crank.theta'):+.4f}, "
          f"energy {sim.energy()['total']:+.5f}, work {sim.energy()['external_work']:+.5f}")

# Static equilibrium of a mass on a spring along a vertical slider.
s = flexmb.ModelBuilder(2).gravity([0.0, -9.81])
s.node("mass", position=[0.0, -1.0], mass=2.0)
s.spring_damper("spring", a={"ground": [0.0, 0.0]}, b="mass", stiffness=400.0, free_length=1.0)
s.slider("guide", point="mass", line={"ground": [0.0, 0.0]}, normal=[1.0, 0.0])
eq = flexmb.static(s.build())
print(f"static: y = {eq['u'][1]:.6f} (m g / k below the unloaded length: {-1 - 2 * 9.81 / 400:.6f})")
assert abs(eq["u"][1] - (-1 - 2 * 9.81 / 400)) < 1e-12
