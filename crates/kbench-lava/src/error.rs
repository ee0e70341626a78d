//! The LAVA crate's error. Its text is the whole message (what, where,
//! what to do), causes included.

use kbench_measure::MeasureError;
use kbench_store::StoreError;
use kbench_vm::VmError;

/// What kept a LAVA job from being written, or its results from being
/// read back.
#[derive(Debug, thiserror::Error)]
pub enum LavaError {
    #[error(transparent)]
    Vm(#[from] VmError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Measure(#[from] MeasureError),
    #[error(transparent)]
    Catalog(#[from] kbench_catalog::CatalogError),
    /// A request refused, or a log that cannot be read, and what to do.
    #[error("{0}")]
    Invalid(String),
    /// An operating-system call that failed: what was being done, and how.
    #[error("{doing}: {error}")]
    Os {
        doing: String,
        error: std::io::Error,
    },
}

impl LavaError {
    /// A closure mapping an `io::Error` to [`LavaError::Os`] with what was
    /// being done.
    pub fn os(doing: impl Into<String>) -> impl FnOnce(std::io::Error) -> LavaError {
        let doing = doing.into();
        move |error| LavaError::Os { doing, error }
    }
}

pub type Result<T, E = LavaError> = std::result::Result<T, E>;

/// Returns early with [`LavaError::Invalid`] of a formatted message.
macro_rules! refuse {
    ($($arg:tt)*) => {
        return Err($crate::error::LavaError::Invalid(format!($($arg)*)))
    };
}
pub(crate) use refuse;
