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

pub use mavsitl_core::param::{check_range, check_range3, ParamError};

/// Checks that every (field, channel) names one of the actuator channels.
///
/// # Errors
/// [`ParamError`] naming the first field whose channel is beyond the last.
pub(crate) fn check_channels<'a>(
    channels: impl IntoIterator<Item = (&'a str, usize)>,
) -> Result<(), ParamError> {
    let max = mavsitl_core::controller::MAX_ACTUATORS;
    match channels.into_iter().find(|(_, c)| *c >= max) {
        Some((field, c)) => Err(ParamError {
            field: field.into(),
            problem: format!("channel {c} is beyond the {max} actuator channels"),
        }),
        None => Ok(()),
    }
}
