//! Generated models for benchmarks and scaling tests.

use super::builder::{BuildError, ModelBuilder, PointRef};
use super::Model;

/// A planar chain of `nodes` point masses (0.01 each, 0.1 apart along x)
/// joined by Green-strain trusses (EA = 1e4), its first node pinned to the
/// ground, under gravity: `2 nodes` DOFs, 2 constraint rows, `nodes - 1`
/// elements. Node ids `n0..`, truss ids `t1..`, the pin `pin`.
pub fn hanging_truss_chain(nodes: usize) -> Result<Model, BuildError> {
    let mut b = ModelBuilder::new(2)?;
    b.gravity(&[0.0, -9.81])?;
    for i in 0..nodes {
        b.node(&format!("n{i}"), &[i as f64 * 0.1, 0.0], None, 0.01)?;
    }
    for i in 1..nodes {
        b.truss(
            &format!("t{i}"),
            &format!("n{}", i - 1),
            &format!("n{i}"),
            1e4,
            None,
            0.0,
        )?;
    }
    b.ground_pin("pin", &PointRef::Entity("n0".into()), &[0.0, 0.0])?;
    b.build()
}
