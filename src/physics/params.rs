//! The params-struct pattern shared by the vehicle models.
//!
//! [`params_struct!`] declares a parameter struct (every field documented with
//! its unit and meaning; the airframe files under `physics/airframes/` hold the
//! numbers) together with its *overrides* twin, whose fields are all optional, so
//! a scenario can change any subset and a typo is still an unknown-field error
//! with a line and column.

/// Declares `Params` and `Overrides` structs with `Params::apply(&Overrides)`.
macro_rules! params_struct {
    (
        $(#[$meta:meta])*
        pub struct $name:ident / $over:ident {
            $( $(#[$fmeta:meta])* pub $field:ident : $ty:ty ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            $( $(#[$fmeta])* pub $field: $ty, )*
        }

        #[doc = concat!("Overrides for [`", stringify!($name), "`]: the same fields, each optional.")]
        #[allow(missing_docs)]
        #[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct $over {
            $( #[serde(default, skip_serializing_if = "Option::is_none")] pub $field: Option<$ty>, )*
        }

        impl $name {
            /// Replaces every field the overrides set.
            pub fn apply(&mut self, o: &$over) {
                $( if let Some(v) = &o.$field { self.$field = v.clone(); } )*
            }
        }
    };
}
pub(crate) use params_struct;

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
pub(crate) fn check_range(field: &str, v: f64, lo: f64, hi: f64) -> Result<(), ParamError> {
    if v.is_finite() && v >= lo && v <= hi {
        Ok(())
    } else {
        Err(ParamError {
            field: field.to_string(),
            problem: format!("{v} is outside {lo}..={hi}"),
        })
    }
}

/// Checks every component of a vector.
pub(crate) fn check_range3(field: &str, v: &[f64; 3], lo: f64, hi: f64) -> Result<(), ParamError> {
    for (i, x) in v.iter().enumerate() {
        check_range(&format!("{field}[{i}]"), *x, lo, hi)?;
    }
    Ok(())
}
