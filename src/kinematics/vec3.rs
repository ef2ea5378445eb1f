//! Spatial 3-vectors as the `[f64; 3]` arrays that points, joints and
//! elements pass around, with nalgebra's [`Vector3`] doing the arithmetic:
//! `a . b = a0 b0 + a1 b1 + a2 b2` and `a x b` in nalgebra's fixed-size
//! order (the same operations in the same order as written out by hand).

use nalgebra::Vector3;

/// `a . b`.
#[inline]
pub fn dot(a: &[f64; 3], b: &[f64; 3]) -> f64 {
    Vector3::from(*a).dot(&Vector3::from(*b))
}

/// `a x b`.
#[inline]
pub fn cross(a: &[f64; 3], b: &[f64; 3]) -> [f64; 3] {
    Vector3::from(*a).cross(&Vector3::from(*b)).into()
}

/// `|a|`.
#[inline]
pub fn norm(a: &[f64; 3]) -> f64 {
    Vector3::from(*a).norm()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_products_are_those_written_out() {
        let (a, b) = ([0.3, -1.7, 2.9], [1.1, 0.4, -0.6]);
        assert_eq!(dot(&a, &b), a[0] * b[0] + a[1] * b[1] + a[2] * b[2]);
        assert_eq!(
            cross(&a, &b),
            [
                a[1] * b[2] - a[2] * b[1],
                a[2] * b[0] - a[0] * b[2],
                a[0] * b[1] - a[1] * b[0],
            ]
        );
        assert_eq!(norm(&a), (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt());
    }
}
