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
