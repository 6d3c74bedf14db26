//! Errors of the simulator: a scenario error names the file, the field and
//! what was expected; policy errors come from tix-core unchanged.

use thiserror::Error;

pub type Result<T> = std::result::Result<T, SimError>;

#[derive(Debug, Error)]
pub enum SimError {
    /// A scenario file is wrong: which file, which field, what was expected.
    #[error("{file}: field '{field}': expected {expected}")]
    Scenario {
        file: String,
        field: String,
        expected: String,
    },
    /// The policy core refused an operation (unknown policy, bad weight, …).
    #[error(transparent)]
    Core(#[from] tix_core::Error),
    #[error("{path}: {msg}")]
    Io { path: String, msg: String },
    /// Bad command-line style input (share lists, grids).
    #[error("{0}")]
    Invalid(String),
}

impl SimError {
    pub fn scenario(file: &str, field: impl Into<String>, expected: impl Into<String>) -> Self {
        SimError::Scenario {
            file: file.to_string(),
            field: field.into(),
            expected: expected.into(),
        }
    }
    pub fn io(path: impl AsRef<std::path::Path>, e: impl std::fmt::Display) -> Self {
        SimError::Io {
            path: path.as_ref().display().to_string(),
            msg: e.to_string(),
        }
    }
}
