//! Numbers in user messages: the shortest round-trip form, in scientific
//! notation when small or large (`2.5e-7`, `1e300`, `0.01`), and lists of
//! them, instead of Rust's debug formatting.

/// `x` as `{}` for 1e-3 <= |x| < 1e6 (and 0), as `{:e}` otherwise.
pub fn num(x: f64) -> String {
    let a = x.abs();
    if a == 0.0 || (1e-3..1e6).contains(&a) || !a.is_finite() {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

/// `[a, b, c]` with each entry by [`num`].
pub fn list(x: &[f64]) -> String {
    let parts: Vec<String> = x.iter().map(|&v| num(v)).collect();
    format!("[{}]", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scientific_when_small_or_large() {
        assert_eq!(num(0.01), "0.01");
        assert_eq!(num(2.5e-7), "2.5e-7");
        assert_eq!(num(1e300), "1e300");
        assert_eq!(num(-3.0), "-3");
        assert_eq!(num(0.0), "0");
        assert_eq!(list(&[1.0, 1e-9]), "[1, 1e-9]");
    }
}
