//! The catalog's error: a name, suite or profile that cannot be used. Its
//! text is the whole message (what, where, what to do), causes included,
//! so it reads the same however it is printed.

use std::path::PathBuf;

/// What went wrong resolving names, or loading suites and profiles.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    /// A suite file, profile file or profile directory that cannot be read.
    #[error("cannot read {what} {}: {cause}", path.display())]
    Read {
        what: &'static str,
        path: PathBuf,
        cause: std::io::Error,
    },
    /// A directory of user profiles that cannot be read.
    #[error(
        "cannot read the profile directory {} (--profiles / {}): {cause}",
        path.display(),
        crate::PROFILES_ENV
    )]
    ProfileDirectory {
        path: PathBuf,
        cause: std::io::Error,
    },
    /// A profile file that is not a valid profile.
    #[error("{0}")]
    Profile(#[from] FormatError),
    /// A name, option, suite or field that does not resolve, and why.
    #[error("{0}")]
    Invalid(String),
    /// Where a nested error happened ("in suite 'mine'").
    #[error("{place}: {inner}")]
    In {
        place: String,
        inner: Box<CatalogError>,
    },
}

impl CatalogError {
    /// `self`, said to have happened at `place`.
    pub fn at(self, place: impl Into<String>) -> CatalogError {
        CatalogError::In {
            place: place.into(),
            inner: Box::new(self),
        }
    }
}

/// A profile file that cannot be used: which file, which line, why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("profile {file}{}: {message}", line.map(|l| format!(", line {l}")).unwrap_or_default())]
pub struct FormatError {
    pub file: String,
    pub line: Option<usize>,
    pub message: String,
}

pub type Result<T, E = CatalogError> = std::result::Result<T, E>;

/// Returns early with [`CatalogError::Invalid`] and a formatted message.
macro_rules! invalid {
    ($($message:tt)*) => {
        return Err($crate::error::CatalogError::Invalid(format!($($message)*)))
    };
}
pub(crate) use invalid;
