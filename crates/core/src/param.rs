//! Parameter validation shared by every model: a rejected value names its
//! field and what is wrong.

/// Why a parameter value was rejected: the field and what is wrong.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{field}: {problem}")]
pub struct ParamError {
    /// Field name as written in files.
    pub field: String,
    /// What is wrong with the value.
    pub problem: String,
}

/// Checks `lo <= v <= hi` and finiteness.
pub fn check_range(field: &str, v: f64, lo: f64, hi: f64) -> Result<(), ParamError> {
    if v.is_finite() && v >= lo && v <= hi {
        Ok(())
    } else {
        Err(ParamError {
            field: field.to_string(),
            problem: format!("{} is outside {lo}..={hi}", crate::time::show(v)),
        })
    }
}

/// Checks every component of a vector.
pub fn check_range3(field: &str, v: &[f64; 3], lo: f64, hi: f64) -> Result<(), ParamError> {
    for (i, x) in v.iter().enumerate() {
        check_range(&format!("{field}[{i}]"), *x, lo, hi)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both ends are allowed; a hair beyond either, or not a number, is
    /// refused with the field and the range.
    #[test]
    fn a_range_includes_its_ends_and_nothing_beyond() {
        assert_eq!(check_range("mass_kg", 0.5, 0.5, 2.0), Ok(()));
        assert_eq!(check_range("mass_kg", 2.0, 0.5, 2.0), Ok(()));
        let e = check_range("mass_kg", 2.5, 0.5, 2.0).expect_err("above");
        assert_eq!(e.to_string(), "mass_kg: 2.5 is outside 0.5..=2");
        assert!(check_range("mass_kg", 0.499_999, 0.5, 2.0).is_err());
        assert!(check_range("mass_kg", 2.000_001, 0.5, 2.0).is_err());
        assert!(check_range("x", f64::NAN, f64::NEG_INFINITY, f64::INFINITY).is_err());
        assert!(check_range("x", f64::INFINITY, f64::NEG_INFINITY, f64::INFINITY).is_err());
    }

    #[test]
    fn a_vector_names_its_component() {
        assert_eq!(check_range3("inertia", &[1.0, 2.0, 3.0], 0.0, 3.0), Ok(()));
        let e = check_range3("inertia", &[1.0, 2.0, 4.0], 0.0, 3.0).expect_err("z");
        assert_eq!(e.field, "inertia[2]");
    }
}
