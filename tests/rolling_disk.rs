//! The rolling disk of seed 001 §4.6 (`models/rolling_disk.toml`; digest
//! §3.6): a velocity-level (nonholonomic) joint next to holonomic rows.
//!
//! * the model loads, with rows `disk.normalization`, `floor.contact`
//!   (position level) and `floor.rolling[0..1]` (velocity level), and its
//!   initial state (the seed's Euler-angle state converted as in the file's
//!   header) satisfies all rows to 1e-12;
//! * `constraint_norms` puts the velocity rows into the velocity norm only;
//! * GSSSS refuses the model, naming the joint;
//! * the index-1 system is nonsingular and its acceleration satisfies the
//!   acceleration rows of both levels;
//! * physics: rolling does no work (dE/dt = 0 along the index-1 motion while
//!   kinetic and potential energy change), and the index-1 acceleration is the
//!   one of the seed's Euler-angle equations of motion (eqs. 4.29–4.31).
//!
//! Run with `--nocapture` to see the measured numbers.

mod common;

use flexmb::assembly::Assembler;
use flexmb::assembly::Mechanics;
use flexmb::input::load_model_file;
use flexmb::integrate::{IntegratorSpec, StepError};
use flexmb::joint::ConstraintLevel;
use flexmb::kinematics::attitude::Attitude;
use flexmb::linalg::SaddlePointSolver;
use flexmb::model::Model;
use nalgebra::{DMatrix, DVector};

use common::disk::{body_state, disk_model, tilted_state};
use common::fd::fd_second;
use common::{max_abs, max_diff, model_path};

/// The seed's initial state (digest §3.6): q(0), q'(0).
const Q0: [f64; 5] = [0.0, 0.0, std::f64::consts::FRAC_PI_2, 0.0, 0.0];
const QD0: [f64; 5] = [0.0, 0.1, 0.1, -0.1, -0.1];

fn model() -> Model {
    load_model_file(model_path("rolling_disk"))
        .expect("models/rolling_disk.toml loads")
        .model
}

#[test]
fn model_loads_with_consistent_initial_state() {
    let model = model();
    assert_eq!((model.n_dofs(), model.n_constraints()), (7, 4));
    assert_eq!(
        model.multiplier_names(),
        [
            "disk.normalization[0]",
            "floor.contact[0]",
            "floor.rolling[0]",
            "floor.rolling[1]"
        ]
    );
    use ConstraintLevel::{Position, Velocity};
    assert_eq!(
        model.constraint_levels(),
        [Position, Position, Velocity, Velocity]
    );
    assert!(model.has_velocity_constraints());
    assert_eq!(
        model.velocity_joints().collect::<Vec<_>>(),
        ["floor.rolling"]
    );

    // The file's body state is the seed's (q(0), q'(0)) converted as its
    // header says.
    let (c, p, vc, wb) = body_state(&Q0, &QD0, 1.0);
    let u_ref: Vec<f64> = c.iter().chain(&p).copied().collect();
    let pdot = flexmb::kinematics::rotation::rate_from_body_angular_velocity(&p, &wb);
    let v_ref: Vec<f64> = vc.iter().chain(&pdot).copied().collect();
    let (du, dv) = (max_diff(&model.u0, &u_ref), max_diff(&model.v0, &v_ref));
    eprintln!("file state vs converted seed state: |du| = {du:.2e}, |dv| = {dv:.2e}");
    eprintln!("u0 = {:?}\nv0 = {:?}", model.u0, model.v0);
    assert!(du < 1e-15 && dv < 1e-15);

    let asm = Assembler::new(&model);
    let mech = Mechanics::new(&model, &asm);
    let m = asm.n_constraints();
    let (mut phi, mut rates) = (vec![1.0; m], vec![1.0; m]);
    mech.constraint_values(&model.u0, 0.0, &mut phi);
    mech.constraint_rates(&model.u0, &model.v0, 0.0, &mut rates);
    eprintln!("initial Phi = {phi:?}\ninitial B v + Phi_t = {rates:?}");
    assert!(max_abs(&phi) <= 1e-12, "position rows {phi:?}");
    assert!(max_abs(&rates) <= 1e-12, "velocity rows {rates:?}");
    // The velocity rows have no position-level residual at all.
    assert_eq!(&phi[2..], &[0.0, 0.0]);
}

#[test]
fn constraint_norms_by_level() {
    let model = model();
    let asm = Assembler::new(&model);
    let mech = Mechanics::new(&model, &asm);
    let n = asm.n_dofs();
    let a = vec![0.0; n];
    let clean = mech.constraint_norms(&model.u0, &model.v0, &a, 0.0);
    eprintln!("initial norms: {clean:?}");
    assert!(clean.position <= 1e-12 && clean.velocity <= 1e-12);

    // Slip: the centre moves 0.2 faster in x, the disk lifted by 1e-3. The
    // slip is rolling row 0 (velocity norm); the position norm is the lift.
    let mut u = model.u0.clone();
    u[2] += 1e-3;
    let mut v = model.v0.clone();
    v[0] += 0.2;
    let norms = mech.constraint_norms(&u, &v, &a, 0.0);
    eprintln!("lifted by 1e-3, slipping by 0.2: {norms:?}");
    assert!((norms.position - 1e-3).abs() < 1e-15);
    assert!((norms.velocity - 0.2).abs() < 1e-15);
    // Slip alone: nothing in the position norm.
    let norms = mech.constraint_norms(&model.u0, &v, &a, 0.0);
    eprintln!("slipping by 0.2: {norms:?}");
    assert!(norms.position <= 1e-12);
    assert!((norms.velocity - 0.2).abs() < 1e-15);
}

#[test]
fn gssss_refuses_velocity_level_joints() {
    let model = model();
    let asm = Assembler::new(&model);
    let mech = Mechanics::new(&model, &asm);
    let spec = IntegratorSpec {
        scheme: Some("midpoint".into()),
        dt: Some(1e-3),
        t_end: Some(1.5),
        ..IntegratorSpec::default()
    };
    let config = spec.resolve().expect("valid GSSSS settings");
    match config.build(&mech) {
        Ok(_) => panic!("GSSSS accepted a nonholonomic model"),
        Err(e) => {
            eprintln!("{e}");
            assert!(matches!(e, StepError::Setup { .. }));
            let msg = e.to_string();
            assert!(msg.contains("'floor.rolling'"), "{msg}");
            assert!(msg.contains("dopri5"), "{msg}");
        }
    }
}

/// Solves the index-1 system at (u, v, 0): acceleration and multipliers.
fn index1(mech: &Mechanics<'_>, u: &[f64], v: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let n = mech.n_dofs();
    let mut sys = mech.new_system();
    mech.fill_index1(u, v, 0.0, None, &mut sys);
    let mut solver = SaddlePointSolver::new(mech.pattern(), false).unwrap();
    solver
        .factor(&sys.values)
        .expect("the index-1 matrix is nonsingular");
    let mut x: Vec<f64> = sys.residual.iter().map(|r| -r).collect();
    solver.solve(&mut x).unwrap();
    let lambda = x.split_off(n);
    (x, lambda)
}

/// The file's initial state and a tilted, falling, spinning one, for both
/// attitudes (the tilted one built from the seed's angles).
fn cases() -> Vec<(String, Model)> {
    let mut out = vec![("file".to_string(), model())];
    for att in [Attitude::EulerParameters, Attitude::Directors] {
        let (q, qd) = tilted_state(0, 1.0);
        out.push((
            format!("tilted [{}]", att.name()),
            disk_model(1.0, 1.0, &q, &qd, att),
        ));
    }
    out
}

#[test]
fn index1_acceleration_satisfies_both_levels() {
    for (name, model) in cases() {
        let asm = Assembler::new(&model);
        let mech = Mechanics::new(&model, &asm);
        let (u, v) = (&model.u0, &model.v0);
        let (a, lambda) = index1(&mech, u, v);
        let norms = mech.constraint_norms(u, v, &a, 0.0);
        eprintln!("{name}: a = {a:?}\n  lambda = {lambda:?}\n  norms {norms:?}");
        assert!(norms.position <= 1e-12 && norms.velocity <= 1e-12);
        assert!(norms.acceleration <= 1e-10, "{name}: {norms:?}");
    }
}

#[test]
fn rolling_does_no_work() {
    // Large enough that the O(h^2) error of the central difference is above
    // the round-off of E (with h = 1e-5 both energies round to the same
    // number and the difference is exactly 0).
    let h = 1e-4;
    for (name, model) in cases() {
        let asm = Assembler::new(&model);
        let mech = Mechanics::new(&model, &asm);
        let (u, v) = (&model.u0, &model.v0);
        let (a, _) = index1(&mech, u, v);
        let step = |s: f64| -> (Vec<f64>, Vec<f64>) {
            (
                u.iter().zip(v).map(|(x, y)| x + s * y).collect(),
                v.iter().zip(&a).map(|(x, y)| x + s * y).collect(),
            )
        };
        let ((up, vp), (um, vm)) = (step(h), step(-h));
        let (ep, em) = (mech.energy(&up, &vp), mech.energy(&um, &vm));
        let d_total = (ep.total - em.total) / (2.0 * h);
        let d_kin = (ep.kinetic - em.kinetic) / (2.0 * h);
        let d_pot = (ep.potential - em.potential) / (2.0 * h);
        let kinetic = mech.energy(u, v).kinetic;
        // Power scale: the larger of the kinetic and potential rates, and the
        // kinetic energy per unit time (rates vanish at the upright start).
        let scale = d_kin.abs().max(d_pot.abs()).max(kinetic);
        eprintln!(
            "{name}: dE/dt = {d_total:.3e}, dT/dt = {d_kin:.6e}, dV/dt = {d_pot:.6e}, \
             T = {kinetic:.6e}, |dE/dt|/scale = {:.2e}",
            d_total.abs() / scale
        );
        assert!(d_total.abs() <= 1e-7 * scale, "{name}: dE/dt = {d_total:e}");
    }
}

/// The seed's model in its own coordinates q = (x, y, phi, theta, psi)
/// (eqs. 4.29–4.31, digest §3.6): kinetic energy, potential, and the rolling
/// constraint G(q) q' = 0.
struct SeedDisk {
    m: f64,
    r: f64,
    g: f64,
}

impl SeedDisk {
    fn kinetic(&self, q: &[f64], qd: &[f64]) -> f64 {
        let (m, r) = (self.m, self.r);
        let (a, c) = (m * r * r / 4.0, m * r * r / 2.0);
        let [_, _, phi, th, _] = [q[0], q[1], q[2], q[3], q[4]];
        let [dx, dy, dphi, dth, dpsi] = [qd[0], qd[1], qd[2], qd[3], qd[4]];
        let (sp, cp) = phi.sin_cos();
        let (st, ct) = th.sin_cos();
        0.5 * m * (dx * dx + dy * dy + r * r * dth * dth + r * r * dphi * dphi * st * st)
            - m * r * (dth * ct * (dx * sp - dy * cp) + dphi * st * (dx * cp + dy * sp))
            + 0.5 * a * (dth * dth + dphi * dphi * ct * ct)
            + 0.5 * c * (dpsi + dphi * st).powi(2)
    }

    fn potential(&self, q: &[f64]) -> f64 {
        self.m * self.g * self.r * q[3].cos()
    }

    /// Mass matrix d^2 T/dq'^2 (T is a quadratic form in q').
    fn mass(&self, q: &[f64]) -> DMatrix<f64> {
        let e = |i: usize, j: usize| {
            let mut x = [0.0; 5];
            x[i] += 1.0;
            x[j] += 1.0;
            x
        };
        DMatrix::from_fn(5, 5, |i, j| {
            if i == j {
                2.0 * self.kinetic(q, &e(i, i).map(|x| x / 2.0))
            } else {
                self.kinetic(q, &e(i, j))
                    - self.kinetic(q, &e(i, i).map(|x| x / 2.0))
                    - self.kinetic(q, &e(j, j).map(|x| x / 2.0))
            }
        })
    }

    /// q'' and lambda of `M q'' + M' q' - T_q + V_q = G^T lambda`,
    /// `G q'' + G' q' = 0`, derivatives in q by central differences.
    fn acceleration(&self, q: &[f64; 5], qd: &[f64; 5]) -> [f64; 5] {
        let h = 1e-5;
        let shift = |k: Option<usize>, s: f64| -> Vec<f64> {
            (0..5)
                .map(|i| match k {
                    Some(k) if k == i => q[i] + s,
                    Some(_) => q[i],
                    None => q[i] + s * qd[i],
                })
                .collect()
        };
        let qdv = DVector::from_column_slice(qd);
        let mdot = (self.mass(&shift(None, h)) - self.mass(&shift(None, -h))) / (2.0 * h);
        let rhs_q = DVector::from_fn(5, |k, _| {
            let (qp, qm) = (shift(Some(k), h), shift(Some(k), -h));
            let tq = (self.kinetic(&qp, qd) - self.kinetic(&qm, qd)) / (2.0 * h);
            let vq = (self.potential(&qp) - self.potential(&qm)) / (2.0 * h);
            tq - vq
        }) - mdot * &qdv;
        let (sp, cp) = q[2].sin_cos();
        let r = self.r;
        let gm = DMatrix::from_row_slice(
            2,
            5,
            &[1.0, 0.0, 0.0, 0.0, r * cp, 0.0, 1.0, 0.0, 0.0, r * sp],
        );
        // G' q' = (-r sin(phi) phi' psi', r cos(phi) phi' psi').
        let gdot_qd = [-r * sp * qd[2] * qd[4], r * cp * qd[2] * qd[4]];
        let mut k = DMatrix::zeros(7, 7);
        k.view_mut((0, 0), (5, 5)).copy_from(&self.mass(q));
        k.view_mut((0, 5), (5, 2)).copy_from(&(-gm.transpose()));
        k.view_mut((5, 0), (2, 5)).copy_from(&gm);
        let mut b = DVector::zeros(7);
        b.rows_mut(0, 5).copy_from(&rhs_q);
        b[5] = -gdot_qd[0];
        b[6] = -gdot_qd[1];
        let x = k.lu().solve(&b).expect("seed system nonsingular");
        std::array::from_fn(|i| x[i])
    }
}

/// The index-1 acceleration of the flexmb model equals the second derivative
/// of the body state along the seed's Euler-angle motion
/// `q(tau) = q + tau q' + tau^2/2 q''` with q'' from the seed's equations
/// (eq. 4.31 with T of eq. 4.30 and the rolling constraint 4.29).
#[test]
fn acceleration_matches_seed_equations() {
    let (m, r) = (1.0, 1.0);
    let seed = SeedDisk { m, r, g: 9.81 };
    let mut states = vec![("file".to_string(), Q0, QD0)];
    for k in 0..3 {
        let (q, qd) = tilted_state(k, r);
        states.push((format!("tilted #{k}"), q, qd));
    }
    for (name, q, qd) in states {
        let qdd = seed.acceleration(&q, &qd);
        let model = disk_model(m, r, &q, &qd, Attitude::EulerParameters);
        let asm = Assembler::new(&model);
        let mech = Mechanics::new(&model, &asm);
        let (a, _) = index1(&mech, &model.u0, &model.v0);
        let body = |tau: f64| -> Vec<f64> {
            let qt: [f64; 5] =
                std::array::from_fn(|i| q[i] + tau * qd[i] + 0.5 * tau * tau * qdd[i]);
            let (c, p, _, _) = body_state(&qt, &qd, r);
            c.iter().chain(&p).copied().collect()
        };
        let a_seed: Vec<f64> = (0..7)
            .map(|i| fd_second(1e-3, |tau| body(tau)[i]))
            .collect();
        let err = max_diff(&a, &a_seed) / max_abs(&a_seed).max(1.0);
        eprintln!(
            "{name}: seed q'' = {qdd:?}\n  flexmb a = {a:?}\n  seed a   = {a_seed:?}\n  rel err {err:.2e}"
        );
        assert!(err < 1e-7, "{name}: relative error {err:e}");
    }
}
