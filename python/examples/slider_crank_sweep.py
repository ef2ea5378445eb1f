"""The flexible slider-crank (Chin Ch. 5) swept over the elements per rod
and two schemes, in parallel as `flexmb batch` runs it; the midpoint
deflection of the connecting rod plotted with matplotlib (PNG written)."""

import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import flexmb  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
BASE = os.path.join(HERE, "..", "..", "models", "slider_crank_flexible.toml")

sweep = {
    "base": BASE,
    "set": {"integrator": {"dt": 1e-5, "t_end": 0.03}, "output": {"every": 20}},
    "parameters": {"generator": {"elements": [2, 4, 8]},
                   "integrator": {"scheme": ["midpoint", "generalized-alpha(0.8)"]}},
}
columns = flexmb.sweep(sweep, "slider_crank_sweep", jobs=2)
print("case                               steps  max |deflection|")
for case, steps, dmax in zip(columns["case"], columns["steps"],
                             columns["midpoint_deflection.max_abs"]):
    print(f"{case:34s} {int(steps):5d}  {dmax:.4e}")
assert all(s == "completed" for s in columns["status"])

fig, ax = plt.subplots(figsize=(8, 5))
for case in columns["case"]:
    r = flexmb.read_hdf5(os.path.join("slider_crank_sweep", case + ".h5"))
    ax.plot(r.time * 1e3, r.probes["midpoint_deflection"], label=case)
ax.set_xlabel("t (ms)")
ax.set_ylabel("midpoint deflection (in)")
ax.legend(fontsize=7)
fig.tight_layout()
fig.savefig("slider_crank_sweep.png", dpi=100)
print("wrote slider_crank_sweep.png")
