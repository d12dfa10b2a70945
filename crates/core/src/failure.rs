//! Why a command could not do what it was asked, as the user reads it: one
//! line naming the file, key, port or program, what to try, and whose fault
//! it was — the input's (exit 2) or the run's (exit 1).
//!
//! The libraries that orchestrate whole runs (suites, comparisons, firmware
//! flights) return it; the binary prints it and exits with [`Failure::code`].

/// Exit code of bad input: a file, key, flag or port refused.
pub const INPUT: u8 = 2;
/// Exit code of a run that started and failed.
pub const RUN: u8 = 1;

/// A failure: the one-line message, what to try, and the exit code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Failure {
    /// The one-line message, naming the file, key, port or program.
    pub message: String,
    /// What to try, when there is something.
    pub hint: Option<String>,
    /// The process exit code: [`INPUT`], [`RUN`], or another the caller
    /// gives (an interrupted run's).
    pub code: u8,
}

impl Failure {
    /// Bad input (exit 2): `message`, with `hint` as what to try.
    pub fn input(message: impl Into<String>, hint: impl Into<String>) -> Self {
        Failure {
            message: message.into(),
            hint: Some(hint.into()),
            code: INPUT,
        }
    }

    /// A failed run (exit 1): `message`.
    pub fn run(message: impl Into<String>) -> Self {
        Failure {
            message: message.into(),
            hint: None,
            code: RUN,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_is_exit_2_with_its_hint_and_run_is_exit_1_without() {
        let i = Failure::input("a.plan: line 3", "a QGroundControl .plan");
        assert_eq!(
            (i.code, i.hint.as_deref()),
            (2, Some("a QGroundControl .plan"))
        );
        assert_eq!(i.to_string(), "a.plan: line 3");
        let r = Failure::run("2 of 3 flights failed");
        assert_eq!((r.code, r.hint), (1, None));
    }
}
