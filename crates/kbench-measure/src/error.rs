//! The measuring side's error. Its text is the whole message (what, where,
//! what to do), causes included, so it reads the same however it is
//! printed; [`MeasureError::Interrupted`] is matched, never read from text.

use kbench_store::StoreError;

/// What stopped a run, a launch or a variant's setting.
#[derive(Debug, thiserror::Error)]
pub enum MeasureError {
    /// The stop flag was raised (Ctrl-C) before anything could be stored.
    #[error("interrupted before the run started; nothing was stored")]
    Interrupted,
    /// The store refused or failed a write.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// An agent (a process or a VM guest) that could not start, ended
    /// badly, or sent what it should not have.
    #[error("{0}")]
    Agent(String),
    /// A setting, wrapper, variant or environment value that cannot be
    /// used, and why.
    #[error("{0}")]
    Invalid(String),
    /// An operating-system call that failed: what was being done, and how.
    #[error("{what}: {cause}")]
    Os { what: String, cause: std::io::Error },
    /// Where a nested error happened.
    #[error("{place}: {inner}")]
    In {
        place: String,
        inner: Box<MeasureError>,
    },
}

impl MeasureError {
    /// `self`, said to have happened at `place`.
    pub fn at(self, place: impl Into<String>) -> MeasureError {
        MeasureError::In {
            place: place.into(),
            inner: Box::new(self),
        }
    }

    /// Whether a raised stop flag is what ended this, at any depth.
    pub fn is_interrupted(&self) -> bool {
        match self {
            MeasureError::Interrupted => true,
            MeasureError::In { inner, .. } => inner.is_interrupted(),
            _ => false,
        }
    }

    /// An OS error of `what` (a closure's result, for `map_err`).
    pub fn os(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> MeasureError {
        let what = what.into();
        move |cause| MeasureError::Os { what, cause }
    }
}

pub type Result<T, E = MeasureError> = std::result::Result<T, E>;

/// Returns early with [`MeasureError::Invalid`] and a formatted message.
macro_rules! invalid {
    ($($message:tt)*) => {
        return Err($crate::error::MeasureError::Invalid(format!($($message)*)))
    };
}
pub(crate) use invalid;
