//! Kinematics: how coordinates place material in space, below the physics
//! (elements, joints, loads) that uses it: Euler-parameter rotations
//! ([`rotation`]), the attitude parametrizations of a 3-D body ([`attitude`]),
//! material points and point pairs ([`point`]), and the small 3-vector
//! helpers they and the physics share ([`vec3`]).

pub mod attitude;
pub mod point;
pub mod rotation;
pub mod vec3;
