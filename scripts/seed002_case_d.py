#!/usr/bin/env python3
"""Why seed 002's case d claim (Figs. 25-26: alpha-kappa, alpha = kappa = 1,
h = 0.01, stable over 10 s) is not reproduced (docs/theory/galerkin.md §4).

An independent numpy transcription of the alpha-kappa step equations
(seed 002 eq. 66, L = I, G = 0) on case d (m1 = 0.005, m2 = 1, l1 = l2 = 1,
x0 = (1, 0, 1, 1), v0 = 0, g = 9.81 along -y, flexmb's constraint rows
(d.d - l^2)/2), with a finite-difference Jacobian, and the exact solution
(angles, DOP853 at rtol 1e-12). It prints:

1. the fixed-step run at h = 0.01 from flexmb's predictor (last step's
   acceleration): the failing step and the energy before it (flexmb's run
   gives the same: `flexmb run models/seed002_d.toml --method alpha-kappa
   --alpha 1 --kappa 1 --dt 0.01`), and cond(J) of the converged steps;
2. pseudo-arclength continuation in the step size from the last converged
   state: the branch of step solutions folds (J singular) at h*, below the
   step (h = 0.01, 0.005, 0.001);
3. Newton at the failing step: 100 plain iterations, Armijo-damped Newton,
   other predictors, and a predictor from 20 fine substeps;
4. roots of the step equations at h = 0.01 far from the branch
   (Levenberg-Marquardt from random configurations), and what the run does
   from the one reached by the predictor q_n + h v_n;
5. the exact solution: the chain-straightening "snaps" in 10 s.

    python3 -m venv venv && venv/bin/pip install numpy scipy
    venv/bin/python scripts/seed002_case_d.py        # about 5 minutes
"""

import numpy as np
from scipy.integrate import solve_ivp
from scipy.optimize import least_squares

G, M1, M2 = 9.81, 0.005, 1.0
MASS = np.array([M1, M1, M2, M2])
DV = G * np.array([0.0, M1, 0.0, M2])  # gravity: exact discrete gradient
Q0 = np.array([1.0, 0.0, 1.0, 1.0])


def phi(q):
    return 0.5 * np.array([q[0] ** 2 + q[1] ** 2 - 1, (q[2] - q[0]) ** 2 + (q[3] - q[1]) ** 2 - 1])


def jac_b(q):
    dx, dy = q[2] - q[0], q[3] - q[1]
    return np.array([[q[0], q[1], 0.0, 0.0], [-dx, -dy, dx, dy]])


def energy(q, v):
    return 0.5 * v @ (MASS * v) + G * (M1 * q[1] + M2 * q[3])


def unpack(x):
    return x[:4], x[4:8], x[8:12], x[12:16], x[16:18], x[18:20], x[20:22], x[22:24]


def residual(x, q, v, h, alpha=1.0, kappa=1.0):
    """Eq. 66 (a-h); B* of the quadratic rows is B at the midpoint (exact)."""
    q1, qj, v1, vj, lg, lj, e1, ej = unpack(x)
    bg, bh, b1, bj = jac_b(0.5 * (qj + q1)), jac_b(0.5 * (q + qj)), jac_b(q1), jac_b(qj)
    ra = MASS * (v1 - v) / h + DV + bg.T @ lg
    rb = MASS * (vj - v) / h - (bg.T @ lg - bh.T @ lj) / 3  # D_g - D_h = 0, P(qj) - P(qn) = 0
    rc = MASS * (q1 - q) / h - kappa / 2 * (b1.T @ e1 + bj.T @ ej) - kappa / 2 * MASS * (v1 + vj)
    rd = (MASS * (qj - q) / h + kappa / 6 * (b1.T @ e1 - bj.T @ ej)
          + kappa / 6 * MASS * (v1 - alpha * vj - (1 - alpha) * v))
    return np.concatenate([ra, rb, rc, rd, phi(qj), phi(q1), bj @ vj, b1 @ v1])


def fd_jac(f, x):
    cols = []
    for i in range(len(x)):
        d = 1e-7 * max(1.0, abs(x[i]))
        e = np.zeros(len(x))
        e[i] = d
        cols.append((f(x + e) - f(x - e)) / (2 * d))
    return np.array(cols).T


def predictor(q, v, a, lam, h):
    """flexmb's (galerkin/mod.rs): q1 = qn + h vn + h^2/2 a, vj = vn."""
    return np.concatenate([q + h * v + 0.5 * h * h * a, q - h * h / 6 * a, v + h * a, v,
                           lam, lam, np.zeros(4)])


def newton(x, q, v, h, maxit=30, damped=False):
    f = lambda y: residual(y, q, v, h)
    norms = []
    for it in range(maxit):
        r = f(x)
        norms.append(np.linalg.norm(r))
        if norms[-1] < 1e-11:
            return x, it, norms, True
        dx = np.linalg.solve(fd_jac(f, x), -r)
        s = 1.0
        if damped:  # Armijo backtracking on |F|_2
            while s > 1e-6 and np.linalg.norm(f(x + s * dx)) > (1 - 1e-4 * s) * norms[-1]:
                s *= 0.5
        x = x + s * dx
    return x, maxit, norms, False


def start():
    k = np.zeros((6, 6))
    k[:4, :4] = np.diag(MASS)
    k[:4, 4:] = jac_b(Q0).T
    k[4:, :4] = jac_b(Q0)
    s = np.linalg.solve(k, np.concatenate([-DV, [0.0, 0.0]]))
    return Q0.copy(), np.zeros(4), s[:4], s[4:]


def run(h, t_end, pred=predictor, maxit=30):
    """Fixed steps; returns the converged steps (t, q, v, a, lam, x) and the failing step."""
    q, v, a, lam = start()
    steps = [(0.0, q, v, a, lam, None)]
    for k in range(int(round(t_end / h))):
        x, _, norms, ok = newton(pred(q, v, a, lam, h), q, v, h, maxit)
        if not ok:
            return steps, k + 1
        q1, _, v1, _, lg, _, _, _ = unpack(x)
        a, lam, q, v = (v1 - v) / h, lg, q1, v1
        steps.append(((k + 1) * h, q, v, a, lam, x))
    return steps, None


def fold(h):
    """Pseudo-arclength continuation in p = h'/h from the last converged state of the
    run at step h: the largest p reached before the branch turns back, and cond(J) there."""
    steps, failed = run(h, 1.0)
    _, q, v, a, lam, _ = steps[-1]

    def g(y):
        r = residual(y[:24], q, v, y[24] * h)
        r[:16] *= y[24] * h
        return r

    p0 = 0.02
    x, _, _, ok = newton(predictor(q, v, a, lam, p0 * h), q, v, p0 * h)
    assert ok
    y = np.concatenate([x, [p0]])
    wts = np.concatenate([np.ones(16), np.full(8, 1e-2), [1.0]])
    tan = np.linalg.svd(fd_jac(g, y))[2][-1]
    tan = tan if tan[24] > 0 else -tan
    ds, best, cond_best = 0.01, p0, 0.0
    while ds > 1e-8:
        yp = y + ds * tan / np.linalg.norm(tan * wts)
        for _ in range(20):
            dy = np.linalg.solve(np.vstack([fd_jac(g, yp), tan]), -np.concatenate([g(yp), [0.0]]))
            yp = yp + dy
            if np.linalg.norm(dy) < 1e-10 * (1 + np.linalg.norm(yp)):
                break
        else:
            ds *= 0.5
            continue
        jy = fd_jac(g, yp)
        new = np.linalg.svd(jy)[2][-1]
        tan = new if new @ tan > 0 else -new
        y = yp
        if y[24] > best:
            sv = np.linalg.svd(jy[:, :24], compute_uv=False)
            best, cond_best = y[24], sv[0] / sv[-1]
        if y[24] < 0.8 * best or y[24] >= 1.0:
            break
        ds = min(1.2 * ds, 0.05)
    return steps[-1][0], failed, best * h, cond_best


def exact_snaps():
    def f(_, y):
        t1, t2, w1, w2 = y
        c, s = np.cos(t1 - t2), np.sin(t1 - t2)
        m = np.array([[M1 + M2, M2 * c], [M2 * c, M2]])
        r = [-G * (M1 + M2) * np.cos(t1) - M2 * s * w2 ** 2, -G * M2 * np.cos(t2) + M2 * s * w1 ** 2]
        return [w1, w2, *np.linalg.solve(m, r)]

    sol = solve_ivp(f, [0, 10], [0, np.pi / 2, 0, 0], method="DOP853", rtol=1e-12, atol=1e-12,
                    dense_output=True, max_step=1e-3)
    ts = np.linspace(0, 10, 100001)
    y = sol.sol(ts)
    c = np.cos(y[0] - y[1])
    snaps = [ts[i] for i in range(1, len(ts) - 1) if c[i] > 0.999 and c[i - 1] <= c[i] >= c[i + 1]]
    return snaps, np.abs(y[2]).max(), sol.sol(0.76)


def main():
    print("1. fixed steps, alpha = kappa = 1, flexmb's predictor")
    for h in [0.01, 0.005, 0.002, 0.001, 0.0005]:
        steps, failed = run(h, 1.0)
        t, q, v = steps[-1][:3]
        what = f"Newton fails at step {failed}" if failed else "reaches t = 1"
        print(f"   h = {h}: {what}; last t = {t:.4f}, E = {energy(q, v):.9f}")
    steps, _ = run(0.01, 1.0)
    for k in [10, 50, 70, 72, 73, 74]:
        q, v = steps[k - 1][1:3]
        sv = np.linalg.svd(fd_jac(lambda y: residual(y, q, v, 0.01), steps[k][5]), compute_uv=False)
        print(f"   cond(J) at the solution of step {k}: {sv[0] / sv[-1]:.2e}")

    print("2. continuation in the step size from the last converged state")
    for h in [0.01, 0.005, 0.001]:
        t, failed, hstar, cond = fold(h)
        print(f"   run at h = {h} (fails at step {failed}, from t = {t:.3f}): the branch "
              f"folds at h* = {hstar:.6f}, cond(J) there {cond:.1e}")

    print("3. Newton at the failing step of h = 0.01 (from t = 0.74)")
    h = 0.01
    _, q, v, a, lam, _ = steps[-1]
    preds = {
        "flexmb predictor": predictor(q, v, a, lam, h),
        "q_n + h v_n": predictor(q, v, 0 * a, lam, h),
        "q_n": predictor(q, 0 * v, 0 * a, lam, h),
    }
    for name, x0 in preds.items():
        for damped in [False, True]:
            x, it, norms, ok = newton(x0, q, v, h, maxit=100, damped=damped)
            kind = "damped" if damped else "plain"
            print(f"   {name}, {kind}: converged {ok} in {it} iterations, |F| = {norms[-1]:.2e}, "
                  f"E = {energy(x[:4], x[8:12]):.3f}")
    qf, vf, lf, af = q, v, lam, a
    for _ in range(20):  # 20 substeps of h/20 across the snap as the predictor
        x, _, _, ok = newton(predictor(qf, vf, af, lf, h / 20), qf, vf, h / 20)
        assert ok
        af, qf, vf, lf = (x[8:12] - vf) / (h / 20), x[:4], x[8:12], x[16:18]
    x0 = np.concatenate([qf, q - h * h / 6 * (vf - v) / h, vf, v, lf, lf, np.zeros(4)])
    x, it, norms, ok = newton(x0, q, v, h, maxit=100)
    print(f"   predictor from 20 substeps of h/20 (fine E = {energy(qf, vf):.3f}): "
          f"converged {ok}, |F| = {norms[-1]:.2e}")

    print("4. roots at h = 0.01 from 100 random configurations (Levenberg-Marquardt)")
    rng = np.random.default_rng(1)
    roots = []
    for _ in range(100):
        th = rng.uniform(0, 2 * np.pi, 4)
        p = [np.array([np.cos(th[i]), np.sin(th[i])]) for i in range(4)]
        x0 = np.concatenate([p[0], p[0] + p[1], p[2], p[2] + p[3], np.zeros(16)])
        r = least_squares(lambda y: residual(y, q, v, h), x0, method="lm", xtol=1e-15, ftol=1e-15,
                          gtol=1e-15, max_nfev=20000)
        if np.max(np.abs(r.fun)) < 1e-8 and all(np.max(np.abs(r.x[:16] - s[:16])) > 1e-6 for s in roots):
            roots.append(r.x)
            q1, v1 = r.x[:4], r.x[8:12]
            print(f"   root: q1 = {q1.round(3)}, v1 = {v1.round(2)}, E = {energy(q1, v1):.3f}, "
                  f"|lambda_g| = {np.max(np.abs(r.x[16:18])):.0f}")
    const_v = lambda q, v, a, lam, h: predictor(q, v, 0 * a, lam, h)
    steps_cv, failed = run(0.01, 10.0, pred=const_v, maxit=50)
    t, qc, vc = steps_cv[-1][:3]
    print(f"   run with the predictor q_n + h v_n: fails at step {failed} (t = {t:.2f}, E = "
          f"{energy(qc, vc):.3f})")

    print("5. exact solution")
    snaps, vmax, y = exact_snaps()
    print(f"   {len(snaps)} snaps (cos(theta1 - theta2) > 0.999) in 10 s: {np.round(snaps, 3)}; "
          f"max |v1| = {vmax:.1f}; m2's velocity at t = 0.76: "
          f"{np.round(y[2] * np.array([-np.sin(y[0]), np.cos(y[0])]) + y[3] * np.array([-np.sin(y[1]), np.cos(y[1])]), 2)}")


if __name__ == "__main__":
    main()
