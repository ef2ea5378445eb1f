//! flexmb: rigid and flexible multibody dynamics by the finite element method.
//!
//! Elements ([`element`]) and joints ([`joint`]) know local physics; the
//! [`assembly::Assembler`] turns them into global sparse operators (M, K, B,
//! residuals); integrators ([`integrate`]) see only those operators and solve
//! each Newton step's saddle-point system with [`linalg::SaddlePointSolver`];
//! [`run::Simulation`] drives the time loop and streams to a recorder
//! ([`output`], HDF5); `batch` (feature `cli`) runs parameter sweeps of a
//! model file in parallel (`flexmb batch`).
//!
//! A mechanism built in code and stepped ([`run::Stepper`]): advance it,
//! look at it, go on.
//!
//! ```
//! use flexmb::integrate::IntegratorConfig;
//! use flexmb::model::{Body2d, ModelBuilder, PointRef};
//! use flexmb::run::Stepper;
//!
//! // A point mass on a massless bar of length 1, pinned at the origin.
//! let mut b = ModelBuilder::new(2)?;
//! b.gravity(&[0.0, -9.81])?;
//! b.body2d("bob", Body2d::new(1.0, 0.0).at(1.0, 0.0, std::f64::consts::FRAC_PI_2))?;
//! b.ground_pin("pin", &PointRef::on("bob", [0.0, 1.0]), &[0.0, 0.0])?;
//! let mut sim = Stepper::new(b.build()?, &IntegratorConfig::gssss().dt(1e-3))?;
//! sim.advance_to(0.5)?;
//! let (x, y) = (sim.position("bob.x")?, sim.position("bob.y")?);
//! assert!((x.hypot(y) - 1.0).abs() < 1e-12);
//! assert!((sim.energy().total - 0.0).abs() < 1e-9); // released at rest at height 0
//! sim.advance_to(1.0)?; // and on
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A model file run to its end time into a recorder, as `flexmb run` does:
//!
//! ```
//! use flexmb::integrate::IntegratorSpec;
//! use flexmb::input::load_model_file;
//! use flexmb::output::MemoryRecorder;
//! use flexmb::run::Simulation;
//!
//! let file = load_model_file(concat!(env!("CARGO_MANIFEST_DIR"), "/models/double_pendulum.toml"))?;
//! let config = file.integrator(&IntegratorSpec { t_end: Some(1.0), ..Default::default() })?;
//! let mut rec = MemoryRecorder::default();
//! let summary = Simulation::new(file.model).run(&config, &file.text, &file.output, &mut rec, &mut |_| {})?;
//! assert_eq!(summary.steps, 100);
//! assert!(summary.max_rel_energy_change < 1e-12);
//! println!("{}", summary.line());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! With `default-features = false` the crate is the engine alone: the
//! command line and its parts (`batch`, `bench`, `plot`) need the
//! default feature `cli`.

#![warn(missing_docs)]

pub mod assembly;
#[cfg(feature = "cli")]
pub mod batch;
#[cfg(feature = "cli")]
pub mod bench;
pub mod element;
pub mod factor;
pub mod fmt;
pub mod input;
pub mod integrate;
pub mod joint;
pub mod kinematics;
pub mod linalg;
pub mod load;
pub mod model;
pub mod modes;
pub mod output;
#[cfg(feature = "cli")]
pub mod plot;
pub mod prelude;
pub mod run;
pub mod statics;
