//! flexmb: rigid and flexible multibody dynamics by the finite element method.
//!
//! Elements ([`element`]) and joints ([`joint`]) know local physics; the
//! [`assembly::Assembler`] turns them into global sparse operators (M, K, B,
//! residuals); integrators ([`integrate`]) see only those operators and solve
//! each Newton step's saddle-point system with [`linalg::SaddlePointSolver`];
//! [`run::Simulation`] drives the time loop and streams to a recorder
//! ([`output`], HDF5); [`batch`] runs parameter sweeps of a model file in
//! parallel (`flexmb batch`).
//!
//! ```no_run
//! use flexmb::model::load_model_file;
//! use flexmb::output::MemoryRecorder;
//! use flexmb::run::Simulation;
//! use flexmb::integrate::IntegratorSpec;
//!
//! let file = load_model_file("models/double_pendulum.toml").unwrap();
//! let config = file.integrator(&IntegratorSpec::default()).unwrap();
//! let sim = Simulation::new(file.model);
//! let mut rec = MemoryRecorder::default();
//! let summary = sim.run(&config, &file.text, &file.output, &mut rec, &mut |_| {}).unwrap();
//! println!("{}", summary.line());
//! ```

pub mod assembly;
pub mod attitude;
pub mod batch;
pub mod bench;
pub mod element;
pub mod fmt;
pub mod integrate;
pub mod joint;
pub mod linalg;
pub mod load;
pub mod model;
pub mod output;
pub mod plot;
pub mod probe;
pub mod rotation;
pub mod run;
pub mod statics;
